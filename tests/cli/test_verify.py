"""``python -m benchkit verify`` recomputes a report's statistics and verdicts from its rows, and
fails on a row it cannot check: a report cannot say more than its runs."""
from __future__ import annotations

import copy

import pytest

from benchkit.spec.run_record import RunPoint, RunResult
from benchkit.cli import recheck
from benchkit.cli.verify import verify
from benchkit.store.backends import DirectoryStorage
from builders import as_report, make_report


@pytest.fixture(scope="module")
def honest():
    return make_report(effect=-0.3, seeds=6)


def edited(report, edit):
    out = copy.deepcopy(report)
    edit(out)
    return out


def test_an_honest_report_recomputes_to_itself(honest):
    assert honest["practical_verdict"] == "helps"
    assert recheck.verdicts(as_report(honest), [as_report(honest)]) == []
    incomplete = make_report(missing=1, seeds=6)
    assert recheck.verdicts(as_report(incomplete), [as_report(incomplete)]) == []


def _row(report, arm, seed, cfg):
    return next(r for r in report["runs"]
                if (r["arm"], r["seed"], r["cfg"]) == (arm, seed, cfg))


@pytest.mark.parametrize("edit,fragment", [
    (lambda r: _row(r, "idea", 3, r["idea_config"]).update(test=9.0),
     "comparison per_seed_diffs is"),
    (lambda r: r["comparison"].update(p_value=0.001), "comparison p_value is 0.001 in the report"),
    (lambda r: r["comparison"].update(p_adjusted=0.001), "comparison p_adjusted is 0.001"),
    (lambda r: r.update(practical_verdict="equivalent"), "practical_verdict is 'equivalent'"),
    (lambda r: r["runs"].remove(_row(r, "baseline", 0, r["baseline"]["best_cfg"])),
     "baseline: its rows lack runs of the grid"),
    (lambda r: _row(r, "baseline", 0, r["baseline"]["best_cfg"]).update(val=99.0),
     "baseline: the rows select"),
    (lambda r: r["comparison"].update(family_size=2), "its family has 2 track(s)"),
], ids=["row", "p", "p-adjusted", "verdict", "dropped-row", "selection", "family"])
def test_a_figure_the_rows_do_not_give_fails(honest, edit, fragment):
    report = edited(honest, edit)
    problems = recheck.verdicts(as_report(report), [as_report(report)])
    assert problems and any(fragment in p for p in problems), problems


def test_a_row_without_key_or_digest_cannot_be_checked_and_fails(honest, tmp_path):
    ok, problems = verify(as_report(honest), DirectoryStorage(tmp_path))
    passed = [r for r in honest["runs"] if r["outcome"] == "passed"]
    assert ok == 0 and len(problems) == len(passed)
    assert problems[0].endswith("names no key or digest, so it cannot be checked")


def test_a_row_that_borrows_another_runs_record_fails(tmp_path):
    from benchkit.store import records
    from benchkit.store.runs import record_name

    result = {"val": 0.5, "test": 0.25, "diverged": False, "seconds": 1.0, "signatures": {},
              "logs": {}, "budgets": {}}
    run = {"arm": "idea", "track": "tabular", "cfg": {"lr": 0.01}, "seed": 0}
    record = records.build("k" * 64, RunPoint.from_json(run), RunResult.from_json(result), {},
                           records.StoredOrigin(module="m", nodeid="m"), "cpu")
    storage = DirectoryStorage(tmp_path)
    storage.write(record_name(record), records.dumps(record))
    row = {"arm": "idea", "seed": 0, "cfg": {"lr": 0.01}, "val": 0.5, "test": 0.25,
           "seconds": 1.0, "diverged": False, "outcome": "passed", "reused": False, "logs": {},
           "signatures": {}, "budgets": {}, "cpu": None, "curve": None,
           "digest": record.run_digest, "key": record.key, "origin": None, "trained_in": None}
    report = {"track": "tabular", "runs": [row, {**row, "arm": "baseline"}]}
    ok, problems = verify(as_report(report), storage)
    assert ok == 1 and len(problems) == 1
    assert problems == ["baseline[tabular-lr=0.01-seed0]: its record is the run "
                        "idea[tabular-lr=0.01-seed0], not this row's"]


def test_controls_and_the_sign_test_are_recomputed_too(monkeypatch):
    """On the report of tests/verdict's three-arm bench (a control, a margin, the sign test)."""
    import json
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "verdict"))
    from test_report_controls_and_extension import ALPHA, rich_runs, rich_spec
    from benchkit.report import bench_report
    from benchkit.verdict import pipeline

    (built,) = pipeline.idea_reports(rich_spec(6), rich_runs(6), [], alpha=ALPHA)
    report = json.loads(bench_report.dumps(bench_report.stamp(built).to_json()))
    assert report["controls"] and report["comparison"]["test"] == "sign"
    assert recheck.verdicts(as_report(report), [as_report(report)]) == []
    for edit, fragment in [
            (lambda r: r["controls"]["c"]["comparison"].update(p_value=0.001),
             "control:c comparison p_value is 0.001"),
            (lambda r: r["controls"]["c"].update(verdict="harms"),
             "control c verdict is 'harms' in the report")]:
        forged = edited(report, edit)
        problems = recheck.verdicts(as_report(forged), [as_report(forged)])
        assert any(fragment in p for p in problems), problems


def test_a_frontier_report_is_recomputed_point_by_point():
    """Each point's selection and each seed's mean over the points, then the pooled test: an
    honest frontier recomputes to itself, a changed row or a point's config does not."""
    import json

    import numpy as np

    from benchkit.report import bench_report
    from benchkit.verdict import pipeline
    from builders import ALPHA, make_run, make_spec

    rng, n = np.random.default_rng(3), 6
    grid = [{"lr": lr, "width": w} for w in (8, 16) for lr in (0.001, 0.01)]
    runs = [make_run(arm, cfg, s, float(rng.normal(1, 0.1)),
                     float(rng.normal(1 - 0.2 * (arm == "idea"), 0.05)))
            for arm in ("baseline", "idea") for cfg in grid for s in range(n)]
    spec = make_spec(grid, n, frontier={"width": [8, 16]})
    (built,) = pipeline.idea_reports(spec, runs, [], alpha=ALPHA)
    report = json.loads(bench_report.dumps(bench_report.stamp(built).to_json()))
    assert report["frontier"] and recheck.verdicts(as_report(report), [as_report(report)]) == []
    point = report["frontier"]["points"][1]
    other = next(c for c in grid if c["width"] == 16 and c != point["idea_cfg"])
    for edit, fragment in [
            (lambda r: _row(r, "idea", 2, point["idea_cfg"]).update(test=9.0),
             "comparison per_seed_diffs is"),
            (lambda r: r["frontier"]["points"][1].update(idea_cfg=other),
             "idea: the rows select")]:
        forged = edited(report, edit)
        problems = recheck.verdicts(as_report(forged), [as_report(forged)])
        assert any(fragment in p for p in problems), problems


def test_recheck_rebuilds_through_the_pipeline_and_names_the_checks_it_cannot_redo():
    """A report written before the budget check drew its seeds per bench (its rows hold the
    checks of other seeds): the pipeline's build of its rows would wait for the check, so
    recheck builds it without checks, finds the same comparisons, and says which checks it
    did not redo."""
    from pathlib import Path

    from benchkit.report.bench_report import read_report

    path = Path(__file__).resolve().parents[2] / "benchmarks/results/panel/last_state/dynamics"
    report = read_report(path / "bench_report.json")
    built, notes = recheck.rebuilt(report)
    assert notes and all("budget check" in n and "cannot be redone" in n for n in notes)
    assert notes == recheck.unredone(report)
    assert [c.p_value for c in built.comparisons()] == [c.p_value for c in report.comparisons()]
    # its p's follow from its rows; its differences are the first tied test's, written before
    # ties went to the test nearest the null (tests/report/test_committed_reports.py says so)
    found = recheck.comparisons(report)[1]
    assert found and all(" per_seed_diffs is " in line or " delta_mean is " in line
                         for line in found)
