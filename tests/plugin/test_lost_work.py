"""A user's result is never lost (issue 42): a complete report of the declared plan is replaced
only by another one; an exploratory or incomplete session writes beside it and says where;
runs a project's conftest skipped are filled from the store."""
from __future__ import annotations

import json

import pytest

from benchkit.spec.run_record import RunPoint, RunResult
from benchkit.report.session import aggregate_session
from builders import as_report, typed
from builders import session_payloads as payloads
from builders import session_settings as settings
from builders import session_spec as spec
from idea_modules import RECORDED_ARMS, arm, idea_module
from sessions import report_path


def _only(written):
    """The one (path, report JSON) written."""
    ((path, report),) = written
    return path, report.to_json()


def test_an_exploratory_or_incomplete_report_never_replaces_a_complete_one(tmp_path):
    sp = spec(tracks=("tabular",))
    path, complete = _only(aggregate_session(typed(payloads(sp)),
                                             settings(tmp_path, gate="off"))[0])
    assert complete["complete"] and not complete["exploratory"]
    kept = path.read_bytes()

    exploratory = {**sp, "overrides": {"seeds": 6}}
    aside, report = _only(aggregate_session(typed(payloads(exploratory)),
                                            settings(tmp_path, gate="off"))[0])
    assert report["exploratory"] and aside == path.parent / "exploratory" / path.name
    assert path.read_bytes() == kept and aside.is_file()
    assert any(f"beside the complete report of the declared plan at {path}" in w
               for w in report["warnings"])

    aside, report = _only(aggregate_session(typed(payloads(sp, skip={("idea", "tabular", 2)})),
                                            settings(tmp_path, gate="off"))[0])
    assert not report["complete"] and aside == path.parent / "incomplete" / path.name
    assert path.read_bytes() == kept

    again, report = _only(aggregate_session(typed(payloads(sp)), settings(tmp_path, gate="off"))[0])
    assert again == path and report["complete"]


def test_without_a_complete_report_an_exploratory_one_goes_where_it_always_did(tmp_path):
    sp = {**spec(tracks=("tabular",)), "overrides": {"seeds": 6}}
    path, report = _only(aggregate_session(typed(payloads(sp)), settings(tmp_path, gate="off"))[0])
    assert report["exploratory"] and path.parent.name == "tabular"


SKIPPING_CONFTEST = """\
import pytest

def pytest_addoption(parser):
    parser.addoption("--runbench", action="store_true")

def pytest_collection_modifyitems(config, items):
    if not config.getoption("--runbench"):
        for item in items:
            if item.get_closest_marker("bench"):
                item.add_marker(pytest.mark.skip(reason="needs --runbench"))
"""
BENCH = idea_module("kept", RECORDED_ARMS, seeds=3)


def test_runs_a_conftest_skipped_are_taken_from_the_store(pytester):
    pytester.makeconftest(SKIPPING_CONFTEST)
    pytester.makepyfile(test_kept=BENCH)
    first = pytester.runpytest_inprocess("-p", "no:randomly", "--runbench")
    assert first.parseoutcomes()["passed"] == 6
    before = json.loads(report_path(pytester.path, "kept").read_text())
    assert before["complete"]
    skipped = pytester.runpytest_inprocess("-p", "no:randomly")
    assert skipped.parseoutcomes()["skipped"] == 6
    after = json.loads(report_path(pytester.path, "kept").read_text())
    assert after["complete"], after["incomplete"]
    assert after["comparison"]["per_seed_diffs"] == before["comparison"]["per_seed_diffs"]
    skipped.stdout.fnmatch_lines(["*kept: 6 run(s) not run in this session taken from the store*"])
    assert not (pytester.path / "reports" / "kept" / "tabular" / "incomplete").exists()


def test_a_run_skipped_and_not_stored_is_missing_with_its_reason_not_failed(pytester):
    """Issue 50: it was counted as failed, its message the repr of pytest's skip tuple."""
    pytester.makeconftest(SKIPPING_CONFTEST.replace(
        'item.get_closest_marker("bench")', '"idea" in item.name and "seed1" in item.name'))
    pytester.makepyfile(test_kept=BENCH)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    assert result.parseoutcomes()["skipped"] == 1
    report = json.loads(report_path(pytester.path, "kept").read_text())
    incomplete = report["incomplete"]
    assert incomplete["failed"] == [] and incomplete["missing"] == ["idea[tabular-lr=0.01-seed1]"]
    assert incomplete["reasons"][-1] == ("1 run(s) skipped, so missing: "
                                         "idea[tabular-lr=0.01-seed1] (needs --runbench)")
    assert "('" not in result.stdout.str() and "failed (listed" not in result.stdout.str()


@pytest.mark.parametrize("value", [
    lambda arm, seed: 1e300 * (1 + seed) * (1.5 if arm == "idea" else 1.0),
    lambda arm, seed: 1.7e308 if arm == "idea" else -1.7e308,
], ids=["1e300", "float-max"])
def test_finite_metrics_whose_statistics_overflow_make_an_incomplete_report(tmp_path, value):
    sp = spec(tracks=("tabular",))
    runs = payloads(sp)
    for p in runs:
        p["val"] = p["test"] = value(p["arm"], p["seed"])
    written, failures = aggregate_session(typed(runs), settings(tmp_path, gate="helps"))
    path, report = _only(written)
    assert not report["complete"] and report["comparison"] is None
    assert "statistics of these finite metrics are not finite" in \
        report["incomplete"]["reasons"][0]
    assert json.loads(path.read_text())["practical_verdict"] == "incomplete"
    assert failures and "incomplete" in failures[0]


def edge(seeds: int) -> str:
    """Both arms best at the grid's top lr (extended twice), on ``seeds`` seeds."""
    return idea_module("edge", """
        def _record(run, gain):
            value = 10.0 - math.log10(run.cfg["lr"]) * -1.0 + 0.01 * run.seed - gain  # top lr
            run.record(val=-math.log10(run.cfg["lr"]) + 0.01 * run.seed - gain,
                       test=value)
        """, arm("baseline", "_record(run, 0.0)"),
        arm("idea", "_record(run, 0.001 * (1 + run.seed % 3))"),
        imports="import math\nimport pytest", grid={"lr": [1e-3, 1e-2, 1e-1]}, seeds=seeds)


@pytest.mark.slow
def test_fresh_after_a_plan_change_retrains_every_run_the_plan_needs(pytester):
    """seeds=4 with a grid extended twice, then seeds=8 with --bench-fresh, then the command
    its NEXT line names, run until the report needs nothing more: no stored run of the old
    plan is reused, so the report is not exploratory."""
    pytester.makepyfile(test_edge=edge(4))
    for _ in range(3):
        pytester.runpytest_inprocess("-p", "no:randomly")
    old = json.loads(report_path(pytester.path, "edge").read_text())
    assert old["complete"] and [c["lr"] for c in old["protocol"]["grid"]][-1] == 10.0
    pytester.makepyfile(test_edge=edge(8))
    fresh = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-fresh")
    fresh.stdout.fnmatch_lines([
        "benchkit: NEXT: edge tabular: `pytest -p no:randomly` trains the grid extension "
        "(lr=1.0): 16 run(s) under this plan*"])
    for _ in range(2):   # the extension's steps (extend=2): the report asks for each
        result = pytester.runpytest_inprocess("-p", "no:randomly")
        assert "exploratory" not in result.stdout.str(), result.stdout.str()
        report = json.loads(report_path(pytester.path, "edge").read_text())
        if report["n_seeds"] == 8:
            break
    assert report["n_seeds"] == 8 and report["complete"] and not report["exploratory"]


def test_a_stored_run_of_the_declared_plan_comes_first_and_an_extension_needs_it(tmp_path):
    """After --bench-fresh a key holds the old plan's record and the retrained one: the
    retrained one is used; an extension config's run of another plan is not used at all."""
    from benchkit.store import hardware, records
    from benchkit.store.runs import RunStore

    store = RunStore(tmp_path / "store", tmp_path, 1)
    key, run = "cd" * 32, {"arm": "idea", "track": "tabular", "cfg": {}, "seed": 0}
    old, new = {"looks": [4], "boundary": "union"}, {"looks": [8], "boundary": "union"}

    def put(val, plan):
        result = {"val": val, "test": 2.0, "diverged": False, "seconds": 0.1,
                  "signatures": {}, "logs": {}, "budgets": {}}
        store.put(records.build(key, RunPoint.from_json(run), RunResult.from_json(result), {},
                                records.StoredOrigin(module="m", nodeid="n", plan=plan),
                                hardware.cpu()))
    put(1.0, old)
    assert store.lookup(key, tmp_path / "m", new).result.val == 1.0
    assert store.lookup(key, tmp_path / "m", new, extension=True) is None
    for val in (2.0, 3.0, 4.0):  # whatever their file names' order
        put(val, new)
        assert store.lookup(key, tmp_path / "m", new).origin.plan == new
        assert store.lookup(key, tmp_path / "m", new, extension=True).origin.plan == new
    assert store.lookup(key, tmp_path / "m", old).result.val == 1.0


def test_verify_finds_an_aside_reports_family_aside_too(tmp_path, monkeypatch):
    """A two-track idea's exploratory reports sit beside each track's complete one: verify's
    Holm family of one of them is the other exploratory one, not the complete reports."""
    from pathlib import Path

    from benchkit.cli.verify import family

    # these reports' made-up protocols are not the schema's: read them as they are
    monkeypatch.setattr("benchkit.cli.verify.read_report",
                        lambda path: as_report(json.loads(Path(path).read_text())))
    sp = spec(tracks=("tabular", "dynamics"))
    complete, _ = aggregate_session(typed(payloads(sp)), settings(tmp_path, gate="off"))
    aside, _ = aggregate_session(typed(payloads({**sp, "overrides": {"seeds": 6}})),
                                 settings(tmp_path, gate="off"))
    paths = {r.track: path for path, r in aside}
    assert all(p.parent.name == "exploratory" for p in paths.values())
    report = json.loads(paths["tabular"].read_text())
    members = family(paths["tabular"], as_report(report))
    assert [m.track for m in members] == ["tabular", "dynamics"]
    assert all(m.exploratory for m in members)
    main_report = json.loads(dict((r.track, p) for p, r in complete)["tabular"].read_text())
    assert [m.exploratory for m in family(complete[0][0], as_report(main_report))] == [None, None]


def test_bench_audit_says_what_it_retrained(pytester):
    """Issue 50: --bench-audit K printed nothing of its result when every run matched."""
    pytester.makepyfile(test_kept=BENCH)
    alone = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-audit", "2")
    alone.stdout.fnmatch_lines(["benchkit: audit (--bench-audit 2): no stored run was reused "
                                "in this session, so none was retrained"])
    audited = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-audit", "2")
    assert audited.ret == pytest.ExitCode.OK
    audited.stdout.fnmatch_lines(["benchkit: audit (--bench-audit 2): 2 stored run(s) "
                                  "retrained, 2 identical in bits to their records"])
