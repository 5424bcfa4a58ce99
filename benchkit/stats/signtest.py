"""A robust test for ideas with rare catastrophic seeds: ``pytest.mark.bench(test="sign")``.

The default test (``test="mean"``) is the sign-flip test of the mean difference: one seed on
which the idea diverges can outweigh every other seed. ``test="sign"`` decides by the exact
two-sided sign test of the per-seed differences instead: it counts the seeds on which the idea
is better and worse (ties, exact zeros, are left out) and takes the binomial(m, 1/2) p of a
split at least as uneven. Its null is that on a seed the idea is as likely to be better as
worse (the median difference is 0); unlike the sign-flip test it assumes no symmetry, and a
seed counts once however large its difference. It has less power than the mean test when
differences are well behaved (it ignores their sizes).

Under ``test="sign"`` the comparison's ``p_value`` (and so Holm, the level and the verdict) is
the sign test's; the mean test's p stays beside it (``p_mean``), and ``sign_ci`` is the
interval that inverts the sign test (a distribution-free interval for the median difference).
Margin tests (non-inferiority, equivalence) and the other planning figures stay those of the
mean sign-flip test.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

WILCOXON_NAME = ("two-sided Wilcoxon signed-rank test of the paired differences (ranks of |d| "
                 "with ties averaged, exact zeros counted 0), as a sign-flip permutation test of "
                 "the signed rank sum; its null is that each seed's difference is symmetric "
                 "about 0")
SIGN_TEST_NAME = ("two-sided exact sign test of the paired differences (binomial(m, 1/2) over "
                  "the m seeds whose difference is not 0); its null is that on a seed the idea "
                  "is as likely better as worse (median difference 0), without assuming symmetry")
NAMES = {"sign": SIGN_TEST_NAME, "wilcoxon": WILCOXON_NAME}  # test= -> the report's protocol.test


def sign_test_p(diffs: ArrayLike) -> float:
    """Exact two-sided sign-test p: 2 * P(Binomial(m, 1/2) <= min(wins, losses)), capped at 1,
    over the m nonzero differences; 1.0 when every difference is 0."""
    d = np.asarray(diffs, dtype=float).reshape(-1)
    if not np.all(np.isfinite(d)):
        raise ValueError(f"diffs contain non-finite values: {d.tolist()}")
    pos, neg = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    m = pos + neg
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, j) for j in range(min(pos, neg) + 1)) / 2.0 ** m
    return float(min(1.0, 2.0 * tail))


def sign_test_ci(diffs: ArrayLike, level: float) -> list[float | None]:
    """[lo, hi]: the shifts c at which the sign test of ``diffs - c`` has p >= level, i.e. the
    order-statistic interval of the median difference that matches the test.

    p(c) depends only on how many differences lie above and below c (those equal to c drop
    out), so it is constant between consecutive distinct values; testing each value and one
    point in each gap finds the accepted set exactly. None for an unbounded end (too few seeds
    for p < level). 0 lies outside [lo, hi] exactly when sign_test_p(diffs) < level: an end
    that is open at exactly 0 is moved off it by one float step."""
    d = np.asarray(diffs, dtype=float).reshape(-1)
    if len(d) < 1 or not np.all(np.isfinite(d)):
        raise ValueError(f"diffs must be finite and non-empty, got {d.tolist()}")
    values = np.unique(d)
    gaps = (values[:-1] + values[1:]) / 2.0
    below, above = values[0] - 1.0, values[-1] + 1.0
    points = np.sort(np.concatenate([[below], values, gaps, [above]]))
    accepted = [c for c in points if sign_test_p(d - c) >= level]  # never empty: p is 1 at
    lo, hi = min(accepted), max(accepted)                          # the median (a value or gap)
    lo = None if lo == below else _closed_end(lo, values, d, level, step=-1)
    hi = None if hi == above else _closed_end(hi, values, d, level, step=+1)
    return [lo, hi]


def _closed_end(c: float, values: np.ndarray, d: np.ndarray, level: float, *, step: int) -> float:
    """The reported end for an accepted point c: c itself when c is a data value; for a gap
    point, the data value bounding the gap on the outside (the gap is accepted, that value is
    not), moved one float step inwards if it is exactly 0, so that 0 is inside the reported
    interval only when the test accepts it."""
    if c in values:
        return float(c)
    end = float(values[values < c].max() if step < 0 else values[values > c].min())
    if end == 0.0 and sign_test_p(d) < level:
        end = math.nextafter(0.0, -step)
    return end


def verdict_delta(test: str | None, delta_mean: float, per_seed_diffs: ArrayLike) -> float:
    """The difference whose sign says which way a significant result of ``test`` goes:
    ``delta_mean`` for the mean test; for the sign test, (seeds with a positive difference) -
    (negative ones), so that one catastrophic seed cannot turn a majority of wins into a harm;
    for wilcoxon, the signed rank sum."""
    if test not in ("sign", "wilcoxon"):
        return delta_mean
    d = np.asarray(per_seed_diffs, dtype=float)
    if test == "wilcoxon":  # the signed rank sum's side
        from scipy.stats import rankdata

        return float((np.sign(d) * rankdata(np.abs(d))).sum())
    return float(np.count_nonzero(d > 0) - np.count_nonzero(d < 0))
