"""Two-sided equivalence (TOST) of one comparison: the numbers (the verdict it enters is
:func:`benchkit.verdict.decision.claim_verdict`'s).

``claim_type="equivalence"`` with ``margin=m`` claims the idea is practically equal to its
comparator: neither worse nor better by ``m`` of the comparator's metric. Per seed, with
``worse_by`` the idea's loss in the metric's direction (idea - baseline for lower is better,
baseline - idea for higher),

    w_worse  = worse_by - m * |baseline|     (H0: mean(w_worse)  >= 0, the idea worse by m or more)
    w_better = -worse_by - m * |baseline|    (H0: mean(w_better) >= 0, the idea better by m or more)

and each is tested by the one-sided sign-flip test at the look's level (over the Holm family,
as non-inferiority is). Equivalent when both reject: the intersection-union argument makes the
pair a level-``level`` test of "the difference lies outside the margin" without splitting the
level. The margin scales with each seed's baseline, so it is not treated as a known constant.
Pure numpy over per-seed lists; the figures come out as a frozen :class:`EquivalenceTest`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from benchkit.codec import JsonRecord
from benchkit.stats import paired
from benchkit.stats.values import checked_direction, finite_array


@dataclass(frozen=True)
class EquivalenceTest(JsonRecord):
    """Both one-sided margin tests of a comparison (TOST): the margin, relative and in metric
    units (over the comparator's mean), each side's p, the larger (``p_value``), the level they
    were tested at and whether both are below it. :meth:`to_json` gives the comparison's
    ``equivalence`` object, keys in the report's order."""

    margin_rel: float
    margin_abs: float
    p_worse: float
    p_better: float
    p_value: float
    level: float
    equivalent: bool


def tost(baseline: ArrayLike, idea: ArrayLike, *, direction: str, margin: float,
         level: float) -> EquivalenceTest:
    """Both one-sided sign-flip tests of the margin; ``equivalent`` when both p < level."""
    b = np.asarray(finite_array(baseline, "baseline"))
    i = np.asarray(finite_array(idea, "idea"))
    if len(b) != len(i):
        raise ValueError(f"baseline and idea differ in length: {len(b)} vs {len(i)}")
    if not (np.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    worse_by = (i - b) if checked_direction(direction) == "lower" else (b - i)
    allowed = margin * np.abs(b)
    p_worse = paired.one_sided_sign_flip_p(worse_by - allowed)
    p_better = paired.one_sided_sign_flip_p(-worse_by - allowed)
    return EquivalenceTest(
        margin_rel=float(margin), margin_abs=float(margin * np.abs(b).mean()),
        p_worse=float(p_worse), p_better=float(p_better),
        p_value=float(max(p_worse, p_better)), level=float(level),
        equivalent=bool(max(p_worse, p_better) < level))
