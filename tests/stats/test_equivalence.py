"""Two-sided equivalence (TOST): claim_type="equivalence" with margin=, per seed on w, both
one-sided sign-flip tests at the look's level; its verdict, gate, sentence and spec errors."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchkit.stats import equivalence, paired
from benchkit.report.session import gate_failure
from benchkit.spec.arguments import parse_fairness
from benchkit.spec import SpecError
from benchkit.report.sentences import practical_sentence
from benchkit.verdict import comparison, decision
from builders import as_report
from idea_modules import arm, idea_module
from sessions import assert_gate_exits, validate_report

BASE = [1.00, 1.10, 0.90, 1.05, 0.95, 1.02]


def _comp(base, idea, margin=0.05):
    comp = comparison.of_figures(paired.compare(base, idea, direction="lower", margin=margin))
    return dataclasses.replace(comp, p_adjusted=comp.p_value, family_size=1)


def _verdict(idea_scale, claim_type="equivalence", level=0.05, base=BASE, noise=None):
    idea = [b * idea_scale for b in base]
    if noise is not None:
        idea = [x + e for x, e in zip(idea, noise)]
    verdict, comp = decision.claim_verdict(_comp(base, idea), base, idea, direction="lower",
                                           level=level, family_size=1, claim_type=claim_type)
    return verdict, comp.to_json()


@pytest.mark.parametrize("scale, claim, verdict", [
    (1.00, "equivalence", "equivalent"),        # identical arms
    (0.98, "equivalence", "equivalent"),        # 2% better, significant: within the margin
    (1.02, "equivalence", "equivalent"),        # 2% worse, significant: within the margin
    (0.90, "equivalence", "helps"),             # 10% better: beyond the margin
    (1.10, "equivalence", "harms"),             # 10% worse: beyond the margin
    (0.98, "superiority", "helps"),             # no TOST under another claim
    (1.02, "superiority", "non-inferior"),
    (1.02, "non-inferiority", "non-inferior"),
])
def test_truth_table(scale, claim, verdict):
    got, comp = _verdict(scale, claim)
    assert got == verdict
    assert ("equivalence" in comp) is (claim == "equivalence")
    if claim == "equivalence":
        eq = comp["equivalence"]
        assert eq["equivalent"] is (verdict == "equivalent")
        assert eq["p_value"] == max(eq["p_worse"], eq["p_better"])
        assert eq["level"] == 0.05


def test_noise_wider_than_the_margin_is_inconclusive():
    noise = [0.3, -0.3, 0.25, -0.2, 0.3, -0.35]
    got, comp = _verdict(1.0, noise=noise)
    assert got == "inconclusive" and not comp["equivalence"]["equivalent"]


def test_tested_at_the_looks_level_over_the_family():
    """Identical arms over 6 seeds: each one-sided p is 1/64 = 0.0156; equivalent at 0.05,
    not at 0.01, nor at 0.05 over a family of 4 (0.0125 each)."""
    assert _verdict(1.0, level=0.05)[0] == "equivalent"
    assert _verdict(1.0, level=0.01)[0] == "inconclusive"
    verdict, comp = decision.claim_verdict(_comp(BASE, BASE), BASE, BASE, direction="lower",
                                           level=0.05, family_size=4, claim_type="equivalence")
    assert verdict == "inconclusive" and comp.equivalence is not None
    assert comp.equivalence.level == 0.0125
    assert comp.equivalence.p_worse == comp.equivalence.p_better == 1 / 64
    # 4 seeds: the smallest one-sided p is 1/16, never below 0.05
    assert _verdict(1.0, base=BASE[:4])[0] == "inconclusive"


def test_higher_is_better_is_mirrored():
    base = [0.80, 0.82, 0.79, 0.81, 0.80, 0.83]
    idea = [b * 1.02 for b in base]   # 2% better when higher is better
    eq = equivalence.tost(base, idea, direction="higher", margin=0.05, level=0.05)
    assert eq.equivalent and eq.p_better == 1 / 64
    far = equivalence.tost(base, [b * 1.10 for b in base], direction="higher", margin=0.05,
                           level=0.05)
    assert not far.equivalent and far.p_better == 1.0


def test_the_test_writes_the_comparisons_equivalence_and_reads_it_back():
    eq = equivalence.tost(BASE, BASE, direction="lower", margin=0.05, level=0.05)
    assert list(eq.to_json()) == ["margin_rel", "margin_abs", "p_worse", "p_better", "p_value",
                                  "level", "equivalent"]
    assert equivalence.EquivalenceTest.from_json(eq.to_json()) == eq
    with pytest.raises(ValueError, match=r"EquivalenceTest lacks the key\(s\) \['margin_rel', "
                                         r"'margin_abs', 'p_worse', 'p_better', 'p_value', "
                                         r"'equivalent'\]"):
        equivalence.EquivalenceTest.from_json({"level": 0.05})


def test_at_either_margin_it_passes_at_most_alpha():
    """Ideas exactly 5% worse / 5% better in expectation (heteroscedastic, relative margin):
    the false 'equivalent' rate stays within alpha + 2 SE over 2,000 simulated benches."""
    benches, n = 2000, 8
    se = np.sqrt(0.05 * 0.95 / benches)
    for k, scale in enumerate((1.05, 0.95)):
        rng = np.random.default_rng(30 + k)
        hits = 0
        for _ in range(benches):
            b = rng.normal(1.0, 0.3, n)
            i = scale * b + rng.normal(0.0, 0.03 * np.abs(b), n)
            hits += equivalence.tost(b, i, direction="lower", margin=0.05,
                                     level=0.05).equivalent
        assert hits / benches <= 0.05 + 2 * se, (scale, hits / benches)


def _report(verdict, comp):
    return {"practical_verdict": verdict, "system_verdict": "failed", "complete": True,
            "comparison": {**comp, "level": 0.05}, "mechanism_ok": None,
            "metric_direction": "lower is better", "baseline": {"full": {"mean": 1.0}},
            "controls": {}, "decided_by": "baseline"}


def test_gate_and_sentence():
    verdict, comp = _verdict(1.02)
    report = _report(verdict, comp)
    assert gate_failure(as_report(report), "equivalent") is None
    assert gate_failure(as_report(report), "non-inferior") is None
    assert gate_failure(as_report(report), "not-harms") is None
    assert "gate 'helps' not met" in gate_failure(as_report(report), "helps")
    text = practical_sentence(as_report(report))
    assert text.startswith("shown equivalent to the baseline within the margin of 5%")
    assert "both < level 0.05" in text and "+0.02" in text
    verdict, comp = _verdict(0.90)
    assert "gate 'equivalent' not met" in gate_failure(as_report(_report(verdict, comp)),
                                                       "equivalent")


def test_spec_requires_a_margin_and_names_the_claim_types():
    with pytest.raises(SpecError, match="claim_type='equivalence' needs margin="):
        parse_fairness({"claim_type": "equivalence"}, "m.py", None)
    with pytest.raises(SpecError, match="'superiority', 'non-inferiority', 'equivalence'"):
        parse_fairness({"claim_type": "equal"}, "m.py", 0.05)
    assert parse_fairness({"claim_type": "equivalence"}, "m.py", 0.05)["claim_type"] == \
        "equivalence"


def eq_module(extra: str) -> str:
    """An equivalence claim at a 5% margin, the idea's ``run.fit`` given ``extra``."""
    return idea_module("eq", arm("baseline"), arm("idea", f"run.fit(run.track.model(){extra})"),
                       grid={"lr": [1e-2], "epochs": [1]}, seeds=6, margin=0.05,
                       claim_type="equivalence")


@pytest.mark.parametrize("extra, verdict, exits", [
    ("", "equivalent", {"equivalent": 0, "non-inferior": 0, "helps": 1}),
    (", lr=1e-6", "harms", {"equivalent": 1}),   # an untrained idea
], ids=["same-as-baseline", "untrained"])
def test_equivalence_claim_through_the_plugin(pytester, extra, verdict, exits):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_eq=eq_module(extra))
    assert_gate_exits(pytester, "eq", exits)
    report = validate_report(pytester.path / "reports/eq/tabular/bench_report.json")
    assert report["practical_verdict"] == verdict
    assert report["protocol"]["claim_type"] == "equivalence"
    eq = report["comparison"]["equivalence"]
    assert eq["margin_rel"] == 0.05 and eq["equivalent"] is (verdict == "equivalent")
    summary = (pytester.path / "reports/eq/tabular/summary.md").read_text()
    assert "equivalence: the idea must be within the margin of 5%" in summary
    if verdict == "equivalent":
        assert "shown equivalent to the baseline" in summary and "level 0.05" in summary
