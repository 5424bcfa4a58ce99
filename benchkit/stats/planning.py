"""The planning figures of a comparison, of the test that decides it.

``mde_power80`` is the effect the deciding test detects 80% of the time on benches like this
one, and ``seeds_needed`` the seeds at which the observed difference would be that effect (a
post-hoc figure: the observed difference is an estimate, so it is labelled as such). With a
sweep of more than one config per arm the deciding test is the selection-aware one, whose
power is simulated on the bench's own sweeps (:func:`benchkit.stats.selection.mde_power80`);
with one config per arm it is the plain sign-flip test (:mod:`benchkit.stats.signflip`). Under
``test="sign"`` or ``"wilcoxon"`` the figures stay those of the mean test, and their names say
so (``mde_power80_mean_test``, ``seeds_needed_mean_test``). numpy only; frozen records of plain
values out.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchkit.stats import selection, signflip

POST_HOC = ("the observed delta_mean (post hoc: an estimate of the effect, not a planned "
            "target)")


@dataclass(frozen=True)
class PlanningBasis:
    """A comparison's ``planning`` object: the level the figures are at, the fewest seeds that
    can reach it, the test they are of, what effect ``seeds_needed`` is for, and the
    assumption. ``test`` and ``seeds_needed_for`` are None only in reports written before
    they were (absent from :meth:`to_json` then)."""

    level: float
    min_seeds: int
    assumption: str
    test: str | None = None
    seeds_needed_for: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"level": self.level, "min_seeds": self.min_seeds}
        if self.test is not None:
            out["test"] = self.test
        if self.seeds_needed_for is not None:
            out["seeds_needed_for"] = self.seeds_needed_for
        out["assumption"] = self.assumption
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanningBasis:
        """The record of a report's ``planning`` object; a key it does not declare is refused."""
        known = ("level", "min_seeds", "test", "seeds_needed_for", "assumption")
        unknown = sorted(set(data) - set(known))
        missing = [name for name in ("level", "min_seeds", "assumption") if name not in data]
        if unknown or missing:
            raise ValueError(f"a comparison's planning object has the keys {list(known)} (test "
                             f"and seeds_needed_for may be absent); unknown: {unknown}, "
                             f"missing: {missing}")
        return cls(**data)


# the comparison's keys that hold the planning figures, in the report's order
KEYS = ("mde_power80", "seeds_needed", "mde_power80_mean_test", "seeds_needed_mean_test",
        "planning")


@dataclass(frozen=True)
class PlanningFigures:
    """The planning figures of a comparison: the effect the test detects 80% of the time
    (None where no effect is), the seeds that would detect the observed effect (None when
    significant) and their :class:`PlanningBasis`. ``of_mean_test``: the deciding test is another
    (sign, wilcoxon), so the figures are the mean test's and :meth:`to_json` names them so,
    with the deciding test's own figures null."""

    mde_power80: float | None
    seeds_needed: int | None
    basis: PlanningBasis
    of_mean_test: bool = False

    def to_json(self) -> dict[str, Any]:
        """The comparison's planning keys (a subset of :data:`KEYS`, in their order)."""
        if self.of_mean_test:
            return {"mde_power80": None, "seeds_needed": None,
                    "mde_power80_mean_test": self.mde_power80,
                    "seeds_needed_mean_test": self.seeds_needed, "planning": self.basis.to_json()}
        return {"mde_power80": self.mde_power80, "seeds_needed": self.seeds_needed,
                "planning": self.basis.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanningFigures:
        """The record of a comparison's planning keys (``data``: those of :data:`KEYS` it has),
        as :meth:`to_json` writes them; any other set of keys is refused."""
        if list(data) == ["mde_power80", "seeds_needed", "planning"]:
            return cls(data["mde_power80"], data["seeds_needed"],
                       PlanningBasis.from_json(data["planning"]))
        if (list(data) == list(KEYS) and data["mde_power80"] is None
                and data["seeds_needed"] is None):
            return cls(data["mde_power80_mean_test"], data["seeds_needed_mean_test"],
                       PlanningBasis.from_json(data["planning"]), of_mean_test=True)
        raise ValueError(f"a comparison's planning figures are {list(KEYS[:2] + KEYS[4:])} or, "
                         f"of the mean test under another, all of {list(KEYS)} with the first "
                         f"two null; got {dict(data)}")


def figures(diffs: Any, delta: float, level: float, *, significant: bool,
            sweeps: selection.Sweeps | None = None, direction: str = "lower",
            test: str = "mean") -> PlanningFigures:
    """The comparison's planning figures at ``level``: ``mde_power80``, ``seeds_needed`` (None
    when significant) and their :class:`PlanningBasis` (level, min_seeds, which test, the
    assumption, what effect seeds_needed is for)."""
    d = np.asarray(diffs, dtype=float)
    n, sd = len(d), float(np.std(d, ddof=1)) if len(d) > 1 else math.nan
    if sweeps is not None and any(len(g) > 1 for g in sweeps.groups):
        mde = selection.mde_power80(sweeps, direction, level)
        needed = None if significant else selection.seeds_needed(mde, n, delta, level)
        of = "selection-aware sign-flip test (simulated on this bench's sweeps)"
        assumption = selection.PLAN_ASSUMPTION.format(
            reps=selection.PLAN_REPS, se=math.sqrt(0.8 * 0.2 / selection.PLAN_REPS))
    else:
        mde = signflip.mde_power80(n, sd, level)
        needed = None if significant else signflip.seeds_needed(delta, sd, level)
        of = "sign-flip test (one config per arm)"
        assumption = signflip.ASSUMPTION
    of_mean_test = test in ("sign", "wilcoxon")
    basis = PlanningBasis(level=level, min_seeds=signflip.min_pairs(level),
                          assumption=assumption, test=("mean " if of_mean_test else "") + of,
                          seeds_needed_for=POST_HOC)
    return PlanningFigures(mde, needed, basis, of_mean_test=of_mean_test)
