"""The report's sections as records (benchkit.verdict.sections): each gives back exactly the JSON
reports have (key order included) and refuses a key it does not declare; the pipeline's Report
holds them as records."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchkit.spec.idea import cfg_id
from benchkit.stats.paired import Summary
from benchkit.verdict import pipeline
from benchkit.verdict.plan import Exploratory, Futility, Sequential
from benchkit.spec.run_record import CurvePoint, Provenance, RunRecord, RunResult, Signature
from benchkit.verdict.records import Frontier, FrontierPoint, Report
from benchkit.verdict.sections import (ArmConvergence, AtEdge, Baseline, BudgetCheck,
                                       BudgetMatch, Budgets, Convergence, Extension,
                                       GridExtensions, SweepRow,
                                       FailedRun, Incomplete, MathVerification,
                                       MechanismSignature, MechanismTest, SignatureEvidence)
from builders import BASE8, GRID, IDEA8, make_run, make_spec, one_config_runs

SAVED = Path(__file__).resolve().parents[2] / "benchmarks" / "pipeline" / "before"


def saved_reports() -> list[tuple[str, dict]]:
    """Every report the pipeline made in benchmarks/pipeline/before (fixtures: controls,
    frontiers, waivers, budget checks, extensions; and each committed report rebuilt)."""
    out = []
    for path in sorted(SAVED.glob("*.json")):
        if path.name.startswith(("fixture__", "rebuilt__")):
            saved = json.loads(path.read_text())  # a fixture's reports, or one report
            out += [(f"{path.stem}[{i}]", r)
                    for i, r in enumerate(saved if isinstance(saved, list) else [saved])]
    return out


SAVED_REPORTS = saved_reports()


def text(value: object) -> str:
    return json.dumps(value, allow_nan=True)  # key order counts


def test_the_saved_reports_cover_every_kind_of_section():
    budgets = [r["budgets"] for _, r in SAVED_REPORTS if r["budgets"] is not None]
    checks = [a["budget_check"] for _, r in SAVED_REPORTS
              for a in r["convergence"]["arms"].values() if a["budget_check"]]
    assert len(SAVED_REPORTS) >= 40
    assert any("points" in b for b in budgets) and any(b["waivers"] for b in budgets)
    assert {c["decision"] for c in checks} >= {"trained out", "undetermined"}
    assert any(r["budgets"] is None for _, r in SAVED_REPORTS)  # an incomplete report
    extended = [r["grid_extensions"] for _, r in SAVED_REPORTS]
    assert any(g["extensions"] for g in extended) and any(g["at_edge"] for g in extended)
    signatures = [s for _, r in SAVED_REPORTS
                  for s in r["mechanism_signature"]["signatures"].values()]
    assert {s["status"] for s in signatures} >= {"confirmed", "not confirmed"}
    assert any(s["null_per_seed"] for s in signatures)
    outcomes = {t["outcome"] for _, r in SAVED_REPORTS for t in r["math_verification"]["tests"]}
    assert outcomes >= {"passed", "failed"}
    incomplete = [r["incomplete"] for _, r in SAVED_REPORTS if r["incomplete"] is not None]
    assert any(i["failed"] for i in incomplete) and any(i["missing"] for i in incomplete)
    assert any(i["pending"] for i in incomplete)
    rows = [row for _, r in SAVED_REPORTS for row in r["idea_sweep"]]
    assert any(not row["eligible"] for row in rows) and any(row["diverged_seeds"] for row in rows)
    assert any(r["baseline"]["full"] is None for _, r in SAVED_REPORTS)
    points = [p for _, r in SAVED_REPORTS if r["frontier"] for p in r["frontier"]["points"]]
    assert any(p["controls"] for p in points) and any(p["budgets"] for p in points)
    futility = [r["sequential"]["futility"] for _, r in SAVED_REPORTS]
    assert None in futility and any(f and f["conditional_power"] is not None for f in futility)
    assert any(r["exploratory"] is None for _, r in SAVED_REPORTS)
    assert any(r["exploratory"] and r["exploratory"]["reasons"] for _, r in SAVED_REPORTS)


@pytest.mark.parametrize("record, name", [(Budgets, "budgets"), (Convergence, "convergence"),
                                          (GridExtensions, "grid_extensions"),
                                          (MechanismSignature, "mechanism_signature"),
                                          (MathVerification, "math_verification"),
                                          (Incomplete, "incomplete"), (Baseline, "baseline"),
                                          (Frontier, "frontier"),
                                          (Sequential, "sequential"),
                                          (Exploratory, "exploratory")])
def test_each_saved_section_round_trips_through_its_record(record, name):
    for case, report in SAVED_REPORTS:
        if report[name] is not None:
            assert text(record.from_json(report[name]).to_json()) == text(report[name]), case


def test_each_saved_sweep_row_round_trips_through_its_record():
    for case, report in SAVED_REPORTS:
        rows = report["idea_sweep"] + [row for c in report["controls"].values()
                                       for row in c["sweep"]]
        assert text([SweepRow.from_json(row).to_json() for row in rows]) == text(rows), case


def test_each_saved_report_round_trips_through_the_report_record():
    for case, report in SAVED_REPORTS:
        assert text(Report.from_json(report).to_json()) == text(report), case


def summaries_of(report: Report) -> list[object]:
    """Every field of ``report`` that holds a summary (None where it has none)."""
    rows = report.idea_sweep + report.baseline.sweep + tuple(
        row for arm in report.controls.values() for row in arm.sweep)
    points = report.frontier.points if report.frontier else ()
    return ([report.idea, report.baseline.full] + [arm.full for arm in report.controls.values()]
            + [s for row in rows for s in (row.result, row.val_result)]
            + [s for point in points for s in (point.baseline, point.idea)])


def test_each_saved_summary_reads_back_as_a_summary_record():
    found = [(case, s) for case, data in SAVED_REPORTS
             for s in summaries_of(Report.from_json(data)) if s is not None]
    assert len(found) > 100
    assert all(isinstance(s, Summary) for _, s in found), [c for c, s in found
                                                            if not isinstance(s, Summary)]


@pytest.mark.parametrize("record, data", [
    (Budgets, {"arms": {}, "checks": [], "matched": True, "unmatched": [], "waivers": {},
               "surprise": 1}),
    (BudgetMatch, {"budget": "params", "arm": "baseline", "idea": 1.0, "other": 1.0,
                   "rel_diff": 0.0, "tolerance": 0.05, "matched": True, "waived": None,
                   "axis": False, "surprise": 1}),
    (Convergence, {"budget": None, "budget_reason": None, "threshold": 0.01,
                   "budget_factor": 1.5, "arms": {}, "surprise": 1}),
    (ArmConvergence, {"cfg": None, "last_quarter_gain": None, "seeds": 0,
                      "still_improving": False, "budget_check": None, "surprise": 1}),
    (Extension, {"axis": "lr", "side": "low", "from": 1e-3, "value": 5e-4, "arms": [],
                 "surprise": 1}),
    (AtEdge, {"arm": "idea", "axis": "lr", "side": "low", "surprise": 1}),
    (GridExtensions, {"limit": 2, "declared_grid": [], "extensions": [], "at_edge": [],
                      "surprise": 1}),
    (MechanismSignature, {"signatures": {}, "confirmed": None, "surprise": 1}),
    (SignatureEvidence, {"prediction": None, "predicted": 0.0, "tol": 0.1, "observed": None,
                         "per_seed": [], "confirmed": False, "status": "not confirmed",
                         "discriminating": None, "null_per_seed": [], "surprise": 1}),
    (MathVerification, {"tests": [], "passed": None, "surprise": 1}),
    (MechanismTest, {"test": "m.py::test_a", "outcome": "passed", "message": None,
                     "surprise": 1}),
    (Incomplete, {"reasons": [], "missing": [], "failed": [], "surprise": 1}),
    (FailedRun, {"run": "idea[t-lr=0.1-seed0]", "message": None, "surprise": 1}),
    (Baseline, {"best_cfg": None, "sweep": [], "full": None, "surprise": 1}),
    (SweepRow, {"cfg": {}, "mean": None, "val_mean": None, "eligible": False,
                "diverged_seeds": [], "result": None, "val_result": None,
                "test_diverged_seeds": [], "surprise": 1}),
    (Frontier, {"axis": "keep", "values": [], "points": [], "surprise": 1}),
    (FrontierPoint, {"value": 1, "complete": False, "baseline_cfg": None, "idea_cfg": None,
                     "baseline": None, "idea": None, "comparison": None, "controls": {},
                     "budgets": None, "surprise": 1}),
    (Sequential, {"looks": [8], "max_seeds": 8, "declared": False, "look": 1,
                  "boundary": "union", "futility": None, "rule": "", "surprise": 1}),
    (Exploratory, {"reasons": [], "surprise": 1}),
    (Futility, {"threshold": 0.1, "conditional_power": None, "stop": False, "last_level": None,
                "rule": "", "surprise": 1}),
])
def test_a_key_the_record_does_not_declare_is_refused(record, data):
    with pytest.raises(ValueError, match=rf"field\(s\) \['surprise'\] are not declared in "
                                         rf"{record.__module__}.{record.__name__}"):
        record.from_json(data)


def test_the_pipelines_report_holds_its_sections_as_records():
    (report,) = pipeline.idea_reports(make_spec(GRID[:1], 8), one_config_runs(BASE8, IDEA8),
                                      [], alpha=0.05)
    assert isinstance(report.budgets, Budgets) and isinstance(report.convergence, Convergence)
    assert isinstance(report.grid_extensions, GridExtensions)
    assert isinstance(report.mechanism_signature, MechanismSignature)
    assert isinstance(report.baseline, Baseline) and report.baseline.best_cfg == GRID[0]
    assert all(isinstance(row, SweepRow) for row in report.idea_sweep + report.baseline.sweep)
    assert isinstance(report.math_verification, MathVerification)
    assert all(isinstance(s, Summary) for s in summaries_of(report))
    assert report.idea is not None and report.idea.per_seed == tuple(IDEA8)
    assert isinstance(report.sequential, Sequential) and report.sequential.looks == (8,)
    assert report.budgets.matched is True
    assert all(isinstance(c, BudgetMatch) for c in report.budgets.checks)
    assert set(report.convergence.arms) == {"baseline", "idea"}
    (incomplete,) = pipeline.idea_reports(make_spec(GRID[:1], 8),
                                          one_config_runs(BASE8, IDEA8)[:-1], [], alpha=0.05)
    assert incomplete.budgets is None and incomplete.convergence.arms == {}
    assert isinstance(incomplete.incomplete, Incomplete)
    assert incomplete.incomplete.missing == ("idea[tabular-lr=0.001-seed7]",)


def test_a_budget_checks_json_is_a_copy():
    check = BudgetCheck(cfg={"lr": 0.1, "epochs": 12}, epochs=12, gain=0.02, seeds=3,
                        pending=False, decision="still improving", lower=0.015, upper=0.03,
                        level=0.05, called_seeds=3, per_seed=(0.02, 0.01, 0.03))
    data = check.to_json()
    data["cfg"]["lr"] = 1.0
    data["per_seed"].append(0.5)
    assert check.cfg["lr"] == 0.1 and check.per_seed == (0.02, 0.01, 0.03)
    assert BudgetCheck.from_json(check.to_json()) == check


def test_a_frontier_checks_each_point_and_matches_only_when_every_point_does():
    from benchkit.verdict import budgets

    spec = make_spec(GRID[:1], 2, frontier={"keep": [1, 2]})
    runs = {arm: [RunResult(val=1.0, test=1.0, diverged=False, seconds=None,
                            budgets={"steps": steps})] * 2
            for arm, steps in (("baseline", 100.0), ("idea", 200.0))}
    point = budgets.budget_section(runs, spec)
    ok = budgets.budget_section({arm: runs["baseline"] for arm in runs}, spec)
    section = budgets.frontier_section(runs, spec, "keep", [(1, ok), (2, point)])
    assert section.unmatched == ("at keep=2: steps idea 200 vs baseline 100",)
    assert section.matched is False
    assert [c.point for c in section.checks] == [{"keep": 1}, {"keep": 2}]
    assert [p.value for p in section.points or ()] == [1, 2]
    assert section.to_json()["points"][1] == {"value": 2, **point.to_json()}
    assert budgets.frontier_section(runs, spec, "keep", [(1, ok), (2, ok)]).matched is True


def test_the_mechanism_tests_that_ran_are_the_evidence():
    tests = MathVerification(tests=(MechanismTest("m.py::test_a", "passed", None),
                                    MechanismTest("m.py::test_b", "skipped", "no gpu"),
                                    MechanismTest("m.py::test_c", "failed", "boom")),
                             passed=False)
    assert tests.outcomes() == [True, False]   # the skipped claim is left out


def test_a_frontiers_incomplete_section_has_no_pending_configs():
    data = {"reasons": ["at keep=1: 1 of 8 runs missing or failed"], "missing": ["idea[x]"],
            "failed": [{"run": "idea[y]", "message": "boom"}]}
    section = Incomplete.from_json(data)
    assert section.pending is None and section.failed == (FailedRun("idea[y]", "boom"),)
    assert section.to_json() == data   # no "pending" key, as a frontier's report has none


def test_the_budget_and_convergence_sections_read_the_selected_runs_results():
    from benchkit.verdict import comparison

    runs = [make_run("idea", GRID[0], s, 1.0 + s, 2.0).record for s in range(2)]
    assert [r.val for r in comparison.results_of(runs)] == [1.0, 2.0]
    no_result = dataclasses.replace(runs[1], result=None)
    with pytest.raises(ValueError, match="a run without a result has no figures to read"):
        comparison.results_of([runs[0], no_result])


def test_a_report_row_is_its_run_record_written_and_read_back():
    from benchkit.verdict import sweeps

    (report,) = pipeline.idea_reports(make_spec(GRID[:1], 8), one_config_runs(BASE8, IDEA8),
                                      [], alpha=0.05)
    run = report.runs[0]
    assert run.result is not None and run.point.track == report.track
    run = dataclasses.replace(run, result=dataclasses.replace(
        run.result, curve=(CurvePoint(3, 2.0), CurvePoint(4, 1.5)),
        signatures={"rank": Signature(has_null=False, null=None, observed=1.0, predicted=1.0,
                                      tol=0.1, prediction=None, confirmed=True)}),
        origin=Provenance(key="k", digest="d", origin="fresh", trained_in="m"))
    written = run.to_json()
    assert list(written) == ["arm", "seed", "cfg", "val", "test", "seconds", "diverged",
                             "outcome", "reused", "logs", "signatures", "budgets", "cpu",
                             "curve", "digest", "key", "origin", "trained_in"]  # the format
    assert written["curve"] == [{"epoch": 3, "val": 2.0}, {"epoch": 4, "val": 1.5}]
    assert written["signatures"] == {"rank": 1.0}
    back = RunRecord.from_json(written)
    assert back.to_json() == written and back.point.track == ""
    assert back.on_track(report.track).point == run.point
    assert back.result is not None and back.result.signatures == {
        "rank": Signature.observation(1.0)}
    assert (back.origin, back.cpu, back.reused) == (run.origin, run.cpu, run.reused)
    assert sweeps.runs_of([back]) == {(run.arm, cfg_id(run.cfg), run.seed): back.result}
    assert RunRecord.from_json({**written, "curve": None}).result.curve is None  # type: ignore
    failed = RunRecord(point=run.point, result=None, outcome="failed")
    assert RunRecord.from_json(failed.to_json()).on_track(report.track) == failed
    with pytest.raises(ValueError, match=r"\['surprise'\] are not declared"):
        RunRecord.from_json({**written, "surprise": 1})


def test_a_reports_rows_give_the_runs_its_written_rows_give():
    from benchkit.verdict import sweeps

    for case, report in SAVED_REPORTS:
        record = Report.from_json(report)
        assert all(isinstance(row, RunRecord) and row.point.track == record.track
                   for row in record.runs), case
        assert [row.to_json() for row in record.runs] == report["runs"], case
        assert {k: (v.val, v.test, v.diverged) for k, v in sweeps.runs_of(record.runs).items()
                } == {(r["arm"], cfg_id(r["cfg"]), r["seed"]): (r["val"], r["test"], r["diverged"])
                      for r in report["runs"] if r["outcome"] == "passed"}, case


def test_an_exploratory_sessions_reasons_are_its_reports_record():
    spec = make_spec(GRID[:1], 8, looks=(4, 16))   # 8 seeds: no declared look
    (report,) = pipeline.idea_reports(spec, one_config_runs(BASE8, IDEA8), [], alpha=0.05)
    assert isinstance(report.exploratory, Exploratory)
    assert report.exploratory.reasons[0].startswith("8 seeds is not a declared look")
    assert report.to_json()["exploratory"] == {"reasons": list(report.exploratory.reasons)}
