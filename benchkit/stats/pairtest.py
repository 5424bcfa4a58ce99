"""The paired sign-flip tests of one pair of per-seed value vectors, the pieces
:mod:`benchkit.stats.selection` combines: the two-sided p of a statistic, the one-sided p of
the mean after a per-seed shift, the interval that inverts the two-sided test, and the
non-inferiority bound that inverts the one-sided one.

Every flip negates the difference d = idea - comparator on the flipped seeds (H0: the d_i
symmetric about 0): exact over all 2^n flips up to EXACT_MAX seeds, seeded Monte Carlo
((1 + count) / (1 + N_RESAMPLES), :func:`benchkit.stats.paired.sign_flip_p_value`'s draws)
above. numpy only; plain floats out.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from benchkit.stats import paired, signflip
from benchkit.stats.values import checked_direction

EXACT_MAX = 16
N_RESAMPLES = 20000
STATISTICS = ("mean", "sign", "wilcoxon")


@dataclass(frozen=True)
class Pair:
    """Per-seed test values of a comparator and the idea (seed order), finite; the flips'
    summed differences and the tests' p are kept with it once computed (each comparison's
    p, interval and verdict ask for them)."""

    base: np.ndarray
    idea: np.ndarray
    _memo: dict[tuple[str, int], object] = field(default_factory=dict, compare=False,
                                                 repr=False)

    @property
    def d(self) -> np.ndarray:
        """idea - comparator per seed (computed once: every test of the pair reads it)."""
        if ("d", 0) not in self._memo:
            d = self.idea - self.base
            d.setflags(write=False)
            self._memo[("d", 0)] = d
        held: np.ndarray = self._memo[("d", 0)]  # type: ignore[assignment]
        return held


@functools.lru_cache(maxsize=8)
def flip_rows(n: int, seed: int = 0) -> tuple[np.ndarray, bool]:
    """(flips, exact): a bool matrix, one row per flip vector (True: the seed's difference is
    negated), all 2^n up to EXACT_MAX seeds (row r flips seed j when bit j of r is set, so
    row 0 is the observed data), else sign_flip_p_value's seeded draws (its sign -1 is a flip)."""
    if n <= EXACT_MAX:
        rows = paired.exact_signs(n) < 0
    else:
        rng = np.random.default_rng(seed)
        chunks, left = [], N_RESAMPLES
        while left > 0:
            k = min(left, max(1, 2_000_000 // n))
            chunks.append(rng.integers(0, 2, size=(k, n)) == 0)
            left -= k
        rows = np.concatenate(chunks)
    rows.setflags(write=False)
    return rows, n <= EXACT_MAX


@functools.lru_cache(maxsize=8)
def _signs(n: int, seed: int = 0) -> np.ndarray:
    """:func:`flip_rows` as +-1 floats (-1: flipped), for the summed differences by matmul."""
    signs = 1.0 - 2.0 * flip_rows(n, seed)[0]
    signs.setflags(write=False)
    return signs


@functools.lru_cache(maxsize=8)
def _flip_counts(n: int, seed: int = 0) -> np.ndarray:
    """Per flip row: seeds not flipped minus flipped (the row's sign sum)."""
    counts: np.ndarray = _signs(n, seed).sum(axis=1)
    counts.setflags(write=False)
    return counts


def _sums(d: np.ndarray, seed: int) -> np.ndarray:
    """Every flip row's summed differences."""
    sums: np.ndarray = _signs(len(d), seed) @ d
    return sums


def statistic(diffs: np.ndarray, name: str) -> np.ndarray:
    """Per row: the summed differences ("mean"), wins minus losses ("sign"), or the signed
    rank sum ("wilcoxon": ranks of |d| with ties averaged, exact zeros ranked and counted 0,
    Pratt's treatment, scipy.stats.wilcoxon's zero_method="pratt")."""
    if name not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {name!r}")
    value: np.ndarray
    if name == "sign":
        value = np.sign(diffs).sum(axis=-1)
    elif name == "wilcoxon":
        from scipy.stats import rankdata

        value = (np.sign(diffs) * rankdata(np.abs(diffs), axis=-1)).sum(axis=-1)
    else:
        value = diffs.sum(axis=-1)
    return value


def _total(exact: bool, rows: int) -> tuple[int, int]:
    """(denominator, rows counted at every shift): the observed flip once for Monte Carlo."""
    return (rows, 0) if exact else (rows + 1, 1)


def _p(count: int, exact: bool, rows: int) -> float:
    return count / rows if exact else (1 + count) / (1 + rows)


def _pair_sums(pair: Pair, seed: int) -> np.ndarray:
    """:func:`_sums` of the pair's differences, computed once per pair and seed."""
    key = ("sums", seed)
    if key not in pair._memo:
        pair._memo[key] = _sums(pair.d, seed)
    sums: np.ndarray = pair._memo[key]  # type: ignore[assignment]
    return sums


def p_value(pair: Pair, name: str = "mean", *, seed: int = 0) -> float:
    """Two-sided p: the share of flips whose |statistic| is at least the observed one
    (computed once per pair, statistic and seed)."""
    key = (name, seed)
    if key not in pair._memo:
        pair._memo[key] = _p_value(pair, name, seed)
    p: float = pair._memo[key]  # type: ignore[assignment]
    return p


def _p_value(pair: Pair, name: str, seed: int) -> float:
    d = pair.d
    flips, exact = flip_rows(len(d), seed)
    obs = abs(float(statistic(d, name)))
    tol = {"mean": paired.REL_TOL * float(np.abs(d).sum()), "sign": 0.0,
           "wilcoxon": 1e-9 * len(d)}[name]  # rank sums: halves at most
    stat = np.abs(_pair_sums(pair, seed) if name == "mean" else
                  statistic(np.where(flips, -d, d), name))
    return _p(int(np.count_nonzero(stat >= obs - tol)), exact, len(flips))


def one_sided_p(pair: Pair, shift: np.ndarray, alternative: str, *, seed: int = 0) -> float:
    """One-sided p of the mean of d + ``shift``: the share of flips whose sum is at most
    (``"less"``) or at least (``"greater"``) the observed."""
    if alternative not in ("less", "greater"):
        raise ValueError(f"alternative must be 'less' or 'greater', got {alternative!r}")
    d = pair.d + np.asarray(shift, float)
    flips, exact = flip_rows(len(d), seed)
    obs, tol = float(d.sum()), paired.REL_TOL * float(np.abs(d).sum())
    s = _sums(d, seed)
    hit = s <= obs + tol if alternative == "less" else s >= obs - tol
    return _p(int(np.count_nonzero(hit)), exact, len(flips))


def interval(pair: Pair, level: float, *, seed: int = 0) -> list[float | None]:
    """[lo, hi]: every shift c of d for which the two-sided test keeps p >= level (flip r's
    sum is S_r - c k_r, k_r: seeds not flipped minus flipped; found as
    :func:`benchkit.stats.signflip.sign_flip_ci` finds it). 0 lies outside it exactly when
    :func:`p_value` < level."""
    return intervals([pair], level, seed=seed)[0]


def intervals(pairs: Sequence[Pair], level: float, *, seed: int = 0
              ) -> list[list[float | None]]:
    """:func:`interval` of each of ``pairs`` (of one seed count), their flips' arithmetic done
    together (:func:`benchkit.stats.signflip.intervals_of_rows`)."""
    n = len(pairs[0].d)
    flips, exact = flip_rows(n, seed)
    total, base = _total(exact, len(flips))
    return signflip.intervals_of_rows(
        np.stack([_pair_sums(q, seed) for q in pairs]), _flip_counts(n, seed),
        [float(q.d.sum()) for q in pairs], n, math.ceil(level * total) - base,
        [p_value(q, seed=seed) < level for q in pairs],
        scale=[float(np.abs(q.d).max()) for q in pairs])


def worse_sign(direction: str) -> float:
    """+1 when a larger difference is worse for the idea (lower is better), else -1."""
    return 1.0 if checked_direction(direction) == "lower" else -1.0


def ni_bound(pair: Pair, direction: str, scale: np.ndarray, alpha: float, ni: bool,
             margin: float, seed: int = 0) -> float | None:
    """The relative margin m* with: non-inferior at alpha exactly when margin > m*. At margin
    m, flip r counts when W_r - W <= -2 m F_r (W: the summed 'worse' differences unshifted,
    F_r: the flipped seeds' scale summed), i.e. when m <= t_r = (W - W_r) / (2 F_r) for
    F_r > 0; p(m) < alpha once fewer than ``need`` rows have t_r >= m. None when no margin
    suffices."""
    d = pair.d
    flips, exact = flip_rows(len(d), seed)
    worse = worse_sign(direction)
    w_obs, w = worse * float(d.sum()), worse * _pair_sums(pair, seed)
    f = flips.astype(float) @ scale
    total, base = _total(exact, len(flips))
    tol = paired.REL_TOL * float(np.abs(d).sum())
    always = (f <= 0) & (w <= w_obs + tol)
    need = math.ceil(alpha * total) - base - int(np.count_nonzero(always))
    moving = f > 0
    t = np.sort((w_obs - w[moving]) / (2.0 * f[moving]))[::-1]
    if need <= 0:
        bound = math.inf
    elif need > len(t):
        bound = -math.inf
    else:
        bound = float(t[need - 1])
    if ni and not bound < margin:  # float rounding at the edge: the test's side
        bound = math.nextafter(margin, -math.inf)
    elif not ni and bound < margin:
        bound = float(margin)
    return None if not math.isfinite(bound) else bound


def row_p_values(d: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Two-sided p of each flipped copy of ``d`` (rows of ``signs``, +-1) against the rows'
    own null (they cover the flips uniformly): the share of rows with |sum| >= that row's,
    with sign_flip_p_value's tolerance for float ties; all 1 when d is all 0."""
    if not np.any(d):
        return np.ones(len(signs))
    a = np.abs(signs @ d)
    tol = paired.REL_TOL * float(np.abs(d).sum())
    srt = np.sort(a)
    return np.asarray((len(a) - np.searchsorted(srt, a - tol, side="left")) / len(a))
