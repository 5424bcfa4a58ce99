"""The statistics' rules (benchkit.stats.paired), pinned in process at and around each threshold: exact
values on small cases (n <= 16 pairs, where the sign-flip test enumerates every flip), closed
forms, and the contracts the docstrings state, so a changed comparison, bound or constant fails
here rather than only in an end-to-end session. benchkit.stats.signflip's rules:
tests/test_signflip_rules.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchkit.stats import paired as stats

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)

# ---------------------------------------------------------------- stats: summaries and the p


def test_summarize_is_mean_population_std_values_and_count():
    assert stats.summarize([1.0, 2.0, 3.0, 4.0]) == {
        "mean": 2.5, "std": math.sqrt(1.25), "per_seed": [1.0, 2.0, 3.0, 4.0], "n": 4}
    with pytest.raises(ValueError, match="values contain non-finite"):
        stats.summarize([1.0, math.nan])


@pytest.mark.parametrize("n, p", [(1, 1.0), (2, 0.5), (6, 1 / 32), (17, 2.0 ** -16)])
def test_min_p_value_is_two_to_the_one_minus_n(n, p):
    assert stats.min_p_value(n) == p


def test_one_pair_and_all_zero_differences():
    assert stats.sign_flip_p_value([2.0]) == 1.0      # both flips reach |2|
    assert stats.sign_flip_p_value([0.0, 0.0, 0.0]) == 1.0
    assert stats.sign_flip_p_value([0.0, 0.0, 3.0]) == 1.0
    with pytest.raises(ValueError, match="diffs is empty"):
        stats.sign_flip_p_value([])
    with pytest.raises(ValueError, match="diffs contain non-finite"):
        stats.sign_flip_p_value([1.0, math.inf])


def test_the_observed_flip_and_its_ties_count_in_the_exact_p():
    """[1, 1, 2]: |sum| 4 is reached by +++ and ---; [1, 1, -1, -1] has sum 0, so every one
    of the 16 flips reaches it. [1, 2, -3, 6] (sum 6): a = +-1 +-2 +-3 takes 6, 4, 2, 0, 0,
    -2, -4, -6, and |a + 6| >= 6 for the 5 with a >= 0, |a - 6| >= 6 for the 5 with a <= 0:
    10 of 16, four of them ties at exactly 6."""
    assert stats.sign_flip_p_value([1.0, 1.0, 2.0]) == 2 / 8
    assert stats.sign_flip_p_value([1.0, 1.0, -1.0, -1.0]) == 1.0
    assert stats.sign_flip_p_value([1.0, 2.0, -3.0, 6.0]) == 10 / 16
    assert stats.sign_flip_p_value([1.0, 2.0, 3.0, 6.0]) == 2 / 16


def test_a_flip_exactly_at_the_tie_tolerance_counts():
    """[x, 1]: the flip -x + 1 reaches |sum| - 1e-12 * sum|d| exactly for this x, so it is a
    tie within the tolerance (>=), and p is 1, not 1/2."""
    x = 4.999335e-13
    d = np.array([x, 1.0])
    assert abs(1.0 - x) == abs(d.sum()) - 1e-12 * np.abs(d).sum()
    assert stats.sign_flip_p_value(d) == 1.0
    # above 16 pairs too (zeros leave every sum alone): every drawn flip counts
    assert stats.sign_flip_p_value([x, 1.0] + [0.0] * 15) == 1.0


def _monte_carlo_p(d, n_resamples=20000, seed=0):
    """The documented estimate, written out: (1 + count) / (1 + n_resamples) over seeded flips
    (one draw; the generator's stream does not depend on how it is chunked)."""
    d = np.asarray(d, dtype=float)
    signs = np.random.default_rng(seed).integers(0, 2, size=(n_resamples, len(d))) * 2.0 - 1.0
    thr = abs(d.sum()) - 1e-12 * np.abs(d).sum()
    return (1 + int(np.count_nonzero(np.abs(signs @ d) >= thr))) / (1 + n_resamples)


@pytest.mark.parametrize("n", [17, 120])   # 120 pairs: the flips are drawn in two chunks
def test_above_16_pairs_the_p_is_the_seeded_monte_carlo_estimate(n):
    d = np.random.default_rng(n).normal(0.15, 1.0, n)
    p = stats.sign_flip_p_value(d)
    assert p == _monte_carlo_p(d) == stats.sign_flip_p_value(d, seed=0)
    assert round(p * 20001) == pytest.approx(p * 20001, abs=1e-9)
    assert stats.sign_flip_p_value(d, seed=4) == _monte_carlo_p(d, seed=4) != p
    assert stats.sign_flip_p_value(d, n_resamples=999) == _monte_carlo_p(d, 999)
    if n == 17:
        exact = stats.sign_flip_p_value(d, exact_max=17)
        assert exact != p and round(exact * 2 ** 17) == pytest.approx(exact * 2 ** 17, abs=1e-6)


def test_sixteen_pairs_are_enumerated_exactly():
    d = np.random.default_rng(16).normal(0.4, 1.0, 16)
    p = stats.sign_flip_p_value(d)
    assert round(p * 2 ** 16) == pytest.approx(p * 2 ** 16, abs=1e-6)
    assert p != stats.sign_flip_p_value(d, exact_max=15)


def test_monte_carlo_with_one_resample_counts_it():
    d = [1.0] * 8 + [-1.0] * 8 + [0.0]     # sum 0: every flip reaches it
    assert stats.sign_flip_p_value(d, n_resamples=1) == 1.0


def test_mde_ci95_and_effect_size_are_the_t_formulas():
    from scipy import stats as sps
    d = np.array([0.2, -0.1, 0.4, 0.3, 0.0, 0.25])
    n, sd = len(d), d.std(ddof=1)
    for alpha in (0.05, 0.1, 0.01):
        assert stats.mde(d, alpha) == pytest.approx(sps.t.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n),
                                                    rel=1e-12)
    assert stats.mde(d) == stats.mde(d, 0.05)
    half = sps.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    assert stats.ci95(d) == pytest.approx([d.mean() - half, d.mean() + half], rel=1e-12)
    assert stats.effect_size(d) == pytest.approx(d.mean() / sd, rel=1e-12)   # sd < 1
    assert stats.effect_size([0.5, 0.5, 0.5]) is None
    with pytest.raises(ValueError, match="need at least 2 pairs, got 1"):
        stats.mde([1.0])


# ---------------------------------------------------------------- stats: verdict rules


@pytest.mark.parametrize("delta, direction, better", [
    (-0.5, "lower", True), (0.5, "lower", False), (0.0, "lower", False),
    (0.5, "higher", True), (-0.5, "higher", False), (0.0, "higher", False),
])
def test_better_is_a_strict_sign_in_the_direction(delta, direction, better):
    assert stats._better(delta, direction) is better
    p_verdict = stats.practical_verdict(0.01, delta, direction, 0.05)
    assert p_verdict == ("helps" if better else "harms" if delta != 0 else "inconclusive")
    assert stats.practical_verdict(0.05, delta, direction, 0.05) == "inconclusive"  # p == level


def test_direction_is_checked():
    with pytest.raises(ValueError, match=r"direction must be one of \('lower', 'higher'\), got 'up'"):
        stats._direction("up")
    assert stats._direction("higher") == "higher"


def test_idea_wins_counts_strictly_better_seeds_in_each_direction():
    base, idea = [1.0, 2.0, 3.0, 4.0, 5.0], [0.5, 2.0, 3.5, 3.5, 5.0]
    assert stats.idea_wins(base, idea, "lower") == 2     # ties (2.0, 5.0) are not wins
    assert stats.idea_wins(base, idea, "higher") == 1
    assert stats.idea_wins([1.0, 1.0], [1.5, 1.9], "lower") == 0   # worse by less than 1


def test_holm_caps_at_one_and_keeps_input_order():
    assert stats.holm([0.6, 0.7]) == [1.0, 1.0]
    assert stats.holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert stats.holm([0.02, 0.02]) == [0.04, 0.04]
    with pytest.raises(ValueError, match="p_values contain non-finite"):
        stats.holm([0.1, math.nan])


# margin 0.1 of baselines 10, 20, 30, ...: the idea is worse by 0.5 on each of 5 seeds
NI_BASE = [10.0, 20.0, 30.0, 40.0, 50.0]
NI_IDEA = [10.5, 20.5, 30.5, 40.4, 50.6]


def test_noninferiority_margin_scales_with_each_seeds_baseline():
    from scipy import stats as sps
    r = stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.02)
    d = np.subtract(NI_IDEA, NI_BASE)
    assert r["margin_rel"] == 0.02 and r["margin_abs"] == pytest.approx(0.02 * 30.0)
    # w = d - 0.02 * b = (0.3, 0.1, -0.1, -0.4, -0.4): sum -0.5; 11 of 32 flips have sum <= it
    w = d - 0.02 * np.asarray(NI_BASE)
    assert r["p_value"] == stats.one_sided_sign_flip_p(w)
    se = d.std(ddof=1) / math.sqrt(5)
    assert r["bound"] == pytest.approx(d.mean() + sps.t.ppf(0.95, 4) * se, rel=1e-12)
    assert r["non_inferior"] is (r["p_value"] < 0.05)
    # a margin that every seed clears by far: the smallest one-sided p, 1/32
    far = stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5)
    assert far["p_value"] == 1 / 32 and far["non_inferior"] is True
    # the same p at a level equal to it is not below it
    at = stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5, alpha=1 / 32)
    assert at["non_inferior"] is False
    assert stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5,
                                alpha=1 / 32 + 1e-9)["non_inferior"] is True
    # the default level is 0.05: the bound uses t(0.95)
    assert far["bound"] == pytest.approx(d.mean() + sps.t.ppf(0.95, 4) * se, rel=1e-12)
    assert stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5,
                                alpha=0.2)["bound"] == pytest.approx(
        d.mean() + sps.t.ppf(0.8, 4) * se, rel=1e-12)


def test_noninferiority_higher_is_better_mirrors_the_differences():
    # for "higher" the idea is worse when it is lower: mirror the data
    r = stats.noninferiority(NI_BASE, [2 * b - x for b, x in zip(NI_BASE, NI_IDEA)],
                             direction="higher", margin=0.02)
    low = stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.02)
    assert r["p_value"] == low["p_value"] and r["non_inferior"] is low["non_inferior"]
    assert r["bound"] == pytest.approx(-low["bound"])


@pytest.mark.parametrize("margin, ok", [(0.0, True), (0.05, True), (2.0, True),
                                        (-0.01, False), (math.inf, False), (math.nan, False)])
def test_noninferiority_margin_range(margin, ok):
    if ok:
        r = stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=margin)
        assert r["margin_rel"] == margin
    else:
        with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
            stats.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=margin)


def test_compare_at_the_level_and_its_forwarded_arguments():
    base = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    gains = [0.5, 0.25, 0.75, 0.5, 0.375, 0.625]
    idea = [b - g for b, g in zip(base, gains)]   # every seed better: p = 2/64
    c = stats.compare(base, idea, direction="lower")
    assert c["alpha"] == 0.05 and c["p_value"] == 2 / 64
    assert c["verdict"] == "idea better (significant)" and c["system_worked"] is True
    assert c["mde_rel_pct"] == pytest.approx(100 * c["mde"] / 3.5) and c["mde"] == stats.mde(
        np.subtract(idea, base), 0.05)
    at = stats.compare(base, idea, direction="lower", alpha=2 / 64)
    assert at["verdict"] == "no significant win" and at["system_worked"] is False
    assert at["mde"] == stats.mde(np.subtract(idea, base), 2 / 64) > c["mde"] > 0
    worse = stats.compare(base, [b + 0.5 for b in base], direction="lower")
    assert worse["verdict"] == "idea worse (significant)" and worse["system_worked"] is False
    assert worse["delta_mean"] == 0.5 and worse["idea_wins"] == 0 and worse["n_pairs"] == 6
    assert worse["per_seed_diffs"] == [0.5] * 6 and worse["direction"] == "lower"
    ni = stats.compare(base, idea, direction="higher", margin=0.2, alpha=0.1)
    assert ni["noninferiority"] == stats.noninferiority(base, idea, direction="higher",
                                                        margin=0.2, alpha=0.1)
    assert stats.compare(base, idea, direction="lower")["noninferiority"] is None


def test_compare_seeds_its_monte_carlo_p():
    rng = np.random.default_rng(3)
    base = rng.normal(0, 1, 18).tolist()
    idea = (np.asarray(base) + rng.normal(0.3, 1, 18)).tolist()
    d = np.subtract(idea, base)
    assert stats.compare(base, idea, direction="lower")["p_value"] == _monte_carlo_p(d, seed=0)
    assert stats.compare(base, idea, direction="lower", seed=7)["p_value"] == _monte_carlo_p(d, seed=7)


def test_select_config_scores_the_mean_in_the_direction():
    vals = [[2.0, 4.0], [3.5, 2.0], [1.0, 6.0]]     # means 3.0, 2.75, 3.5
    assert stats.select_config(vals, "lower") == 1
    assert stats.select_config(vals, "higher") == 2
    assert stats.select_config([[None, 1.0], [2.0, 2.0]], "lower") == 1
    assert stats.select_config([[], [2.0]], "lower") == 1
    assert stats.select_config([[math.nan], [5.0], [4.0]], "lower") == 2   # skips, goes on
    assert stats.select_config([[3.0], [3.0]], "higher") == 0               # tie: the first
    assert stats.select_config([[-1.0], [-2.0]], "lower") == 1


def test_select_config_averages_float32_metrics_in_float64():
    """In float32, 16777216 + 1 rounds back to 16777216: the first config's mean would be
    8388608.0 and beat the second's 8388608.25; its true mean is 8388608.5."""
    vals = [[np.float32(16777216.0), np.float32(1.0)], [8388608.25]]
    assert stats.select_config(vals, "lower") == 1
    assert stats.select_config(vals, "higher") == 0


# ---------------------------------------------------------------- stats: spending and looks


def test_spent_alpha_values():
    assert stats.spent_alpha(0, 8, 0.05) == 0.0
    assert stats.spent_alpha(4, 8, 0.05) == 0.05 * math.log1p((math.e - 1) * 0.5)
    assert stats.spent_alpha(2, 8, 0.1) == 0.1 * math.log1p((math.e - 1) * 0.25)
    assert stats.spent_alpha(8, 8, 0.05) == 0.05
    assert stats.spent_alpha(12, 8, 0.05) == 0.05
    assert stats.spent_alpha(1, 1, 0.01) == 0.01


@pytest.mark.parametrize("args, msg", [
    ((-1, 8, 0.05), "n_seeds must be >= 0, got -1"),
    ((1, 0, 0.05), "max_seeds must be >= 1, got 0"),
    ((1.0, 8, 0.05), "n_seeds must be an integer"),
    ((1, 8.0, 0.05), "max_seeds must be an integer"),
    ((True, 8, 0.05), "n_seeds must be an integer"),
    ((1, 8, 0.0), r"alpha must be in \(0, 1\), got 0.0"),
    ((1, 8, 1.0), r"alpha must be in \(0, 1\)"),
])
def test_spent_alpha_refuses_bad_arguments(args, msg):
    with pytest.raises(ValueError, match=msg):
        stats.spent_alpha(*args)


def test_look_levels_are_the_increments_of_the_spend():
    s4 = stats.spent_alpha(4, 8, 0.05)
    assert stats.look_levels([4, 8], 8, 0.05) == pytest.approx([s4, 0.05 - s4], rel=1e-12)
    assert stats.look_levels([8], 8, 0.05) == [0.05]
    assert stats.look_levels([1], 1, 0.05) == [0.05]
    assert stats.look_levels([4], 8, 0.05) == [s4]
    # looks beyond max_seeds are unplanned: level 0, and the looks after them are kept
    assert stats.look_levels([8, 12, 16], 8, 0.05) == [0.05, 0.0, 0.0]
    assert stats.look_levels([4, 12], 8, 0.05) == [s4, 0.0]


def test_look_levels_never_overspend_in_floating_point():
    looks, m, alpha = [9, 38, 39], 39, 0.025
    levels = stats.look_levels(looks, m, alpha)
    for k, n in enumerate(looks):
        assert math.fsum(levels[:k + 1]) <= stats.spent_alpha(n, m, alpha)
        assert levels[k] > 0.0
    assert math.fsum(levels) == pytest.approx(alpha, rel=1e-12)


@pytest.mark.parametrize("looks, m, msg", [
    ([8, 4], 16, "strictly increasing"),
    ([4, 4], 16, "strictly increasing"),
    ([2, 6, 5], 16, "strictly increasing"),
    ([4, 0], 16, r"looks_n\[1\] must be >= 1, got 0"),
    ([0], 16, r"looks_n\[0\] must be >= 1"),
    ([4], 0, "max_seeds must be >= 1, got 0"),
    ([4.0], 8, r"looks_n\[0\] must be an integer"),
])
def test_look_levels_refuse_bad_looks(looks, m, msg):
    with pytest.raises(ValueError, match=msg):
        stats.look_levels(looks, m, 0.05)
