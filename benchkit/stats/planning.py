"""The planning figures of a comparison, of the test that decides it.

``mde_power80`` is the effect the deciding test detects 80% of the time on benches like this
one, and ``seeds_needed`` the seeds at which the observed difference would be that effect (a
post-hoc figure: the observed difference is an estimate, so it is labelled as such). With a
sweep of more than one config per arm the deciding test is the selection-aware one, whose
power is simulated on the bench's own sweeps (:func:`benchkit.stats.selection.mde_power80`);
with one config per arm it is the plain sign-flip test (:mod:`benchkit.stats.signflip`). Under
``test="sign"`` or ``"wilcoxon"`` the figures stay those of the mean test, and their names say
so (``mde_power80_mean_test``, ``seeds_needed_mean_test``). numpy only; plain values out.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from benchkit.stats import selection, signflip

POST_HOC = ("the observed delta_mean (post hoc: an estimate of the effect, not a planned "
            "target)")


def figures(diffs: Any, delta: float, level: float, *, significant: bool,
            sweeps: selection.Sweeps | None = None, direction: str = "lower",
            test: str = "mean") -> dict[str, Any]:
    """The comparison's planning fields at ``level``: ``mde_power80``, ``seeds_needed`` (None
    when significant) and ``planning`` (level, min_seeds, which test, the assumption, what
    effect seeds_needed is for)."""
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
    suffix = "_mean_test" if test in ("sign", "wilcoxon") else ""
    out: dict[str, Any] = {"mde_power80": None, "seeds_needed": None} if suffix else {}
    out.update({f"mde_power80{suffix}": mde, f"seeds_needed{suffix}": needed,
                "planning": {"level": level, "min_seeds": signflip.min_pairs(level),
                             "test": ("mean " if suffix else "") + of,
                             "seeds_needed_for": POST_HOC, "assumption": assumption}})
    return out
