"""Whether a declared margin can be shown at all with the seeds declared: a margin below what
the seeds resolve gives a claim that even an identical arm rarely passes, so the report says
so, as it does for a seed count that cannot reach significance. Pure Python over a comparison
record.
"""
from __future__ import annotations

import math

import numpy as np

from benchkit.stats import paired
from benchkit.stats import signflip
from benchkit.verdict.records import Comparison

TARGET = 0.8


def unresolved_margin(comp: Comparison, comparator: list[float], level: float) -> str | None:
    """A warning when an arm exactly as good as the comparator would be shown non-inferior
    with probability below TARGET: the one-sided margin test at ``level`` on n seeds of
    normal differences with the observed sd (the planning assumption; the one-sided test at
    level as the two-sided one at 2 * level); None when it resolves the margin."""
    ni = comp.noninferiority
    d = np.asarray(comp.per_seed_diffs, dtype=float)
    if ni is None or ni.margin_abs is None or len(d) < 2:
        return None
    sd, n, two_sided = float(np.std(d, ddof=1)), len(d), min(1.0, 2.0 * level)
    if not (math.isfinite(sd) and sd > 0):
        return None
    shown = signflip.power(n, ni.margin_abs / sd, two_sided)
    if shown >= TARGET:
        return None
    scale = float(np.mean(np.abs(comparator)))
    needed = paired.power_mde(n, sd, two_sided, TARGET)  # the t approximation: cheap, "about"
    need = (f"; {TARGET:.0%} needs a margin of about {needed / scale:.1%} of the comparator's "
            f"mean" if math.isfinite(needed) and scale > 0 else "")
    return (f"the margin {ni.margin_rel:.1%} ({ni.margin_abs:.4g} in metric units) is below "
            f"what {n} seeds resolve at level {level:.4g}: an idea exactly as good as the "
            f"comparator would be shown non-inferior with probability about {shown:.2f} "
            f"(normal differences with the observed sd {sd:.4g}){need}, or more seeds")
