"""benchkit.stats.selection, the selection-aware test (an intersection-union of paired
sign-flip tests, the tuned arm's configs cross-fitted), against references written here
independently of it: a brute force that selects each seed's config on the other seeds with
stats.select_config, builds every comparator/idea config combination and combines today's
sign-flip and sign tests' p by hand; scipy.stats.permutation_test and today's tests where each
arm has one config; the interval and the non-inferiority bound inverting their tests; the
level at the margin by simulation; regimes of arms that are not exchangeable.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from benchkit.stats import equivalence, pairtest, selection, signflip, signtest
from benchkit.stats import paired

pytestmark = pytest.mark.timeout(60)


def _loo(val, test, groups, direction):
    """Per seed, the arm's mean over groups of the test value at the config select_config
    picks on the other seeds (configs with a non-finite value on any seed removed first)."""
    n = val.shape[0]
    out = np.zeros(n)
    for g in groups:
        ok = [c for c in g if np.all(np.isfinite(val[:, c])) and np.all(np.isfinite(test[:, c]))]
        for i in range(n):
            others = [j for j in range(n) if j != i] or [i]
            j = paired.select_config([val[others, c] for c in ok], direction)
            out[i] += test[i, ok[j]] / len(groups)
    return out


def _combos(val, test, groups):
    ok = [[c for c in g if np.all(np.isfinite(val[:, c])) and np.all(np.isfinite(test[:, c]))]
          for g in groups]
    return [test[:, list(combo)].mean(axis=1) for combo in itertools.product(*ok)]


def brute_p(bv, bt, iv, it, direction, groups=None, statistic="mean"):
    """The intersection-union p by hand: helps over every comparator combination against the
    idea's cross-fitted values, harms the mirror; one-sided p = two-sided / 2 on the side the
    data favour, 1 - that on the other; p = min(1, 2 min(largest helps, largest harms))."""
    groups = groups or [list(range(bv.shape[1]))]
    idea_cf, base_cf = _loo(iv, it, groups, direction), _loo(bv, bt, groups, direction)
    return iut_p([idea_cf - b for b in _combos(bv, bt, groups)],
                 [i - base_cf for i in _combos(iv, it, groups)], direction, statistic)


def iut_p(helps, harms, direction, statistic="mean"):
    """The two sides' per-seed differences combined by hand (see brute_p)."""
    worse = 1.0 if direction == "lower" else -1.0
    sides = []
    for side, diffs in (("helps", helps), ("harms", harms)):
        qs = []
        for d in diffs:
            p2 = {"sign": signtest.sign_test_p, "mean": paired.sign_flip_p_value,
                  "wilcoxon": _wilcoxon_p}[statistic](d)
            stat = worse * {"sign": np.sign(d).sum(), "mean": d.sum(),
                            "wilcoxon": (np.sign(d) * sps.rankdata(np.abs(d))).sum()}[statistic]
            favours = stat < 0 if side == "helps" else stat > 0
            qs.append(p2 / 2 if favours else 1 - p2 / 2)
        sides.append(max(qs))
    return min(1.0, 2 * min(sides))


def _wilcoxon_p(d):
    one = selection.sweeps(np.zeros((len(d), 1)), np.zeros((len(d), 1)), d[:, None], d[:, None])
    return selection.p_value(one, "lower", statistic="wilcoxon")  # scipy-checked below


def _case(rng, n, k, *, gap=0.02, effect=0.0):
    """Configs whose true means differ slightly, validation noisier than test."""
    true = gap * np.arange(k)
    seed_b = rng.normal(1.0, 0.1, (n, 1))
    bv = seed_b + true + rng.normal(0, 0.05, (n, k))
    iv = seed_b + true + rng.normal(0, 0.05, (n, k))
    bt = seed_b + true + rng.normal(0, 0.02, (n, k))
    it = seed_b + true + effect + rng.normal(0, 0.02, (n, k))
    return bv, bt, iv, it


@pytest.mark.parametrize("direction", ["lower", "higher"])
def test_p_matches_brute_force_enumeration(direction):
    rng = np.random.default_rng(5)
    for n, k, effect in [(5, 3, 0.0), (6, 3, 0.03), (7, 2, -0.02), (4, 4, 0.0)]:
        bv, bt, iv, it = _case(rng, n, k, effect=effect)
        sw = selection.sweeps(bv, bt, iv, it)
        for statistic in ("mean", "sign"):
            assert selection.p_value(sw, direction, statistic=statistic) == pytest.approx(
                brute_p(bv, bt, iv, it, direction, statistic=statistic), abs=1e-12)


def test_ineligible_configs_and_groups_match_brute_force():
    rng = np.random.default_rng(7)
    bv, bt, iv, it = _case(rng, 6, 4)
    bv[2, 0] = np.nan          # baseline config 0 diverged on seed 2: never eligible
    iv[4, 3] = np.nan
    sw = selection.sweeps(bv, bt, iv, it)
    assert selection.p_value(sw, "lower") == pytest.approx(brute_p(bv, bt, iv, it, "lower"))
    groups = [[0, 1], [2, 3]]  # a frontier of two points, each selected on its own
    sw = selection.sweeps(bv, bt, iv, it, groups)
    assert selection.p_value(sw, "lower") == pytest.approx(
        brute_p(bv, bt, iv, it, "lower", groups=groups))
    only = np.full_like(bv, np.nan)  # no eligible config: no test, a clear message
    with pytest.raises(ValueError, match="without an eligible config"):
        selection.p_value(selection.sweeps(only, bt, iv, it), "lower")


def test_a_diverged_seed_makes_a_config_ineligible_for_every_seed():
    """Config 0 is the comparator's best on validation but diverged on seed 3: no seed is
    measured at it (a rule that checked the other seeds only would use it on seeds != 3)."""
    n = 6
    bv = np.tile([0.0, 1.0], (n, 1))
    bt = np.tile([0.0, 1.0], (n, 1)) + np.arange(n)[:, None] * 1e-3
    bv[3, 0] = np.nan
    cf = selection.fit(selection.sweeps(bv, bt, bv, bt), "lower")
    assert cf.base_cols[:, 0].tolist() == [1] * n


def test_a_seeds_own_validation_never_picks_its_config():
    """Every other seed favours config 0: seed 0 is measured at config 0 (chosen on the
    others) even when its own validation favours config 1 so much that the all-seeds
    selection moves to it."""
    n = 5
    bv = np.tile([0.0, 0.1], (n, 1))
    bv[0] = [0.2, 0.0]
    bt = np.tile([5.0, 7.0], (n, 1))
    cf = selection.fit(selection.sweeps(bv, bt, bv, bt), "lower")
    assert cf.base_cols[:, 0].tolist() == [0, 0, 0, 0, 0]
    bv2 = bv.copy()
    bv2[0] = [9.0, -9.0]
    assert paired.select_config([bv2[:, 0], bv2[:, 1]], "lower") == 1
    assert selection.fit(selection.sweeps(bv2, bt, bv2, bt), "lower").base[0] == cf.base[0]


def test_one_config_equals_todays_tests_exactly():
    rng = np.random.default_rng(11)
    for n in (2, 3, 6, 9, 12, 16, 17, 24):
        for _ in range(3 if n <= 12 else 1):
            b = rng.normal(1, 0.1, (n, 1))
            i = b + rng.normal(0.03, 0.1, (n, 1))
            sw = selection.sweeps(b, b, i, i)
            d = (i - b)[:, 0]
            assert selection.p_value(sw, "lower") == paired.sign_flip_p_value(d)
            if n <= pairtest.EXACT_MAX:
                assert selection.p_value(sw, "higher", statistic="sign") == \
                    signtest.sign_test_p(d)
            for direction in ("lower", "higher") if n <= 12 else ():
                ni = selection.noninferiority(sw, direction, 0.05, 0.05)
                old = paired.noninferiority(b[:, 0], i[:, 0], direction=direction, margin=0.05)
                assert ni.p_value == old.p_value
                eq = selection.tost(sw, direction, 0.05, 0.05)
                old = equivalence.tost(b[:, 0], i[:, 0], direction=direction, margin=0.05,
                                       level=0.05)
                assert (eq.p_worse, eq.p_better) == (old.p_worse, old.p_better)
            if n <= 12:
                ci = selection.interval(sw, "lower", 0.05)
                old = signflip.sign_flip_ci(d, 0.05)
                assert [x is None for x in ci] == [x is None for x in old]
                assert [x for x in ci if x is not None] == pytest.approx(
                    [x for x in old if x is not None], abs=1e-12)


def test_one_config_equals_scipy_permutation_test():
    rng = np.random.default_rng(3)
    for n in (5, 8, 10):
        b = rng.normal(2, 0.3, n)
        i = b + rng.normal(0.1, 0.3, n)
        ref = sps.permutation_test((i, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                   permutation_type="samples", n_resamples=np.inf,
                                   alternative="two-sided", vectorized=True).pvalue
        sw = selection.sweeps(b[:, None], b[:, None], i[:, None], i[:, None])
        assert selection.p_value(sw, "lower") == pytest.approx(ref, abs=1e-12)


def test_monte_carlo_above_16_seeds_is_seeded_and_deterministic():
    rng = np.random.default_rng(2)
    sw = selection.sweeps(*_case(rng, 20, 3, effect=-0.012))
    p = selection.p_value(sw, "lower")
    assert p == selection.p_value(sw, "lower")
    assert p == selection.p_value(sw, "lower", seed=0) != selection.p_value(sw, "lower", seed=1)
    assert 1 / 20001 <= p <= 1


def test_a_tuning_accident_is_not_significant_with_selection():
    """Both arms the same method; the baseline's validation picks a worse config by accident
    on every seed. The fixed-config test calls it significant, the selection-aware test not:
    the idea must beat the baseline's every config, including the one it missed."""
    n = 8
    test = np.tile([1.0, 1.1], (n, 1)) + np.linspace(0, 0.01, n)[:, None]
    base_val = np.tile([1.0, 0.99], (n, 1))   # baseline picks config 1 (worse on test)
    idea_val = np.tile([1.0, 1.01], (n, 1))   # idea picks config 0
    sw = selection.sweeps(base_val, test, idea_val, test + 1e-3 * np.arange(n)[:, None])
    assert paired.sign_flip_p_value(test[:, 0] + 1e-3 * np.arange(n) - test[:, 1]) < 0.05
    assert selection.p_value(sw, "lower") > 0.05


def test_an_lr_blind_idea_is_tested_whatever_the_last_bit():
    """An idea identical at every lr, better than the comparator's every config: helps, and
    the same p with a 1e-12 wobble (no rule on exact equality beside the test); as good as the
    comparator's best only: not helps, wobble or not (its freedom from tuning is no win)."""
    rng = np.random.default_rng(41)
    n = 8
    seed = rng.normal(0, 0.1, (n, 1))
    bv = 1 + seed + [0.0, 0.01, 0.02] + rng.normal(0, 0.05, (n, 3))
    bt = 1 + seed + [0.0, 0.01, 0.02] + rng.normal(0, 0.002, (n, 3))
    one = 1 + seed + rng.normal(0, 0.002, (n, 1))
    for gain, helps in ((0.02, True), (0.0, False)):
        iv = np.repeat(one - gain, 3, axis=1)
        ps = [selection.p_value(selection.sweeps(bv, bt, iv + w, iv + w), "lower")
              for w in (0.0, 1e-12 * rng.normal(size=(n, 3)))]
        assert ps[0] == pytest.approx(ps[1], abs=1e-9)
        assert (ps[0] < 0.05) is helps


def test_interval_and_noninferiority_bound_agree_with_their_tests():
    rng = np.random.default_rng(13)
    for trial in range(40):
        n = int(rng.integers(5, 10))
        sw = selection.sweeps(*_case(rng, n, 3, effect=float(rng.normal(0, 0.03))))
        level = [0.05, 0.1, 0.2][trial % 3]
        for direction in ("lower", "higher"):
            lo, hi = selection.interval(sw, direction, level)
            inside = (lo is None or lo <= 0) and (hi is None or 0 <= hi)
            assert inside == (selection.p_value(sw, direction) >= level)
            for margin in (0.0, 0.01, 0.05, 0.2):
                ni = selection.noninferiority(sw, direction, margin, level)
                bound = ni.bound_rel
                assert ni.non_inferior == (bound is not None and margin > bound)


def test_noninferiority_takes_the_largest_p_over_the_comparators_configs():
    rng = np.random.default_rng(17)
    bv, bt, iv, it = _case(rng, 6, 3, effect=0.02)
    for direction, toward in [("lower", -1.0), ("higher", 1.0)]:
        sw = selection.sweeps(bv, bt, iv, it)
        idea = _loo(iv, it, [[0, 1, 2]], direction)
        # H1: d + toward * margin * |b| lies on the better side: "less" of (-toward) * that
        ref = max(paired.one_sided_sign_flip_p(
            -toward * ((idea - bt[:, c]) + toward * 0.05 * np.abs(bt[:, c])))
            for c in range(3))
        assert selection.noninferiority(sw, direction, 0.05, 0.05).p_value == \
            pytest.approx(ref)


@pytest.mark.parametrize("direction,base,worse_sign", [("higher", -2.0, -1.0),
                                                       ("lower", 2.0, 1.0)])
def test_margins_on_a_metric_around_minus_two(direction, base, worse_sign):
    """A log-likelihood around -2 (higher is better): an idea 1% worse against a 5% margin is
    non-inferior and equivalent, one 10% worse is neither, as on a positive metric."""
    rng = np.random.default_rng(19)
    n = 10
    b = base + rng.normal(0, 0.01, (n, 1))
    for worse, shown in ((0.01, True), (0.10, False)):
        i = b + worse_sign * worse * np.abs(b) + rng.normal(0, 0.002, (n, 1))
        sw = selection.sweeps(b, b, i, i)
        assert selection.noninferiority(sw, direction, 0.05, 0.05).non_inferior is shown
        assert selection.tost(sw, direction, 0.05, 0.05).equivalent is shown
        old = paired.noninferiority(b[:, 0], i[:, 0], direction=direction, margin=0.05)
        assert old.non_inferior is shown
        assert equivalence.tost(b[:, 0], i[:, 0], direction=direction, margin=0.05,
                                level=0.05).equivalent is shown


def test_noninferiority_keeps_its_level_at_the_margin_with_selection():
    """An idea exactly 5% worse on every config (the same method, scaled), selection varying:
    'non-inferior' at level 0.1 is a false positive; 300 benches stay within level + 2 SE."""
    rng = np.random.default_rng(23)
    hits, reps, level = 0, 300, 0.1
    for _ in range(reps):
        bv, bt, iv, it = _case(rng, 7, 3, gap=0.01)
        it = it * 1.05
        hits += selection.noninferiority(selection.sweeps(bv, bt, iv, it), "lower", 0.05,
                                         level).non_inferior
    assert hits / reps <= level + 2 * np.sqrt(level * (1 - level) / reps)


def _flipped(bv, bt, iv, it, flip):
    f = np.asarray(flip, bool)[:, None]
    return (np.where(f, iv, bv), np.where(f, it, bt), np.where(f, bv, iv), np.where(f, bt, it))


def test_exact_boundary_with_selection_keeps_the_family_wise_error_over_every_flip():
    """looks (4, 8), boundary='exact' calibrated on the selection-aware test: over all 256
    sign vectors, applied alike to every paired test's differences of each look (look 1: the
    tests of the first 4 seeds, cross-fitted on them), the share in which some look's
    intersection-union p (combined by hand) is below its level is <= alpha."""
    from benchkit.stats import sequential

    rng = np.random.default_rng(29)
    bv, bt, iv, it = _case(rng, 8, 3, gap=0.01)
    sw = selection.sweeps(bv, bt, iv, it)
    d = paired.compare(*_loo_pair(bv, bt, iv, it), direction="lower").per_seed_diffs
    levels = sequential.exact_levels(d, [4, 8], 0.05, sweeps=sw)
    looks = []
    for m in (4, 8):
        part = [a[:m] for a in (bv, bt, iv, it)]
        idea_cf, base_cf = _loo(part[2], part[3], [[0, 1, 2]], "lower"), \
            _loo(part[0], part[1], [[0, 1, 2]], "lower")
        looks.append(([idea_cf - b for b in _combos(part[0], part[1], [[0, 1, 2]])],
                      [i - base_cf for i in _combos(part[2], part[3], [[0, 1, 2]])]))
    rejected = 0
    for flip in itertools.product([1.0, -1.0], repeat=8):
        s = np.asarray(flip)
        ps = [iut_p([s[:m] * x for x in h], [s[:m] * x for x in H], "lower")
              for m, (h, H) in zip((4, 8), looks)]
        rejected += ps[0] < levels[0] or ps[1] < levels[1]
    assert rejected / 256 <= 0.05


def _loo_pair(bv, bt, iv, it):
    g = [list(range(bv.shape[1]))]
    return _loo(bv, bt, g, "lower"), _loo(iv, it, g, "lower")


def test_wilcoxon_signed_rank_matches_scipy_and_the_brute_force_with_selection():
    """One config, no ties: the signed-rank permutation p is scipy's exact Wilcoxon p;
    with zeros and ties, scipy's permutation_test of the Pratt signed rank sum; with a sweep,
    the brute force reselecting under every flip."""
    from scipy.stats import rankdata, wilcoxon

    rng = np.random.default_rng(31)
    for n in (6, 9, 12):
        d = rng.normal(0.3, 1.0, n)
        sw = selection.sweeps(np.zeros((n, 1)), np.zeros((n, 1)), d[:, None], d[:, None])
        assert selection.p_value(sw, "lower", statistic="wilcoxon") == pytest.approx(
            wilcoxon(d, method="exact").pvalue, abs=1e-12)
    d = np.array([0.0, 1.0, -1.0, 2.0, 2.0, 3.0, -0.5, 4.0])

    def signed_rank(x, axis):
        return (np.sign(x) * rankdata(np.abs(x), axis=axis)).sum(axis=axis)
    ref = sps.permutation_test((d,), signed_rank, permutation_type="samples",
                               n_resamples=np.inf, vectorized=True).pvalue
    sw = selection.sweeps(np.zeros((8, 1)), np.zeros((8, 1)), d[:, None], d[:, None])
    assert selection.p_value(sw, "lower", statistic="wilcoxon") == pytest.approx(ref)
    bv, bt, iv, it = _case(rng, 6, 3, effect=0.01)
    assert selection.p_value(selection.sweeps(bv, bt, iv, it), "lower",
                             statistic="wilcoxon") == pytest.approx(
        brute_p(bv, bt, iv, it, "lower", statistic="wilcoxon"))


@pytest.mark.parametrize("direction", ["lower", "higher"])
def test_tied_ps_bind_the_test_nearest_the_null(direction):
    """Every seed one way under every config ties each side's p at the exact minimum (2^-n):
    the comparison's differences are then those of the test nearest the null (for harms, the
    idea's least-bad config against the comparator), not the first config listed."""
    n, worse = 8, 1.0 if direction == "lower" else -1.0
    base = 1.0 + np.random.default_rng(0).normal(0, 0.01, n)
    baseline = base[:, None] + worse * np.array([0.0, 0.3, 0.6])  # its best config: column 0
    idea = base[:, None] + worse * np.array([2.0, 1.0, 0.5])  # worse on every seed, at every lr
    sw = selection.sweeps(baseline, baseline, idea, idea)
    assert selection.p_value(sw, direction) == pytest.approx(2 * 0.5 ** n)
    pair = selection.binding(sw, direction)
    assert np.allclose(pair.d * worse, 0.5)   # the idea's least-bad config (2) minus column 0
