"""The decide stage: the idea's verdict against each comparator in, its verdicts out, once.

The verdict pipeline (:mod:`benchkit.verdict.pipeline`) reads top to bottom: **select** each
arm's config on validation and **compare** the idea with each comparator on test
(:mod:`benchkit.verdict.build`, :mod:`benchkit.verdict.comparison`), adjust the family (Holm,
:func:`benchkit.verdict.controls.adjust_family`), **decide**
(here: a :class:`Decision`, written into the report once and never changed after), then
**gate** (:func:`benchkit.plugin.aggregate.gate_failure` reads it).
"""
from __future__ import annotations

from dataclasses import dataclass

from benchkit.stats import paired as stats

VERDICT_ORDER = ("harms", "inconclusive", "non-inferior", "helps", "equivalent")  # worst first
REFERENCE_WORDS = {"helps": "idea better (significant)", "harms": "idea worse (significant)"}


def reference_fields(verdict: str) -> dict:
    """A comparison's reference-format fields (``verdict``, ``system_worked``), written once
    from the verdict decided against that comparator at the planned level."""
    words = REFERENCE_WORDS.get(verdict, "no significant win")
    return {"verdict": words, "system_worked": verdict == "helps"}


@dataclass(frozen=True)
class Decision:
    """The idea's verdicts: ``practical`` (helps, harms, non-inferior, equivalent,
    inconclusive, unmatched or incomplete), ``system`` (worked, partial, failed, or the
    practical verdict when none is given) and the comparator whose verdict decided."""

    practical: str
    system: str
    decided_by: str | None = None

    def fields(self) -> dict:
        """The report's fields of this decision."""
        return {"practical_verdict": self.practical, "system_verdict": self.system,
                "decided_by": self.decided_by}


def decide(against: list[tuple[str, str]], mechanism_ok: int | None,
           budgets: dict | None) -> Decision:
    """The idea's verdicts from its verdict against each comparator, ``(verdict, arm)``,
    baseline first: the worst of them decides (on a tie, the first named), and the system
    verdict adds the mechanism. Withheld as ``unmatched`` when a budget does not match."""
    practical, decided_by = min(against, key=lambda v: VERDICT_ORDER.index(v[0]))
    if budgets and not budgets["matched"]:
        return Decision("unmatched", "unmatched", decided_by)
    return Decision(practical, stats.system_verdict(practical, mechanism_ok), decided_by)
