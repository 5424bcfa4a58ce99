"""The declared plan a verdict rests on: which of the idea's declarations say how its runs are
judged (recorded with each run), and why a session whose stored runs were judged under another
plan is exploratory."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchkit.codec import JsonRecord
from benchkit.spec.idea import IdeaSpec
from benchkit.spec.payloads import RunPayload
from benchkit.spec.run_record import JsonDict
from benchkit.stats.sequential import EXACT_RULE

PLAN_KEYS = ("looks", "boundary", "test", "claim_type", "margin")
FUTILITY_RULE = ("non-binding futility stop: at a look before the last with an inconclusive "
                 "verdict, stop when the conditional power under the current trend (Lan-Wittes "
                 "B-value, normal approximation) to be significantly better at the last look is "
                 "below the declared threshold; it changes no level and no verdict")


def declared_plan(spec: IdeaSpec, looks: Sequence[int] | None = None) -> JsonDict:
    """How the module says its runs are judged (not what they train): recorded with each run,
    since a change to it after a look changes what the verdict means. ``looks`` replaces the
    spec's when the session resolves them."""
    values = {k: getattr(spec, k) for k in PLAN_KEYS}
    values["looks"] = list(spec.looks if looks is None else looks)
    return {k: v for k, v in values.items() if k == "looks" or v is not None}


def plan_changes(plan: JsonDict, runs: Iterable[RunPayload]) -> list[str]:
    """Why the session is exploratory when stored runs of this module (origin ``reused``) were
    trained under another declared plan: a plan chosen after seeing results is no plan. Empty
    when none was (records without a plan are not judged)."""
    planned = [r.provenance.planned for r in runs if r.result is not None
               and r.provenance is not None and r.provenance.origin == "reused"]
    before = [p for p in planned if p is not None and p != plan]
    changes = sorted({f"{k} {old.get(k)!r} -> {plan.get(k)!r}" for old in before
                      for k in PLAN_KEYS if old.get(k) != plan.get(k)})
    if not changes:
        return []
    return [(f"the plan changed after a look: stored runs were judged under another plan "
             f"({'; '.join(changes)}); declare it before the first look, or --bench-fresh "
             "retrains under the new one")]


SEQUENTIAL_RULE = ("Pocock-type Lan-DeMets alpha spending over the looks declared in "
                   "pytest.mark.bench, alpha(t) = alpha*ln(1+(e-1)t) with t = n_seeds/last look; "
                   "each look is tested at its increment of alpha(t) (union bound: the looks "
                   "together never exceed alpha). The level follows from the declaration alone: "
                   "no earlier report is read")


@dataclass(frozen=True)
class Futility(JsonRecord):
    """``report["sequential"]["futility"]``: the declared non-binding futility stop (its
    ``threshold``) and, once assessed at a look before the last, the conditional power, whether
    to stop, and the last look's level (:func:`benchkit.verdict.decision.futility_advice`)."""

    threshold: float
    conditional_power: float | None
    stop: bool
    last_level: float | None
    rule: str


@dataclass(frozen=True)
class Sequential(JsonRecord):
    """``report["sequential"]``: the looks (declared, or this session's seed count as the one
    look), which of them this session is (None: none), how they share alpha (``boundary``, its
    ``rule``) and the declared futility stop. A record of the report (:mod:`benchkit.verdict.
    records` reads it), so this module imports no builder of verdict/."""

    looks: tuple[int, ...]
    max_seeds: int
    declared: bool
    look: int | None
    boundary: str
    futility: Futility | None
    rule: str


@dataclass(frozen=True)
class Exploratory(JsonRecord):
    """``report["exploratory"]``: why this session is no look of its plan (an override, a
    seed count that is no look, a plan changed after a look); a report has one only then."""

    reasons: tuple[str, ...]


@dataclass(frozen=True)
class SessionPlan:
    """The report's sequential plan, and why this session is no look of it (none: it is)."""

    sequential: Sequential
    exploratory_reasons: tuple[str, ...]

    @property
    def exploratory(self) -> Exploratory | None:
        """``report["exploratory"]``: the reasons, or None for a look of the plan."""
        return Exploratory(self.exploratory_reasons) if self.exploratory_reasons else None


def plan_of(spec: IdeaSpec, n: int, runs: Sequence[RunPayload] = ()) -> SessionPlan:
    """The sequential plan (``report["sequential"]``) and, when this session is not one of its
    looks, why (``report["exploratory"]``): an override of seeds or epochs, a seed count the
    module does not declare as a look, or a plan changed after a look (``runs``)."""
    looks = [int(k) for k in spec.looks or [n]]
    look = looks.index(n) + 1 if n in looks else None
    reasons = [f"--bench-{k} {v} overrides the module's plan" for k, v in
               sorted(spec.overrides.items())]
    reasons += plan_changes(declared_plan(spec, looks), runs)
    if look is None:
        reasons.append(f"{n} seeds is not a declared look (looks={tuple(looks)}): declare it "
                       "in pytest.mark.bench (looks=...) before the first look")
    sequential = Sequential(looks=tuple(looks), max_seeds=looks[-1],
                            declared=spec.looks_declared, look=look, boundary=spec.boundary,
                            futility=declared_futility(spec.futility),
                            rule=EXACT_RULE if spec.boundary == "exact" else SEQUENTIAL_RULE)
    return SessionPlan(sequential=sequential, exploratory_reasons=tuple(reasons))


def declared_futility(threshold: float | None) -> Futility | None:
    """``report["sequential"]["futility"]`` before the verdict: the declared threshold
    (:func:`benchkit.verdict.decision.futility_advice` fills the rest in)."""
    if threshold is None:
        return None
    return Futility(threshold=threshold, conditional_power=None, stop=False, last_level=None,
                    rule=FUTILITY_RULE)
