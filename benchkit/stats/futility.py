"""An optional, non-binding futility stop for declared looks: ``pytest.mark.bench(futility=0.1)``.

At every look but the last whose verdict is inconclusive, the report gives the conditional
power: the chance that the last look would find the idea significantly better if the effect
seen so far is the true one (Lan-Wittes B-value, current trend, normal approximation):

    CP = 1 - Phi((z_last - z / sqrt(t)) / sqrt(1 - t)),   t = seeds now / seeds at the last look,

with z the standardised improvement so far (the paired t statistic of the mean test; under
``test="sign"``, (wins - losses) / sqrt(wins + losses)) and z_last the two-sided critical value
of the last look's union-bound level over the family size. Below the declared threshold the
report recommends stopping: the next looks would very likely stay inconclusive.

The advice is written into the report by :func:`benchkit.verdict.decision.futility_advice`.
Non-binding: the recommendation changes no level and no verdict (the verdict stays
``inconclusive``), so every look's level and the family-wise error are those of the plan
without it; stopping only gives up chances to reject. Superiority claims only.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from benchkit.stats.values import checked_direction

def improvement_z(diffs: ArrayLike, direction: str, test: str = "mean") -> float:
    """The standardised improvement so far, positive when the idea is better: the paired t
    statistic (mean test) or (wins - losses) / sqrt(wins + losses) (sign test); +-inf for a
    constant nonzero difference, 0 when there is no signal."""
    d = np.asarray(diffs, dtype=float).reshape(-1)
    better = -d if checked_direction(direction) == "lower" else d
    if test == "sign":
        wins, losses = int(np.count_nonzero(better > 0)), int(np.count_nonzero(better < 0))
        return (wins - losses) / math.sqrt(wins + losses) if wins + losses else 0.0
    mean = float(better.mean())
    sd = float(better.std(ddof=1)) if len(better) > 1 else 0.0
    if sd == 0.0:
        return math.copysign(math.inf, mean) if mean else 0.0
    return mean / (sd / math.sqrt(len(better)))


def conditional_power(z: float, n: int, n_last: int, level: float) -> float:
    """P(the last look's two-sided test at ``level`` finds the idea better | the current
    trend), for a standardised improvement ``z`` after ``n`` of ``n_last`` seeds."""
    if not 0 < n < n_last:
        raise ValueError(f"need 0 < n < n_last, got n={n}, n_last={n_last}")
    t = n / n_last
    z_last = NormalDist().inv_cdf(1.0 - level / 2.0)
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return 1.0 - NormalDist().cdf((z_last - z / math.sqrt(t)) / math.sqrt(1.0 - t))
