"""Tests of benchkit.stats.paired' comparison of two arms and the decisions on it: idea_wins,
non-inferiority, compare, config selection, the verdicts, and the plain Python values every
function returns."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats as sps

from benchkit.stats import paired as bs
from test_stats import DYN_BASE, DYN_IDEA, FAST, TAB_BASE, TAB_IDEA


# ---------------------------------------------------------------- wins, non-inferiority

def test_idea_wins_direction_and_strictness():
    base, idea = [1.0, 2.0, 3.0, 4.0], [0.5, 2.0, 3.5, 3.0]
    assert bs.idea_wins(base, idea, "lower") == 2
    assert bs.idea_wins(base, idea, "higher") == 1
    with pytest.raises(ValueError, match="lower"):
        bs.idea_wins(base, idea, "lower is better")


def test_noninferiority_by_hand():
    base = [10.0, 11.0, 9.0, 10.0, 10.0]
    idea = [10.1, 11.2, 9.0, 10.1, 10.1]  # slightly worse for "lower"
    d = np.subtract(idea, base)
    se = d.std(ddof=1) / math.sqrt(5)
    tq = sps.t.ppf(0.95, 4)
    r = bs.noninferiority(base, idea, direction="lower", margin=0.05)
    assert r["margin_rel"] == 0.05 and r["margin_abs"] == pytest.approx(0.5)
    assert r["bound"] == pytest.approx(d.mean() + tq * se)
    assert r["non_inferior"] is True
    assert r["p_value"] == 1 / 32  # every seed's w < 0: the smallest one-sided sign-flip p
    assert bs.noninferiority(base, idea, direction="lower", margin=0.001)["non_inferior"] is False
    # "higher": the same numbers mean the idea is better, bound is a lower bound
    h = bs.noninferiority(base, idea, direction="higher", margin=0.0)
    assert h["bound"] == pytest.approx(d.mean() - tq * se)
    assert h["non_inferior"] is (h["p_value"] < 0.05)  # the sign-flip test decides
    assert h["p_value"] == 2 / 32   # w = (0.1, 0.2, 0, 0.1, 0.1) with signs flipped; a zero
    worse = bs.noninferiority(idea, base, direction="higher", margin=0.01)
    assert worse["non_inferior"] is False and worse["p_value"] > 0.05


@FAST
@given(st.lists(st.tuples(st.floats(1, 10), st.floats(-1, 1)), min_size=3, max_size=10),
       st.floats(0, 0.3), st.sampled_from(bs.DIRECTIONS))
def test_noninferiority_bound_agrees_with_p(pairs, margin, direction):
    base = [b for b, _ in pairs]
    idea = [b + e for b, e in pairs]
    r = bs.noninferiority(base, idea, direction=direction, margin=margin)
    if abs(r["p_value"] - 0.05) > 1e-9:
        assert r["non_inferior"] is (r["p_value"] < 0.05)


# ---------------------------------------------------------------- compare

def test_compare_keys_and_rules():
    base = [1.0, 1.125, 0.875, 1.0, 1.0625, 0.9375, 1.0, 1.25]  # exact binary fractions
    better = [b - 0.25 for b in base]
    c = bs.compare(base, better, direction="lower", margin=0.05)
    v1 = {"delta_mean", "idea_wins", "n_pairs", "per_seed_diffs", "p_value", "mde",
          "mde_rel_pct", "verdict", "system_worked"}
    extra = {"ci95", "alpha", "effect_size", "noninferiority"}  # planning figures: decide()
    assert v1 | extra <= set(c)
    assert c["p_value"] == bs.min_p_value(8)
    assert c["verdict"] == "idea better (significant)" and c["system_worked"] is True
    assert c["effect_size"] is None  # constant diffs: sd == 0
    assert c["noninferiority"]["non_inferior"] is True
    assert bs.compare(base, better, direction="higher")["verdict"] == "idea worse (significant)"
    noisy = [b + s for b, s in zip(base, [0.1, -0.1, 0.05, -0.02, 0.1, -0.12, 0.03, -0.01])]
    c2 = bs.compare(base, noisy, direction="lower")
    assert c2["verdict"] == "no significant win" and c2["system_worked"] is False
    assert c2["noninferiority"] is None
    assert c2["ci95"] == pytest.approx(bs.ci95(np.subtract(noisy, base)))
    # more pairs than the exact limit go through Monte Carlo, seeded
    rng = np.random.default_rng(0)
    b20, i20 = rng.normal(0, 1, 20).tolist(), rng.normal(0, 1, 20).tolist()
    assert bs.compare(b20, i20, direction="lower", seed=5) == bs.compare(
        b20, i20, direction="lower", seed=5)


def test_compare_zero_baseline_mean_and_zero_diffs():
    c = bs.compare([-1.0, 1.0, 0.0], [-1.0, 1.0, 0.0], direction="higher")
    assert c["mde_rel_pct"] is None and c["p_value"] == 1.0 and c["effect_size"] is None
    assert c["verdict"] == "no significant win"


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
        bs.compare(base, idea, **kw)


# ---------------------------------------------------------------- selection, verdicts

def test_select_config():
    assert bs.select_config([[3.0, 3.0], [1.0, 2.0], [2.0, 1.0]], "lower") == 1  # tie -> first
    assert bs.select_config([[3.0, 3.0], [1.0, 2.0], [2.0, 1.0]], "higher") == 0
    assert bs.select_config([[0.1, float("nan")], [5.0, 5.0]], "lower") == 1
    assert bs.select_config([[0.1, None], [5.0, 5.0]], "lower") == 1
    assert bs.select_config([[9.0, float("inf")], [5.0, 5.0]], "higher") == 1
    assert bs.select_config([[float("nan")], [None, 1.0], []], "lower") is None
    assert bs.select_config([], "lower") is None
    assert type(bs.select_config([[1.0], [0.5]], "lower")) is int
    with pytest.raises(ValueError, match="direction"):
        bs.select_config([[1.0]], "down")


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
    assert bs.practical_verdict(p, delta, direction, 0.05, non_inferior=ni) == expected


def test_mechanism_ok():
    assert bs.evidence_ok([], []) is None
    assert bs.evidence_ok([True], []) == 1
    assert bs.evidence_ok([True, True], [True]) == 1
    assert bs.evidence_ok([True], [False]) == 0
    assert bs.evidence_ok([False], []) == 0
    assert bs.evidence_ok([], [None]) == 0
    assert type(bs.evidence_ok([np.bool_(True)], [])) is int


@pytest.mark.parametrize("practical,mech,expected", [
    ("helps", 1, "worked"), ("helps", 0, "partial"), ("helps", None, "partial"),
    ("harms", 1, "failed"), ("harms", 0, "failed"), ("harms", None, "failed"),
    ("inconclusive", 1, "partial"), ("inconclusive", 0, "failed"),
    ("inconclusive", None, "failed"), ("non-inferior", 1, "partial"),
    ("non-inferior", 0, "failed"),
])
def test_system_verdict(practical, mech, expected):
    assert bs.system_verdict(practical, mech) == expected


def test_system_verdict_rejects_unknown():
    with pytest.raises(ValueError, match="practical"):
        bs.system_verdict("great", 1)


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
    for direction in bs.DIRECTIONS:
        c = bs.compare(base, idea, direction=direction, margin=margin)
        assert_plain(c)
        json.dumps(c, allow_nan=False)
    d = np.subtract(idea, base)
    for value in (bs.summarize(base), bs.sign_flip_p_value(d), bs.mde(d), bs.ci95(d),
                  bs.effect_size(d), bs.power_mde(len(d), 1.0),
                  bs.idea_wins(base, idea, "lower"), bs.holm(np.array([0.1, 0.2])),
                  bs.min_p_value(5), bs.select_config([np.array([1.0, 2.0])], "lower"),
                  bs.noninferiority(base, idea, direction="lower", margin=0.1)):
        assert_plain(value)


def test_stats_module_does_not_import_torch():
    path = Path(bs.__file__)
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('s', {str(path)!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
            "assert 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
