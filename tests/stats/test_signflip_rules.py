"""The sign-flip rules (benchkit.stats.signflip), pinned in process at and around each threshold: exact
values on small cases (n <= 16 pairs, where the sign-flip test enumerates every flip), closed
forms, and the contracts the docstrings state, so a changed comparison, bound or constant fails
here rather than only in an end-to-end session. benchkit.stats.paired' rules: tests/test_stats_rules.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchkit.stats import signflip as sf
from benchkit.stats import paired as stats

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)

# ---------------------------------------------------------------- signflip.min_pairs


@pytest.mark.parametrize("level, n", [
    (1.0, 2),            # 2^-1 = 0.5 < 1
    (0.5, 3),            # 2^-1 = 0.5 is not below 0.5: one pair more
    (0.5000001, 2),
    (0.25, 4), (0.2500001, 3),
    (0.0625, 6), (0.0625001, 5),
    (0.05, 6), (0.03125, 7), (0.0312501, 6), (0.01, 8), (1e-3, 11),
])
def test_min_pairs_is_the_first_n_whose_smallest_p_is_below_the_level(level, n):
    assert sf.min_pairs(level) == n
    assert stats.min_p_value(n) < level <= stats.min_p_value(n - 1) or n == 2


@pytest.mark.parametrize("level", [0.0, -0.05, 1.0000001, 2.0])
def test_min_pairs_refuses_a_level_outside_0_1(level):
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\], got"):
        sf.min_pairs(level)


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
    return stats.sign_flip_p_value(np.asarray(d) - c) >= level


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
            p = stats.sign_flip_p_value(d, seed=seed)
            lo, hi = sf.sign_flip_ci(d, p, seed=seed)
            assert lo <= 0.0 <= hi, (s, seed, p, lo, hi)


def _check_ends(d, level):
    lo, hi = sf.sign_flip_ci(d, level)
    if stats.min_p_value(len(d)) >= level:
        assert (lo, hi) == (None, None)
        return
    span = hi - lo
    assert span > 0
    step = 1e-7 * max(1e-3, float(np.abs(d).max()))
    assert _accepts(d, lo + step, level) and _accepts(d, hi - step, level)
    assert not _accepts(d, lo - step, level) and not _accepts(d, hi + step, level)
    assert _accepts(d, float(np.mean(d)), level)
    p = stats.sign_flip_p_value(d)
    assert (lo > 0 or hi < 0) == (p < level)


def test_the_interval_of_six_same_sign_pairs_is_their_range():
    """With 6 pairs only the two all-same-sign flips reach p < 0.05 (2/64): a shift is rejected
    only when every shifted difference has the same strict sign."""
    assert sf.sign_flip_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.05) == [1.0, 6.0]
    assert sf.sign_flip_ci([-6.0, -2.0, -3.0, -4.0, -5.0, -1.0], 0.05) == [-6.0, -1.0]


def test_the_interval_flattens_its_input_and_takes_one_pair():
    assert sf.sign_flip_ci(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 0.05) == [1.0, 6.0]
    assert sf.sign_flip_ci([1, 2, 3, 4, 5, 6], 0.05) == [1.0, 6.0]
    assert sf.sign_flip_ci([2.0], 0.05) == [None, None]       # one pair: p is always 1
    assert sf.sign_flip_ci([2.0], 1.0) == [None, None]


@pytest.mark.parametrize("n", [2, 5, 7])
def test_the_interval_is_unbounded_at_a_level_equal_to_the_smallest_p(n):
    d = list(np.linspace(1.0, 2.0, n))
    assert sf.sign_flip_ci(d, stats.min_p_value(n)) == [None, None]   # p < 2^(1-n) impossible
    lo, hi = sf.sign_flip_ci(d, stats.min_p_value(n) * 1.0001)
    assert lo == pytest.approx(1.0) and hi == pytest.approx(2.0)


def test_the_interval_uses_the_seed_of_the_monte_carlo_test():
    d = np.asarray(CI_DATA[5])
    assert sf.sign_flip_ci(d, 0.05) == sf.sign_flip_ci(d, 0.05, seed=0)
    ends = []
    for seed in (0, 3):
        lo, hi = sf.sign_flip_ci(d, 0.05, seed=seed)
        for end, out in ((lo, -1e-7), (hi, 1e-7)):
            assert stats.sign_flip_p_value(d - (end - out), seed=seed) >= 0.05
            assert stats.sign_flip_p_value(d - (end + out), seed=seed) < 0.05
        ends.append((lo, hi))
    assert ends[0] != ends[1]


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf"), 1.0]])
def test_the_interval_refuses_empty_or_non_finite_differences(bad):
    with pytest.raises(ValueError, match="diffs must be finite and non-empty"):
        sf.sign_flip_ci(bad, 0.05)


def test_an_end_at_zero_is_placed_on_the_side_the_test_says():
    """d - 0 has a zero difference: p(d) = 4/64 >= 0.05, so 0 is accepted and lies inside."""
    d = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert stats.sign_flip_p_value(d) == 4 / 64
    lo, hi = sf.sign_flip_ci(d, 0.05)
    assert lo <= 0.0 <= hi and hi == 5.0
    # at a level equal to p, 0 is still accepted (p >= level): inside, at the lower end
    lo, hi = sf.sign_flip_ci(d, 4 / 64)
    assert lo <= 0.0 <= hi and abs(lo) < 1e-12 and hi == 5.0
    lo, hi = sf.sign_flip_ci([-x for x in d], 4 / 64)
    assert lo <= 0.0 <= hi and abs(hi) < 1e-12 and lo == -5.0
    # at 0.07 the same p rejects: 0 lies outside
    assert stats.sign_flip_p_value(d) < 0.07
    assert sf.sign_flip_ci(d, 0.07) == [0.5, 4.5]
    assert sf.sign_flip_ci([-x for x in d], 0.07) == [-4.5, -0.5]


# ---------------------------------------------------------------- signflip.power


def test_power_is_zero_below_the_reachable_minimum_and_one_for_a_huge_effect():
    assert sf.power(5, 10.0, 0.05) == 0.0        # 2^-4 >= 0.05
    assert sf.power(6, 10.0, 0.05) == 1.0        # every simulated bench has 6 positive diffs
    assert sf.power(7, 10.0, 0.03125) == 1.0 and sf.power(6, 10.0, 0.03125) == 0.0


def test_power_is_symmetric_in_the_effect_sign_and_uses_the_t_power_from_t_from():
    assert sf.power(8, -1.0, 0.05) == sf.power(8, 1.0, 0.05)
    n = sf.T_FROM
    assert sf.power(n, 0.5, 0.05) == stats.t_test_power(0.5 * math.sqrt(n), n, 0.05)
    assert sf.power(n, -0.5, 0.05) == sf.power(n, 0.5, 0.05)


def test_power_under_no_effect_is_the_exact_size_of_the_test():
    """With 6 pairs p < 0.05 only at 2/64: under H0 that has probability 2/64 exactly."""
    assert abs(sf.power(6, 0.0, 0.05) - 2 / 64) < 4 * math.sqrt(2 / 64 / sf.SIM_REPS)


# ---------------------------------------------------------------- signflip.mde_power80


@pytest.mark.parametrize("n, level", [(6, 0.05), (7, 0.04), (8, 0.2)])   # mde above/below 1
def test_mde_power80_is_the_smallest_effect_reaching_the_target(n, level):
    mde = sf.mde_power80(n, 1.0, level)
    assert sf.power(n, mde, level) >= 0.8
    assert sf.power(n, mde * (1 - 5e-3), level) < 0.8      # within the documented 0.5%
    assert sf.mde_power80(n, 2.0, level) == 2 * mde          # scales with sd
    assert sf.mde_power80(n, -2.0, level) == 2 * mde
    lower = sf.mde_power80(n, 1.0, level, target=0.5)
    assert lower < mde and sf.power(n, lower, level) >= 0.5


def test_mde_power80_edges():
    assert sf.mde_power80(5, 1.0, 0.05) is None             # p < 0.05 impossible on 5 pairs
    assert sf.mde_power80(6, 1.0, 0.05) is not None
    assert sf.mde_power80(6, 0.0, 0.05) == 0.0
    assert sf.mde_power80(6, float("nan"), 0.05) is None
    assert sf.mde_power80(6, float("inf"), 0.05) is None
    assert sf.mde_power80(6, 1.0, 0.05, target=1.01) is None  # power never exceeds 1
    # power 1 is reached (every bench of 6 same-sign pairs): a finite effect
    top = sf.mde_power80(6, 1.0, 0.05, target=1.0)
    assert top is not None and sf.power(6, top, 0.05) == 1.0 > sf.power(6, top * (1 - 5e-3), 0.05)
    # a target above the power at effect 2 (the search doubles its bracket past 2)
    big = sf.mde_power80(6, 1.0, 0.05, target=0.95)
    assert big > 2.0 and sf.power(6, big, 0.05) >= 0.95 > sf.power(6, big * (1 - 5e-3), 0.05)
    # a target the power reaches exactly at effect 2: the answer is at most 2
    at2 = sf.power(6, 2.0, 0.05)
    assert sf.mde_power80(6, 1.0, 0.05, target=at2) <= 2.0


# ---------------------------------------------------------------- signflip.seeds_needed

# the effect at which the paired t power (used from T_FROM pairs) first reaches 0.8 at 10001
ES_10001 = 0.028017107946625437


def test_seeds_needed_is_none_when_undefined():
    for delta, sd in [(0.0, 1.0), (1.0, 0.0), (math.inf, 1.0), (1.0, math.inf),
                      (math.nan, 1.0), (1.0, math.nan), (-math.inf, 1.0)]:
        assert sf.seeds_needed(delta, sd, 0.05) is None, (delta, sd)
    # undefined even where the target is below the level (where any n would do)
    for delta, sd in [(0.0, 1.0), (1.0, math.inf), (1.0, math.nan), (1.0, 0.0)]:
        assert sf.seeds_needed(delta, sd, 0.05, target=0.01) is None, (delta, sd)


def test_seeds_needed_depends_on_delta_over_sd():
    n = sf.seeds_needed(1.0, 1.0, 0.05)
    assert n == 11
    assert sf.seeds_needed(2.0, 2.0, 0.05) == n == sf.seeds_needed(-1.0, -1.0, 0.05)
    assert sf.seeds_needed(1.0, 0.5, 0.05) == sf.seeds_needed(2.0, 1.0, 0.05) == 6
    assert sf.power(n, 1.0, 0.05) >= 0.8 > sf.power(n - 1, 1.0, 0.05)


def test_seeds_needed_meets_the_target_inclusively():
    assert sf.seeds_needed(10.0, 1.0, 0.05, target=1.0) == 6     # power exactly 1 at 6 pairs
    target = sf.power(8, 1.0, 0.05)
    assert sf.power(7, 1.0, 0.05) < target
    assert sf.seeds_needed(1.0, 1.0, 0.05, target=target) == 8


def test_seeds_needed_is_never_below_min_pairs():
    assert sf.seeds_needed(1.0, 1.0, 0.05, target=0.0) == 6       # every n "reaches" 0
    assert sf.seeds_needed(1.0, 1.0, 0.01, target=0.0) == 8


def test_seeds_needed_walks_down_from_the_t_answer():
    """At es 0.7 and 0.05 the t answer is 19 pairs and the sign-flip simulation reaches 0.8
    at 18 already (and not at 17): the search steps down one pair at a time from the guess."""
    assert sf._t_seeds(0.7, 0.05, 0.8, 10000) == 19
    assert sf.power(17, 0.7, 0.05) < 0.8 <= sf.power(18, 0.7, 0.05)
    assert sf.seeds_needed(0.7, 1.0, 0.05) == 18


def test_seeds_needed_searches_up_from_a_t_answer_that_falls_short():
    """At level 0.001 and power 0.9 the t answer for es 2 is 11 pairs; the sign-flip test
    needs 13: the bisection above the guess finds 13, not the guess plus one."""
    assert sf._t_seeds(2.0, 0.001, 0.9, 10000) == 11
    assert sf.power(12, 2.0, 0.001) < 0.9 <= sf.power(13, 2.0, 0.001)
    assert sf.seeds_needed(2.0, 1.0, 0.001, target=0.9) == 13


def test_seeds_needed_walks_down_to_the_minimum():
    """At power 1 the t answer is 10 pairs for es 4, while every simulated bench of 6 pairs
    already rejects: the walk down goes to min_pairs, not one pair short of it."""
    assert sf._t_seeds(4.0, 0.05, 1.0, 10000) == 10
    assert sf.power(6, 4.0, 0.05) == 1.0
    assert sf.seeds_needed(4.0, 1.0, 0.05, target=1.0) == 6


def test_seeds_needed_is_none_above_max_n_and_max_n_defaults_to_10000():
    def t_ok(n):
        return stats.t_test_power(ES_10001 * math.sqrt(n), n, 0.05) >= 0.8
    assert t_ok(10001) and not t_ok(10000)
    assert sf.seeds_needed(ES_10001, 1.0, 0.05) is None
    assert sf.seeds_needed(ES_10001, 1.0, 0.05, max_n=10001) == 10001
    assert sf.seeds_needed(1.0, 1.0, 0.05, max_n=10) is None
    assert sf.seeds_needed(1.0, 1.0, 0.05, max_n=11) == 11


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
    lo, hi = sf.sign_flip_ci(d, 0.05)
    assert lo <= 0.0 <= hi                  # p >= 0.05 really: 0 is accepted
    monkeypatch.setattr(stats, "sign_flip_p_value", lambda diffs, seed=0: 0.01)
    assert sf.sign_flip_ci(d, 0.05) == [pytest.approx(x, rel=1e-6, abs=0) for x in expected]


@pytest.mark.parametrize("d, expected", [([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 6.0]),
                                         ([-6.0, -5.0, -4.0, -3.0, -2.0, -1.0], [-6.0, 0.0])])
def test_an_interval_that_misses_zero_while_p_accepts_it_is_widened_to_zero(monkeypatch, d,
                                                                            expected):
    """The other disagreement: p accepts 0 (made so here) while the ends exclude it: the
    interval is widened to 0, on the side 0 lies."""
    assert sf.sign_flip_ci(d, 0.05) == [min(d), max(d)]
    monkeypatch.setattr(stats, "sign_flip_p_value", lambda diffs, seed=0: 0.9)
    assert sf.sign_flip_ci(d, 0.05) == expected
