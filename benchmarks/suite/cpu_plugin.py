"""A pytest plugin that writes each test's CPU seconds, this process's and its waited-for
children's (``resource.getrusage``), to ``$CPU_PLUGIN_OUT/<worker>.jsonl``, and one line of the
process's CPU up to the end of collection (interpreter start, imports, collection). Loaded by
``cpu_table.py`` with ``-p cpu_plugin``; wall time cannot rank tests on a shared, loaded machine."""
from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import pytest


def _cpu() -> tuple[float, float]:
    """(this process's user + system CPU, its waited-for children's) in seconds."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


def _write(line: dict) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = Path(os.environ["CPU_PLUGIN_OUT"]) / f"{worker}.jsonl"
    with out.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def pytest_collection_finish(session) -> None:
    own, children = _cpu()
    _write({"phase": "collection", "own": own, "children": children, "items": len(session.items)})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own0, children0 = _cpu()
    wall0 = time.perf_counter()
    yield
    own1, children1 = _cpu()
    markers = sorted({m.name for m in item.iter_markers()} & {"slow", "e2e", "floors", "plots"})
    _write({"phase": "test", "nodeid": item.nodeid, "own": own1 - own0,
            "children": children1 - children0, "wall": time.perf_counter() - wall0,
            "end": time.time(), "markers": markers})


def pytest_runtest_logreport(report) -> None:
    """A failed phase is recorded too: a table of a run with failures says which."""
    if report.failed:
        _write({"phase": "failed", "nodeid": report.nodeid, "when": report.when})


def pytest_unconfigure(config) -> None:
    own, children = _cpu()
    _write({"phase": "end", "own": own, "children": children})
