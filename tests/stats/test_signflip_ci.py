"""The sign-flip interval (benchkit.stats.signflip.sign_flip_ci): it inverts the test at the level
it is tested at (it excludes zero exactly when p is below the level), each end is where the test
starts to reject, ends at zero go to the side the p says; pinned in process at and around each
threshold. Power, MDE and seeds needed: test_signflip_power.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchkit.stats import signflip
from benchkit.stats import paired

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)

LEVELS = (0.05, 0.01, 0.1, paired.look_levels([8], 16, 0.05)[0], 0.025)


@pytest.mark.slow
def test_the_interval_excludes_zero_exactly_when_p_is_below_the_level():
    rng = np.random.default_rng(2026)
    cases = 0
    for trial in range(120):
        n = int(rng.integers(2, 21))
        d = (rng.normal(rng.choice([0.0, 0.7, 1.5]), 1.0, n) if trial % 3 == 0 else
             rng.integers(-3, 4, n).astype(float) if trial % 3 == 1 else  # ties
             rng.standard_t(2, n))
        p = paired.sign_flip_p_value(d)
        for level in LEVELS:
            lo, hi = signflip.sign_flip_ci(d, level)
            excludes = (lo is not None and lo > 0) or (hi is not None and hi < 0)
            assert excludes == (p < level), (d.tolist(), level, p, lo, hi)
            if lo is not None:
                assert lo <= d.mean() <= hi
            cases += 1
    assert cases == 120 * len(LEVELS)


def test_the_interval_is_unbounded_when_the_level_is_unreachable():
    assert signflip.sign_flip_ci([1.0, 2.0, 3.0, 4.0, 5.0], 0.05) == [None, None]  # 2^-4 >= 0.05


def test_the_interval_contains_the_shifts_the_test_accepts():
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.4, 0.1, 0.6, -0.2])
    lo, hi = signflip.sign_flip_ci(d, 0.05)
    for c in np.linspace(lo - 0.2, hi + 0.2, 41):
        inside = lo <= c <= hi
        assert (paired.sign_flip_p_value(d - c) >= 0.05) == inside or \
            min(abs(c - lo), abs(c - hi)) < 1e-9


# ---------------------------------------------------------------- signflip.sign_flip_ci

CI_DATA = [
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    [0.3, -0.1, 0.5, 0.2, 0.4, 0.1, 0.6, -0.2],
    [2.0, -1.0, 0.5, 3.0, 1.5, -0.5, 2.5, 1.0, 0.0, 1.2],
    [-0.8, -1.1, 0.2, -0.4, -1.5, -0.9, -0.3, 0.1, -0.7, -1.0, -0.6, -0.2],
    list(np.random.default_rng(4).normal(0.5, 1.0, 16)),    # the last exact count
    list(np.random.default_rng(5).normal(0.6, 1.0, 17)),   # Monte Carlo p above 16 pairs
    list(np.random.default_rng(6).normal(-0.2, 1.0, 19)),
]


def _accepts(d, c, level):
    return paired.sign_flip_p_value(np.asarray(d) - c) >= level


@pytest.mark.parametrize("d", CI_DATA, ids=lambda d: f"n{len(d)}")
@pytest.mark.parametrize("level", [0.05, 0.1, 0.2, 0.01])
def test_each_end_of_the_interval_is_where_the_test_starts_to_reject(d, level):
    """Just inside an end the test accepts the shift, just outside it rejects it: the ends are
    the infimum and supremum of the accepted shifts, not an order statistic next to them."""
    _check_ends(d, level)


@pytest.mark.parametrize("d, level", [
    ([1.0, 2.0, 4.0], 1.0),                 # p = 1 only near the mean: [2, 2.5]
    (CI_DATA[5], 1000 / 20001),             # a level that is a whole count of the 20001
    ([x * 1e-3 for x in CI_DATA[1]], 0.05),  # small differences: small discriminants
    ([x * 1e-3 for x in CI_DATA[2]], 0.1),
])
def test_the_ends_at_level_one_a_whole_monte_carlo_count_and_a_small_scale(d, level):
    _check_ends(d, level)


def test_the_interval_at_a_level_equal_to_the_monte_carlo_p_holds_zero():
    """p >= level accepts: with the level set to the seeded p itself, 0 stays inside."""
    for s in range(6):
        d = np.random.default_rng(100 + s).normal(0.5, 1.0, 17)
        for seed in (0, 3):            # the interval's p uses the seed it is given
            p = paired.sign_flip_p_value(d, seed=seed)
            lo, hi = signflip.sign_flip_ci(d, p, seed=seed)
            assert lo <= 0.0 <= hi, (s, seed, p, lo, hi)


def _check_ends(d, level):
    lo, hi = signflip.sign_flip_ci(d, level)
    if paired.min_p_value(len(d)) >= level:
        assert (lo, hi) == (None, None)
        return
    span = hi - lo
    assert span > 0
    step = 1e-7 * max(1e-3, float(np.abs(d).max()))
    assert _accepts(d, lo + step, level) and _accepts(d, hi - step, level)
    assert not _accepts(d, lo - step, level) and not _accepts(d, hi + step, level)
    assert _accepts(d, float(np.mean(d)), level)
    p = paired.sign_flip_p_value(d)
    assert (lo > 0 or hi < 0) == (p < level)


def test_the_interval_of_six_same_sign_pairs_is_their_range():
    """With 6 pairs only the two all-same-sign flips reach p < 0.05 (2/64): a shift is rejected
    only when every shifted difference has the same strict sign."""
    assert signflip.sign_flip_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.05) == [1.0, 6.0]
    assert signflip.sign_flip_ci([-6.0, -2.0, -3.0, -4.0, -5.0, -1.0], 0.05) == [-6.0, -1.0]


def test_the_interval_flattens_its_input_and_takes_one_pair():
    assert signflip.sign_flip_ci(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 0.05) == [1.0, 6.0]
    assert signflip.sign_flip_ci([1, 2, 3, 4, 5, 6], 0.05) == [1.0, 6.0]
    assert signflip.sign_flip_ci([2.0], 0.05) == [None, None]       # one pair: p is always 1
    assert signflip.sign_flip_ci([2.0], 1.0) == [None, None]


@pytest.mark.parametrize("n", [2, 5, 7])
def test_the_interval_is_unbounded_at_a_level_equal_to_the_smallest_p(n):
    d = list(np.linspace(1.0, 2.0, n))
    # p < 2^(1-n) is impossible
    assert signflip.sign_flip_ci(d, paired.min_p_value(n)) == [None, None]
    lo, hi = signflip.sign_flip_ci(d, paired.min_p_value(n) * 1.0001)
    assert lo == pytest.approx(1.0) and hi == pytest.approx(2.0)


def test_the_interval_uses_the_seed_of_the_monte_carlo_test():
    d = np.asarray(CI_DATA[5])
    assert signflip.sign_flip_ci(d, 0.05) == signflip.sign_flip_ci(d, 0.05, seed=0)
    ends = []
    for seed in (0, 3):
        lo, hi = signflip.sign_flip_ci(d, 0.05, seed=seed)
        for end, out in ((lo, -1e-7), (hi, 1e-7)):
            assert paired.sign_flip_p_value(d - (end - out), seed=seed) >= 0.05
            assert paired.sign_flip_p_value(d - (end + out), seed=seed) < 0.05
        ends.append((lo, hi))
    assert ends[0] != ends[1]


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf"), 1.0]])
def test_the_interval_refuses_empty_or_non_finite_differences(bad):
    with pytest.raises(ValueError, match="diffs must be finite and non-empty"):
        signflip.sign_flip_ci(bad, 0.05)


def test_an_end_at_zero_is_placed_on_the_side_the_test_says():
    """d - 0 has a zero difference: p(d) = 4/64 >= 0.05, so 0 is accepted and lies inside."""
    d = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert paired.sign_flip_p_value(d) == 4 / 64
    lo, hi = signflip.sign_flip_ci(d, 0.05)
    assert lo <= 0.0 <= hi and hi == 5.0
    # at a level equal to p, 0 is still accepted (p >= level): inside, at the lower end
    lo, hi = signflip.sign_flip_ci(d, 4 / 64)
    assert lo <= 0.0 <= hi and abs(lo) < 1e-12 and hi == 5.0
    lo, hi = signflip.sign_flip_ci([-x for x in d], 4 / 64)
    assert lo <= 0.0 <= hi and abs(hi) < 1e-12 and lo == -5.0
    # at 0.07 the same p rejects: 0 lies outside
    assert paired.sign_flip_p_value(d) < 0.07
    assert signflip.sign_flip_ci(d, 0.07) == [0.5, 4.5]
    assert signflip.sign_flip_ci([-x for x in d], 0.07) == [-4.5, -0.5]


# ---------------------------------------------------------------- signflip.sign_flip_ci: ends at 0


@pytest.mark.parametrize("d, expected", [
    ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [math.nextafter(0.0, 1.0), 5.0]),
    ([-5.0, -4.0, -3.0, -2.0, -1.0, 0.0], [-5.0, math.nextafter(0.0, -1.0)]),
    ([-1e-9, 1.0, 2.0, 3.0, 4.0, 5.0], [math.nextafter(0.0, 1.0), 5.0]),    # within 1e-9 * 5
    ([-1.5e-9, 0.1, 0.2, 0.3, 0.4, 0.5], [-1.5e-9, math.nextafter(0.0, -1.0)]),  # beyond 1e-9
])
def test_an_end_within_rounding_of_zero_goes_to_the_side_the_p_says(monkeypatch, d, expected):
    """The interval's ends are roots of quadratics; the test's p counts ties within a tolerance.
    Where they disagree about 0 (rounding), p decides: here p is made to reject while 0 sits
    at an end (or within 1e-9 * max(1, max|d|) of the lower one), so that end moves just past 0;
    a lower end farther from 0 stays, and the upper end moves instead."""
    lo, hi = signflip.sign_flip_ci(d, 0.05)
    assert lo <= 0.0 <= hi                  # p >= 0.05 really: 0 is accepted
    monkeypatch.setattr(paired, "sign_flip_p_value", lambda diffs, seed=0: 0.01)
    assert signflip.sign_flip_ci(d, 0.05) == [pytest.approx(x, rel=1e-6, abs=0) for x in expected]


@pytest.mark.parametrize("d, expected", [([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 6.0]),
                                         ([-6.0, -5.0, -4.0, -3.0, -2.0, -1.0], [-6.0, 0.0])])
def test_an_interval_that_misses_zero_while_p_accepts_it_is_widened_to_zero(monkeypatch, d,
                                                                            expected):
    """The other disagreement: p accepts 0 (made so here) while the ends exclude it: the
    interval is widened to 0, on the side 0 lies."""
    assert signflip.sign_flip_ci(d, 0.05) == [min(d), max(d)]
    monkeypatch.setattr(paired, "sign_flip_p_value", lambda diffs, seed=0: 0.9)
    assert signflip.sign_flip_ci(d, 0.05) == expected
