"""The planning figures of a comparison, of the test that decides it.

``mde_power80`` is the effect the deciding test (the sign-flip test of the comparison's
per-seed differences: with a sweep, the binding paired test's, :mod:`benchkit.stats.selection`)
detects 80% of the time on benches like this one, and ``seeds_needed`` the seeds at which the
observed difference would be that effect (a post-hoc figure: the observed difference is an
estimate, so it is labelled as such). Both assume normal differences whose sd is a one-sided
upper confidence bound of the observed sd (:func:`planning_sd`): the observed sd of a few
seeds understates how new seeds vary: for normal differences a figure at it has a mean true
power of 0.73 at 8 seeds and 0.75 at 12, at the bound 0.85 and 0.84 (tests/stats/
test_planning.py; docs/calibration.md measures it on sweeps). Under ``test="sign"`` or
``"wilcoxon"`` the figures stay those of the mean test, and their names say so
(``mde_power80_mean_test``, ``seeds_needed_mean_test``). numpy only; frozen records of plain
values out.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from benchkit.codec import JsonRecord, as_json
from benchkit.stats import signflip

SD_CONFIDENCE = 0.7  # the sd bound: P(true sd <= bound) under normal differences
ASSUMPTION = ("planning figure: assumes normal per-seed differences whose sd is the one-sided "
              "70% upper confidence bound of the observed sd (chi-square, n - 1 df), tested by "
              "the sign-flip test at the stated level")
POST_HOC = ("the observed delta_mean (post hoc: an estimate of the effect, not a planned "
            "target)")


@dataclass(frozen=True)
class PlanningBasis(JsonRecord):
    """A comparison's ``planning`` object: the level the figures are at, the fewest seeds that
    can reach it, the test they are of, what effect ``seeds_needed`` is for, and the
    assumption. ``test`` and ``seeds_needed_for`` are None only in reports written before
    they were (absent from :meth:`to_json` then)."""

    level: float
    min_seeds: int
    test: str | None = field(default=None, kw_only=True, metadata=as_json(omit=True))
    seeds_needed_for: str | None = field(default=None, kw_only=True, metadata=as_json(omit=True))
    assumption: str = field(kw_only=True)


# the comparison's keys that hold the planning figures, in the report's order
KEYS = ("mde_power80", "seeds_needed", "mde_power80_mean_test", "seeds_needed_mean_test",
        "planning")


@dataclass(frozen=True)
class PlanningFigures:
    """The planning figures of a comparison: the effect the test detects 80% of the time
    (None where no effect is), the seeds that would detect the observed effect (None when
    significant) and their :class:`PlanningBasis`. ``of_mean_test``: the deciding test is another
    (sign, wilcoxon), so the figures are the mean test's and :meth:`to_json` names them so,
    with the deciding test's own figures null. Its JSON is written here, not generated: which
    keys it has depends on the deciding test."""

    mde_power80: float | None
    seeds_needed: int | None
    basis: PlanningBasis
    of_mean_test: bool = False
    JSON_KEYS: ClassVar[tuple[str, ...]] = KEYS   # inline in the comparison's object

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


def planning_sd(d: np.ndarray) -> float:
    """The one-sided SD_CONFIDENCE upper confidence bound of the sd of the differences ``d``
    (normal theory: sd * sqrt((n - 1) / chi2_{1 - SD_CONFIDENCE}(n - 1))); NaN below 2."""
    n = len(d)
    if n < 2:
        return math.nan
    from scipy.stats import chi2

    return float(np.std(d, ddof=1) * math.sqrt((n - 1) / chi2.ppf(1 - SD_CONFIDENCE, n - 1)))


def figures(diffs: Any, delta: float, level: float, *, significant: bool,
            test: str = "mean") -> PlanningFigures:
    """The comparison's planning figures at ``level``: ``mde_power80``, ``seeds_needed`` (None
    when significant) and their :class:`PlanningBasis` (level, min_seeds, which test, the
    assumption, what effect seeds_needed is for), of the sign-flip test of ``diffs`` at the
    sd bound of :func:`planning_sd`."""
    d = np.asarray(diffs, dtype=float)
    n, sd = len(d), planning_sd(d)
    mde = signflip.mde_power80(n, sd, level)
    needed = None if significant else signflip.seeds_needed(delta, sd, level)
    of_mean_test = test in ("sign", "wilcoxon")
    basis = PlanningBasis(level=level, min_seeds=signflip.min_pairs(level),
                          assumption=ASSUMPTION,
                          test=("mean " if of_mean_test else "") + "sign-flip test",
                          seeds_needed_for=POST_HOC)
    return PlanningFigures(mde, needed, basis, of_mean_test=of_mean_test)
