"""The aggregation's reports, called in process (benchkit.report.session): an idea with only
claims, a single run, every comparison's Holm family size, a control arm's margin test over the
whole family, report companions and write errors, and an incomplete track kept in the Holm family
(D8 of the statistics audit).
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from benchkit.report import session
from benchkit.store import atomic
from benchkit.report import bench_report
from benchkit.report import summary
from benchkit.report.session import aggregate_session
from builders import (ALPHA, BASE8, GRID, IDEA8, P8, TRACK, make_spec, run_json, session_payloads,
                      session_settings, session_spec, typed)

# -- aggregation ---------------------------------------------------------------------------------
spec, payloads, settings = session_spec, session_payloads, session_settings


@pytest.mark.slow
def test_an_idea_with_only_claims_does_not_stop_the_next_ideas_report(tmp_path):
    claim = {"kind": "mechanism", "spec": spec("a"), "nodeid": "m::test_claim",
             "outcome": "passed", "message": None}
    written, _ = session.aggregate_session(typed([claim] + payloads(spec("b"))), settings(tmp_path))
    assert [r.name for _, r in written] == ["b"]


@pytest.mark.slow
def test_a_single_run_makes_an_incomplete_report_not_an_interrupted_one(tmp_path):
    written, failures = session.aggregate_session(typed(
        payloads(spec(seeds=1), arms=("baseline",))), settings(tmp_path, gate="helps"))
    ((_, record),) = written
    r = record.to_json()
    assert r["complete"] is False and r["practical_verdict"] == "incomplete"
    assert "the session was interrupted" not in r["incomplete"]["reasons"]
    assert len(failures) == 1 and "incomplete" in failures[0]


@pytest.mark.slow
def test_every_comparison_records_its_holm_family_size(tmp_path):
    written, _ = session.aggregate_session(typed(payloads(spec(tracks=("tabular", "dynamics")))),
                                             settings(tmp_path))
    assert [r.comparison.family_size for _, r in written] == [2, 2]
    for path, _ in written:
        assert json.loads(path.read_text())["comparison"]["family_size"] == 2


@pytest.mark.slow
def test_a_control_arms_margin_test_is_at_the_level_of_its_track(tmp_path):
    sp = {**spec("ctl", seeds=5), "margin": 0.1, "arms": ["baseline", "idea", "control:c"]}
    out = []
    for seed in sp["seeds"]:  # the control within 0.1% of the idea on every seed
        idea = 0.8 + 0.1 * seed
        for arm, v in (("baseline", idea + 0.2), ("idea", idea),
                       ("control:c", idea + 0.001 * (-1) ** seed)):
            out.append({**payloads(sp, arms=("idea",))[0], "arm": arm, "seed": seed,
                        "nodeid": f"{sp['module']}::{arm}[tabular-{seed}]", "val": v, "test": v})
    ((_, record),) = session.aggregate_session(typed(out), settings(tmp_path))[0]
    r = record.to_json()
    comp = r["controls"]["c"]["comparison"]
    # non-inferior to every comparator is an intersection-union test: the family is the one
    # track, so the one-sided p 1/32 is below 0.05 (Holm over baseline + control, 0.05 / 2,
    # would only cost power)
    assert comp["family_size"] == 1 and comp["noninferiority"]["p_value"] == 1 / 32
    assert r["controls"]["c"]["verdict"] == "non-inferior"
    assert r["practical_verdict"] == "non-inferior"


@pytest.mark.slow
def test_companions_get_the_report_and_keep_plots_only_when_it_did_not_change(tmp_path,
                                                                              monkeypatch):
    calls = []
    monkeypatch.setattr(summary, "write_companions",
                        lambda path, r, **kw: calls.append((path, r, kw)))
    for _ in range(2):
        written, _ = session.aggregate_session(typed(payloads(spec())), settings(tmp_path))
        ((path, r),) = written
        assert calls[-1][:2] == (path, r)
    assert [kw for *_, kw in calls] == [{"plots_current": False}, {"plots_current": True}]


def test_a_report_that_differs_only_in_where_its_runs_came_from_is_the_same_report():
    """A rerun reuses every run from the store: ``reused``/``origin`` and ``created`` change,
    what the report says does not (its plots are kept)."""
    first = {"created": "t0", "verdict": "helps",
             "runs": [{"seed": 0, "test": 1.0, "reused": False, "origin": "fresh"}]}
    rerun = {"created": "t1", "verdict": "helps",
             "runs": [{"seed": 0, "test": 1.0, "reused": True, "origin": "reused"}]}
    assert session.same_report(first, rerun)
    changed = {**rerun, "runs": [{**rerun["runs"][0], "test": 2.0}]}
    assert not session.same_report(first, changed)


def test_a_retrained_run_that_took_another_time_leaves_the_report_the_same():
    """``--bench-fresh`` retrains every run to the same bits; only each run's seconds differ
    (issue 51: its plots were drawn again each time, most of the report's time)."""
    first = {"created": "t0", "runs": [{"seed": 0, "test": 1.0, "seconds": 3.5,
                                        "reused": False, "origin": "fresh"}]}
    fresh = {"created": "t1", "runs": [{"seed": 0, "test": 1.0, "seconds": 4.25,
                                        "reused": False, "origin": "fresh"}]}
    assert session.same_report(first, fresh)


@pytest.mark.slow
@pytest.mark.parametrize("exc, says", [
    (OSError(13, "Permission denied", "/elsewhere/report.tmp"),
     "cannot write /elsewhere/report.tmp: Permission denied"),
    (OSError("disk full"), "cannot write {path}: disk full"),
])
def test_a_write_error_names_the_file_and_the_reason(tmp_path, monkeypatch, exc, says):
    def fail(path, text):
        raise exc
    monkeypatch.setattr(atomic, "write_atomic", fail)
    errors = []
    written, _ = session.aggregate_session(typed(payloads(spec("x"))), settings(tmp_path),
                                             errors=errors)
    path = bench_report.report_path(tmp_path, "x", "tabular")
    assert written == []
    assert errors == ["benchkit: ERROR x tabular: " + says.format(path=path)]


# -- D8: an incomplete track stays in the Holm family --------------------------------------------
def _payloads(spec, base, idea, tracks, missing_track=None):
    out = []
    for track in tracks:
        for arm, values in (("baseline", base), ("idea", idea)):
            for s, v in enumerate(values):
                if track == missing_track and arm == "idea" and s == 0:
                    continue
                out.append(run_json(arm, GRID[0], s, v, v, track=track, spec=spec))
    return out


@pytest.mark.slow
def test_d8_an_incomplete_track_stays_in_the_holm_family(tmp_path):
    """Two tracks, both with p = 4/256; one loses a run. Before: the complete track was
    adjusted over a family of 1 (p 0.0156 < 0.05, helps). Now: over 2, with the missing
    track at p = 1: 2 * 0.0156 = 0.03125 < 0.05 still helps, and with 4 tracks (3 missing)
    4 * 0.0156 = 0.0625: inconclusive."""
    tracks = ["tabular", "t2", "t3", "t4"]
    spec = make_spec(GRID[:1], 8).to_plain()   # a payload's spec is the plain form
    spec["tracks"] = tracks
    spec["grids"] = {t: [dict(GRID[0])] for t in tracks}
    spec["protocols"] = {t: {**spec["protocols"][TRACK], "track": t} for t in tracks}
    payloads = []
    for t in tracks:
        payloads += _payloads(spec, BASE8, IDEA8, [t], missing_track=None if t == TRACK else t)
    settings = SimpleNamespace(alpha=ALPHA, report_dir=tmp_path, gate="helps")
    written, failures = aggregate_session(typed(payloads), settings)
    by_track = {r.track: r.to_json() for _, r in written}
    comp = by_track[TRACK]["comparison"]
    assert comp["family_size"] == 4
    assert comp["p_adjusted"] == pytest.approx(4 * P8)
    assert by_track[TRACK]["practical_verdict"] == "inconclusive"
    assert len(failures) == 4
