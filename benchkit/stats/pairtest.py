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
    return p_values([pair], name, seed=seed)[0]


def p_values(pairs: Sequence[Pair], name: str = "mean", *, seed: int = 0) -> list[float]:
    """:func:`p_value` of each of ``pairs`` (of one seed count), each kept with its pair; the
    mean test's counted in one pass over the pairs' flip sums (each pair's its own, so the
    same counts as one at a time: a comparison asks for its six tests' together)."""
    key = (name, seed)
    todo = [q for q in pairs if key not in q._memo]
    if name == "mean" and todo:
        flips, exact = flip_rows(len(todo[0].d), seed)
        d = np.stack([q.d for q in todo])
        thr = np.abs(d.sum(axis=1)) - paired.REL_TOL * np.abs(d).sum(axis=1)
        counts = np.count_nonzero(np.abs(np.stack([_pair_sums(q, seed) for q in todo]))
                                  >= thr[:, None], axis=1)
        for q, count in zip(todo, counts.tolist()):
            q._memo[key] = _p(count, exact, len(flips))
    for q in todo:
        if key not in q._memo:
            q._memo[key] = _p_value(q, name, seed)
    return [q._memo[key] for q in pairs]  # type: ignore[misc]


def summed(pairs: Sequence[Pair]) -> list[float]:
    """Each pair's summed differences (of one seed count), in one pass: the same floats as
    ``float(pair.d.sum())`` (a row's sum is its own)."""
    sums: list[float] = np.stack([q.d for q in pairs]).sum(axis=1).tolist()
    return sums


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
    return one_sided_ps([pair], [shift], alternative, seed=seed)[0]


def one_sided_ps(pairs: Sequence[Pair], shifts: Sequence[np.ndarray], alternative: str, *,
                 seed: int = 0) -> list[float]:
    """:func:`one_sided_p` of each of ``pairs`` (of one seed count) with its shift, counted in
    one pass (each shifted pair's flip sums its own: the same counts as one at a time)."""
    if alternative not in ("less", "greater"):
        raise ValueError(f"alternative must be 'less' or 'greater', got {alternative!r}")
    ds = [q.d + np.asarray(s, float) for q, s in zip(pairs, shifts)]
    flips, exact = flip_rows(len(ds[0]), seed)
    stacked = np.stack(ds)   # each row's sums its own (the same floats as one at a time)
    obs, tol = stacked.sum(axis=1), paired.REL_TOL * np.abs(stacked).sum(axis=1)
    sums = np.stack([_sums(d, seed) for d in ds])
    hit = (sums <= (obs + tol)[:, None] if alternative == "less"
           else sums >= (obs - tol)[:, None])
    return [_p(count, exact, len(flips)) for count in np.count_nonzero(hit, axis=1).tolist()]


def interval(pair: Pair, level: float, *, seed: int = 0) -> list[float | None]:
    """[lo, hi]: every shift c of d for which the two-sided test keeps p >= level (flip r's
    sum is S_r - c k_r, k_r: seeds not flipped minus flipped; found as
    :func:`benchkit.stats.signflip.sign_flip_ci` finds it). 0 lies outside it exactly when
    :func:`p_value` < level."""
    return intervals([pair], level, seed=seed)[0]


def intervals(pairs: Sequence[Pair], levels: float | Sequence[float], *, seed: int = 0
              ) -> list[list[float | None]]:
    """:func:`interval` of each of ``pairs`` (of one seed count) at its level (``levels``: one
    for all, or one a pair), their flips' arithmetic done together
    (:func:`benchkit.stats.signflip.intervals_of_rows`); of an exact test's flips only the
    first half, each row standing for its complement too (row 2^n - 1 - r negates every
    sign: the same roots, to the bit)."""
    n = len(pairs[0].d)
    flips, exact = flip_rows(n, seed)
    total, base = _total(exact, len(flips))
    rows = len(flips) // 2 if exact else len(flips)
    each = [levels] * len(pairs) if isinstance(levels, (int, float)) else list(levels)
    d = np.stack([q.d for q in pairs])
    return signflip.intervals_of_rows(
        np.stack([_pair_sums(q, seed)[:rows] for q in pairs]), _flip_counts(n, seed)[:rows],
        d.sum(axis=1).tolist(), n, [math.ceil(level * total) - base for level in each],
        [p < level for p, level in zip(p_values(pairs, seed=seed), each)],
        scale=np.abs(d).max(axis=1).tolist(), twice=exact)


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
    return ni_bounds([pair], direction, [scale], [alpha], [ni], [margin], seed)[0]


def ni_bounds(pairs: Sequence[Pair], direction: str, scales: Sequence[np.ndarray],
              alphas: Sequence[float], nis: Sequence[bool], margins: Sequence[float],
              seed: int = 0) -> list[float | None]:
    """:func:`ni_bound` of each of ``pairs`` (of one seed count) with its scale, alpha, ni
    and margin, the flips' arithmetic in one pass (each element's the one pair's: the same
    floats)."""
    n = len(pairs[0].d)
    flips, exact = flip_rows(n, seed)
    worse = worse_sign(direction)
    d = np.stack([q.d for q in pairs])
    w_obs = (worse * d.sum(axis=1))[:, None]
    w = worse * np.stack([_pair_sums(q, seed) for q in pairs])
    f = np.stack([_flip_weights(n, seed) @ s for s in scales])
    total, base = _total(exact, len(flips))
    tol = (paired.REL_TOL * np.abs(d).sum(axis=1))[:, None]
    always = (f <= 0) & (w <= w_obs + tol)
    moving = f > 0
    # each row's t_r where F_r > 0, -inf elsewhere (below every t: never among the largest)
    t = np.sort(np.divide(w_obs - w, 2.0 * f, out=np.full(f.shape, -math.inf),
                          where=moving), axis=1)
    out: list[float | None] = []
    for row, left, moved, alpha, ni, margin in zip(
            t, np.count_nonzero(always, axis=1).tolist(),
            np.count_nonzero(moving, axis=1).tolist(), alphas, nis, margins):
        need = math.ceil(alpha * total) - base - left
        bound = (math.inf if need <= 0 else -math.inf if need > moved
                 else float(row[len(row) - need]))
        if ni and not bound < margin:  # float rounding at the edge: the test's side
            bound = math.nextafter(margin, -math.inf)
        elif not ni and bound < margin:
            bound = float(margin)
        out.append(None if not math.isfinite(bound) else bound)
    return out


@functools.lru_cache(maxsize=8)
def _flip_weights(n: int, seed: int = 0) -> np.ndarray:
    """:func:`flip_rows` as 0/1 floats (1: flipped), for the flipped seeds' scale summed."""
    weights = flip_rows(n, seed)[0].astype(float)
    weights.setflags(write=False)
    return weights


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
