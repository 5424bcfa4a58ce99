"""benchkit.stats.paired's comparison of two arms and the decisions on it: idea_wins, the direction,
Holm's order, non-inferiority, compare, config selection, the verdicts, and the plain Python
values every function returns; pinned at and around each threshold.
"""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats as sps

from benchkit.stats import paired
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.stats import values
from benchkit.verdict import decision
from benchkit.verdict import mechanism
from test_paired_pvalue import DYN_BASE, DYN_IDEA, FAST, TAB_BASE, TAB_IDEA, _monte_carlo_p

# every test here takes seconds at most: a mutant that loops forever (a bisection that never
# narrows) fails in 30 s instead of the suite's 120 s
pytestmark = pytest.mark.timeout(30)


# ---------------------------------------------------------------- wins, non-inferiority

def test_idea_wins_direction_and_strictness():
    base, idea = [1.0, 2.0, 3.0, 4.0], [0.5, 2.0, 3.5, 3.0]
    assert paired.idea_wins(base, idea, "lower") == 2
    assert paired.idea_wins(base, idea, "higher") == 1
    with pytest.raises(ValueError, match="lower"):
        paired.idea_wins(base, idea, "lower is better")


def test_noninferiority_by_hand():
    base = [10.0, 11.0, 9.0, 10.0, 10.0]
    idea = [10.1, 11.2, 9.0, 10.1, 10.1]  # slightly worse for "lower"
    d = np.subtract(idea, base)
    se = d.std(ddof=1) / math.sqrt(5)
    tq = sps.t.ppf(0.95, 4)
    r = paired.noninferiority(base, idea, direction="lower", margin=0.05)
    assert r.margin_rel == 0.05 and r.margin_abs == pytest.approx(0.5)
    assert r.bound == pytest.approx(d.mean() + tq * se)
    assert r.non_inferior is True
    assert r.p_value == 1 / 32  # every seed's w < 0: the smallest one-sided sign-flip p
    r = paired.noninferiority(base, idea, direction="lower", margin=0.001)
    assert r.non_inferior is False
    # "higher": the same numbers mean the idea is better, bound is a lower bound
    h = paired.noninferiority(base, idea, direction="higher", margin=0.0)
    assert h.bound == pytest.approx(d.mean() - tq * se)
    assert h.non_inferior is (h.p_value < 0.05)  # the sign-flip test decides
    assert h.p_value == 2 / 32   # w = (0.1, 0.2, 0, 0.1, 0.1) with signs flipped; a zero
    worse = paired.noninferiority(idea, base, direction="higher", margin=0.01)
    assert worse.non_inferior is False and worse.p_value > 0.05


@FAST
@given(st.lists(st.tuples(st.floats(1, 10), st.floats(-1, 1)), min_size=3, max_size=10),
       st.floats(0, 0.3), st.sampled_from(paired.DIRECTIONS))
def test_noninferiority_bound_agrees_with_p(pairs, margin, direction):
    base = [b for b, _ in pairs]
    idea = [b + e for b, e in pairs]
    r = paired.noninferiority(base, idea, direction=direction, margin=margin)
    if abs(r.p_value - 0.05) > 1e-9:
        assert r.non_inferior is (r.p_value < 0.05)


# ---------------------------------------------------------------- compare

def test_compare_keys_and_rules():
    base = [1.0, 1.125, 0.875, 1.0, 1.0625, 0.9375, 1.0, 1.25]  # exact binary fractions
    better = [b - 0.25 for b in base]
    c = paired.compare(base, better, direction="lower", margin=0.05).to_json()
    v1 = {"delta_mean", "idea_wins", "n_pairs", "per_seed_diffs", "p_value", "mde",
          "mde_rel_pct"}  # v1's verdict and system_worked: written once, by the decision
    extra = {"ci95", "alpha", "effect_size", "noninferiority"}  # planning figures: decision_of
    assert v1 | extra <= set(c) and not {"verdict", "system_worked"} & set(c)
    assert c["p_value"] == paired.min_p_value(8)
    assert decision.practical_verdict(c["p_value"], c["delta_mean"], "lower", 0.05) == "helps"
    assert c["effect_size"] is None  # constant diffs: sd == 0
    assert c["noninferiority"]["non_inferior"] is True
    worse = paired.compare(base, better, direction="higher").to_json()
    assert decision.practical_verdict(worse["p_value"], worse["delta_mean"], "higher",
                                    0.05) == "harms"
    noisy = [b + s for b, s in zip(base, [0.1, -0.1, 0.05, -0.02, 0.1, -0.12, 0.03, -0.01])]
    c2 = paired.compare(base, noisy, direction="lower").to_json()
    assert decision.practical_verdict(c2["p_value"], c2["delta_mean"], "lower",
                                    0.05) == "inconclusive"
    assert c2["noninferiority"] is None
    assert c2["ci95"] == pytest.approx(paired.ci95(np.subtract(noisy, base)))
    # more pairs than the exact limit go through Monte Carlo, seeded
    rng = np.random.default_rng(0)
    b20, i20 = rng.normal(0, 1, 20).tolist(), rng.normal(0, 1, 20).tolist()
    assert paired.compare(b20, i20, direction="lower", seed=5) == paired.compare(
        b20, i20, direction="lower", seed=5)


def test_compare_zero_baseline_mean_and_zero_diffs():
    c = paired.compare([-1.0, 1.0, 0.0], [-1.0, 1.0, 0.0], direction="higher").to_json()
    assert c["mde_rel_pct"] is None and c["p_value"] == 1.0 and c["effect_size"] is None


@pytest.mark.parametrize("base,idea,kw,msg", [
    ([1.0, 2.0, 3.0], [1.0, 2.0], {}, "length"),
    ([1.0], [2.0], {}, "at least 2"),
    ([], [], {}, "at least 2"),
    ([1.0, float("nan")], [1.0, 2.0], {}, "non-finite"),
    ([1.0, 2.0], [1.0, float("inf")], {}, "non-finite"),
    ([1.0, 2.0], [1.0, 3.0], {"direction": "max"}, "direction"),
])
def test_compare_rejects_bad_input(base, idea, kw, msg):
    kw = {"direction": "lower", **kw}
    with pytest.raises(ValueError, match=msg):
        paired.compare(base, idea, **kw)


# ---------------------------------------------------------------- selection, verdicts

def test_select_config():
    assert paired.select_config([[3.0, 3.0], [1.0, 2.0], [2.0, 1.0]], "lower") == 1  # tie -> first
    assert paired.select_config([[3.0, 3.0], [1.0, 2.0], [2.0, 1.0]], "higher") == 0
    assert paired.select_config([[0.1, float("nan")], [5.0, 5.0]], "lower") == 1
    assert paired.select_config([[0.1, None], [5.0, 5.0]], "lower") == 1
    assert paired.select_config([[9.0, float("inf")], [5.0, 5.0]], "higher") == 1
    assert paired.select_config([[float("nan")], [None, 1.0], []], "lower") is None
    assert paired.select_config([], "lower") is None
    assert type(paired.select_config([[1.0], [0.5]], "lower")) is int
    with pytest.raises(ValueError, match="direction"):
        paired.select_config([[1.0]], "down")


@pytest.mark.parametrize("p,delta,direction,ni,expected", [
    (0.01, -1.0, "lower", None, "helps"),
    (0.01, 1.0, "lower", None, "harms"),
    (0.01, 1.0, "higher", None, "helps"),
    (0.01, -1.0, "higher", True, "non-inferior"),  # a harm within the margin (D3)
    (0.05, -1.0, "lower", None, "inconclusive"),  # p == alpha is not significant
    (0.30, -1.0, "lower", True, "non-inferior"),
    (0.30, 1.0, "lower", False, "inconclusive"),
])
def test_practical_verdict(p, delta, direction, ni, expected):
    assert decision.practical_verdict(p, delta, direction, 0.05, non_inferior=ni) == expected


def test_mechanism_ok():
    assert mechanism.evidence_ok([], []) is None
    assert mechanism.evidence_ok([True], []) == 1
    assert mechanism.evidence_ok([True, True], [True]) == 1
    assert mechanism.evidence_ok([True], [False]) == 0
    assert mechanism.evidence_ok([False], []) == 0
    assert mechanism.evidence_ok([], [None]) == 0
    assert type(mechanism.evidence_ok([np.bool_(True)], [])) is int


@pytest.mark.parametrize("practical,mech,expected", [
    ("helps", 1, "worked"), ("helps", 0, "partial"), ("helps", None, "partial"),
    ("harms", 1, "failed"), ("harms", 0, "failed"), ("harms", None, "failed"),
    ("inconclusive", 1, "partial"), ("inconclusive", 0, "failed"),
    ("inconclusive", None, "failed"), ("non-inferior", 1, "partial"),
    ("non-inferior", 0, "failed"),
])
def test_system_verdict(practical, mech, expected):
    assert decision.system_verdict(practical, mech) == expected


def test_system_verdict_rejects_unknown():
    with pytest.raises(ValueError, match="practical"):
        decision.system_verdict("great", 1)


# ---------------------------------------------------------------- plain types

PLAIN = (float, int, bool, str, list, dict, type(None))


def assert_plain(x, path="out"):
    assert type(x) in PLAIN, f"{path} is {type(x)}"
    if type(x) is float:
        assert math.isfinite(x), f"{path} is {x}"
    if type(x) is dict:
        for k, v in x.items():
            assert type(k) is str
            assert_plain(v, f"{path}.{k}")
    if type(x) is list:
        for k, v in enumerate(x):
            assert_plain(v, f"{path}[{k}]")


@pytest.mark.parametrize("base,idea,margin", [
    (TAB_BASE, TAB_IDEA, None), (DYN_BASE, DYN_IDEA, 0.1),
    ([1.0, 1.0, 1.0], [0.5, 0.5, 0.5], 0.02), ([0.0, 0.0], [0.0, 0.0], 0.1),
    (np.arange(20.0), np.arange(20.0)[::-1], 0.5), (np.float32([1, 2, 3]), [1, 2, 4], None),
])
def test_outputs_are_plain_python(base, idea, margin):
    for direction in paired.DIRECTIONS:
        c = paired.compare(base, idea, direction=direction, margin=margin).to_json()
        assert_plain(c)
        json.dumps(c, allow_nan=False)
    d = np.subtract(idea, base)
    for value in (paired.summarize(base).to_json(), paired.sign_flip_p_value(d), paired.mde(d),
                  paired.ci95(d),
                  paired.effect_size(d), paired.power_mde(len(d), 1.0),
                  paired.idea_wins(base, idea, "lower"), paired.holm(np.array([0.1, 0.2])),
                  paired.min_p_value(5), paired.select_config([np.array([1.0, 2.0])], "lower"),
                  paired.noninferiority(base, idea, direction="lower", margin=0.1).to_json()):
        assert_plain(value)


def test_stats_module_does_not_import_torch():
    path = Path(paired.__file__)
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('s', {str(path)!r})\n"
            "module = sys.modules['s'] = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "assert 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- stats: verdict rules


@pytest.mark.parametrize("delta, direction, better", [
    (-0.5, "lower", True), (0.5, "lower", False), (0.0, "lower", False),
    (0.5, "higher", True), (-0.5, "higher", False), (0.0, "higher", False),
])
def test_better_is_a_strict_sign_in_the_direction(delta, direction, better):
    assert decision.better(delta, direction) is better
    p_verdict = decision.practical_verdict(0.01, delta, direction, 0.05)
    assert p_verdict == ("helps" if better else "harms" if delta != 0 else "inconclusive")
    assert decision.practical_verdict(0.05, delta, direction, 0.05) == "inconclusive"  # p == level


def test_direction_is_checked():
    with pytest.raises(ValueError,
                       match=r"direction must be one of \('lower', 'higher'\), got 'up'"):
        values.checked_direction("up")
    assert values.checked_direction("higher") == "higher"


def test_idea_wins_counts_strictly_better_seeds_in_each_direction():
    base, idea = [1.0, 2.0, 3.0, 4.0, 5.0], [0.5, 2.0, 3.5, 3.5, 5.0]
    assert paired.idea_wins(base, idea, "lower") == 2     # ties (2.0, 5.0) are not wins
    assert paired.idea_wins(base, idea, "higher") == 1
    assert paired.idea_wins([1.0, 1.0], [1.5, 1.9], "lower") == 0   # worse by less than 1


def test_holm_caps_at_one_and_keeps_input_order():
    assert paired.holm([0.6, 0.7]) == [1.0, 1.0]
    assert paired.holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert paired.holm([0.02, 0.02]) == [0.04, 0.04]
    with pytest.raises(ValueError, match="p_values contain non-finite"):
        paired.holm([0.1, math.nan])


# margin 0.1 of baselines 10, 20, 30, ...: the idea is worse by 0.5 on each of 5 seeds
NI_BASE = [10.0, 20.0, 30.0, 40.0, 50.0]
NI_IDEA = [10.5, 20.5, 30.5, 40.4, 50.6]


def test_noninferiority_margin_scales_with_each_seeds_baseline():
    from scipy import stats as sps
    r = paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.02)
    d = np.subtract(NI_IDEA, NI_BASE)
    assert r.margin_rel == 0.02 and r.margin_abs == pytest.approx(0.02 * 30.0)
    # w = d - 0.02 * b = (0.3, 0.1, -0.1, -0.4, -0.4): sum -0.5; 11 of 32 flips have sum <= it
    w = d - 0.02 * np.asarray(NI_BASE)
    assert r.p_value == paired.one_sided_sign_flip_p(w)
    se = d.std(ddof=1) / math.sqrt(5)
    assert r.bound == pytest.approx(d.mean() + sps.t.ppf(0.95, 4) * se, rel=1e-12)
    assert r.non_inferior is (r.p_value < 0.05)
    # a margin that every seed clears by far: the smallest one-sided p, 1/32
    far = paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5)
    assert far.p_value == 1 / 32 and far.non_inferior is True
    # the same p at a level equal to it is not below it
    at = paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5, alpha=1 / 32)
    assert at.non_inferior is False
    assert paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5,
                                alpha=1 / 32 + 1e-9).non_inferior is True
    # the default level is 0.05: the bound uses t(0.95)
    assert far.bound == pytest.approx(d.mean() + sps.t.ppf(0.95, 4) * se, rel=1e-12)
    assert paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.5,
                                alpha=0.2).bound == pytest.approx(
        d.mean() + sps.t.ppf(0.8, 4) * se, rel=1e-12)


def test_noninferiority_higher_is_better_mirrors_the_differences():
    # for "higher" the idea is worse when it is lower: mirror the data
    r = paired.noninferiority(NI_BASE, [2 * b - x for b, x in zip(NI_BASE, NI_IDEA)],
                             direction="higher", margin=0.02)
    low = paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=0.02)
    assert r.p_value == low.p_value and r.non_inferior is low.non_inferior
    assert r.bound == pytest.approx(-low.bound)


@pytest.mark.parametrize("margin, ok", [(0.0, True), (0.05, True), (2.0, True),
                                        (-0.01, False), (math.inf, False), (math.nan, False)])
def test_noninferiority_margin_range(margin, ok):
    if ok:
        r = paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=margin)
        assert r.margin_rel == margin
    else:
        with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
            paired.noninferiority(NI_BASE, NI_IDEA, direction="lower", margin=margin)


def test_compare_at_the_level_and_its_forwarded_arguments():
    base = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    gains = [0.5, 0.25, 0.75, 0.5, 0.375, 0.625]
    idea = [b - g for b, g in zip(base, gains)]   # every seed better: p = 2/64
    c = paired.compare(base, idea, direction="lower").to_json()
    assert c["alpha"] == 0.05 and c["p_value"] == 2 / 64
    assert decision.practical_verdict(c["p_value"], c["delta_mean"], "lower", c["alpha"]) == "helps"
    assert c["mde_rel_pct"] == pytest.approx(100 * c["mde"] / 3.5) and c["mde"] == paired.mde(
        np.subtract(idea, base), 0.05)
    at = paired.compare(base, idea, direction="lower", alpha=2 / 64).to_json()
    assert decision.practical_verdict(at["p_value"], at["delta_mean"], "lower", at["alpha"]) == (
        "inconclusive")  # p = alpha is not below it
    assert at["mde"] == paired.mde(np.subtract(idea, base), 2 / 64) > c["mde"] > 0
    worse = paired.compare(base, [b + 0.5 for b in base], direction="lower").to_json()
    assert decision.practical_verdict(worse["p_value"], worse["delta_mean"], "lower",
                                      0.05) == "harms"
    assert worse["delta_mean"] == 0.5 and worse["idea_wins"] == 0 and worse["n_pairs"] == 6
    assert worse["per_seed_diffs"] == [0.5] * 6 and worse["direction"] == "lower"
    ni = paired.compare(base, idea, direction="higher", margin=0.2, alpha=0.1).to_json()
    assert ni["noninferiority"] == paired.noninferiority(base, idea, direction="higher",
                                                        margin=0.2, alpha=0.1).to_json()
    assert paired.compare(base, idea, direction="lower").noninferiority is None


def test_compare_seeds_its_monte_carlo_p():
    rng = np.random.default_rng(3)
    base = rng.normal(0, 1, 18).tolist()
    idea = (np.asarray(base) + rng.normal(0.3, 1, 18)).tolist()
    d = np.subtract(idea, base)
    assert paired.compare(base, idea, direction="lower").p_value == _monte_carlo_p(d, seed=0)
    assert (paired.compare(base, idea, direction="lower", seed=7).p_value
            == _monte_carlo_p(d, seed=7))


def test_select_config_scores_the_mean_in_the_direction():
    vals = [[2.0, 4.0], [3.5, 2.0], [1.0, 6.0]]     # means 3.0, 2.75, 3.5
    assert paired.select_config(vals, "lower") == 1
    assert paired.select_config(vals, "higher") == 2
    assert paired.select_config([[None, 1.0], [2.0, 2.0]], "lower") == 1
    assert paired.select_config([[], [2.0]], "lower") == 1
    assert paired.select_config([[math.nan], [5.0], [4.0]], "lower") == 2   # skips, goes on
    assert paired.select_config([[3.0], [3.0]], "higher") == 0               # tie: the first
    assert paired.select_config([[-1.0], [-2.0]], "lower") == 1


def test_select_config_averages_float32_metrics_in_float64():
    """In float32, 16777216 + 1 rounds back to 16777216: the first config's mean would be
    8388608.0 and beat the second's 8388608.25; its true mean is 8388608.5."""
    vals = [[np.float32(16777216.0), np.float32(1.0)], [8388608.25]]
    assert paired.select_config(vals, "lower") == 1
    assert paired.select_config(vals, "higher") == 0


# ------------------------------------------- idea_wins (from the report builder's tables)
def test_idea_wins_counts_strictly_better_seeds():
    assert paired.idea_wins([1, 1, 1], [0.5, 1, 2], "lower") == 1
    assert paired.idea_wins([1, 1, 1], [0.5, 1, 2], "higher") == 1


def test_noninferiority_record_writes_either_shape_and_refuses_others():
    """The plain test writes five keys; the selection-aware one adds bound_rel and test, in
    the report's order; from_json reads each back and refuses a key set that lacks a required
    key or has one it does not declare, naming the keys it declares."""
    base, idea = [10.0, 10.2, 9.9, 10.1, 10.0], [10.1, 10.2, 10.0, 10.1, 10.1]
    plain = paired.noninferiority(base, idea, direction="lower", margin=0.05)
    assert list(plain.to_json()) == ["margin_rel", "margin_abs", "bound", "non_inferior",
                                     "p_value"]
    aware = dataclasses.replace(plain, bound_rel=None, test="a description")
    assert list(aware.to_json()) == ["margin_rel", "margin_abs", "bound", "bound_rel",
                                     "non_inferior", "p_value", "test"]
    for record in (plain, aware):
        assert NonInferiorityTest.from_json(record.to_json()) == record
    with pytest.raises(ValueError, match=r"lacks the key\(s\) \['margin_abs', 'bound', "
                                         r"'non_inferior', 'p_value'\]; declared: "):
        NonInferiorityTest.from_json({"margin_rel": 0.05})
    with pytest.raises(ValueError, match=r"\['margin'\] are not declared"):
        NonInferiorityTest.from_json({**aware.to_json(), "margin": 0.05})
