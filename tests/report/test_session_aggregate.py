"""The controller's aggregation, called in-process: Holm across an idea's tracks, the gate's
FAIL lines, interrupted sessions, and which payloads make a report."""
from __future__ import annotations

import json

import pytest

from benchkit.report.session import aggregate_session
from builders import AGG_CFG, session_payloads, session_settings, session_spec, typed

CFG = AGG_CFG


def spec(name="agg", tracks=("tabular", "dynamics"), seeds=6):
    """Two tracks by default: the Holm family's tests."""
    return session_spec(name, tracks, seeds)


def settings(tmp_path, gate="helps", alpha=0.05):
    return session_settings(tmp_path, gate, alpha)


payloads = session_payloads


def by_track(written):
    return {r.track: r.to_json() for _, r in written}


@pytest.mark.slow
def test_each_track_is_judged_on_its_holm_adjusted_p(tmp_path):
    # 6 seeds, idea wins all: raw p = 2/64 per track, Holm over two tracks doubles it
    written, failures = aggregate_session(typed(payloads(spec())), settings(tmp_path))
    reports = by_track(written)
    assert set(reports) == {"tabular", "dynamics"}
    for r in reports.values():
        assert r["comparison"]["p_value"] == pytest.approx(1 / 32)
        assert r["comparison"]["p_adjusted"] == pytest.approx(1 / 16)
        assert r["practical_verdict"] != "helps"
    assert len(failures) == 2
    assert all(f.startswith("benchkit: FAIL agg ") and "gate 'helps' not met" in f
               for f in failures)


@pytest.mark.slow
def test_a_single_track_idea_is_judged_on_its_raw_p(tmp_path):
    written, failures = aggregate_session(typed(payloads(spec(tracks=("tabular",)))),
                                          settings(tmp_path))
    (r,) = by_track(written).values()
    assert r["comparison"]["p_adjusted"] == r["comparison"]["p_value"] == pytest.approx(1 / 32)
    assert r["practical_verdict"] == "helps"
    assert failures == []


@pytest.mark.slow
def test_reports_are_written_where_the_settings_say(tmp_path):
    written, _ = aggregate_session(typed(payloads(spec())), settings(tmp_path, gate="off"))
    for path, r in written:
        assert path == tmp_path / "agg" / r.track / "bench_report.json"
        assert json.loads(path.read_text())["practical_verdict"] == r.practical_verdict


@pytest.mark.slow
def test_a_missing_run_makes_that_track_incomplete_and_fails_the_gate(tmp_path):
    sp = spec(tracks=("tabular",))
    written, failures = aggregate_session(typed(payloads(sp, skip={("idea", "tabular", 3)})),
                                          settings(tmp_path, gate="not-harms"))
    (r,) = by_track(written).values()
    assert r["complete"] is False and r["practical_verdict"] == "incomplete"
    assert failures and "incomplete" in failures[0]


@pytest.mark.slow
def test_an_interrupted_session_says_so_in_an_incomplete_report(tmp_path):
    sp = spec(tracks=("tabular",))
    written, _ = aggregate_session(typed(payloads(sp, skip={("idea", "tabular", 0)})),
                                   settings(tmp_path, gate="off"), complete_session=False)
    (r,) = by_track(written).values()
    assert "the session was interrupted" in r["incomplete"]["reasons"]


@pytest.mark.slow
def test_the_gate_off_never_fails(tmp_path):
    harms = payloads(spec(tracks=("tabular",)), gain=lambda t, s: -0.5)
    written, failures = aggregate_session(typed(harms), settings(tmp_path, gate="off"))
    assert by_track(written)["tabular"]["practical_verdict"] == "harms"
    assert failures == []


def test_only_mechanism_payloads_make_no_report(tmp_path):
    claim = {"kind": "mechanism", "spec": spec(), "nodeid": "m::test_claim",
             "outcome": "passed", "message": None}
    assert aggregate_session(typed([claim]), settings(tmp_path)) == ([], [])


@pytest.mark.slow
def test_each_idea_gets_its_own_reports_and_failures(tmp_path):
    good, bad = spec("good", ("tabular",)), spec("bad", ("tabular",))
    both = payloads(good) + payloads(bad, gain=lambda t, s: -0.5)
    written, failures = aggregate_session(typed(both), settings(tmp_path, gate="not-harms"))
    assert sorted(r.name for _, r in written) == ["bad", "good"]
    assert len(failures) == 1 and failures[0].startswith("benchkit: FAIL bad tabular")


@pytest.mark.slow
def test_mechanism_tests_join_their_ideas_report(tmp_path):
    sp = spec(tracks=("tabular",))
    claims = [{"kind": "mechanism", "spec": sp, "nodeid": f"m::test_claim{i}", "outcome": out,
               "message": None} for i, out in enumerate(("passed", "failed"))]
    written, _ = aggregate_session(typed(claims + payloads(sp)), settings(tmp_path))
    report = by_track(written)["tabular"]
    assert [t["outcome"] for t in report["math_verification"]["tests"]] == ["passed", "failed"]
    assert report["math_verification"]["passed"] is False
    assert report["mechanism_ok"] is None and report["system_verdict"] == "partial"  # helps


@pytest.mark.slow
def test_a_frontier_spec_gets_a_frontier_report(tmp_path):
    sp = spec(tracks=("tabular",))
    sp["frontier"] = {"keep": [0.5, 1.0]}
    sp["grids"] = {"tabular": [{"keep": k, **CFG} for k in (0.5, 1.0)]}
    runs = []
    for keep in (0.5, 1.0):
        for p in payloads(sp):
            runs.append({**p, "cfg": {"keep": keep, **CFG}, "nodeid": p["nodeid"] + str(keep)})
    written, _ = aggregate_session(typed(runs), settings(tmp_path))
    report = by_track(written)["tabular"]
    assert [p["value"] for p in report["frontier"]["points"]] == [0.5, 1.0]
    assert report["comparison"]["family_size"] == 1


@pytest.mark.slow
def test_an_unwritable_report_is_an_error_line_and_the_others_are_written(tmp_path):
    good, bad = spec("good", ("tabular",)), spec("bad", ("tabular",))
    (tmp_path / "bad").write_text("a file where the report folder goes")
    errors = []
    written, _ = aggregate_session(typed(payloads(good) + payloads(bad)), settings(tmp_path),
                                   errors=errors)
    assert [r.name for _, r in written] == ["good"]
    assert len(errors) == 1 and errors[0].startswith("benchkit: ERROR bad tabular: ")
    assert str(tmp_path / "bad") in errors[0]
    with pytest.raises(OSError):
        aggregate_session(typed(payloads(bad)), settings(tmp_path))


@pytest.mark.slow
def test_reports_carry_their_provenance(tmp_path):
    sp = spec(tracks=("tabular",))
    module = tmp_path / sp["module"]
    module.parent.mkdir(parents=True)
    module.write_text("# the idea\n")
    written, _ = aggregate_session(typed(payloads(sp)), settings(tmp_path / "reports"),
                                   rootpath=tmp_path)
    import hashlib
    assert by_track(written)["tabular"]["provenance"]["module_digest"] == (
        hashlib.sha256(b"# the idea\n").hexdigest())


def test_helps_is_an_intersection_union_test_and_harms_keeps_holm_over_every_comparison():
    """One track, the baseline at p 0.03 and a control at 0.04: helps (beats both) is decided
    on the larger, 0.04 < 0.05, with no split across comparators; harms on Holm over both
    (0.06). Two tracks: Holm across the tracks' intersection-union p's."""
    import dataclasses

    from benchkit.verdict.comparison import compare_arms
    from benchkit.verdict.controls import adjusted

    compared = compare_arms([1.0, 1.1, 1.2, 1.3], [0.9, 1.0, 1.1, 1.2], direction="lower",
                            alpha=0.05, margin=None, test="mean", sweeps=None)

    def track(*ps):  # a track's comparisons: the baseline's, then each control's
        return [dataclasses.replace(compared, p_value=p) for p in ps]

    (comps,) = adjusted([track(0.03, 0.04)])
    assert [c.p_adjusted for c in comps] == [0.04, 0.04]
    assert [c.p_adjusted_harms for c in comps] == [0.06, 0.06]
    assert [c.family_size for c in comps] == [1, 1]
    two = adjusted([track(0.03, 0.04), track(0.01), []])  # the third track is incomplete
    assert two[0][0].p_adjusted == pytest.approx(0.08)   # 2 x 0.04, 3 tracks
    assert two[1][0].p_adjusted == pytest.approx(0.03)   # 3 x 0.01
    assert two[1][0].p_adjusted_harms == pytest.approx(0.04)  # 4 x 0.01
    assert two[0][0].family_size == 3
