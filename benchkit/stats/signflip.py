"""Figures that describe the sign-flip test benchkit decides with, at the level it is tested at.

- :func:`sign_flip_ci`: the interval of shifts c that the test would not reject on
  ``diffs - c``, so that it excludes 0 exactly when the test's p is below the level (a
  report's ``comparison.ci95`` is this interval at the level its verdict was decided at).
- :func:`power`, :func:`mde_power80`, :func:`seeds_needed`: planning figures for the sign-flip
  test at a given level, by seeded simulation (normal per-seed differences, the stated
  assumption), never below the smallest seed count at which ``p < level`` is possible.

numpy only at import; every value returned is a plain float/int/None.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from benchkit.stats import paired

EXACT_MAX = 16       # as benchkit.stats.paired.sign_flip_p_value: exact enumeration up to 16 pairs
N_RESAMPLES = 20000  # and seeded Monte Carlo (1 + count) / (1 + N_RESAMPLES) above
SIM_REPS = 2000      # simulated benches per power figure (Monte Carlo SE <= 0.011)
SIM_FLIPS = 2048     # sign flips per simulated bench above 11 pairs (random, seeded)
T_FROM = 41          # from this many pairs the paired t power stands in for the simulation
ASSUMPTION = ("planning figure: assumes normal per-seed differences whose true mean and sd "
              "are the observed ones, tested by the sign-flip test at the stated level")


def min_pairs(level: float) -> int:
    """The smallest n at which a two-sided sign-flip p (>= 2^(1-n)) can be below level."""
    if not 0 < level <= 1:
        raise ValueError(f"level must be in (0, 1], got {level}")
    n = 2
    while 2.0 ** (1 - n) >= level:
        n += 1
    return n


def _flips(n: int, seed: int = 0) -> np.ndarray:
    """The sign matrix of the test: all 2^n flips up to EXACT_MAX pairs, else the seeded draw
    benchkit.stats.paired.sign_flip_p_value makes (same generator, same chunks)."""
    if n <= EXACT_MAX:
        return paired.exact_signs(n)
    rng = np.random.default_rng(seed)
    chunks, left = [], N_RESAMPLES
    while left > 0:
        k = min(left, max(1, 2_000_000 // n))
        chunks.append(rng.integers(0, 2, size=(k, n)) * 2.0 - 1.0)
        left -= k
    return np.concatenate(chunks)


def sign_flip_ci(diffs: ArrayLike, level: float, *, seed: int = 0) -> list[float | None]:
    """[lo, hi]: every shift c for which the sign-flip test of ``diffs - c`` has p >= level.

    For one flip s, |s.(d - c)| >= |sum(d - c)| holds on a closed interval of c around mean(d)
    (a concave quadratic inequality), so the count of such flips, hence p(c), rises to the mean
    and falls after it: the accepted set is one interval, whose ends are order statistics of
    the flips' interval ends. None for an end that is unbounded (too few pairs for p < level).
    0 lies outside [lo, hi] exactly when the test's p on ``diffs`` is below level; ends within
    float rounding of 0 are placed on the side that p says."""
    d = np.asarray(diffs, dtype=float).reshape(-1)
    n = len(d)
    if n < 1 or not np.all(np.isfinite(d)):
        raise ValueError(f"diffs must be finite and non-empty, got {d.tolist()}")
    signs = _flips(n, seed)
    total = len(signs) if n <= EXACT_MAX else N_RESAMPLES + 1
    base = 0 if n <= EXACT_MAX else 1  # the Monte Carlo estimate counts the observed flip once
    rejects = paired.sign_flip_p_value(d, seed=seed) < level
    return interval_of_rows(signs @ d, signs.sum(axis=1), float(d.sum()), n,
                            math.ceil(level * total) - base, rejects,
                            scale=float(np.abs(d).max()))


def interval_of_rows(a: np.ndarray, k: np.ndarray, s: float, n: int, need: int, rejects: bool,
                     *, scale: float) -> list[float | None]:
    """The accepted shifts c of a flip test whose row r sums to a_r - c k_r and whose observed
    sum is s - c n: the test keeps p >= level while at least ``need`` rows have
    |a_r - c k_r| >= |s - c n| (rows counted at every c already taken out of ``need``).
    ``rejects``: whether the test rejects at c = 0, to place an end within float rounding of
    0 on its side; ``scale``: the size of the differences, for that rounding."""
    return intervals_of_rows(a[None, :], k, [s], n, need, [rejects], scale=[scale])[0]


def intervals_of_rows(a: np.ndarray, k: np.ndarray, s: Sequence[float], n: int,
                      need: int | Sequence[int], rejects: Sequence[bool], *,
                      scale: Sequence[float], twice: bool = False) -> list[list[float | None]]:
    """:func:`interval_of_rows` of several tests of one flip matrix (``k``, ``n``) at once:
    row t of ``a`` and ``s[t]``, ``rejects[t]``, ``scale[t]`` are test t's, and ``need`` its
    (one for all, or one a test: each test's level). Each element's arithmetic is the one
    test's (the same floats), made in one pass for all (a selection-aware interval takes one
    per config, a report one per comparison: their flips computed together). ``twice``: each
    flip stands for itself and its complement (every sign negated: a_r and k_r negated, the
    same roots), so each root counts twice (half an exact test's flips given)."""
    s_ = np.asarray(s, dtype=float)[:, None]
    m = s_ / n
    const = np.abs(k) == n          # all-equal signs count at every c
    taken = int(np.count_nonzero(const)) * (2 if twice else 1)
    # twice: the need-th of each root doubled is the ceil(need / 2)-th of the roots
    needs = [-(-(v - taken) // 2) if twice else v - taken
             for v in ([need] * len(s) if isinstance(need, int) else need)]
    out: list[list[float | None]] = [[None, None] for _ in s]
    todo = [v for v in dict.fromkeys(needs) if v > 0]
    if not todo:
        return out
    k, a = k[~const], a[:, ~const]
    qa, qb, qc = k * k - n * n, -2.0 * (a * k - s_ * n), a * a - s_ * s_
    disc = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    roots = ((-qb + disc) / (2 * qa), (-qb - disc) / (2 * qa))
    r1, r2 = np.minimum(*roots), np.maximum(*roots)
    r1, r2 = np.minimum(r1, m), np.maximum(r2, m)  # every interval holds the mean (rounding)
    for v in todo:   # the tests of one need together
        rows = [t for t, x in enumerate(needs) if x == v]
        ends: list[list[float | None]]
        if v > r1.shape[1]:
            ends = [[float(m[t, 0]), float(m[t, 0])] for t in rows]
        else:   # the need-th smallest of r1 and the need-th largest of r2 (partition)
            one = len(rows) == len(needs)
            lo_rows, hi_rows = (r1, r2) if one else (r1[rows], r2[rows])
            los = np.partition(lo_rows, v - 1, axis=1)[:, v - 1].tolist()
            his = np.partition(hi_rows, hi_rows.shape[1] - v, axis=1)[
                :, hi_rows.shape[1] - v].tolist()
            ends = [_rounded(lo, hi, rejects[t], scale[t]) for t, lo, hi in zip(rows, los, his)]
        for t, end in zip(rows, ends):
            out[t] = end
    return out


def _rounded(lo: float, hi: float, rejects: bool, scale: float) -> list[float | None]:
    """[lo, hi] with an end within float rounding of 0 put on the side the test's p says."""
    eps = 1e-9 * max(1.0, scale)
    if rejects and lo <= 0 <= hi:      # 0 at an end, within rounding: the test's side
        lo, hi = ((math.nextafter(0.0, 1.0), hi) if abs(lo) <= eps
                  else (lo, math.nextafter(0.0, -1.0)))
    elif not rejects and not lo <= 0 <= hi:
        lo, hi = (min(lo, 0.0), max(hi, 0.0))
    return [lo, hi]


def _p_values(d: np.ndarray, signs: np.ndarray, exact: bool) -> np.ndarray:
    """Sign-flip p of each row of d against the flips in ``signs``, in float64 with the
    tolerance of benchkit.stats.paired.sign_flip_p_value, so that the observed flip always
    counts."""
    out = np.empty(len(d))
    tol = paired.REL_TOL * np.abs(d).sum(axis=1)
    for i in range(0, len(d), 256):
        block = d[i:i + 256]
        obs = np.abs(block.sum(axis=1)) - tol[i:i + 256]
        count = (np.abs(block @ signs.T) >= obs[:, None]).sum(axis=1)
        out[i:i + 256] = count / len(signs) if exact else (1 + count) / (1 + len(signs))
    return out


def _exact_p_values(d: np.ndarray) -> np.ndarray:
    """The exact sign-flip p of each row of d (up to EXACT_MAX pairs) by meet in the middle:
    the 2^h sums of the first h pairs' flips against the sorted 2^(n-h) sums of the rest,
    counting pairs with |a + b| >= |sum| (the tolerance of sign_flip_p_value)."""
    n = d.shape[1]
    h = n // 2
    out = np.empty(len(d))
    first, rest = _flips(h), _flips(n - h)
    for r, row in enumerate(d):
        a = first @ row[:h]
        b = np.sort(rest @ row[h:])
        t = abs(row.sum()) - paired.REL_TOL * np.abs(row).sum()
        count = (len(b) - np.searchsorted(b, t - a, side="left")).sum() \
            + np.searchsorted(b, -t - a, side="right").sum()
        out[r] = min(count, 2 ** n) / 2 ** n if t > 0 else 1.0
    return out


def sim_flips(level: float) -> int:
    """Random flips per simulated bench above EXACT_MAX pairs: enough for p < level to be
    seen (50 / level), never fewer than SIM_FLIPS nor more than the test draws."""
    return int(min(N_RESAMPLES, max(SIM_FLIPS, math.ceil(50 / level))))


@functools.lru_cache(maxsize=4096)
def power(n: int, effect_sd: float, level: float, *, reps: int = SIM_REPS,
          seed: int = 0) -> float:
    """P(sign-flip p < level) with n pairs whose differences are normal with mean effect_sd
    and sd 1, by a seeded simulation of ``reps`` benches (the same draws for every effect,
    so power rises with the effect), each tested as benchkit tests: exactly up to EXACT_MAX
    pairs (all flips to 11, meet in the middle above), with sim_flips(level) seeded flips
    above; the paired t-test's power from T_FROM pairs, where the two agree."""
    if n < min_pairs(level):
        return 0.0
    if n >= T_FROM:
        return _t_power_of_effect(abs(effect_sd), n, level)
    rng = np.random.default_rng([seed, n])
    d = rng.standard_normal((reps, n)) + abs(effect_sd)
    if n <= 11:
        return float(np.mean(_p_values(d, _flips(n), True) < level))
    if n <= EXACT_MAX:
        return float(np.mean(_exact_p_values(d) < level))
    if 1.0 / (1 + N_RESAMPLES) >= level:
        return 0.0  # the test's Monte Carlo p never goes below 1 / (1 + N_RESAMPLES)
    signs = rng.integers(0, 2, size=(sim_flips(level), n)) * 2.0 - 1.0
    return float(np.mean(_p_values(d, signs, False) < level))


def _t_power_of_effect(effect_sd: float, n: int, level: float) -> float:
    """The paired t-test's power at a standardised effect (mean / sd of the differences)."""
    return paired.t_test_power(effect_sd * math.sqrt(n), n, level)


def mde_power80(n: int, sd: float, level: float, target: float = 0.8) -> float | None:
    """The true mean difference the sign-flip test at ``level`` detects with probability
    ``target`` on n pairs of normal differences with standard deviation sd; None when no
    effect can be (p < level is impossible with n pairs)."""
    if n < min_pairs(level) or not math.isfinite(sd):
        return None
    if sd == 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while power(n, hi, level) < target:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            return None
    while hi - lo > 5e-3 * hi:  # common random numbers: power(.) is monotone in the effect
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if power(n, mid, level) >= target else (mid, hi)
    return float(hi * abs(sd))


def seeds_needed(delta: float, sd: float, level: float, target: float = 0.8,
                 max_n: int = 10000) -> int | None:
    """The fewest pairs (never fewer than :func:`min_pairs`) at which the sign-flip test at
    ``level`` detects a true mean difference |delta| of normal differences with sd ``sd``
    with probability ``target``; None when undefined (delta or sd 0 or not finite) or above
    max_n."""
    if delta == 0 or sd == 0 or not (math.isfinite(delta) and math.isfinite(sd)):
        return None
    es = abs(delta) / abs(sd)
    first = min_pairs(level)

    def ok(k: int) -> bool:
        return bool(power(k, es, level) >= target)

    if not ok(max_n):
        return None
    lo, hi = first - 1, max_n  # invariant: not ok(lo) (no test below first), ok(hi)
    guess = max(first, _t_seeds(es, level, target, max_n))  # start near the t answer
    if ok(guess):
        hi = guess
        while hi - 1 >= first and ok(hi - 1):
            hi -= 1
        return hi
    lo = guess
    while hi - lo > 1:  # power rises with n (up to simulation noise): bisection
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return int(hi)


def _t_seeds(es: float, level: float, target: float, max_n: int) -> int:
    """The paired t-test's answer: where the search for the sign-flip one starts."""
    lo, hi = 1, max_n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _t_power_of_effect(es, mid, level) >= target else (mid, hi)
    return hi
