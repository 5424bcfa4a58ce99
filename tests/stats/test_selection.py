"""benchkit.stats.selection, the selection-aware exact sign-flip test, against references written
here independently of it: a brute-force itertools enumeration that swaps the arms' sweeps on the
flipped seeds and reselects with stats.select_config; scipy.stats.permutation_test and today's
sign-flip/sign/non-inferiority tests where each arm has one config; the interval and the
non-inferiority bound inverting their tests; the level at the margin by simulation.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from benchkit.stats import equivalence, selection, signflip, signtest
from benchkit.stats import paired

pytestmark = pytest.mark.timeout(60)


def brute_p(bv, bt, iv, it, direction, groups=None, statistic="mean", shift=None,
            alternative="two-sided"):
    """Every flip by itertools: swap whole rows, reselect per group, recompute."""
    n, k = bv.shape
    groups = groups or [list(range(k))]
    it = it if shift is None else it + np.asarray(shift)[:, None]

    def stat(flip):
        f = np.asarray(flip, bool)[:, None]
        arms = {"b": (np.where(f, iv, bv), np.where(f, it, bt)),
                "i": (np.where(f, bv, iv), np.where(f, bt, it))}
        values = {}
        for arm, (val, test) in arms.items():
            per_group = []
            for g in groups:
                j = paired.select_config([val[:, c] for c in g], direction)
                if j is None:
                    return None
                per_group.append(test[:, g[j]])
            values[arm] = np.mean(per_group, axis=0)
        d = values["i"] - values["b"]
        if not np.all(np.isfinite(d)):
            return None
        return float(np.sign(d).sum()) if statistic == "sign" else float(d.sum()), d

    obs, d_obs = stat([0] * n)
    tol = 1e-9 * np.abs(d_obs).sum()
    hits = 0
    for flip in itertools.product([0, 1], repeat=n):
        got = stat(flip)
        if got is None:
            hits += 1
        elif alternative == "two-sided":
            hits += abs(got[0]) >= abs(obs) - tol
        elif alternative == "less":
            hits += got[0] <= obs + tol
        else:
            hits += got[0] >= obs - tol
    return hits / 2 ** n


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
    bv[2, 0] = np.nan          # baseline config 0 diverged on seed 2: moves with the sweep
    iv[4, 3] = np.nan
    sw = selection.sweeps(bv, bt, iv, it)
    assert selection.p_value(sw, "lower") == pytest.approx(brute_p(bv, bt, iv, it, "lower"))
    groups = [[0, 1], [2, 3]]  # a frontier of two points, each selected on its own
    sw = selection.sweeps(bv, bt, iv, it, groups)
    assert selection.p_value(sw, "lower") == pytest.approx(
        brute_p(bv, bt, iv, it, "lower", groups=groups))
    only = np.full_like(bv, np.nan)  # the baseline's one eligible config, lost on a flip
    only[:, 1] = bv[:, 1]
    iv2 = iv.copy()
    iv2[0, 1] = np.nan
    sw = selection.sweeps(only, bt, iv2, it)
    assert selection.p_value(sw, "lower") == pytest.approx(brute_p(only, bt, iv2, it, "lower"))
    only[0, 1] = np.nan              # no eligible config observed: no test, a clear message
    with pytest.raises(ValueError, match="without an eligible config"):
        selection.p_value(selection.sweeps(only, bt, iv, it), "lower")


def test_one_config_equals_todays_tests_exactly():
    rng = np.random.default_rng(11)
    for n in (2, 3, 6, 9, 12, 16, 17, 24):
        for _ in range(3 if n <= 12 else 1):
            b = rng.normal(1, 0.1, (n, 1))
            i = b + rng.normal(0.03, 0.1, (n, 1))
            sw = selection.sweeps(b, b, i, i)
            d = (i - b)[:, 0]
            assert selection.p_value(sw, "lower") == paired.sign_flip_p_value(d)
            if n <= selection.EXACT_MAX:
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
    sw = selection.sweeps(*_case(rng, 20, 3, effect=0.01))
    p = selection.p_value(sw, "lower")
    assert p == selection.p_value(sw, "lower")
    assert p == selection.p_value(sw, "lower", seed=0) != selection.p_value(sw, "lower", seed=1)
    assert 1 / 20001 <= p <= 1


def test_a_tuning_accident_is_not_significant_with_selection():
    """Both arms the same method; the baseline's validation picks a worse config by accident
    on every seed. The fixed-config test calls it significant, the selection-aware test not."""
    n = 8
    test = np.tile([1.0, 1.1], (n, 1)) + np.linspace(0, 0.01, n)[:, None]
    base_val = np.tile([1.0, 0.99], (n, 1))   # baseline picks config 1 (worse on test)
    idea_val = np.tile([1.0, 1.01], (n, 1))   # idea picks config 0
    sw = selection.sweeps(base_val, test, idea_val, test + 1e-3 * np.arange(n)[:, None])
    picked = selection.observed(sw, "lower")
    assert (picked.baseline, picked.idea) == ([1], [0])
    d = np.asarray(picked.diffs)
    assert paired.sign_flip_p_value(d) < 0.05
    assert selection.p_value(sw, "lower") > 0.05


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


def test_noninferiority_matches_brute_force_on_the_shifted_sweep():
    rng = np.random.default_rng(17)
    bv, bt, iv, it = _case(rng, 6, 3, effect=0.02)
    for direction, toward, alt in [("lower", -1.0, "less"), ("higher", 1.0, "greater")]:
        sw = selection.sweeps(bv, bt, iv, it)
        b = bt[:, selection.observed(sw, direction).baseline[0]]
        ref = brute_p(bv, bt, iv, it, direction, shift=toward * 0.05 * np.abs(b),
                      alternative=alt)
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
    """looks (4, 8), boundary='exact' calibrated on the selection-aware joint null: over all
    256 flips of one bench's sweeps, the share in which some look rejects is <= alpha, and
    the levels are the same from every flipped bench (they are a function of the orbit)."""
    from benchkit.stats import sequential

    rng = np.random.default_rng(29)
    data = _case(rng, 8, 3, gap=0.01)
    sw = selection.sweeps(*data)
    d = selection.observed(sw, "lower").diffs
    levels = sequential.exact_levels(d, [4, 8], 0.05, sweeps=sw)
    rejected = 0
    for flip in itertools.product([0, 1], repeat=8):
        fl = selection.sweeps(*_flipped(*data, flip))
        p1 = selection.p_value(selection.prefix(fl, 4), "lower")
        p2 = selection.p_value(fl, "lower")
        rejected += p1 < levels[0] or p2 < levels[1]
        if sum(flip) == 3 and flip[0]:
            flipped_d = selection.observed(fl, "lower").diffs
            assert sequential.exact_levels(flipped_d, [4, 8], 0.05, sweeps=fl) == levels
    assert rejected / 256 <= 0.05
    assert levels[1] > paired.look_levels([4, 8], 8, 0.05)[1]  # it spends what union wastes


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

    def brute_wilcoxon():
        n = 6
        def stat(flip):
            f = np.asarray(flip, bool)[:, None]
            kb = paired.select_config([np.where(f, iv, bv)[:, c] for c in range(3)], "lower")
            ki = paired.select_config([np.where(f, bv, iv)[:, c] for c in range(3)], "lower")
            x = np.where(f, bt, it)[:, ki] - np.where(f, it, bt)[:, kb]
            return abs(signed_rank(x, 0))
        obs = stat([0] * n)
        return np.mean([stat(f) >= obs - 1e-9 for f in itertools.product([0, 1], repeat=n)])
    assert selection.p_value(selection.sweeps(bv, bt, iv, it), "lower",
                             statistic="wilcoxon") == pytest.approx(brute_wilcoxon())
