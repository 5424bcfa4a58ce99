"""Sequential seeds (looks): the level each look of a bench is tested at.

A "look" is one session that benches more seeds of the same idea and track and tests the
comparison on all seeds so far. Testing every look at the full alpha inflates the family-wise
error (each look is another chance of a false win), so the idea declares max_seeds in advance
and the looks spend alpha along the Pocock-type Lan-DeMets function alpha(t) = alpha * ln(1
+ (e - 1) t), t = n_seeds / max_seeds clipped to [0, 1]. Look k is tested at the incremental
spend alpha(t_k) - alpha(t_{k-1}): by the union bound the chance of any false rejection is at
most the sum of the levels, alpha, whatever the correlation between looks (conservative: the
looks share seeds, so the true error is smaller). With max_seeds == seeds (the default) there
is one look at the full alpha, exactly as v1. numpy only (an integer's type); plain floats out
(:mod:`benchkit.stats.paired` gives these as ``paired.look_levels`` and
``paired.spent_alpha`` too)."""
from __future__ import annotations

import math

import numpy as np


def _count(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {type(value).__name__}: {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return alpha


def spent_alpha(n_seeds: int, max_seeds: int, alpha: float) -> float:
    """Alpha spent once n_seeds of max_seeds are in: alpha * ln(1 + (e - 1) t), with
    t = n_seeds / max_seeds clipped to [0, 1]. 0 at no seeds, exactly alpha from max_seeds on."""
    n = _count(n_seeds, "n_seeds", 0)
    m = _count(max_seeds, "max_seeds", 1)
    alpha = _alpha(alpha)
    t = min(1.0, n / m)
    if t >= 1.0:
        return alpha  # exactly: a single look at max_seeds is the v1 test at alpha
    return float(min(alpha, alpha * math.log1p((math.e - 1.0) * t)))


def look_levels(looks_n: list[int], max_seeds: int, alpha: float) -> list[float]:
    """Nominal level of each look, in order: the incremental spend
    spent_alpha(n_k) - spent_alpha(n_{k-1}). A look beyond max_seeds (an extension nobody
    planned) gets level 0: it can never be significant. The levels sum to at most alpha
    (exactly, in floating point too).

    looks_n: seeds in at each look, strictly increasing positive integers."""
    m = _count(max_seeds, "max_seeds", 1)
    alpha = _alpha(alpha)
    looks = [_count(n, f"looks_n[{k}]", 1) for k, n in enumerate(looks_n)]
    for k in range(1, len(looks)):
        if looks[k] <= looks[k - 1]:
            raise ValueError(
                f"looks must be strictly increasing seed counts (each look adds seeds to the "
                f"previous ones), got looks_n={looks}: look {k} has {looks[k]} seeds after "
                f"look {k - 1} had {looks[k - 1]}")
    levels: list[float] = []
    for n in looks:
        if n > m:
            levels.append(0.0)
            continue
        target = spent_alpha(n, m, alpha)
        level = max(0.0, target - math.fsum(levels))
        # rounding must never let the cumulative spend exceed the planned spend
        while level > 0.0 and math.fsum(levels + [level]) > target:
            level = math.nextafter(level, 0.0)
        levels.append(float(level))
    return levels
