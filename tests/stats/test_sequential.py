"""Sequential seeds: alpha spending over looks (benchkit.stats.paired.spent_alpha, look_levels; the
simulations' sequential_plan, sequential_decision in benchmarks/stats/simstats.py), the batched
sign-flip p used by the simulations, and a
Monte Carlo proof that the rule keeps the family-wise error at alpha while the naive rule
(every look at the full alpha) does not.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps

from benchkit.stats import paired

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "stats"))
import simstats  # noqa: E402  (benchmarks/stats/simstats.py: statistics only simulations use)

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)


FAST = settings(max_examples=200, deadline=None, database=None)
ALPHAS = (0.05, 0.01, 0.1, 0.2, 1e-3)


# ---------------------------------------------------------------- spending function


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seeds", [2, 6, 8, 16, 33])
def test_single_planned_look_at_max_seeds_is_full_alpha_v1(seeds, alpha):
    # max_seeds defaults to seeds: one look, exactly the v1 test at alpha
    assert paired.spent_alpha(seeds, seeds, alpha) == alpha
    assert paired.look_levels([seeds], seeds, alpha) == [alpha]
    (plan,) = simstats.sequential_plan([seeds], seeds, alpha)
    assert plan["level"] == alpha and plan["planned"] and "full alpha" in plan["note"]


def test_single_look_decision_is_the_v1_significance():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(6, 12))
        base = rng.normal(1.0, 0.1, n)
        idea = base + rng.normal(rng.choice([0.0, 0.05, 0.2]), 0.1, n)
        cmp = paired.compare(base, idea, direction="lower", alpha=0.05).to_json()
        dec = simstats.sequential_decision([cmp["p_value"]], paired.look_levels([n], n, 0.05))
        assert (dec["rejected_at"] == 0) == (cmp["p_value"] < 0.05)


def test_spending_function_values():
    a = 0.05
    assert paired.spent_alpha(0, 16, a) == 0.0
    assert paired.spent_alpha(8, 16, a) == pytest.approx(a * math.log((1 + math.e) / 2), rel=1e-14)
    assert paired.spent_alpha(4, 16, a) == pytest.approx(a * math.log(1 + (math.e - 1) / 4),
                                                     rel=1e-14)
    assert paired.spent_alpha(40, 16, a) == a  # t clipped to 1
    spent = [paired.spent_alpha(n, 16, a) for n in range(17)]
    assert all(x < y for x, y in zip(spent, spent[1:]))  # increasing
    inc = np.diff(spent)
    assert np.all(np.diff(inc) < 0)  # concave: Pocock-type spends early
    # looks at 8 and 16 of 16: level 1 = alpha * ln((1+e)/2) ~ 0.0310, level 2 the rest
    l1, l2 = paired.look_levels([8, 16], 16, a)
    assert l1 == pytest.approx(0.0310057, abs=1e-7) and l2 == pytest.approx(a - l1, abs=1e-17)


@FAST
@given(st.lists(st.integers(1, 60), min_size=1, max_size=8, unique=True),
       st.integers(1, 40), st.sampled_from(ALPHAS))
def test_levels_are_nonnegative_and_sum_to_at_most_alpha(looks, max_seeds, alpha):
    looks = sorted(looks)
    levels = paired.look_levels(looks, max_seeds, alpha)
    assert len(levels) == len(looks)
    assert all(lv >= 0.0 for lv in levels)
    assert math.fsum(levels) <= alpha  # exact, no rounding slack
    for k, n in enumerate(looks):
        if n <= max_seeds:  # the cumulative spend follows the function, never above it
            assert math.fsum(levels[:k + 1]) <= paired.spent_alpha(n, max_seeds, alpha)
            assert math.fsum(levels[:k + 1]) == pytest.approx(
                paired.spent_alpha(n, max_seeds, alpha), rel=1e-12)
        else:
            assert levels[k] == 0.0


def test_unplanned_look_gets_level_zero_and_the_plan_says_why():
    levels = paired.look_levels([8, 16, 24], 16, 0.05)
    assert levels[2] == 0.0 and math.fsum(levels) == pytest.approx(0.05, abs=1e-17)
    # beyond max_seeds is 0 even when the planned looks did not spend everything
    assert paired.look_levels([8, 20], 16, 0.05)[1] == 0.0
    plan = simstats.sequential_plan([8, 16, 24], 16, 0.05)
    assert [p["planned"] for p in plan] == [True, True, False]
    assert "unplanned" in plan[2]["note"] and "max_seeds=16" in plan[2]["note"]
    # level 0 never rejects, not even at p = 0
    assert simstats.sequential_decision([0.5, 0.5, 0.0], levels)["rejected_at"] is None


def test_plan_flags_a_look_whose_level_the_sign_flip_test_cannot_reach():
    plan = simstats.sequential_plan([6, 16], 16, 0.05)
    assert plan[0]["level"] < paired.min_p_value(6) and not plan[0]["attainable"]
    assert "cannot reject" in plan[0]["note"]
    assert plan[1]["attainable"]


def test_decision_rejects_at_the_first_look_below_its_level():
    lv = [0.03, 0.02]
    assert simstats.sequential_decision([0.01, 0.5], lv)["rejected_at"] == 0
    assert simstats.sequential_decision([0.04, 0.01], lv)["rejected_at"] == 1
    assert simstats.sequential_decision([0.04, 0.03], lv)["rejected_at"] is None
    assert simstats.sequential_decision([0.03, 0.02], lv)["rejected_at"] is None  # strict p < level
    out = simstats.sequential_decision([0.01, 0.001], lv)
    assert out == {"rejected_at": 0, "levels": lv, "p_values": [0.01, 0.001]}
    assert simstats.sequential_decision([], [])["rejected_at"] is None


@pytest.mark.parametrize("looks, match", [
    ([16, 8], "strictly increasing"), ([8, 8], "strictly increasing"),
    ([0, 8], ">= 1"), ([-1], ">= 1"), ([8.0], "integer"), ([True], "integer"),
])
def test_bad_looks(looks, match):
    with pytest.raises(ValueError, match=match):
        paired.look_levels(looks, 16, 0.05)


@pytest.mark.parametrize("kwargs, match", [
    ({"max_seeds": 0}, "max_seeds"), ({"alpha": 0.0}, "alpha"), ({"alpha": 1.0}, "alpha"),
    ({"alpha": float("nan")}, "alpha"), ({"max_seeds": 16.5}, "integer"),
])
def test_bad_plan_arguments(kwargs, match):
    args = {"looks_n": [8, 16], "max_seeds": 16, "alpha": 0.05, **kwargs}
    with pytest.raises(ValueError, match=match):
        paired.look_levels(**args)
    with pytest.raises(ValueError, match=match):
        paired.spent_alpha(8, args["max_seeds"], args["alpha"])


@pytest.mark.parametrize("p, lv, match", [
    ([0.01], [0.03, 0.02], "differ in length"), ([0.01, 1.5], [0.03, 0.02], r"\[0, 1\]"),
    ([float("nan")], [0.05], r"\[0, 1\]"), ([0.01], [-0.1], r"\[0, 1\]"),
])
def test_bad_decision_input(p, lv, match):
    with pytest.raises(ValueError, match=match):
        simstats.sequential_decision(p, lv)


# ---------------------------------------------------------------- helpers the simulations use


@pytest.mark.slow
def test_batched_sign_flip_equals_the_one_at_a_time_test():
    rng = np.random.default_rng(11)
    for n in list(range(1, 17)):
        d = rng.standard_t(3, size=(40, n))
        d[0] = 0.0
        d[1, :] = 1.0  # ties in |sum|
        want = [paired.sign_flip_p_value(row) for row in d]
        assert simstats.sign_flip_p_values(d) == want
    d = rng.normal(size=(3, 17))  # above exact_max: the seeded Monte Carlo test per row
    assert simstats.sign_flip_p_values(d, seed=3) == [paired.sign_flip_p_value(r, seed=3)
                                                      for r in d]
    with pytest.raises(ValueError, match="non-finite"):
        simstats.sign_flip_p_values([[1.0, float("nan")]])
    with pytest.raises(ValueError, match="2-D"):
        simstats.sign_flip_p_values([1.0, 2.0])


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (6, 200), (517, 10000)])
def test_clopper_pearson_matches_scipy(k, n):
    ci = sps.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert simstats.clopper_pearson(k, n) == pytest.approx([ci.low, ci.high], rel=1e-9, abs=1e-12)


def test_paired_t_power_is_the_power_behind_power_mde():
    n, sd = 8, 0.3
    delta = paired.power_mde(n, sd, 0.05, 0.8)
    assert simstats.paired_t_power(delta, sd, n) == pytest.approx(0.8, abs=1e-9)
    assert simstats.paired_t_power(0.0, sd, n) == pytest.approx(0.05, abs=1e-12)


# ---------------------------------------------------------------- Monte Carlo: FWER


ALPHA = 0.05
LOOKS, MAX_SEEDS = [8, 16], 16
REPS = 10_000


def _null_diffs(dist: str, rng: np.random.Generator) -> np.ndarray:
    if dist == "normal":
        return rng.normal(0.0, 0.7, size=(REPS, MAX_SEEDS))
    return rng.standard_t(3, size=(REPS, MAX_SEEDS)) * 0.1  # heavy-tailed, symmetric


@pytest.mark.slow
@pytest.mark.parametrize("dist, seed", [("normal", 20261), ("t3", 20262)])
def test_sequential_rule_keeps_familywise_error_at_alpha(dist, seed):
    """Under H0 (i.i.d. symmetric paired diffs), looks at 8 and 16 of max 16 seeds:
    P(reject at look 1, or not at 1 and at look 2) <= alpha for the spending rule, while the
    naive rule (both looks at the full alpha) exceeds it."""
    d = _null_diffs(dist, np.random.default_rng(seed))
    p1 = simstats.sign_flip_p_values(d[:, :LOOKS[0]])
    p2 = simstats.sign_flip_p_values(d)
    # the batched test is the real one (spot-check against benchkit's own function)
    for r in range(0, REPS, REPS // 25):
        assert p1[r] == paired.sign_flip_p_value(d[r, :LOOKS[0]])
        assert p2[r] == paired.sign_flip_p_value(d[r])

    levels = paired.look_levels(LOOKS, MAX_SEEDS, ALPHA)
    seq = [simstats.sequential_decision([a, b], levels)["rejected_at"] for a, b in zip(p1, p2)]
    naive = [simstats.sequential_decision([a, b], [ALPHA, ALPHA])["rejected_at"]
             for a, b in zip(p1, p2)]
    k_seq = sum(r is not None for r in seq)
    k_naive = sum(r is not None for r in naive)
    lo_seq, hi_seq = simstats.clopper_pearson(k_seq, REPS)
    lo_naive, _ = simstats.clopper_pearson(k_naive, REPS)
    msg = (f"{dist}: FWER sequential {k_seq / REPS:.4f} [{lo_seq:.4f}, {hi_seq:.4f}], "
           f"naive {k_naive / REPS:.4f} (lower bound {lo_naive:.4f}), levels {levels}")

    # the spending rule: the error stays at or below alpha within its 95% interval
    assert lo_seq <= ALPHA, msg
    # sharper: the union bound with the exact null rates of the discrete sign-flip p
    # (continuous symmetric diffs: P(p <= j / 2^(n-1)) = j / 2^(n-1))
    q1 = math.ceil(levels[0] * 2 ** (LOOKS[0] - 1)) - 1   # p < level <=> p <= q / 2^(n-1)
    q2 = math.ceil(levels[1] * 2 ** (LOOKS[1] - 1)) - 1
    union = q1 / 2 ** (LOOKS[0] - 1) + q2 / 2 ** (LOOKS[1] - 1)
    assert union <= ALPHA
    assert lo_seq <= union, msg
    # the naive rule inflates it: the whole 95% interval lies above alpha (so this can fail)
    assert lo_naive > ALPHA, msg

    # sanity of the simulation itself: each look alone rejects at its exact null rate
    for p, q, n in ((p1, q1, LOOKS[0]), (p2, q2, LOOKS[1])):
        k = int(np.count_nonzero(np.asarray(p) <= q / 2 ** (n - 1) * (1 + 1e-12)))
        lo, hi = simstats.clopper_pearson(k, REPS, conf=0.999)
        assert lo <= q / 2 ** (n - 1) <= hi, (dist, n, k)


# ---------------------------------------------------------------- stats: spending and looks


def test_spent_alpha_values():
    assert paired.spent_alpha(0, 8, 0.05) == 0.0
    assert paired.spent_alpha(4, 8, 0.05) == 0.05 * math.log1p((math.e - 1) * 0.5)
    assert paired.spent_alpha(2, 8, 0.1) == 0.1 * math.log1p((math.e - 1) * 0.25)
    assert paired.spent_alpha(8, 8, 0.05) == 0.05
    assert paired.spent_alpha(12, 8, 0.05) == 0.05
    assert paired.spent_alpha(1, 1, 0.01) == 0.01


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
        paired.spent_alpha(*args)


def test_look_levels_are_the_increments_of_the_spend():
    s4 = paired.spent_alpha(4, 8, 0.05)
    assert paired.look_levels([4, 8], 8, 0.05) == pytest.approx([s4, 0.05 - s4], rel=1e-12)
    assert paired.look_levels([8], 8, 0.05) == [0.05]
    assert paired.look_levels([1], 1, 0.05) == [0.05]
    assert paired.look_levels([4], 8, 0.05) == [s4]
    # looks beyond max_seeds are unplanned: level 0, and the looks after them are kept
    assert paired.look_levels([8, 12, 16], 8, 0.05) == [0.05, 0.0, 0.0]
    assert paired.look_levels([4, 12], 8, 0.05) == [s4, 0.0]


def test_look_levels_never_overspend_in_floating_point():
    looks, m, alpha = [9, 38, 39], 39, 0.025
    levels = paired.look_levels(looks, m, alpha)
    for k, n in enumerate(looks):
        assert math.fsum(levels[:k + 1]) <= paired.spent_alpha(n, m, alpha)
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
        paired.look_levels(looks, m, 0.05)
