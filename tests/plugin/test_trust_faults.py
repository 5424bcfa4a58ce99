"""What a run can do to its session, tried as an adversary would: a fixture that errors (no
result at all), a store that cannot be written under a shard, a timeout at any value, SIGTERM
while the reports are written. Each ends with reports of what finished and a clear line."""
from __future__ import annotations

import pytest

from benchkit.plugin.controller import usable
from sessions import no_traceback, run_session, validate_report

RECORDED = '''
import pytest
pytestmark = pytest.mark.bench(name="rec", track="tabular", grid={"lr": [1e-2]}, seeds=3)

@pytest.fixture
def extra(request):
    if request.node.callspec.params["run"][3] == SEED_THAT_ERRORS:
        raise RuntimeError("the other fixture broke")

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.record(val=1.0 + run.seed, test=1.0 + run.seed)

@pytest.mark.arm("idea")
def test_idea(run, extra):
    run.record(val=0.5 + run.seed, test=0.5 + run.seed)
'''


def report_of(pytester) -> dict:
    return validate_report(pytester.path / "reports" / "rec" / "tabular" / "bench_report.json")


def test_a_result_without_its_fields_is_a_failed_run_not_a_crash():
    point = {"kind": "run", "arm": "idea", "track": "t", "cfg": {}, "seed": 0}
    assert usable({**point, "outcome": "passed", "val": 1.0})["outcome"] == "failed"
    assert "lacks test, diverged" in usable({**point, "outcome": "passed", "val": 1.0})["message"]
    assert usable({"kind": "run", "outcome": "error", "nodeid": "x"}) is None
    whole = {**point, "outcome": "passed", "val": 1.0, "test": 1.0, "diverged": False}
    assert usable(whole) is whole


def test_an_arm_whose_other_fixture_errors_fails_that_run_and_the_report_is_written(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rec=RECORDED.replace("SEED_THAT_ERRORS", "1"))
    result = run_session(pytester, "-p", "no:randomly", "-p", "no:cacheprovider")
    no_traceback(result)
    result.assert_outcomes(passed=5, errors=1)
    report = report_of(pytester)
    assert report["complete"] is False and report["practical_verdict"] == "incomplete"
    assert [f["run"] for f in report["incomplete"]["failed"]] == ["idea[tabular-lr=0.01-seed1]"]
    assert "the other fixture broke" in report["incomplete"]["failed"][0]["message"]


def test_a_shard_that_cannot_write_the_store_says_so_last_and_fails(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rec=RECORDED.replace("SEED_THAT_ERRORS", "-1"))
    (pytester.path / "runs").mkdir()
    (pytester.path / "runs" / "v2").write_text("in the way")
    result = run_session(pytester, "-p", "no:randomly", "--bench-store=runs",
                         "--bench-shard=1/1")
    no_traceback(result)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: shard 1/1 trained 6 run(s), 0 reused*",
                                 "benchkit: store: cannot write to the run store at *",
                                 "benchkit: ERROR 6 run(s) trained here could not be written "
                                 "to the run store at *",
                                 "*6 passed*, 6 benchkit run(s) not stored in *"])
