"""Pure statistics of a bench: baseline arm vs idea arm over paired seeds.

No torch here, only numpy and stdlib at import, so the protocol can be tested fast and in
isolation; the functions that need a t, noncentral t or beta distribution import scipy's public
``scipy.special``/``scipy.stats`` where they are called.
Every value returned is a plain Python float/int/bool/str/list/dict/None, or a frozen record
of them (:class:`Summary`, :class:`PairedComparison`,
:class:`benchkit.stats.noninferior.NonInferiorityTest`): numpy scalars do not survive
pytest-xdist's serialisation, and reports are JSON, so non-finite numbers become None.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from benchkit.codec import JsonRecord
from benchkit.stats.values import DIRECTIONS as DIRECTIONS  # public here too: paired.DIRECTIONS
from benchkit.stats.looks import look_levels as look_levels, spent_alpha as spent_alpha  # too
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.stats.values import checked_direction, finite_array, json_float

REL_TOL = 1e-12  # float ties in the permutation null: sums in another order differ by ulps


def _paired(baseline: ArrayLike, idea: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    b, i = finite_array(baseline, "baseline"), finite_array(idea, "idea")
    if len(b) != len(i):
        raise ValueError(f"baseline and idea differ in length: {len(b)} vs {len(i)}")
    return b, i


@dataclass(frozen=True)
class Summary(JsonRecord):
    """One arm's metric over its seeds: mean, population std (ddof=0, as the v1 reports), the
    per-seed values and their count. :meth:`to_json` gives the report's summary object (an
    arm's ``full``, the ``idea``, a sweep row's ``result``), keys in the report's order."""

    mean: float
    std: float
    per_seed: tuple[float, ...]
    n: int


def summarize(values: ArrayLike) -> Summary:
    """The :class:`Summary` of ``values`` (ValueError if any is not finite)."""
    return summaries([np.asarray(values, dtype=float).reshape(-1)])[0]


def summaries(rows: ArrayLike) -> list[Summary]:
    """:func:`summarize` of each of ``rows`` (of one length) in one pass, each row's mean and
    std its own reduction (the same floats as one at a time: an arm's sweep rows)."""
    a = np.asarray(rows, dtype=float)
    for row in a[~np.isfinite(a).all(axis=1)][:1]:
        finite_array(row)   # raises, naming the first row that is not finite
    return [Summary(mean=m, std=s, per_seed=tuple(v), n=len(v)) for m, s, v in zip(
        a.mean(axis=1).tolist(), a.std(axis=1).tolist(), a.tolist())]


def min_p_value(n: int) -> float:
    """Smallest two-sided sign-flip p reachable with n pairs (both all-same-sign patterns)."""
    return 2.0 ** (1 - int(n))


def sign_flip_p_value(diffs: ArrayLike, *, exact_max: int = 16, n_resamples: int = 20000,
                      seed: int = 0) -> float:
    """Two-sided paired sign-flip permutation p of the mean difference.

    Under H0 (no effect) each pair's difference is equally likely to have either sign, so the
    null distribution of the mean is that of the means over all 2^n sign flips. Exact for
    n <= exact_max; above, seeded Monte Carlo with the (1 + count) / (1 + n_resamples) estimate,
    which never returns 0 and is deterministic for a seed.
    """
    return sign_flip_p_rows([finite_array(diffs, "diffs")], exact_max=exact_max,
                            n_resamples=n_resamples, seed=seed)[0]


def sign_flip_p_rows(rows: Sequence[np.ndarray], *, exact_max: int = 16,
                     n_resamples: int = 20000, seed: int = 0) -> list[float]:
    """:func:`sign_flip_p_value` of each of ``rows`` (differences of one length: a report's
    comparisons), in one pass: each row's flips summed on its own (the same floats as one at a
    time), the counts taken together."""
    d = np.asarray(rows, dtype=float)
    for row in d[~np.isfinite(d).all(axis=1)][:1]:
        finite_array(row, "diffs")   # raises, naming the first row that is not finite
    n = d.shape[1]
    if n == 0:
        raise ValueError("diffs is empty")
    # compare |sum| rather than |mean|; tolerance on the scale of the summed terms
    thr = (np.abs(d.sum(axis=1)) - REL_TOL * np.abs(d).sum(axis=1))[:, None]
    if n <= exact_max:
        counts = np.count_nonzero(np.abs(np.stack([exact_signs(n) @ r for r in d])) >= thr,
                                  axis=1)
        ps = (counts / 2 ** n).tolist()
    else:
        rng = np.random.default_rng(seed)
        counts, left = np.zeros(len(d), dtype=int), int(n_resamples)
        while left > 0:  # chunks bound memory for large n
            k = min(left, max(1, 2_000_000 // n))
            signs = rng.integers(0, 2, size=(k, n)) * 2.0 - 1.0
            counts += np.count_nonzero(np.abs(np.stack([signs @ r for r in d])) >= thr, axis=1)
            left -= k
        ps = [(1 + count) / (1 + int(n_resamples)) for count in counts.tolist()]
    return [1.0 if not row.any() else p for row, p in zip(d, ps)]


@functools.lru_cache(maxsize=256)
def t_quantile(df: float, q: float) -> float:
    """Student's t quantile ``q`` at ``df`` degrees of freedom (scipy's ``stdtrit``), computed
    once per (df, q): every comparison of a bench asks for the same few."""
    from scipy import special

    return float(special.stdtrit(df, q))


@functools.lru_cache(maxsize=8)
def exact_signs(n: int) -> np.ndarray:
    """Every one of the 2^n sign vectors (+-1 floats, row r negates seed j when bit j of r is
    set), made once per n: the null distribution of an exact sign-flip test."""
    signs = 1.0 - 2.0 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
    signs.setflags(write=False)
    return signs


def _pairs_sd(diffs: ArrayLike) -> tuple[np.ndarray, int, float]:
    d = finite_array(diffs, "diffs")
    if len(d) < 2:
        raise ValueError(f"need at least 2 pairs, got {len(d)}")
    return d, len(d), float(d.std(ddof=1))


def mde(diffs: ArrayLike, alpha: float = 0.05) -> float:
    """v1 minimal detectable effect: t(1-alpha/2, n-1) * sd(ddof=1) / sqrt(n), i.e. the
    smallest observed mean difference that a paired t-test would call significant."""
    return _mde(*_pairs_sd(diffs)[1:], alpha)


def ci95(diffs: ArrayLike) -> list[float]:
    """95% t confidence interval [lo, hi] of the mean difference."""
    d, n, sd = _pairs_sd(diffs)
    return list(_ci95(d.mean(), n, sd))


def _ci95(mean: float, n: int, sd: float) -> tuple[float, float]:   # of n differences
    half = _mde(n, sd, 0.05)
    return float(mean - half), float(mean + half)


def effect_size(diffs: ArrayLike) -> float | None:
    """Cohen's dz = mean / sd(ddof=1) of the differences; None when sd == 0 (undefined)."""
    d, _, sd = _pairs_sd(diffs)
    return float(d.mean() / sd) if sd > 0 else None


def _mde(n: int, sd: float, alpha: float) -> float:   # of n differences whose sd is given
    return t_quantile(n - 1, 1 - alpha / 2) * sd / math.sqrt(n)


NCT_SF_PRIVATE = True   # False: the public nct.sf where nctdtr is NaN (as on a scipy without it)


def t_test_power(ncp: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test with n pairs at noncentrality ncp."""
    df = n - 1
    crit = t_quantile(df, 1 - alpha / 2)
    return _nct_sf(crit, df, ncp) + _nct_sf(crit, df, -ncp)


def _nct_sf(t: float, df: int, nc: float) -> float:
    """P(T > t) for T noncentral t(df, nc): the float scipy.stats.nct.sf gives, without
    importing scipy.stats (0.7-0.9 s CPU a session). -T is noncentral t(df, -nc), so this is
    the public scipy.special.nctdtr(df, -nc, -t), the same Boost computation as nct.sf, which
    nctdtr answers with NaN where Boost's value falls outside [0, 1] or does not converge (a
    lower tail at ncp >= ~10): there nct.sf's own value, scipy.special's _nct_sf clipped to
    [0, 1] (scipy 1.17's nct._sf), or nct.sf itself where a scipy lacks that function."""
    from scipy import special

    with np.errstate(over="ignore"):
        p = float(special.nctdtr(df, -nc, -t))
        if math.isnan(p):
            sf = getattr(special._ufuncs, "_nct_sf", None) if NCT_SF_PRIVATE else None
            if sf is None:
                from scipy import stats as sps
                sf = sps.nct.sf
            p = float(np.clip(sf(t, df, nc), 0.0, 1.0))
    return p


def power_mde(n: int, sd: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest true mean difference detected with probability `power` by a two-sided paired
    t-test on n pairs whose differences have standard deviation sd (noncentral t).

    This is the t approximation of the permutation test that benchkit actually runs (which
    with n pairs can never go below p = 2**(1-n)); it answers "what effect could we see"."""
    if n < 2:
        raise ValueError(f"need at least 2 pairs, got {n}")
    if not alpha < power < 1:
        raise ValueError(f"power must be in (alpha, 1), got {power}")
    if sd == 0:
        return 0.0
    hi = 1.0
    while t_test_power(hi, n, alpha) < power:
        hi *= 2
        if hi > 1e15:  # no effect reaches it: alpha below float resolution (critical t = inf)
            return math.inf
    lo = 0.0  # bisection: power grows with ncp; invariant power(lo) < power <= power(hi)
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if t_test_power(mid, n, alpha) >= power else (mid, hi)
    ncp = 0.5 * (lo + hi)
    return float(ncp * abs(sd) / math.sqrt(n))


def idea_wins(baseline: ArrayLike, idea: ArrayLike, direction: str) -> int:
    """Number of seeds on which the idea is strictly better in the metric's direction."""
    return int(_wins(np.subtract(*_paired(baseline, idea)[::-1]), checked_direction(direction)))


def _wins(d: np.ndarray, direction: str) -> np.ndarray:   # d: idea - baseline, per row
    return np.asarray(np.count_nonzero(d < 0 if direction == "lower" else d > 0, axis=-1))


def holm(p_values: ArrayLike) -> list[float]:
    """Holm step-down adjusted p-values, in input order: sorted ascending, the k-th (0-based)
    of m gets max over j <= k of (m - j) * p_(j), capped at 1 (controls family-wise error)."""
    p = finite_array(p_values, "p_values")
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return [float(x) for x in out]


def noninferiority(baseline: ArrayLike, idea: ArrayLike, *, direction: str, margin: float,
                   alpha: float = 0.05) -> NonInferiorityTest:
    """Is the idea worse than baseline by less than ``margin`` of the baseline, seed by seed?

    Per seed, w = (idea - baseline) - margin * |baseline| for a lower-is-better metric
    ((baseline - idea) - margin * |baseline| for higher): the margin scales with each seed's
    baseline, so it is not treated as a known constant. Non-inferior when a one-sided
    sign-flip test shows mean(w) < 0 at ``alpha`` (pass the look's level). ``bound`` is the
    one-sided (1 - alpha) t bound of the mean "worse" difference, for reading only."""
    b, i = _paired(baseline, idea)
    d, n, sd = _pairs_sd(i - b)
    return _noninferiorities(b[None], d[None], [sd], direction=direction, margin=margin,
                             alpha=alpha)[0]


def _noninferiorities(b: np.ndarray, d: np.ndarray, sds: list[float], *, direction: str,
                      margin: float, alpha: float) -> list[NonInferiorityTest]:
    """:func:`noninferiority` of each row of the baselines ``b`` and differences ``d`` (each
    row's sd given), each row's reductions its own (the same floats as one at a time)."""
    if not (math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    worse_by = d if checked_direction(direction) == "lower" else -d
    abs_b = np.abs(b)
    ps = _one_sided_ps(worse_by - margin * abs_b)
    n = d.shape[1]
    quantile = t_quantile(n - 1, 1 - alpha)
    out = []
    for p, sd, worse, scale in zip(ps, sds, worse_by.mean(axis=1).tolist(),
                                   abs_b.mean(axis=1).tolist()):
        bound_worse = worse + quantile * (sd / math.sqrt(n))
        bound = bound_worse if direction == "lower" else -bound_worse
        out.append(NonInferiorityTest(margin_rel=float(margin),
                                      margin_abs=json_float(margin * scale),
                                      bound=json_float(bound), non_inferior=bool(p < alpha),
                                      p_value=json_float(p)))
    return out


def one_sided_sign_flip_p(w: ArrayLike, *, exact_max: int = 16, n_resamples: int = 20000,
                          seed: int = 0) -> float:
    """P(sum of randomly sign-flipped w <= sum(w)): the one-sided sign-flip p for mean(w) < 0
    (exact up to exact_max pairs, seeded Monte Carlo above, as the two-sided test)."""
    return _one_sided_ps(finite_array(w, "w")[None], exact_max=exact_max,
                         n_resamples=n_resamples, seed=seed)[0]


def _one_sided_ps(w: np.ndarray, *, exact_max: int = 16, n_resamples: int = 20000,
                  seed: int = 0) -> list[float]:
    """:func:`one_sided_sign_flip_p` of each row of ``w``: each row's flips summed on its own
    (the same floats as one at a time), the counts taken together."""
    for row in w[~np.isfinite(w).all(axis=1)][:1]:
        finite_array(row, "w")   # raises, naming the first row that is not finite
    n = w.shape[1]
    thr = w.sum(axis=1) + REL_TOL * np.abs(w).sum(axis=1)
    if n <= exact_max:
        signs = exact_signs(n)
    else:
        rng = np.random.default_rng(seed)
        signs = rng.integers(0, 2, size=(int(n_resamples), n)) * 2.0 - 1.0
    counts = np.count_nonzero(np.stack([signs @ row for row in w]) <= thr[:, None], axis=1)
    if n <= exact_max:
        exact: list[float] = (counts / len(signs)).tolist()
        return exact
    return [(1 + count) / (1 + int(n_resamples)) for count in counts.tolist()]


@dataclass(frozen=True)
class PairedComparison(JsonRecord):
    """The figures of one paired comparison of the arms' test metrics (``per_seed_diffs`` are
    idea - comparator, seed by seed): numbers only, no verdict. :meth:`to_json` gives the
    report's comparison fields, in the report's order."""

    delta_mean: float
    idea_wins: int
    n_pairs: int
    per_seed_diffs: tuple[float, ...]
    p_value: float
    mde: float | None
    mde_rel_pct: float | None
    direction: str
    alpha: float
    ci95: tuple[float | None, float | None]
    effect_size: float | None
    noninferiority: NonInferiorityTest | None  # :func:`noninferiority`'s, or None


def compare(baseline: ArrayLike, idea: ArrayLike, *, direction: str, alpha: float = 0.05,
            seed: int = 0, margin: float | None = None,
            p_value: float | None = None) -> PairedComparison:
    """Paired comparison of the arms' test metrics (same seed order): the figures, no verdict
    (verdicts are decided once, at the planned level, by :mod:`benchkit.verdict.decision`).
    ``p_value``: the sign-flip p of these differences where it is known already (a
    selection-aware comparison's binding test keeps its own), else computed here."""
    b, i = _paired(baseline, idea)
    return compare_rows([b], [i], direction=direction, alpha=alpha, seed=seed,
                        margin=margin, p_values=[p_value])[0]


def compare_rows(baselines: Sequence[np.ndarray], ideas: Sequence[np.ndarray], *, direction: str,
                 alpha: float = 0.05, seed: int = 0, margin: float | None = None,
                 p_values: Sequence[float | None]) -> list[PairedComparison]:
    """:func:`compare` of each row of ``baselines`` and ``ideas`` (seeds x one seed count: a
    report's comparators) with its known p (None: computed here), in one pass: each row's
    reductions its own, so the same floats as one at a time."""
    b, i = np.asarray(baselines, dtype=float), np.asarray(ideas, dtype=float)
    if b.shape != i.shape:
        raise ValueError(f"baseline and idea differ in length: {b.shape[-1]} vs {i.shape[-1]}")
    d = i - b
    for name, a in (("baseline", b), ("idea", i), ("diffs", d)):
        for row in a[~np.isfinite(a).all(axis=1)][:1]:
            finite_array(row, name)   # raises, naming the first row that is not finite
    n = d.shape[1]
    if n < 2:
        raise ValueError(f"need at least 2 pairs, got {n}")
    sds = d.std(ddof=1, axis=1).tolist()
    means, base_means = d.mean(axis=1).tolist(), np.abs(b.mean(axis=1)).tolist()
    wins = _wins(d, checked_direction(direction)).tolist()
    nis = [None] * len(d) if margin is None else _noninferiorities(
        b, d, sds, direction=direction, margin=margin, alpha=alpha)
    out = []
    for k, diffs in enumerate(d.tolist()):   # d, its mean and sd once, for every figure
        mean, sd, base_mean = means[k], sds[k], base_means[k]
        known = p_values[k]
        p = sign_flip_p_value(d[k], seed=seed) if known is None else known
        m, (lo, hi) = _mde(n, sd, alpha), _ci95(mean, n, sd)
        out.append(PairedComparison(
            delta_mean=mean, idea_wins=wins[k], n_pairs=n, per_seed_diffs=tuple(diffs),
            p_value=p, mde=json_float(m),
            mde_rel_pct=json_float(100 * m / base_mean) if base_mean > 0 else None,
            direction=direction, alpha=float(alpha), ci95=(json_float(lo), json_float(hi)),
            effect_size=mean / sd if sd > 0 else None, noninferiority=nis[k]))
    return out


def select_config(val_by_config: Iterable[Iterable[float | None]], direction: str) -> int | None:
    """Index (grid order) of the config with the best validation mean over seeds. Configs with
    a missing or non-finite (diverged) seed are not eligible; ties go to the first; None if
    no config is eligible. The mean is summed left to right over seeds, then divided (the
    report's selection; benchkit.stats.crossfit applies the same rule to the other seeds)."""
    sign = 1.0 if checked_direction(direction) == "lower" else -1.0
    best, best_score = None, math.inf
    for k, row in enumerate(val_by_config):
        given = list(row)
        vals = [float(v) for v in given if v is not None]
        if not given or len(vals) < len(given) or not all(math.isfinite(v) for v in vals):
            continue
        total = 0.0
        for v in vals:
            total += v
        score = sign * (total / len(vals))
        if score < best_score:
            best, best_score = k, score
    return best
