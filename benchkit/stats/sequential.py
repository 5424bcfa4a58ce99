"""Group-sequential boundaries from the exact joint sign-flip null (``boundary="exact"``).

The default boundary (``"union"``, :func:`benchkit.stats.paired.look_levels`) tests look k at the
increment of the spending function alpha(t) = alpha * ln(1 + (e - 1) t): by the union bound all
looks together err at most alpha, whatever their correlation, which wastes level because the
looks share seeds and because the sign-flip p is discrete.

``boundary="exact"`` spends the same function, but on the exact joint null of the looks. Under
H0 each seed's difference is symmetric about 0, so, given the magnitudes |d_1..d_n| of the
seeds in so far, the signs are independent fair coins and every look's p is a function of the
sign vector. The level of look k is the largest one at which

    P(some look 1..k rejects | |d_1..d_{n_k}|) <= alpha(t_k),

where each earlier look j is tested at its own level, computed the same way from the first
n_j seeds (so a look's level depends only on the plan and the runs up to that look). The
final look spends exactly alpha, so the family-wise error is <= alpha conditionally on the
magnitudes, hence unconditionally. Enumerated over all 2^n_k sign vectors up to 16 seeds;
above, over SIM_ROWS sign vectors drawn with a fixed seed (an approximation, like the Monte
Carlo p above 16 seeds).

Only the two-sided sign-flip test is calibrated: margin tests (non-inferiority, equivalence)
and Holm families of more than one comparison keep the union-bound levels.

:func:`three_way` is the budget check's sequential rule (docs/statistics.md): at a few looks,
whether every value and a one-sided t bound put the median above or below a threshold (a sign
test, valid for any continuous distribution, with the t bound as well). numpy, and scipy for
the t quantile.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from benchkit.stats import paired, pairtest
from benchkit.stats.values import finite_array
from benchkit.stats import selection

EXACT_MAX = 16
SIM_ROWS = 20000
SIM_SEED = 0
EXACT_RULE = ("Pocock-type Lan-DeMets alpha spending over the looks declared in "
              "pytest.mark.bench, alpha(t) = alpha*ln(1+(e-1)t) with t = n_seeds/last look, spent "
              "on the exact joint sign-flip null of the looks given the seeds' magnitudes "
              "(boundary='exact'): each look's level is the largest at which P(some look so far "
              "rejects) <= alpha(t), exact up to 16 seeds, 20000 seeded sign vectors above; "
              "margin tests and families of several comparisons keep the union-bound levels")


@functools.lru_cache(maxsize=8)
def _signs(n: int) -> np.ndarray:
    """Every sign vector of n seeds (row r flips seed j when bit j of r is set), or SIM_ROWS
    seeded ones above EXACT_MAX. Cached: callers never write to it."""
    if n <= EXACT_MAX:
        return paired.exact_signs(n)
    return np.random.default_rng(SIM_SEED).integers(0, 2, size=(SIM_ROWS, n)) * 2.0 - 1.0


def _p_per_row(signs: np.ndarray, d: np.ndarray, sw: selection.Sweeps | None = None,
               direction: str = "lower") -> np.ndarray:
    """Two-sided sign-flip p of each row's flipped prefix ``d``, from the rows' own null (the
    rows cover the prefix's flips uniformly): the fraction of rows with |sum| >= that row's,
    with stats.sign_flip_p_value's tolerance for float ties. With the arms' sweeps ``sw``
    (:mod:`.selection`), each row's p is the selection-aware test's on the first len(d)
    seeds, cross-fitted on them, every paired test of it flipped alike
    (:func:`row_p_values`)."""
    if sw is not None:
        return row_p_values(prefix(sw, len(d)), direction, signs[:, :len(d)])
    return pairtest.row_p_values(d, signs[:, :len(d)])


def exact_levels(diffs: ArrayLike, looks: Sequence[int], alpha: float, max_seeds: int | None = None,
                 *, sweeps: selection.Sweeps | None = None,
                 direction: str = "lower") -> list[float]:
    """The level of each look in ``looks`` (seed counts, the last <= len(diffs)) of a plan
    whose last look is ``max_seeds`` (default looks[-1]), calibrated on the exact joint
    sign-flip null of the first looks[-1] differences (of the arms' whole ``sweeps``, each
    look's selection redone under every flip, when given); look k's level depends on
    diffs[:looks[k]] only. Reject look k when its p < its level."""
    d = np.asarray(finite_array(diffs, "diffs"))
    looks = [int(n) for n in looks]
    if looks[-1] > len(d):
        raise ValueError(f"looks {looks} need {looks[-1]} differences, got {len(d)}")
    spend = [paired.spent_alpha(n, int(max_seeds or looks[-1]), alpha) for n in looks]
    levels: list[float] = []
    for k, n in enumerate(looks):
        signs = _signs(n)  # every earlier look recomputed on this look's rows: prefixes
        rejected = np.zeros(len(signs), dtype=bool)
        for j in range(k):
            m = looks[j]
            if n <= EXACT_MAX:  # row r's first m signs are those of row r mod 2^m of _signs(m)
                p_j = _p_per_row(_signs(m), d[:m], sweeps, direction)[
                    np.arange(len(signs)) & (2 ** m - 1)]
            else:
                p_j = _p_per_row(signs, d[:m], sweeps, direction)
            rejected |= p_j < levels[j]
        p = _p_per_row(signs, d[:n], sweeps, direction)
        levels.append(_largest_level(p[~rejected], rejected.mean(), len(signs), spend[k]))
    return levels


def _largest_level(p_free: np.ndarray, p_before: float, rows: int, target: float) -> float:
    """The largest level L with p_before + #(p_free < L) / rows <= target: the smallest
    attainable p of this look that may not be rejected (never above target, the spend, when
    that level rejects the same rows)."""
    values = np.unique(p_free)
    counts = np.searchsorted(np.sort(p_free), values, side="right")  # rows with p <= value
    ok = p_before + counts / rows <= target + 1e-15
    k = int(np.count_nonzero(ok))  # ok is monotone: values ascending
    if k == len(values):  # every row rejected
        return float(target) if values[-1] < target else float(np.nextafter(values[-1], 2.0))
    nxt = float(values[k])
    last = float(values[k - 1]) if k else -1.0
    return float(min(nxt, target)) if last < target else nxt


def look_level(diffs: Sequence[float], looks: Sequence[int], look: int, alpha: float, *,
               sweeps: selection.Sweeps | None = None,
               direction: str = "lower") -> float:
    """The exact-boundary level of look ``look`` (1-based) of the plan ``looks``."""
    n = looks[look - 1]
    part = None if sweeps is None else prefix(sweeps, n)
    return exact_levels(list(diffs)[:n], looks[:look], alpha, looks[-1], sweeps=part,
                        direction=direction)[-1]


def levels(looks: Sequence[int], look: int | None, boundary: str, diffs: Sequence[float],
           alpha: float, family_size: int, *, sweeps: selection.Sweeps | None = None,
           direction: str = "lower") -> tuple[float, float]:
    """(level of the two-sided test, level of the margin tests) of this session's ``look``
    (1-based; None: a seed count that is no look) of the declared ``looks`` sharing alpha by
    ``boundary``: alpha for no look (exploratory, never counted: the verdict at alpha is
    descriptive only and every gate fails); the union-bound level, or the exact one for the
    two-sided test of a single comparison."""
    looks = list(looks)
    if look is None:
        return alpha, alpha
    union = paired.look_levels(looks[:look], looks[-1], alpha)[-1]
    if boundary == "exact" and family_size == 1 and len(looks) > 1:
        return look_level(diffs, looks, look, alpha, sweeps=sweeps, direction=direction), union
    return union, union


SIGN_SEEDS = 3  # a three-way look decides on at least this many measurable values (2^-3 = 1/8)


@dataclass(frozen=True)
class ThreeWay:
    """A sequential three-way decision on a median: ``decision`` ("above", "below",
    "undetermined", or "pending" while the current look's values are not all in), the look's
    ``seeds`` (values used), their ``mean`` and one-sided t ``lower``/``upper`` bounds, and
    ``called``: how many leading values the rule asks for (the current look)."""

    decision: str
    seeds: int = 0
    mean: float | None = None
    lower: float | None = None
    upper: float | None = None
    called: int = 0


@functools.lru_cache(maxsize=32)
def _expected_max(k: int) -> float:
    """E[max of k independent standard normals] (numerical integration)."""
    from scipy.special import ndtr
    z = np.linspace(-12.0, 12.0, 48001)
    density = k * np.exp(-z * z / 2) / np.sqrt(2 * np.pi) * ndtr(z) ** (k - 1)
    return float(np.sum(z * density) * (z[1] - z[0]))


def selection_luck(vals: ArrayLike) -> float:
    """How much luckier, on average over its seeds, the config that looks best among the rows
    of ``vals`` (configs x seeds, finite) was than its own mean, at most: with every config
    equal (the worst case), E[max of K standard normals] x tau / sqrt(seeds), tau the config x
    seed interaction sd (two-way residuals, (K - 1)(seeds - 1) degrees of freedom). 0 for one
    config or one seed: nothing was chosen among."""
    v = np.asarray(vals, dtype=float)
    finite_array(v, "vals")
    if v.ndim != 2 or v.shape[0] < 2 or v.shape[1] < 2:
        return 0.0
    k, n = v.shape
    r = v - v.mean(axis=1, keepdims=True) - v.mean(axis=0, keepdims=True) + v.mean()
    tau = float(np.sqrt(np.sum(r * r) / ((k - 1) * (n - 1))))
    return _expected_max(k) * tau / float(np.sqrt(n))


def three_way(values: Sequence[float | None], threshold: float, *,
              looks: Sequence[int] = (3, 5), level: float = 0.05,
              below: float | None = None) -> ThreeWay:
    """Decide whether the median of ``values`` (in order; None: not in yet, NaN: not
    measurable, left out) is above or below ``threshold``, looking at the first k values for
    each k in ``looks`` (capped at len(values)) and stopping at the first look that decides:
    "above" when every measurable value of the look is above the threshold (a sign test) and
    the one-sided t lower bound at ``level`` is too, "below" likewise under it, else the next
    look; "undetermined" after the last, or at a look with fewer than :data:`SIGN_SEEDS`
    measurable values. Errors, per side: at a median on the threshold every one of k >= 3
    independent continuous values falls on one side with probability 2^-k <= 1/8 whatever
    their distribution (skewed, with outliers), and a later look's "all" implies the first
    look's, so <= 2^-looks[0] over all looks; normal values: <= level per look as well.
    ``below``: the value "below" decides against (default ``threshold``; lower for values
    biased down, :func:`selection_luck`)."""
    below = threshold if below is None else below
    values = list(values)
    ks = sorted({min(int(k), len(values)) for k in looks if k >= 1}) or [len(values)]
    last = ThreeWay("undetermined")
    for k in ks:
        part = values[:k]
        if any(v is None for v in part):
            return ThreeWay("pending", called=k)
        x = np.asarray([v for v in part if v is not None and np.isfinite(v)], dtype=float)
        if len(x) < 2:  # fewer than 2 measurable: no bound, and more seeds would not help
            return ThreeWay("undetermined", len(x), float(x.mean()) if len(x) else None,
                            called=k)
        mean = float(x.mean())
        half = paired.t_quantile(len(x) - 1, 1 - level) * float(x.std(ddof=1)) \
            / float(np.sqrt(len(x)))
        lower, upper = mean - half, mean + half
        signs = len(x) >= SIGN_SEEDS
        decision = ("above" if signs and lower > threshold and bool(np.all(x > threshold))
                    else "below" if signs and upper < below
                    and bool(np.all(x < below)) else "undetermined")
        last = ThreeWay(decision, len(x), mean, lower, upper, k)
        if decision != "undetermined":
            return last
    return last


def prefix(sw: selection.Sweeps, m: int) -> selection.Sweeps:
    """The sweeps of the first m seeds (an earlier look: its cross-fit on those seeds only)."""
    return selection.Sweeps(sw.base_val[:m], sw.base_test[:m], sw.idea_val[:m],
                            sw.idea_test[:m], sw.groups, sw.margin_reference)


def row_p_values(sw: selection.Sweeps, direction: str, signs: np.ndarray) -> np.ndarray:
    """The two-sided p of every flipped data set (rows of ``signs``, +-1, covering the flips
    uniformly): each test's differences flipped alike, its p against the rows' own null, and
    the sides combined as :func:`benchkit.stats.selection.p_value` combines them; 1 where
    there is no test."""
    fam = selection.family(sw, direction)
    if not (fam.helps and fam.harms):
        return np.ones(len(signs))
    worse = pairtest.worse_sign(direction)
    sides = []
    for idea_better, pairs in ((True, fam.helps), (False, fam.harms)):
        worst = np.zeros(len(signs))
        for q in pairs:
            p2 = pairtest.row_p_values(q.d, signs)
            s = (signs @ q.d) * worse
            favours = s < 0 if idea_better else s > 0
            worst = np.maximum(worst, np.where(favours, p2 / 2, 1 - p2 / 2))
        sides.append(worst)
    return np.asarray(np.minimum(1.0, 2 * np.minimum(sides[0], sides[1])))
