"""Statistics that only the simulations and tests need, kept out of the benchkit package:
the reasoning behind sequential look levels, the sequential decision rule, a batched
sign-flip p for Monte Carlo replicates, a rejection rate with its Clopper-Pearson interval,
and the t-approximation power of the paired test. Each builds on :mod:`benchkit.stats.paired` and is
checked against it in ``tests/stats/test_sequential.py``.

Import it with ``benchmarks/stats/`` on ``sys.path`` (the scripts here run from it;
benchmarks/calibration/calibration.py adds it).
"""
from __future__ import annotations

import math

import numpy as np

from benchkit.stats import looks, paired


def sequential_plan(looks_n: list[int], max_seeds: int, alpha: float) -> list[dict]:
    """look_levels with the reasoning a report shows: per look its seeds, information
    fraction t, cumulative spend, level, whether it was planned, whether its level is
    attainable by the sign-flip test at all (min_p_value(n) < level) and a note saying why."""
    levels = paired.look_levels(looks_n, max_seeds, alpha)
    m, alpha = int(max_seeds), float(alpha)
    plan, spent = [], []
    for k, (n, level) in enumerate(zip(looks_n, levels)):
        n = int(n)
        spent.append(level)
        planned = n <= m
        if not planned:
            note = (f"unplanned extension: {n} seeds exceed max_seeds={m} declared before the "
                    f"first look; the alpha was all planned for looks up to {m} seeds, so this "
                    f"look is tested at level 0 and cannot be significant (declare a larger "
                    f"max_seeds in pytest.mark.bench before benching, to allow it)")
        elif len(levels) == 1 and n == m:
            note = f"single planned look at max_seeds={m}: tested at the full alpha={alpha:g}"
        else:
            note = (f"look {k + 1} at {n}/{m} seeds (t={n / m:.3g}): alpha spent so far "
                    f"{math.fsum(spent):.4g} of {alpha:g}; this look is tested at level "
                    f"{level:.4g}, the increment of the spending function")
        attainable = paired.min_p_value(n) < level
        if planned and not attainable:
            note += (f"; but with {n} pairs the smallest two-sided sign-flip p is "
                     f"2^(1-{n}) = {paired.min_p_value(n):.4g}, not below {level:.4g}, so this "
                     f"look "
                     f"cannot reject")
        plan.append({"look": k + 1, "n_seeds": n, "t": min(1.0, n / m),
                     "spent": float(math.fsum(spent)), "level": float(level),
                     "planned": planned, "attainable": attainable, "note": note})
    return plan


def sequential_decision(p_values: list[float], levels: list[float]) -> dict:
    """Reject H0 at the first look whose p is strictly below its level (as compare's p < alpha).

    Returns {"rejected_at": index of that look or None, "levels": ..., "p_values": ...}."""
    p = [float(x) for x in p_values]
    lv = [float(x) for x in levels]
    if len(p) != len(lv):
        raise ValueError(f"p_values and levels differ in length: {len(p)} vs {len(lv)} "
                         "(one level per look, see look_levels)")
    for name, values in (("p_values", p), ("levels", lv)):
        bad = [x for x in values if not (math.isfinite(x) and 0.0 <= x <= 1.0)]
        if bad:
            raise ValueError(f"{name} must be numbers in [0, 1], got {bad}")
    rejected = next((k for k, (pk, lk) in enumerate(zip(p, lv)) if pk < lk), None)
    return {"rejected_at": rejected, "levels": lv, "p_values": p}


def sign_flip_p_values(diffs_rows, *, exact_max: int = 16, n_resamples: int = 20000,
                       seed: int = 0, chunk: int = 128) -> list[float]:
    """sign_flip_p_value of every row of a 2-D array (rows = replicates, columns = pairs),
    batched for speed in simulations. Exact rows (n <= exact_max) equal sign_flip_p_value
    row by row; above exact_max each row is sign_flip_p_value with the same seed."""
    d = np.asarray(diffs_rows, dtype=float)
    if d.ndim != 2 or d.shape[1] == 0:
        raise ValueError(f"diffs_rows must be a 2-D array with >= 1 column, got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("diffs_rows contain non-finite values (NaN or inf)")
    n = d.shape[1]
    if n > exact_max:
        return [paired.sign_flip_p_value(row, exact_max=exact_max, n_resamples=n_resamples,
                                        seed=seed)
                for row in d]
    # patterns with the first sign fixed: the other half are their negations, same |sum|
    bits = (np.arange(2 ** (n - 1))[:, None] >> np.arange(n - 1)) & 1
    signs = np.hstack([np.ones((len(bits), 1)), 1.0 - 2.0 * bits])
    out = np.empty(len(d))
    for a in range(0, len(d), chunk):
        block = d[a:a + chunk]
        thr = np.abs(block.sum(axis=1)) - paired.REL_TOL * np.abs(block).sum(axis=1)
        hits = np.count_nonzero(np.abs(block @ signs.T) >= thr[:, None], axis=1)
        out[a:a + chunk] = hits / len(signs)
    out[~np.any(d, axis=1)] = 1.0
    return [float(x) for x in out]


def clopper_pearson(k: int, n: int, conf: float = 0.95) -> list[float]:
    """Exact (Clopper-Pearson) two-sided confidence interval [lo, hi] of a binomial rate."""
    k, n = looks._count(k, "k", 0), looks._count(n, "n", 1)
    if k > n:
        raise ValueError(f"k must be <= n, got k={k}, n={n}")
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be in (0, 1), got {conf}")
    from scipy import special

    tail = (1.0 - conf) / 2.0
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, tail))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1.0 - tail))
    return [lo, hi]


def rate(k: int, n: int) -> dict:
    """k rejections of n as {k, n, rate, ci95} (Clopper-Pearson; None for an empty count)."""
    lo, hi = clopper_pearson(k, n) if n else (None, None)
    return {"k": int(k), "n": int(n), "rate": k / n if n else None, "ci95": [lo, hi]}


def paired_t_power(delta: float, sd: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test (the t approximation behind power_mde) to detect
    a true mean difference delta with n pairs whose differences have standard deviation sd."""
    n = looks._count(n, "n", 2)
    if not (math.isfinite(delta) and math.isfinite(sd)) or sd < 0:
        raise ValueError(f"delta must be finite and sd finite >= 0, got {delta}, {sd}")
    if sd == 0:
        return 1.0 if delta != 0 else float(alpha)
    return paired.t_test_power(abs(delta) / sd * math.sqrt(n), n, looks._alpha(alpha))
