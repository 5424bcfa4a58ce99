"""What a run can do to its session, tried as an adversary would: a fixture that errors (no
result at all), a store that cannot be written under a shard, a timeout at any value, SIGTERM
while the reports are written. Each ends with reports of what finished and a clear line."""
from __future__ import annotations

import json

import pytest

from benchkit.spec.payloads import RunPayload, payload_from_json
from idea_modules import arm, idea_module
from sessions import no_traceback, run_session, validate_report

RECORDED = idea_module("rec", '''
    @pytest.fixture
    def extra(request):
        if request.node.callspec.params["run"][3] == SEED_THAT_ERRORS:
            raise RuntimeError("the other fixture broke")
    ''', arm("baseline", "run.record(val=1.0 + run.seed, test=1.0 + run.seed)"), arm("idea", '''
        if run.seed == 2:
            signal.signal(signal.SIGALRM, lambda *args: None)   # its own handler: cannot be timed
        run.record(val=0.5 + run.seed, test=0.5 + run.seed)''', params="run, extra"),
    imports="import signal\nimport pytest", seeds=3)


@pytest.fixture(autouse=True)
def no_plots(monkeypatch):
    """Plots are not what these sessions test, and drawing them costs most of a session."""
    from benchkit.report import plots

    monkeypatch.setattr(plots, "write_plots", lambda folder, report: None)


def report_of(pytester, validate=False) -> dict:
    path = pytester.path / "reports" / "rec" / "tabular" / "bench_report.json"
    return validate_report(path) if validate else json.loads(path.read_text())


def test_a_result_without_its_fields_is_a_failed_run_not_a_crash():
    point = {"kind": "run", "arm": "idea", "track": "t", "cfg": {}, "seed": 0, "nodeid": "x",
             "spec": {"name": "rec", "module": "m.py", "tracks": ["t"], "grids": {"t": [{}]},
                      "seeds": [0], "epochs": {"t": 1}}}
    partial = payload_from_json({**point, "outcome": "passed", "val": 1.0})
    assert isinstance(partial, RunPayload) and partial.outcome == "failed"
    assert partial.result is None and "lacks test, diverged" in (partial.message or "")
    assert payload_from_json({"kind": "run", "outcome": "error", "nodeid": "x",
                              "spec": point["spec"]}) is None
    assert payload_from_json({**point, "kind": "other", "outcome": "passed"}) is None
    whole = {**point, "outcome": "passed", "val": 1.0, "test": 1.0, "diverged": False}
    taken = payload_from_json(whole)
    assert isinstance(taken, RunPayload) and taken.outcome == "passed"
    assert taken.result is not None and (taken.result.val, taken.result.test) == (1.0, 1.0)


def test_an_arm_whose_other_fixture_errors_fails_that_run_and_the_report_is_written(pytester):
    """Also: a run that replaces the SIGALRM handler --bench-timeout needs fails, naming it."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rec=RECORDED.replace("SEED_THAT_ERRORS", "1"))
    result = run_session(pytester, "-p", "no:randomly", "-p", "no:cacheprovider",
                         "--bench-timeout", "60")
    no_traceback(result)
    result.assert_outcomes(passed=4, errors=1, failed=1)
    report = report_of(pytester, validate=True)
    assert report["complete"] is False and report["practical_verdict"] == "incomplete"
    failed = {f["run"]: f["message"] for f in report["incomplete"]["failed"]}
    assert sorted(failed) == ["idea[tabular-lr=0.01-seed1]", "idea[tabular-lr=0.01-seed2]"]
    assert "the other fixture broke" in failed["idea[tabular-lr=0.01-seed1]"]
    assert "replaced the SIGALRM handler that --bench-timeout 60 uses to stop it" in \
        failed["idea[tabular-lr=0.01-seed2]"]


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


TIMED = RECORDED.replace("SEED_THAT_ERRORS", "-1")


def test_any_positive_timeout_fails_runs_cleanly(pytester):
    """1e-9 s: every run is stopped at once, in its call (no INTERNALERROR, no crash)."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rec=TIMED)
    result = run_session(pytester, "-p", "no:randomly", "-p", "no:cacheprovider",
                         "--bench-timeout", "1e-9")
    no_traceback(result)
    result.assert_outcomes(failed=6)
    report = report_of(pytester)
    messages = [f["message"] for f in report["incomplete"]["failed"]]
    assert len(messages) == 6 and all("ran past --bench-timeout 1e-09 s" in m for m in messages)


def test_a_timeout_too_large_for_the_timer_is_refused_at_startup(pytester):
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_inprocess("--bench-timeout", "1e12")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-timeout*out of range; valid: a number of seconds in "
                                 "(0, 31536000], or off (0)*"])


def test_benchkits_imports_for_a_run_happen_before_its_timer(monkeypatch):
    import importlib
    import signal

    from benchkit.plugin import timeouts

    events = []

    class Watchdog:
        def __init__(self, *args):
            self.daemon = False

        def start(self):
            events.append("watchdog")

    monkeypatch.setattr(importlib, "import_module", lambda name: events.append(name))
    monkeypatch.setattr(signal, "setitimer", lambda *args: events.append("timer"))
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    monkeypatch.setattr(timeouts.threading, "Timer", Watchdog)

    class Item:
        nodeid, stash = "m.py::test_idea", {timeouts.ITEM_LIMIT: 2.0}

    class Settings:
        timeout = 2.0

    assert timeouts.RunTimer().pytest_timeout_set_timer(Item(), Settings()) is True
    assert events == [*timeouts.RUN_IMPORTS, "timer", "watchdog"]


def test_sigterm_while_the_reports_are_written_waits_for_them(pytester, monkeypatch):
    import os
    import signal

    from benchkit.report import session

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("this process handles SIGTERM itself: benchkit leaves it alone")
    original = session.aggregate_session

    def terminated_meanwhile(*args, **kwargs):
        # benchkit's handler must be in place, or this would end the test process
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
        os.kill(os.getpid(), signal.SIGTERM)
        return original(*args, **kwargs)

    monkeypatch.setattr(session, "aggregate_session", terminated_meanwhile)
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rec=TIMED)
    result = run_session(pytester, "-p", "no:randomly", "-p", "no:cacheprovider")
    no_traceback(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["benchkit: SIGTERM came while the reports were written: they "
                                 "were finished first*"])
    report = report_of(pytester)
    assert report["complete"] is True
    # its floors, not computed yet, are left out rather than waited for (minutes on mnist1d)
    assert report["floors"] == {} and any(
        w.startswith("floors not computed: a SIGTERM came while the reports were written")
        for w in report["warnings"])
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_merge_names_why_a_run_is_missing(pytester):
    """A run whose stored record was trained from code that has changed since (the baseline's
    helper) is not the same complaint as one no shard trained: the merge line says which."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(helper="def value(seed):\n    return 1.0 + seed\n")
    pytester.makepyfile(test_rec=TIMED.replace(
        "run.record(val=1.0 + run.seed, test=1.0 + run.seed)",
        "import helper\n    run.record(val=helper.value(run.seed), test=helper.value(run.seed))"))
    args = ("-p", "no:randomly", "-p", "no:cacheprovider", "--bench-store=runs")
    assert run_session(pytester, *args, "--bench-shard=1/1").ret == 0
    pytester.makepyfile(helper="def value(seed):\n    return 2.0 + seed\n")
    next(p for p in (pytester.path / "runs").rglob("*.json")   # one baseline run: untrained
         if '"arm":"baseline"' in p.read_text()).unlink()
    result = run_session(pytester, *args, "--bench-shard=merge")
    no_traceback(result)
    result.stdout.fnmatch_lines(["benchkit: merge: 3 run(s) not in the store (1 not trained for "
                                 "this code, 2 trained from other code)*"])
    failed = report_of(pytester)["incomplete"]["missing"]
    assert len(failed) == 3 and all(m.startswith("baseline[") for m in failed)
