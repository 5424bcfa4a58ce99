"""What one bench test leaves in its process never reaches the next (issue 42): the root
logger's level and handlers and ``sys.path`` are restored around every bench test, and a test
that changes torch's inter-op thread count, which torch cannot undo, fails."""
from __future__ import annotations

import logging
import sys

import pytest
import torch

from benchkit.plugin.isolation import Guard
from idea_modules import arm, idea_module


def test_the_root_logger_and_sys_path_are_restored_after_a_bench_test():
    root = logging.getLogger()
    level, handlers, path = root.level, list(root.handlers), list(sys.path)
    guard = Guard()
    with guard.around():
        root.setLevel(logging.CRITICAL)
        root.addHandler(logging.NullHandler())
        logging.disable(logging.ERROR)
        sys.path.insert(0, "/nowhere/a_run_put_this_here")
    assert root.level == level and root.handlers == handlers and sys.path == path
    assert logging.root.manager.disable == logging.NOTSET


@pytest.fixture
def interop(monkeypatch):
    """torch's inter-op thread count, faked: the real one can be set once per process."""
    count = {"now": torch.get_num_interop_threads()}

    def set_count(n):
        count["now"] = n
    monkeypatch.setattr(torch, "get_num_interop_threads", lambda: count["now"])
    monkeypatch.setattr(torch, "set_num_interop_threads", set_count)
    return count


def test_a_changed_interop_thread_count_is_named(interop):
    guard = Guard()
    with guard.around():
        assert guard.irreversible() is None
        torch.set_num_interop_threads(interop["now"] + 3)
        why = guard.irreversible()
    assert why is not None and "changed torch's inter-op thread count" in why
    assert "conftest.py" in why


IDEA = idea_module("interop", arm("baseline", "run.record(val=1.0, test=1.0)"), arm("idea", """
    torch.set_num_interop_threads(torch.get_num_interop_threads() + 1)
    run.record(val=1.0, test=1.0)"""), imports="import pytest\nimport torch")


def test_a_bench_test_that_changes_the_interop_thread_count_fails(pytester, interop):
    pytester.makepyfile(test_interop=IDEA)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 2 and outcomes["failed"] == 2, result.outlines
    result.stdout.fnmatch_lines(["*changed torch's inter-op thread count*which torch cannot "
                                 "undo*"])


HISTORY = idea_module(
    "history", "BEFORE = []   # a module global no run restores: each run sees the ones before it",
    arm("baseline", """
        BEFORE.append(run.seed)
        run.record(val=1.0 + run.seed + 0.01 * len(BEFORE), test=1.0 + run.seed)"""),
    arm("idea", """
        BEFORE.append(run.seed)
        run.record(val=0.5 + run.seed + 0.01 * len(BEFORE), test=0.5 + run.seed)"""), seeds=3)


def test_an_audit_of_a_run_selected_alone_catches_a_result_that_depends_on_earlier_runs(
        pytester):
    """The recipe of docs/neighbours.md: the run alone in its session has nothing before it,
    so a result stored after other runs differs, and the audit fails naming it."""
    pytester.makepyfile(test_history=HISTORY)
    first = pytester.runpytest_inprocess("-p", "no:randomly")
    assert first.parseoutcomes()["passed"] == 6
    alone = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-audit", "1",
                                         "test_history.py::test_idea[tabular-lr=0.01-seed2]")
    assert alone.ret == pytest.ExitCode.TESTS_FAILED
    alone.stdout.fnmatch_lines(["benchkit: FAIL audit: test_history.py::test_idea?tabular-lr="
                                "0.01-seed2? retrained differs in bits from its stored run*"])
    first_run = pytester.runpytest_inprocess(
        "-p", "no:randomly", "--bench-audit", "1",
        "test_history.py::test_baseline[tabular-lr=0.01-seed0]")
    assert first_run.ret == pytest.ExitCode.OK   # it ran first: nothing was before it


@pytest.mark.slow
@pytest.mark.timeout(600)   # a pytest process of its own: torch is imported again
def test_the_fresh_process_audit_fails_on_a_run_that_depends_on_earlier_runs(pytester):
    """--bench-audit-fresh 1 on HISTORY after a plain test that ran first in the session and
    left a mark in its module global: every stored run saw it, none alone does."""
    pytester.makepyfile(test_history=HISTORY, test_aaa_first="""
        import test_history

        def test_runs_first():
            test_history.BEFORE.append(-1)
    """)
    first = pytester.runpytest_inprocess("-p", "no:randomly")
    assert first.parseoutcomes()["passed"] == 7
    audited = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-audit-fresh", "1",
                                           "test_history.py")
    assert audited.ret == pytest.ExitCode.TESTS_FAILED, audited.outlines
    audited.stdout.fnmatch_lines(["benchkit: audit in a fresh process: 1 stored run(s) "
                                  "retrained alone, 0 the same in bits",
                                  "benchkit: FAIL audit: test_history.py::test_* retrained "
                                  "alone in a fresh process differs in bits*"])
