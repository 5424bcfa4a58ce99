"""Fixtures and hooks of benchkit's tests only. The helpers are modules of their own, imported by
name: tests/builders.py builds specs, runs and reports in process; tests/sessions.py writes idea
modules, runs pytester sessions and reads their reports.

Before the first in-process ``pytester`` run of a process (:func:`pytest_runtest_setup`, so only
processes that run one pay for it: about 3 s of CPU), torch and benchkit are imported and an
optimizer is stepped once (its first use imports torch._dynamo): pytester drops the modules a run
imported when it ends, and torch's cannot be imported twice in one process; every module of
benchkit is imported too, so that a run never leaves this process with two copies of one (a
test's ``benchkit.report.plots`` patched while the module that calls it holds the dropped one),
and matplotlib where installed (same reason). (Hypothesis's plugin imports its internals at every
terminal summary: imported then too, once, not once per run.)
"""
from __future__ import annotations

import functools
import importlib
import os
import pkgutil
import sys
from pathlib import Path

import pytest

from sessions import report_path, validate_report

# The suite runs on two xdist workers (scripts/test): each process, and each session it starts,
# computes on one thread (torch, OpenMP, BLAS), as benchkit's own runs do. Two threads a worker on
# two cores spin-wait for each other: 42% more CPU on the training tests (-n 2, load about 17).
# Set before anything imports torch or numpy, which read these once.
for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

STAND_INS = Path(__file__).parent / "standins"  # floor_standin.py, plot_standin.py: plugins
sys.path.insert(0, str(STAND_INS))  # importable by the in-process sessions of this process

from plot_standin import NOT_DRAWN  # noqa: E402


@functools.cache
def import_what_sessions_would_drop() -> None:
    """Import, once per process, what an in-process pytester run must not import itself (the
    module docstring says why)."""
    import floor_standin  # noqa: F401  (kept: it restores the registry after each test)
    import hypothesis.internal.observability  # noqa: F401
    import scipy.special  # noqa: F401  (planning figures and p-values: re-imported by every
    import scipy.stats  # noqa: F401  session that finishes a report, 0.1-1 s CPU each time)
    import torch

    import benchkit
    from benchkit.report import plots

    for module in pkgutil.walk_packages(benchkit.__path__, "benchkit."):
        if not module.name.endswith("__main__"):  # python -m benchkit: runs the CLI when imported
            importlib.import_module(module.name)
    plots.matplotlib_classes()
    p = torch.zeros(1, requires_grad=True)
    p.sum().backward()
    torch.optim.Adam([p]).step()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before any fixture of a test that takes ``pytester`` (its snapshot of ``sys.modules``
    included): :func:`import_what_sessions_would_drop`."""
    if "pytester" in getattr(item, "fixturenames", ()):
        import_what_sessions_would_drop()


SUITE_TIMEOUT = 120  # seconds: a hang fails one test with a traceback, not the CI job
# benchmarks/mutation.py runs the tests once per mutant: there the pytest sessions a test starts
# with pytester (seconds to a minute each; the suite itself runs them) are left out, and the
# rules are pinned by the in-process tests.
MUTATION_SKIP = "a pytester session: not run per mutant (benchmarks/mutation/mutation.py)"


def pytest_collection_modifyitems(items):
    """Every test of this suite without its own ``timeout`` marker gets SUITE_TIMEOUT
    (pytest-timeout). Not an ini setting: ideas/ shares the rootdir's ini, and a suite
    timeout there would stop real benches (their limit is --bench-timeout). Under mutmut,
    pytester tests are skipped (MUTATION_SKIP) and mutmut's own timeout replaces
    every pytest-timeout limit (its traced stats run is slow on a loaded machine).

    A test that takes ``pytester`` runs pytest sessions of a project it writes: it is marked
    ``e2e`` (as are, by hand, the tests that start such sessions with ``subprocess``). The
    e2e tests run first, those with a timeout of their own above SUITE_TIMEOUT (the longest)
    before the others, so that under ``-n`` the quick tests fill the end of the run and no
    worker is left with a long session while the other idles (longest first). The order
    is the same on every worker, as xdist requires."""
    here = Path(__file__).parent
    mutating = "MUTANT_UNDER_TEST" in os.environ
    rank = {}
    for item in items:
        if here not in item.path.parents:
            continue
        if "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)
        own = item.get_closest_marker("timeout")
        long = own is not None and own.args and own.args[0] > SUITE_TIMEOUT
        rank[item] = 2 if item.get_closest_marker("e2e") is None else 0 if long else 1
        if mutating:  # no pytest-timeout: mutmut times each mutant out itself
            item.add_marker(pytest.mark.timeout(0), append=False)
        elif own is None:
            item.add_marker(pytest.mark.timeout(SUITE_TIMEOUT))
        if mutating and "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=MUTATION_SKIP))
    items.sort(key=lambda item: rank.get(item, 2))


@pytest.fixture(scope="session")
def read_report():
    """``read_report(root, name, track="tabular", report_dir="reports")``: the validated report
    a session run in ``root`` wrote."""
    def read(root, name, track="tabular", report_dir="reports"):
        return validate_report(report_path(root, name, track, report_dir))
    return read


@pytest.fixture(autouse=True)
def _no_plots(request, monkeypatch):
    """The pytest sessions a test runs do not draw paired.png and sweep.png: drawing is about a
    second of CPU a session in a fresh process (matplotlib's import and two figures) and was
    about a fifth of the e2e tests' time in this one. In this process the patch is this
    fixture's (a session stopped by a usage error never unconfigures its plugins); sessions
    in subprocesses load tests/standins/plot_standin.py. Tests marked ``plots`` draw them,
    as the shipped ideas' smoke bench does; tests/report/test_plots.py tests the drawing."""
    if request.node.get_closest_marker("plots") is None:
        if "pytester" in request.fixturenames:
            from benchkit.report import plots
            monkeypatch.setattr(plots, "write_plots", lambda folder, report: NOT_DRAWN)
        load_stand_in(monkeypatch, "plot_standin")


def prepended(variable: str, value: str, separator: str) -> str:
    return separator.join(v for v in (value, os.environ.get(variable)) if v)


def load_stand_in(monkeypatch, plugin: str) -> None:
    """The pytest sessions of this test, in this process or a subprocess, load the plugin
    tests/standins/``plugin``.py (``PYTEST_PLUGINS``; the folder on ``PYTHONPATH`` once)."""
    monkeypatch.setenv("PYTEST_PLUGINS", prepended("PYTEST_PLUGINS", plugin, ","))
    if str(STAND_INS) not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        monkeypatch.setenv("PYTHONPATH", prepended("PYTHONPATH", str(STAND_INS), os.pathsep))


@pytest.fixture(autouse=True)
def _floor_stand_in(request, monkeypatch):
    """The pytest sessions a test runs, in this process or a subprocess, fit cheap stand-in
    floors (tests/standins/floor_standin.py: the real ones cost seconds a seed in each fresh
    process), unless the test is marked ``floors``: the tests of floors fit the real ones."""
    if request.node.get_closest_marker("floors") is None:
        load_stand_in(monkeypatch, "floor_standin")
    yield
    if "floor_standin" in sys.modules:  # imported by import_what_sessions_would_drop
        sys.modules["floor_standin"].restore()
