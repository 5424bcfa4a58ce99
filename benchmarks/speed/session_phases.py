"""Where a bench session's CPU time goes besides training (issue 51), for bench_cost.py's
``--phases``: a conftest.py written beside the bench module times each phase of the session
with ``time.process_time`` (the controller's own CPU; the floors child apart), and
:func:`breakdown` turns its lines and the process's total CPU into

- ``startup``: python, pytest, the plugins and collection, to the end of collection;
- ``train``: inside ``benchkit.training.loop.train``, every run;
- ``calls_not_training``: the rest of the arm tests' calls (torch's import in the first, the
  fixture's seeding, the run's store key);
- ``between_runs``: setup, teardown and report hooks (storing each run, its dependencies);
- ``finish``: the controller's session finish (floors, the verdicts, the reports, the plots);
- ``exit``: after pytest's unconfigure (atexit, interpreter teardown);
- ``floors_child``: the CPU of the children (the floors child).
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

LOG = "phases.jsonl"

CONFTEST = '''
import json, resource, sys, time
import pytest

CPU = time.process_time
T = {"conftest": CPU(), "calls": 0.0, "train": 0.0}


def _timed_train():
    loop = sys.modules.get("benchkit.training.loop")
    if loop is None or getattr(loop.train, "timed", False):
        return
    train = loop.train

    def timed(*args, **kwargs):
        start = CPU()
        try:
            return train(*args, **kwargs)
        finally:
            T["train"] += CPU() - start
    timed.timed = True
    loop.train = timed


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_pyfunc_call(pyfuncitem):
    _timed_train()   # benchkit's own wrapper, outside this one, has imported the loop
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    start = CPU()
    yield
    T["calls"] += CPU() - start


def pytest_collection_finish(session):
    T["collected"] = CPU()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    T["finish_start"] = CPU()
    yield
    T["finish_end"] = CPU()


def pytest_unconfigure(config):
    T["unconfigure"] = CPU()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    T["children"] = children.ru_utime + children.ru_stime
    with open("''' + LOG + '''", "a") as f:
        f.write(json.dumps(T) + "\\n")
'''


def install(folder: Path) -> None:
    """Write the instrument into ``folder`` (beside the bench module), its log emptied."""
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / LOG).unlink(missing_ok=True)


def last(folder: Path) -> dict[str, float]:
    """The last session's phase times in ``folder``."""
    return json.loads((folder / LOG).read_text().splitlines()[-1])


def breakdown(t: dict[str, float], total_cpu: float) -> dict[str, float]:
    """The phases (module docstring) of one session's times ``t``, given the CPU seconds of the
    whole process and its children (``total_cpu``)."""
    return {"startup": t["collected"], "train": t["train"],
            "calls_not_training": t["calls"] - t["train"],
            "between_runs": t["finish_start"] - t["collected"] - t["calls"],
            "finish": t["finish_end"] - t["finish_start"],
            "exit": total_cpu - t["unconfigure"] - t["children"],
            "floors_child": t["children"]}


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}
