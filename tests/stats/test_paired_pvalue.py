"""benchkit.stats.paired's p-values: the exact sign-flip p against scipy, its properties, its exact
values on small cases (n <= 16 pairs, where every flip is enumerated) and the seeded Monte Carlo
estimate above, Holm, the summaries and t formulas, and the v1 reference reports. Comparisons and
verdicts: test_paired_compare.py; planning figures: test_paired_power.py; spending over looks:
test_sequential.py.
"""
from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps

from benchkit.stats import paired
from benchkit.verdict import decision
from benchkit.verdict.records import Comparison

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)


FAST = settings(max_examples=150, deadline=None, database=None)


def scipy_p(idea, baseline):
    res = sps.permutation_test(
        (np.asarray(idea, float), np.asarray(baseline, float)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples", n_resamples=np.inf, alternative="two-sided", vectorized=True)
    return float(res.pvalue)


# ---------------------------------------------------------------- exact p vs scipy

def _random_cases():
    rng = np.random.default_rng(1234)
    for n in range(2, 13):
        for kind in ("normal", "shifted", "ties", "dup"):
            for _ in range(3):
                base = rng.normal(10, 1, n)
                if kind == "normal":
                    idea = base + rng.normal(0, 1, n)
                elif kind == "shifted":
                    idea = base + rng.normal(0.7, 0.5, n)
                elif kind == "ties":  # small integers: many equal |sums|, zeros
                    base = rng.integers(0, 5, n).astype(float)
                    idea = base + rng.integers(-2, 3, n)
                else:  # duplicated magnitudes, exactly representable
                    base = np.zeros(n)
                    idea = rng.choice([-1.5, -0.5, 0.5, 1.5], n)
                yield idea, base


@pytest.mark.parametrize("idea,base", list(_random_cases()))
def test_exact_p_matches_scipy(idea, base):
    assert abs(paired.sign_flip_p_value(idea - base) - scipy_p(idea, base)) <= 1e-12


def test_exact_p_known_values():
    assert paired.sign_flip_p_value([1.0, 2.0]) == 0.5
    # [1, 2, 3]: |sum| >= 6 only for +++ and ---
    assert paired.sign_flip_p_value([1.0, 2.0, 3.0]) == 0.25
    # [1, 1, -1]: |sum| is 1 or 3; 6 of 8 patterns reach >= 1
    assert paired.sign_flip_p_value([1.0, 1.0, -1.0]) == 1.0
    # [3, 1, -1]: up to sign the sums are 5, 3, 3, 1, so 6 of 8 patterns reach |sum| >= 3
    assert paired.sign_flip_p_value([3.0, 1.0, -1.0]) == 0.75
    assert paired.sign_flip_p_value([3.0, 1.0, 1.0]) == 0.25


# ---------------------------------------------------------------- properties

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)
diff_lists = st.lists(finite, min_size=1, max_size=10)


@FAST
@given(diff_lists)
def test_p_in_unit_interval_and_at_least_min(d):
    p = paired.sign_flip_p_value(d)
    assert 0 < p <= 1
    assert p >= paired.min_p_value(len(d))
    assert type(p) is float


@FAST
@given(st.integers(1, 20))
def test_all_zero_diffs_give_one(n):
    assert paired.sign_flip_p_value([0.0] * n) == 1.0
    assert paired.sign_flip_p_value([0.0] * n, exact_max=0) == 1.0


@FAST
@given(diff_lists, st.floats(1e-3, 1e3))
def test_p_invariant_to_sign_flip_and_scaling(d, c):
    p = paired.sign_flip_p_value(d)
    assert paired.sign_flip_p_value([-x for x in d]) == p
    assert paired.sign_flip_p_value([c * x for x in d]) == pytest.approx(p, abs=1e-12)


@FAST
@given(st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=12))
def test_smallest_p_over_sign_patterns_is_min_p(mags):
    n = len(mags)
    assert paired.sign_flip_p_value(mags) == paired.min_p_value(n) == 2.0 ** (1 - n)
    patterns = itertools.product((-1, 1), repeat=min(n, 6))
    ps = [paired.sign_flip_p_value([s * m for s, m in zip(sig, mags[:6])]) for sig in patterns]
    assert min(ps) == paired.min_p_value(min(n, 6))


def test_equal_positive_diffs_reach_min_p():
    for n in range(1, 17):
        assert paired.sign_flip_p_value([0.3] * n) == paired.min_p_value(n)


def test_monte_carlo_agrees_with_exact_and_is_deterministic():
    rng = np.random.default_rng(7)
    for shift in (0.0, 0.3, 0.6):
        d = rng.normal(shift, 1, 17)
        exact = paired.sign_flip_p_value(d, exact_max=17)
        mc = paired.sign_flip_p_value(d, exact_max=16, n_resamples=20000, seed=3)
        assert abs(mc - exact) < 4 * math.sqrt(exact * (1 - exact) / 20000) + 2e-4
        assert mc == paired.sign_flip_p_value(d, n_resamples=20000, seed=3)
        assert mc >= 1 / 20001
    d = rng.normal(0, 1, 40)
    assert paired.sign_flip_p_value(d, seed=1) == paired.sign_flip_p_value(d, seed=1)
    assert paired.sign_flip_p_value(d, seed=1) != paired.sign_flip_p_value(d, seed=2)
    # all same sign at n = 30: no resample reaches it except itself -> 1 / (1 + N)
    assert paired.sign_flip_p_value([1.0] * 30, n_resamples=999) == 1 / 1000


# ---------------------------------------------------------------- holm

def holm_brute(p):
    """Definition: adjusted p_i = max over p_j <= p_i of min(1, (m - r_j) * p_j), where r_j is
    the number of p-values strictly smaller than p_j."""
    m = len(p)
    r = [sum(q < pj for q in p) for pj in p]
    return [max(min(1.0, (m - r[j]) * p[j]) for j in range(m) if p[j] <= pi) for pi in p]


def test_holm_hand_example():
    assert paired.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert paired.holm([0.01, 0.01]) == pytest.approx([0.02, 0.02])
    assert paired.holm([0.5, 0.9]) == [1.0, 1.0]
    assert paired.holm([]) == []


@FAST
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_properties(p):
    adj = paired.holm(p)
    assert adj == pytest.approx(holm_brute(p), abs=1e-15)
    assert all(a >= q and a <= 1 for a, q in zip(adj, p))
    ordered = [adj[i] for i in np.argsort(p, kind="stable")]
    assert all(x <= y for x, y in zip(ordered, ordered[1:]))
    # rejecting adjusted <= a is Holm's step-down procedure at level a
    for a in (0.01, 0.05, 0.2):
        rejected, m = set(), len(p)
        for k, i in enumerate(np.argsort(p, kind="stable")):
            if p[i] > a / (m - k):
                break
            rejected.add(int(i))
        assert rejected == {i for i, x in enumerate(adj) if x <= a}


# ---------------------------------------------------------------- v1 reference reports

TAB_BASE = [6.844658851623535, 6.109804630279541, 8.30047607421875, 8.464603424072266,
            7.705488681793213, 6.993262767745971, 8.389989852905273, 7.991364002227783]
TAB_IDEA = [7.118060111999512, 6.544161319732666, 9.722457885742188, 8.549818992614746,
            7.820003986358643, 7.930368423461914, 9.617923736572266, 7.932284832000732]
TAB_DIFFS = [0.27340126037597656, 0.434356689453125, 1.4219818115234375, 0.08521556854248047,
             0.11451530456542969, 0.937105655670166, 1.2279338836669922, -0.05907917022705078]
TAB = dict(base=TAB_BASE, idea=TAB_IDEA, diffs=TAB_DIFFS, delta_mean=0.5544288754463196,
           base_mean=7.599956035614014, base_std=0.8051347687842139, idea_wins=1,
           p_value=0.0156, mde=0.4725954183814587, mde_rel_pct=6.218396740281628,
           verdict="idea worse (significant)", practical="harms", mech=0, system="failed")

DYN_BASE = [0.006943476852029562, 0.005382216069847345, 0.012206831015646458,
            0.006380172912031412, 0.0068011293187737465, 0.009766676463186741,
            0.0037104773800820112, 0.0028411808889359236]
DYN_IDEA = [0.009002679027616978, 0.010305776260793209, 0.008358007296919823,
            0.008188792504370213, 0.00483678886666894, 0.009082159027457237,
            0.006025956943631172, 0.004997001029551029]
DYN_DIFFS = [0.0020592021755874157, 0.004923560190945864, -0.003848823718726635,
             0.0018086195923388004, -0.001964340452104807, -0.0006845174357295036,
             0.002315479563549161, 0.0021558201406151056]
DYN = dict(base=DYN_BASE, idea=DYN_IDEA, diffs=DYN_DIFFS, delta_mean=0.0008456250070594251,
           base_mean=0.00675402011256665, base_std=0.0028601230170336904, idea_wins=3,
           p_value=0.4058, mde=0.002347660486662723, mde_rel_pct=34.75945359260367,
           verdict="no significant win", practical="inconclusive", mech=1, system="partial")

# v1 multiplied by the 3-decimal table value t(0.975, 7) = 2.365, benchkit by the exact
# t.ppf(0.975, 7) = 2.36462...: the reference mde differs by exactly that ratio (1.6e-4).
V1_T = 2.365


@pytest.mark.parametrize("ref", [TAB, DYN], ids=["tabular", "dynamics"])
def test_reference_reports_reproduced(ref):
    base, idea, diffs = ref["base"], ref["idea"], ref["diffs"]
    s = paired.summarize(base)
    assert s.mean == pytest.approx(ref["base_mean"], rel=1e-12)
    assert s.std == pytest.approx(ref["base_std"], rel=1e-9)
    assert s.n == 8 and list(s.per_seed) == base
    assert paired.idea_wins(base, idea, "lower") == ref["idea_wins"]

    tq = sps.t.ppf(0.975, 7)
    m = paired.mde(diffs)
    assert m * V1_T / tq == pytest.approx(ref["mde"], rel=1e-9)
    assert m == pytest.approx(ref["mde"], rel=2e-4)

    c = paired.compare(base, idea, direction="lower").to_json()
    assert c["n_pairs"] == 8 and c["idea_wins"] == ref["idea_wins"]
    assert c["delta_mean"] == pytest.approx(ref["delta_mean"], rel=1e-9)
    assert c["per_seed_diffs"] == pytest.approx(diffs, abs=1e-9)
    assert c["mde"] * V1_T / tq == pytest.approx(ref["mde"], rel=1e-9)
    assert c["mde_rel_pct"] * V1_T / tq == pytest.approx(ref["mde_rel_pct"], rel=1e-9)
    # the reference's words follow from p and the sign at its alpha, as the decision writes them
    verdict = decision.practical_verdict(c["p_value"], c["delta_mean"], "lower", 0.05)
    words = decision.with_reference_words(Comparison.from_json(c), verdict)
    assert (words.verdict, words.system_worked) == (ref["verdict"], False)
    assert c["p_value"] == paired.sign_flip_p_value(diffs)

    practical = decision.practical_verdict(c["p_value"], c["delta_mean"], "lower", 0.05)
    assert practical == ref["practical"]
    assert decision.system_verdict(practical, ref["mech"]) == ref["system"]


def test_reference_p_values():
    p_tab = paired.sign_flip_p_value(TAB_DIFFS)
    assert p_tab == 0.015625 == 2 / 128 and round(p_tab, 4) == TAB["p_value"]
    # The exact p of the dynamics report is 26/64 = 0.40625; the reference's 0.4058 is not its
    # rounding but v1's Monte Carlo estimate, within its sampling noise (sd ~0.005 at 1e4).
    p_dyn = paired.sign_flip_p_value(DYN_DIFFS)
    assert p_dyn == 26 / 64 == scipy_p(DYN_IDEA, DYN_BASE)
    assert abs(p_dyn - DYN["p_value"]) < 0.005
    p_mc = paired.sign_flip_p_value(DYN_DIFFS, exact_max=0, n_resamples=20000)
    assert abs(p_mc - DYN["p_value"]) < 0.015


def test_reference_file_literals_match_shared_reports():
    ref_dir = Path("/work/shared/reference")
    files = sorted(ref_dir.glob("*.txt")) if ref_dir.is_dir() else []
    if not files:
        pytest.skip("shared reference reports not present")
    for f, ref in zip(files, (TAB, DYN)):
        text = f.read_text()
        rep = json.loads(text[text.index("{"):])["bench_report"]
        assert rep["baseline"]["full"]["per_seed"] == ref["base"]
        assert rep["idea"]["per_seed"] == ref["idea"]
        assert rep["comparison"]["per_seed_diffs"] == ref["diffs"]


# ---------------------------------------------------------------- stats: summaries and the p


def test_summarize_is_mean_population_std_values_and_count():
    assert paired.summarize([1.0, 2.0, 3.0, 4.0]) == paired.Summary(
        mean=2.5, std=math.sqrt(1.25), per_seed=(1.0, 2.0, 3.0, 4.0), n=4)
    with pytest.raises(ValueError, match="values contain non-finite"):
        paired.summarize([1.0, math.nan])


def test_a_summary_writes_the_reports_json_and_reads_it_back():
    s = paired.summarize(np.float32([1, 2, 4]))
    written = json.dumps(s.to_json())
    assert written == ('{"mean": 2.3333333333333335, "std": 1.247219128924647, '
                       '"per_seed": [1.0, 2.0, 4.0], "n": 3}')
    assert all(type(v) is float for v in s.per_seed)
    assert paired.Summary.from_json(json.loads(written)) == s


@pytest.mark.parametrize("data", [{"mean": 1.0, "std": 0.0, "per_seed": [1.0]},
                                  {"mean": 1.0, "std": 0.0, "per_seed": [1.0], "n": 1, "sd": 0}])
def test_a_summary_without_its_four_keys_is_refused(data):
    keys = r"Summary.*; declared: \['mean', 'std', 'per_seed', 'n'\]"
    with pytest.raises(ValueError, match=keys):
        paired.Summary.from_json(data)


@pytest.mark.parametrize("n, p", [(1, 1.0), (2, 0.5), (6, 1 / 32), (17, 2.0 ** -16)])
def test_min_p_value_is_two_to_the_one_minus_n(n, p):
    assert paired.min_p_value(n) == p


def test_one_pair_and_all_zero_differences():
    assert paired.sign_flip_p_value([2.0]) == 1.0      # both flips reach |2|
    assert paired.sign_flip_p_value([0.0, 0.0, 0.0]) == 1.0
    assert paired.sign_flip_p_value([0.0, 0.0, 3.0]) == 1.0
    with pytest.raises(ValueError, match="diffs is empty"):
        paired.sign_flip_p_value([])
    with pytest.raises(ValueError, match="diffs contain non-finite"):
        paired.sign_flip_p_value([1.0, math.inf])


def test_the_observed_flip_and_its_ties_count_in_the_exact_p():
    """[1, 1, 2]: |sum| 4 is reached by +++ and ---; [1, 1, -1, -1] has sum 0, so every one
    of the 16 flips reaches it. [1, 2, -3, 6] (sum 6): a = +-1 +-2 +-3 takes 6, 4, 2, 0, 0,
    -2, -4, -6, and |a + 6| >= 6 for the 5 with a >= 0, |a - 6| >= 6 for the 5 with a <= 0:
    10 of 16, four of them ties at exactly 6."""
    assert paired.sign_flip_p_value([1.0, 1.0, 2.0]) == 2 / 8
    assert paired.sign_flip_p_value([1.0, 1.0, -1.0, -1.0]) == 1.0
    assert paired.sign_flip_p_value([1.0, 2.0, -3.0, 6.0]) == 10 / 16
    assert paired.sign_flip_p_value([1.0, 2.0, 3.0, 6.0]) == 2 / 16


def test_a_flip_exactly_at_the_tie_tolerance_counts():
    """[x, 1]: the flip -x + 1 reaches |sum| - 1e-12 * sum|d| exactly for this x, so it is a
    tie within the tolerance (>=), and p is 1, not 1/2."""
    x = 4.999335e-13
    d = np.array([x, 1.0])
    assert abs(1.0 - x) == abs(d.sum()) - 1e-12 * np.abs(d).sum()
    assert paired.sign_flip_p_value(d) == 1.0
    # above 16 pairs too (zeros leave every sum alone): every drawn flip counts
    assert paired.sign_flip_p_value([x, 1.0] + [0.0] * 15) == 1.0


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
    p = paired.sign_flip_p_value(d)
    assert p == _monte_carlo_p(d) == paired.sign_flip_p_value(d, seed=0)
    assert round(p * 20001) == pytest.approx(p * 20001, abs=1e-9)
    assert paired.sign_flip_p_value(d, seed=4) == _monte_carlo_p(d, seed=4) != p
    assert paired.sign_flip_p_value(d, n_resamples=999) == _monte_carlo_p(d, 999)
    if n == 17:
        exact = paired.sign_flip_p_value(d, exact_max=17)
        assert exact != p and round(exact * 2 ** 17) == pytest.approx(exact * 2 ** 17, abs=1e-6)


def test_sixteen_pairs_are_enumerated_exactly():
    d = np.random.default_rng(16).normal(0.4, 1.0, 16)
    p = paired.sign_flip_p_value(d)
    assert round(p * 2 ** 16) == pytest.approx(p * 2 ** 16, abs=1e-6)
    assert p != paired.sign_flip_p_value(d, exact_max=15)


def test_monte_carlo_with_one_resample_counts_it():
    d = [1.0] * 8 + [-1.0] * 8 + [0.0]     # sum 0: every flip reaches it
    assert paired.sign_flip_p_value(d, n_resamples=1) == 1.0


def test_mde_ci95_and_effect_size_are_the_t_formulas():
    from scipy import stats as sps
    d = np.array([0.2, -0.1, 0.4, 0.3, 0.0, 0.25])
    n, sd = len(d), d.std(ddof=1)
    for alpha in (0.05, 0.1, 0.01):
        expected = sps.t.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n)
        assert paired.mde(d, alpha) == pytest.approx(expected, rel=1e-12)
    assert paired.mde(d) == paired.mde(d, 0.05)
    half = sps.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    assert paired.ci95(d) == pytest.approx([d.mean() - half, d.mean() + half], rel=1e-12)
    assert paired.effect_size(d) == pytest.approx(d.mean() / sd, rel=1e-12)   # sd < 1
    assert paired.effect_size([0.5, 0.5, 0.5]) is None
    with pytest.raises(ValueError, match="need at least 2 pairs, got 1"):
        paired.mde([1.0])


def test_the_p_of_several_rows_in_one_pass_is_each_rows_alone():
    """sign_flip_p_rows (a report's comparisons together) gives each row's
    sign_flip_p_value to the bit: exact up to 16 pairs, the same seeded draws above, 1 for an
    all-zero row, and the first non-finite row refused as one alone is."""
    rng = np.random.default_rng(7)
    for n in (2, 8, 16, 17, 30):
        rows = [rng.normal(0.1, 1.0, n), np.zeros(n), rng.normal(0.0, 1e-3, n).round(4)]
        assert paired.sign_flip_p_rows(rows, seed=2) == [
            paired.sign_flip_p_value(r, seed=2) for r in rows]
    with pytest.raises(ValueError, match=r"diffs contain non-finite values.*\[1.0, inf\]"):
        paired.sign_flip_p_rows([np.array([1.0, 2.0]), np.array([1.0, math.inf])])
    with pytest.raises(ValueError, match="differ in length: 2 vs 3"):
        paired.compare_rows([np.ones(2)], [np.ones(3)], direction="lower", p_values=[None])
