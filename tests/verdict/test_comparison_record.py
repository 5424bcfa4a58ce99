"""The Comparison record (benchkit.verdict.records): what the compare stage returns, carried
through the family adjustment and the decision, written as the report's comparison JSON."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchkit.stats import paired
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.verdict import comparison, controls, decision
from benchkit.verdict.records import Comparison, Interval, Report

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "benchmarks" / "pipeline" / "before"   # every pipeline output, checked in
BASE = [1.0, 1.1, 0.9, 1.2, 1.05, 0.95, 1.15, 1.0]
IDEA = [0.9, 1.0, 0.85, 1.0, 1.0, 0.9, 1.1, 1.02]


def comparisons_in(value):
    if isinstance(value, list):
        for item in value:
            yield from comparisons_in(item)
    elif isinstance(value, dict):
        if "per_seed_diffs" in value and "delta_mean" in value:
            yield value
        for item in value.values():
            yield from comparisons_in(item)


def test_every_saved_comparison_round_trips_in_its_key_order():
    found = [c for path in sorted(SAVED.glob("*.json"))
             for c in comparisons_in(json.loads(path.read_text(encoding="utf-8")))]
    assert len(found) > 50   # baseline, control and frontier-point comparisons, decided or not
    for comp in found:
        assert json.dumps(Comparison.from_json(comp).to_json()) == json.dumps(comp)


def test_every_saved_noninferiority_reads_back_as_its_record():
    """Both shapes reports hold (the plain test's, the selection-aware one's with bound_rel
    and test) read back as NonInferiorityTest and write the same JSON, key order included."""
    found = [c["noninferiority"] for path in sorted(SAVED.glob("*.json"))
             for c in comparisons_in(json.loads(path.read_text(encoding="utf-8")))
             if c["noninferiority"] is not None]
    records = [NonInferiorityTest.from_json(ni) for ni in found]
    assert {r.test is None for r in records} == {True, False}   # both shapes are saved
    for ni, record in zip(found, records):
        assert json.dumps(record.to_json()) == json.dumps(ni)
    assert all(isinstance(Comparison.from_json(c).noninferiority, NonInferiorityTest)
               for path in sorted(SAVED.glob("*.json"))
               for c in comparisons_in(json.loads(path.read_text(encoding="utf-8")))
               if c["noninferiority"] is not None)


def test_compare_arms_returns_the_record_and_the_stages_add_fields():
    comp = comparison.compare_arms(BASE, IDEA, direction="lower", alpha=0.05, margin=None,
                                   test="sign", sweeps=None)
    assert isinstance(comp, Comparison)
    figures = paired.compare(BASE, IDEA, direction="lower", alpha=0.05)
    assert comp.p_mean == figures.p_value and comp.p_value != figures.p_value
    out = comp.to_json()
    assert list(out)[-4:] == ["noninferiority", "test", "p_mean", "median_delta"]
    assert "p_adjusted" not in out and "verdict" not in out and "level" not in out
    decided = dataclasses.replace(comp, p_adjusted=0.01, family_size=1, level=0.05,
                                  signflip_ci=Interval(0.95, -0.2, -0.01), verdict="helps",
                                  system_worked=True)
    out = decided.to_json()
    assert list(out)[-6:] == ["p_adjusted", "family_size", "level", "signflip_ci", "verdict",
                              "system_worked"]
    assert out["signflip_ci"] == {"confidence": 0.95, "lo": -0.2, "hi": -0.01}
    assert Comparison.from_json(out) == decided


def test_an_undeclared_field_is_refused():
    comp = comparison.compare_arms(BASE, IDEA, direction="lower", alpha=0.05, margin=None,
                                   test="mean", sweeps=None).to_json()
    with pytest.raises(ValueError, match="not declared"):
        Comparison.from_json({**comp, "p_bonus": 0.5})


def test_the_record_is_frozen_and_its_json_a_copy():
    comp = comparison.compare_arms(BASE, IDEA, direction="lower", alpha=0.05, margin=0.1,
                                   test="mean", sweeps=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        comp.p_value = 0.0  # type: ignore[misc]
    out = comp.to_json()
    out["noninferiority"]["margin_rel"] = 99
    assert comp.noninferiority is not None and comp.noninferiority.margin_rel == 0.1


def test_the_family_adjusts_records_and_an_incomplete_track_enters_at_p_one():
    one = comparison.compare_arms(BASE, IDEA, direction="lower", alpha=0.05, margin=None,
                                  test="mean", sweeps=None)
    control = dataclasses.replace(one, p_value=0.2)
    (track, missing) = controls.adjusted([[one, control], []])
    assert missing == [] and [c.family_size for c in track] == [2, 2]
    # helps: the track's largest p (0.2), Holm over 2 tracks (the missing one at p = 1)
    assert [c.p_adjusted for c in track] == [pytest.approx(0.4)] * 2
    # harms: Holm over every comparison, the missing track's at p = 1
    assert track[0].p_adjusted_harms == pytest.approx(3 * one.p_value)
    assert track[1].p_adjusted_harms == pytest.approx(0.4)


def test_the_decision_reads_the_report_and_changes_nothing():
    from builders import make_report

    report = make_report()
    record = Report.from_json(report)
    comps = controls.adjusted([record.comparisons()])[0]
    before = json.dumps(record.to_json())
    decided = decision.decision_of(record, comps, family_size=1)
    assert json.dumps(record.to_json()) == before
    assert decided.comparison is not None and decided.comparison.verdict is not None
    assert decided.practical == report["practical_verdict"]
    applied = decided.applied(record)   # a new record; the one decided on stays as it was
    assert json.dumps(record.to_json()) == before and applied is not record
    assert applied.comparison == decided.comparison
