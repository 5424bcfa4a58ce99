"""Two-sided equivalence (TOST) and the claim-aware practical verdict of one comparison.

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

Under an equivalence claim a shown equivalence outranks a significant difference (a difference
smaller than the margin is what the claim allows, as a within-margin harm is non-inferior):
equivalent > helps > non-inferior > harms > inconclusive. Pure numpy over per-seed lists.
"""
from __future__ import annotations

import numpy as np

from benchkit.stats import selection, signtest as robust, paired as stats

CLAIM = "equivalence"
VERDICT = "equivalent"


def tost(baseline, idea, *, direction: str, margin: float, level: float) -> dict:
    """Both one-sided sign-flip tests of the margin; ``equivalent`` when both p < level."""
    b = np.asarray(stats._array(baseline, "baseline"))
    i = np.asarray(stats._array(idea, "idea"))
    if len(b) != len(i):
        raise ValueError(f"baseline and idea differ in length: {len(b)} vs {len(i)}")
    if not (np.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    worse_by = (i - b) if stats._direction(direction) == "lower" else (b - i)
    allowed = margin * np.abs(b)
    p_worse = stats.one_sided_sign_flip_p(worse_by - allowed)
    p_better = stats.one_sided_sign_flip_p(-worse_by - allowed)
    return {"margin_rel": float(margin), "margin_abs": float(margin * np.abs(b).mean()),
            "p_worse": float(p_worse), "p_better": float(p_better),
            "p_value": float(max(p_worse, p_better)), "level": float(level),
            "equivalent": bool(max(p_worse, p_better) < level)}


def verdict(comp: dict, baseline, idea, *, direction: str, level: float, family_size: int,
            claim_type: str, margin_level: float | None = None,
            sweeps: selection.Sweeps | None = None) -> str:
    """The practical verdict of one comparison at this look's ``level``: the margin tests
    (non-inferiority when a margin is declared, TOST under an equivalence claim) are redone
    at ``margin_level`` (default ``level``; the union-bound level under an exact boundary,
    which is calibrated for the two-sided test only) / family_size (Holm's first step) and
    stored in ``comp``; selection-aware (:mod:`.selection`) when the arms' ``sweeps`` are
    given, else on the selected configs' per-seed values."""
    test_level = (level if margin_level is None else margin_level) / family_size
    ni = comp.get("noninferiority")
    if ni and sweeps is not None:
        comp["noninferiority"] = ni = selection.noninferiority(
            sweeps, direction, ni["margin_rel"], test_level)
    elif ni:
        comp["noninferiority"] = ni = stats.noninferiority(
            baseline, idea, direction=direction, margin=ni["margin_rel"], alpha=test_level)
    if claim_type == CLAIM and ni:
        comp["equivalence"] = (
            tost(baseline, idea, direction=direction, margin=ni["margin_rel"], level=test_level)
            if sweeps is None else selection.tost(sweeps, direction, ni["margin_rel"],
                                                  test_level))
        if comp["equivalence"]["equivalent"]:
            return VERDICT
    p = comp["p_adjusted"]
    return stats.practical_verdict(p if p is not None else comp["p_value"],
                                   robust.verdict_delta(comp), direction, level,
                                   non_inferior=ni["non_inferior"] if ni else None,
                                   p_harms=comp.get("p_adjusted_harms"))
