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
the sign test's; the mean test's p stays beside it (``p_mean``). Margin tests
(non-inferiority, equivalence) and the planning figures stay those of the mean sign-flip test.
"""
from __future__ import annotations

import math

import numpy as np

TESTS = ("mean", "sign")
SIGN_TEST_NAME = ("two-sided exact sign test of the paired differences (binomial(m, 1/2) over "
                  "the m seeds whose difference is not 0); its null is that on a seed the idea "
                  "is as likely better as worse (median difference 0), without assuming symmetry")


def parse_test(kw: dict, where: str) -> str:
    """``test=`` of ``pytest.mark.bench``: "mean" (default) or "sign"."""
    from benchkit.spec import SpecError

    test = kw.get("test", "mean")
    if test not in TESTS:
        raise SpecError(f"{where}: test={test!r}; valid: 'mean' (sign-flip test of the mean "
                        "difference, the default) or 'sign' (sign test: robust to rare "
                        "catastrophic seeds)")
    return test


def sign_test_p(diffs) -> float:
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


def apply(comp: dict, test: str) -> dict:
    """Make ``comp`` (a stats.compare result) decide by ``test``: for "sign", p_value becomes
    the sign test's and the mean test's p is kept as p_mean. Returns comp."""
    comp["test"] = test
    if test == "sign":
        d = comp["per_seed_diffs"]
        comp["p_mean"] = comp["p_value"]
        comp["p_value"] = sign_test_p(d)
        comp["median_delta"] = float(np.median(d))
    return comp


def verdict_delta(comp: dict) -> float:
    """The difference whose sign says which way a significant result goes: delta_mean for the
    mean test; for the sign test, (seeds with a positive difference) - (negative ones), so
    that one catastrophic seed cannot turn a majority of wins into a harm."""
    if comp.get("test") != "sign":
        return comp["delta_mean"]
    d = np.asarray(comp["per_seed_diffs"], dtype=float)
    return float(np.count_nonzero(d > 0) - np.count_nonzero(d < 0))
