"""Figures of the sign-flip test at the level it is tested at: an interval that inverts it,
power, MDE at 80% power and seeds needed (planning figures, by seeded simulation), checked
against independent simulations of benchkit's own test."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from benchkit.stats import signflip as sf
from benchkit.stats import paired as stats
from benchkit.verdict.build import decide
from builders import paired_report

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import simstats  # noqa: E402

LEVELS = (0.05, 0.01, 0.1, stats.look_levels([8], 16, 0.05)[0], 0.025)


def test_the_interval_excludes_zero_exactly_when_p_is_below_the_level():
    rng = np.random.default_rng(2026)
    cases = 0
    for trial in range(120):
        n = int(rng.integers(2, 21))
        d = (rng.normal(rng.choice([0.0, 0.7, 1.5]), 1.0, n) if trial % 3 == 0 else
             rng.integers(-3, 4, n).astype(float) if trial % 3 == 1 else  # ties
             rng.standard_t(2, n))
        p = stats.sign_flip_p_value(d)
        for level in LEVELS:
            lo, hi = sf.sign_flip_ci(d, level)
            excludes = (lo is not None and lo > 0) or (hi is not None and hi < 0)
            assert excludes == (p < level), (d.tolist(), level, p, lo, hi)
            if lo is not None:
                assert lo <= d.mean() <= hi
            cases += 1
    assert cases == 120 * len(LEVELS)


def test_the_interval_is_unbounded_when_the_level_is_unreachable():
    assert sf.sign_flip_ci([1.0, 2.0, 3.0, 4.0, 5.0], 0.05) == [None, None]  # 2^-4 >= 0.05


def test_the_interval_contains_the_shifts_the_test_accepts():
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.4, 0.1, 0.6, -0.2])
    lo, hi = sf.sign_flip_ci(d, 0.05)
    for c in np.linspace(lo - 0.2, hi + 0.2, 41):
        inside = lo <= c <= hi
        assert (stats.sign_flip_p_value(d - c) >= 0.05) == inside or \
            min(abs(c - lo), abs(c - hi)) < 1e-9


@pytest.mark.parametrize("level, first", [(0.05, 6), (0.01, 8), (LEVELS[3], 7), (0.025, 7)])
def test_seeds_needed_is_never_below_the_reachable_minimum(level, first):
    assert sf.min_pairs(level) == first
    assert stats.min_p_value(first) < level <= stats.min_p_value(first - 1)
    assert sf.seeds_needed(10.0, 1.0, level) == first      # a huge effect: the minimum
    for es in (0.3, 0.8, 1.5, 3.0):
        assert sf.seeds_needed(es, 1.0, level) >= first


@pytest.mark.parametrize("seeds", [4, 6])
def test_d1_an_inconclusive_small_bench_never_recommends_fewer_seeds(seeds):
    """D1: a 6-seed bench with p 0.0625 recommended 5 seeds (where p >= 0.0625 always)."""
    base = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5][:seeds]
    idea = [b - 0.3 for b in base[:-1]] + [base[-1] + 0.05]
    report = paired_report(base, idea)
    decide(report, report["comparison"]["p_value"], 1)
    comp = report["comparison"]
    assert report["practical_verdict"] == "inconclusive"
    assert comp["seeds_needed"] >= 6 and comp["planning"]["min_seeds"] == 6
    if seeds < 6:
        assert comp["mde_power80"] is None   # no effect is detectable with 4 seeds


def test_planning_uses_the_holm_and_look_level():
    report = paired_report([1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
                           [0.9, 1.2, 1.1, 1.25, 1.35, 1.5, 1.55, 1.75], looks=(8, 16))
    decide(report, min(1.0, 2 * report["comparison"]["p_value"]), 2)
    plan = report["comparison"]["planning"]
    assert plan["level"] == pytest.approx(stats.look_levels([8], 16, 0.05)[0] / 2)
    assert plan["min_seeds"] == sf.min_pairs(plan["level"]) == 8
    assert "planning figure" in plan["assumption"]


def _simulated_power(n: int, effect: float, level: float, reps: int, seed: int) -> float:
    """Power of benchkit's own sign-flip test (exact batched p), independent draws."""
    d = np.random.default_rng(seed).standard_normal((reps, n)) + effect
    return float(np.mean(np.asarray(simstats.sign_flip_p_values(d)) < level))


REPS = 2000
SE3 = 3 * np.sqrt(0.8 * 0.2 / REPS) + 3 * np.sqrt(0.8 * 0.2 / sf.SIM_REPS)


@pytest.mark.parametrize("es, level", [(1.0, 0.05), (0.8, 0.05), (1.2, 0.01),
                                       (1.0, LEVELS[3])])
def test_seeds_needed_matches_a_simulation_of_the_test(es, level):
    n = sf.seeds_needed(es, 1.0, level)
    assert n <= 16
    assert _simulated_power(n, es, level, REPS, 7) >= 0.8 - SE3
    if n - 1 >= sf.min_pairs(level):
        assert _simulated_power(n - 1, es, level, REPS, 8) < 0.8 + SE3


@pytest.mark.parametrize("n, level", [(6, 0.05), (8, 0.05), (12, 0.01), (10, LEVELS[3])])
def test_mde_power80_matches_a_simulation_of_the_test(n, level):
    mde = sf.mde_power80(n, 1.0, level)
    assert abs(_simulated_power(n, mde, level, REPS, 11) - 0.8) < SE3
    # the sign-flip test needs more effect than the t approximation says
    assert mde >= stats.power_mde(n, 1.0, level) * 0.98
