"""Messages that point the right way (issue 44 item 3): the ways out of an exploratory session
that apply to it, "seeds needed" saying when seeds are declared, an arm that returns its numbers
told so, each collection warning printed once, and the failed runs and incomplete reports
counted on the last lines."""
from __future__ import annotations

from builders import as_report

import pytest

from benchkit.report import advice
from idea_modules import RECORDED_ARMS, arm, idea_module
from sessions import run_session

PLAN_CHANGED = ("exploratory: the plan changed after a look: stored runs were judged under "
                "another plan (seeds 8 -> 12); declare it before the first look, or "
                "--bench-fresh retrains under the new one")


def exploratory(*reasons: str) -> dict:
    return {"exploratory": {"reasons": list(reasons)}}


def test_a_plan_changed_after_a_look_is_not_told_to_drop_options_it_never_gave():
    said = advice.explain(PLAN_CHANGED, as_report(exploratory(
        PLAN_CHANGED.removeprefix("exploratory: "))))
    assert "--bench-fresh" in said.split("For a verdict that counts:")[1]
    assert "--bench-seeds" not in said and "--bench-epochs" not in said


def test_a_smoke_session_is_told_to_drop_the_options_it_gave():
    reasons = ["--bench-seeds 2 overrides the module's plan",
               "2 seeds is not a declared look (looks=(8,)): declare it in pytest.mark.bench "
               "(looks=...) before the first look"]
    said = advice.explain("exploratory: " + "; ".join(reasons), as_report(exploratory(*reasons)))
    assert said.endswith("For a verdict that counts: run without --bench-seeds.")


def test_a_seed_count_that_is_no_look_is_told_to_bench_at_one():
    reason = "6 seeds is not a declared look (looks=(8,)): declare it ..."
    said = advice.explain("exploratory: " + reason, as_report(exploratory(reason)))
    assert "bench at a declared look" in said and "--bench-" not in said.split("counts:")[1]


def idea(body: str) -> str:
    return idea_module("msgs", arm("baseline"), arm("idea", body))


@pytest.mark.e2e
def test_a_returned_value_is_named_and_failed_runs_and_incomplete_reports_are_counted(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_msgs=idea('return {"val": 1.0, "test": 1.0}'))
    result = run_session(pytester, "--bench-epochs", "1", "-p", "no:cacheprovider",
                         "-p", "no:randomly")
    out = result.stdout.str()
    assert "returned a dict and recorded no result: benchkit does not read an arm's return " \
           "value" in out
    assert "PytestReturnNotNoneWarning" not in out
    result.stdout.fnmatch_lines(["benchkit: 4 run(s) trained (2 of them failed), *",
                                 "*2 failed, 2 passed*1 benchkit report(s) incomplete*"])
    assert result.ret == 1  # the failed arm tests; an incomplete report alone keeps exit 0


@pytest.mark.e2e
@pytest.mark.slow
def test_the_unreachable_seeds_warning_is_printed_once_with_workers(pytester):
    pytester.makeini("[pytest]\n")
    # recorded values, not training: what is tested is what the session says; its workers
    # then never import torch (seconds each)
    pytester.makepyfile(test_msgs=idea_module("msgs", RECORDED_ARMS))
    result = run_session(pytester, "--bench-epochs", "1", "-p", "no:cacheprovider",
                         "-n", "2")
    assert result.stdout.str().count("only 2 seeds cannot reach p < 0.05") == 1
    collected = run_session(pytester, "--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected.stdout.str().count("only 2 seeds cannot reach p < 0.05") == 1


def test_missing_lists_only_runs_that_did_not_run_failed_runs_apart():
    from benchkit.report import terminal
    from benchkit.report.summary import render_summary_md
    from builders import make_report

    report = make_report(missing=1, failed=2)
    inc = report["incomplete"]
    failed = [f["run"] for f in inc["failed"]]
    absent = [m for m in inc["missing"] if m not in failed]
    assert len(failed) == 2 and len(absent) == 1
    (line,) = [ln for ln in terminal.render_summary([("r.json", as_report(report))], ".")
               if ln.startswith("benchkit: INCOMPLETE")]
    assert f"not run: {absent[0]}" in line and "2 failed (listed in summary.md)" in line
    assert not any(f in line for f in failed)
    md = render_summary_md(as_report(report))
    assert "Runs not run (none stored) (1):" in md and "Failed runs (2):" in md
