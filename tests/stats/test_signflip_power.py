"""Planning figures of the sign-flip test (benchkit.stats.signflip): min_pairs, power, MDE at 80%
power and seeds needed, at the level it is tested at; pinned in process at and around each
threshold, and checked against independent seeded simulations of benchkit's own test. The
interval: test_signflip_ci.py.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from benchkit.stats import signflip
from benchkit.stats import paired
from builders import decided, paired_report

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "stats"))
import simstats  # noqa: E402

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)

LEVELS = (0.05, 0.01, 0.1, paired.look_levels([8], 16, 0.05)[0], 0.025)


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
    assert signflip.min_pairs(level) == n
    assert paired.min_p_value(n) < level <= paired.min_p_value(n - 1) or n == 2


@pytest.mark.parametrize("level", [0.0, -0.05, 1.0000001, 2.0])
def test_min_pairs_refuses_a_level_outside_0_1(level):
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\], got"):
        signflip.min_pairs(level)


# ---------------------------------------------------------------- signflip.power


def test_power_is_zero_below_the_reachable_minimum_and_one_for_a_huge_effect():
    assert signflip.power(5, 10.0, 0.05) == 0.0        # 2^-4 >= 0.05
    assert signflip.power(6, 10.0, 0.05) == 1.0        # every simulated bench has 6 positive diffs
    assert signflip.power(7, 10.0, 0.03125) == 1.0 and signflip.power(6, 10.0, 0.03125) == 0.0


def test_power_is_symmetric_in_the_effect_sign_and_uses_the_t_power_from_t_from():
    assert signflip.power(8, -1.0, 0.05) == signflip.power(8, 1.0, 0.05)
    n = signflip.T_FROM
    assert signflip.power(n, 0.5, 0.05) == paired.t_test_power(0.5 * math.sqrt(n), n, 0.05)
    assert signflip.power(n, -0.5, 0.05) == signflip.power(n, 0.5, 0.05)


def test_power_under_no_effect_is_the_exact_size_of_the_test():
    """With 6 pairs p < 0.05 only at 2/64: under H0 that has probability 2/64 exactly."""
    assert abs(signflip.power(6, 0.0, 0.05) - 2 / 64) < 4 * math.sqrt(2 / 64 / signflip.SIM_REPS)


# ---------------------------------------------------------------- signflip.mde_power80


@pytest.mark.slow
@pytest.mark.parametrize("n, level", [(6, 0.05), (7, 0.04), (8, 0.2)])   # mde above/below 1
def test_mde_power80_is_the_smallest_effect_reaching_the_target(n, level):
    mde = signflip.mde_power80(n, 1.0, level)
    assert signflip.power(n, mde, level) >= 0.8
    assert signflip.power(n, mde * (1 - 5e-3), level) < 0.8      # within the documented 0.5%
    assert signflip.mde_power80(n, 2.0, level) == 2 * mde          # scales with sd
    assert signflip.mde_power80(n, -2.0, level) == 2 * mde
    lower = signflip.mde_power80(n, 1.0, level, target=0.5)
    assert lower < mde and signflip.power(n, lower, level) >= 0.5


def test_mde_power80_edges():
    assert signflip.mde_power80(5, 1.0, 0.05) is None             # p < 0.05 impossible on 5 pairs
    assert signflip.mde_power80(6, 1.0, 0.05) is not None
    assert signflip.mde_power80(6, 0.0, 0.05) == 0.0
    assert signflip.mde_power80(6, float("nan"), 0.05) is None
    assert signflip.mde_power80(6, float("inf"), 0.05) is None
    assert signflip.mde_power80(6, 1.0, 0.05, target=1.01) is None  # power never exceeds 1
    # power 1 is reached (every bench of 6 same-sign pairs): a finite effect
    top = signflip.mde_power80(6, 1.0, 0.05, target=1.0)
    assert top is not None
    assert signflip.power(6, top, 0.05) == 1.0 > signflip.power(6, top * (1 - 5e-3), 0.05)
    # a target above the power at effect 2 (the search doubles its bracket past 2)
    big = signflip.mde_power80(6, 1.0, 0.05, target=0.95)
    assert big > 2.0
    assert signflip.power(6, big, 0.05) >= 0.95 > signflip.power(6, big * (1 - 5e-3), 0.05)
    # a target the power reaches exactly at effect 2: the answer is at most 2
    at2 = signflip.power(6, 2.0, 0.05)
    assert signflip.mde_power80(6, 1.0, 0.05, target=at2) <= 2.0


# ---------------------------------------------------------------- signflip.seeds_needed

# the effect at which the paired t power (used from T_FROM pairs) first reaches 0.8 at 10001
ES_10001 = 0.028017107946625437


def test_seeds_needed_is_none_when_undefined():
    for delta, sd in [(0.0, 1.0), (1.0, 0.0), (math.inf, 1.0), (1.0, math.inf),
                      (math.nan, 1.0), (1.0, math.nan), (-math.inf, 1.0)]:
        assert signflip.seeds_needed(delta, sd, 0.05) is None, (delta, sd)
    # undefined even where the target is below the level (where any n would do)
    for delta, sd in [(0.0, 1.0), (1.0, math.inf), (1.0, math.nan), (1.0, 0.0)]:
        assert signflip.seeds_needed(delta, sd, 0.05, target=0.01) is None, (delta, sd)


def test_seeds_needed_depends_on_delta_over_sd():
    n = signflip.seeds_needed(1.0, 1.0, 0.05)
    assert n == 11
    assert signflip.seeds_needed(2.0, 2.0, 0.05) == n == signflip.seeds_needed(-1.0, -1.0, 0.05)
    assert signflip.seeds_needed(1.0, 0.5, 0.05) == signflip.seeds_needed(2.0, 1.0, 0.05) == 6
    assert signflip.power(n, 1.0, 0.05) >= 0.8 > signflip.power(n - 1, 1.0, 0.05)


def test_seeds_needed_meets_the_target_inclusively():
    assert signflip.seeds_needed(10.0, 1.0, 0.05, target=1.0) == 6     # power exactly 1 at 6 pairs
    target = signflip.power(8, 1.0, 0.05)
    assert signflip.power(7, 1.0, 0.05) < target
    assert signflip.seeds_needed(1.0, 1.0, 0.05, target=target) == 8


def test_seeds_needed_is_never_below_min_pairs():
    assert signflip.seeds_needed(1.0, 1.0, 0.05, target=0.0) == 6       # every n "reaches" 0
    assert signflip.seeds_needed(1.0, 1.0, 0.01, target=0.0) == 8


def test_seeds_needed_walks_down_from_the_t_answer():
    """At es 0.7 and 0.05 the t answer is 19 pairs and the sign-flip simulation reaches 0.8
    at 18 already (and not at 17): the search steps down one pair at a time from the guess."""
    assert signflip._t_seeds(0.7, 0.05, 0.8, 10000) == 19
    assert signflip.power(17, 0.7, 0.05) < 0.8 <= signflip.power(18, 0.7, 0.05)
    assert signflip.seeds_needed(0.7, 1.0, 0.05) == 18


@pytest.mark.slow
def test_seeds_needed_searches_up_from_a_t_answer_that_falls_short(monkeypatch):
    """At level 0.001 and power 0.9 the t answer for es 2 is 11 pairs; the sign-flip test
    (exact from 12 pairs on) needs 12. When the test needs many more than the t answer, the
    bisection above the guess finds it, not the guess plus one."""
    assert signflip._t_seeds(2.0, 0.001, 0.9, 10000) == 11
    assert signflip.power(11, 2.0, 0.001) < 0.9 <= signflip.power(12, 2.0, 0.001)
    assert signflip.seeds_needed(2.0, 1.0, 0.001, target=0.9) == 12
    monkeypatch.setattr(signflip, "power", lambda n, es, level: float(n >= 23))
    assert signflip.seeds_needed(2.0, 1.0, 0.001, target=0.9) == 23


def test_power_between_12_and_40_pairs_sees_small_levels():
    """2,048 random flips cannot see p below 1/2049: power there was 0 and seeds_needed
    jumped to the t answer at 41. Exact tests up to 16 pairs, enough flips above."""
    assert signflip.power(13, 2.0, 0.0003) > 0.5 and signflip.power(20, 1.5, 0.0003, reps=200) > 0.5
    assert signflip.power(20, 1.5, 1 / 20001) == 0.0   # the test's own Monte Carlo floor


def test_seeds_needed_walks_down_to_the_minimum():
    """At power 1 the t answer is 10 pairs for es 4, while every simulated bench of 6 pairs
    already rejects: the walk down goes to min_pairs, not one pair short of it."""
    assert signflip._t_seeds(4.0, 0.05, 1.0, 10000) == 10
    assert signflip.power(6, 4.0, 0.05) == 1.0
    assert signflip.seeds_needed(4.0, 1.0, 0.05, target=1.0) == 6


def test_seeds_needed_is_none_above_max_n_and_max_n_defaults_to_10000():
    def t_ok(n):
        return paired.t_test_power(ES_10001 * math.sqrt(n), n, 0.05) >= 0.8
    assert t_ok(10001) and not t_ok(10000)
    assert signflip.seeds_needed(ES_10001, 1.0, 0.05) is None
    assert signflip.seeds_needed(ES_10001, 1.0, 0.05, max_n=10001) == 10001
    assert signflip.seeds_needed(1.0, 1.0, 0.05, max_n=10) is None
    assert signflip.seeds_needed(1.0, 1.0, 0.05, max_n=11) == 11


@pytest.mark.slow
@pytest.mark.parametrize("level, first", [(0.05, 6), (0.01, 8), (LEVELS[3], 7), (0.025, 7)])
def test_seeds_needed_is_never_below_the_reachable_minimum(level, first):
    assert signflip.min_pairs(level) == first
    assert paired.min_p_value(first) < level <= paired.min_p_value(first - 1)
    assert signflip.seeds_needed(10.0, 1.0, level) == first      # a huge effect: the minimum
    for es in (0.3, 0.8, 1.5, 3.0):
        assert signflip.seeds_needed(es, 1.0, level) >= first


@pytest.mark.parametrize("seeds", [4, 6])
def test_d1_an_inconclusive_small_bench_never_recommends_fewer_seeds(seeds):
    """D1: a 6-seed bench with p 0.0625 recommended 5 seeds (where p >= 0.0625 always)."""
    base = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5][:seeds]
    idea = [b - 0.3 for b in base[:-1]] + [base[-1] + 0.05]
    report = paired_report(base, idea)
    report = decided(report, report["comparison"]["p_value"], 1)
    comp = report["comparison"]
    assert report["practical_verdict"] == "inconclusive"
    assert comp["seeds_needed"] >= 6 and comp["planning"]["min_seeds"] == 6
    if seeds < 6:
        assert comp["mde_power80"] is None   # no effect is detectable with 4 seeds


@pytest.mark.slow
def test_planning_uses_the_holm_and_look_level():
    report = paired_report([1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
                           [0.9, 1.2, 1.1, 1.25, 1.35, 1.5, 1.55, 1.75], looks=(8, 16))
    report = decided(report, min(1.0, 2 * report["comparison"]["p_value"]), 2)
    plan = report["comparison"]["planning"]
    assert plan["level"] == pytest.approx(paired.look_levels([8], 16, 0.05)[0] / 2)
    assert plan["min_seeds"] == signflip.min_pairs(plan["level"]) == 8
    assert "planning figure" in plan["assumption"]


def _simulated_power(n: int, effect: float, level: float, reps: int, seed: int) -> float:
    """Power of benchkit's own sign-flip test (exact batched p), independent draws."""
    d = np.random.default_rng(seed).standard_normal((reps, n)) + effect
    return float(np.mean(np.asarray(simstats.sign_flip_p_values(d)) < level))


REPS = 2000
SE3 = 3 * np.sqrt(0.8 * 0.2 / REPS) + 3 * np.sqrt(0.8 * 0.2 / signflip.SIM_REPS)


@pytest.mark.slow
@pytest.mark.parametrize("es, level", [(1.0, 0.05), (0.8, 0.05), (1.2, 0.01),
                                       (1.0, LEVELS[3])])
def test_seeds_needed_matches_a_simulation_of_the_test(es, level):
    n = signflip.seeds_needed(es, 1.0, level)
    assert n <= 16
    assert _simulated_power(n, es, level, REPS, 7) >= 0.8 - SE3
    if n - 1 >= signflip.min_pairs(level):
        assert _simulated_power(n - 1, es, level, REPS, 8) < 0.8 + SE3


@pytest.mark.slow
@pytest.mark.parametrize("n, level", [(6, 0.05), (8, 0.05), (12, 0.01), (10, LEVELS[3])])
def test_mde_power80_matches_a_simulation_of_the_test(n, level):
    mde = signflip.mde_power80(n, 1.0, level)
    assert abs(_simulated_power(n, mde, level, REPS, 11) - 0.8) < SE3
    # the sign-flip test needs more effect than the t approximation says
    assert mde >= paired.power_mde(n, 1.0, level) * 0.98
