"""A pytest plugin that leaves out paired.png and sweep.png in the suite's pytest sessions whose
tests are not about plots: drawing costs about a second of CPU a session in a fresh process
(matplotlib's import and two figures), and the suite starts dozens of them. The summary says
the plots were not drawn, in the words of :data:`NOT_DRAWN`.

tests/conftest.py loads it through ``PYTEST_PLUGINS`` (as floor_standin.py) for every test not
marked ``plots``; tests/report/test_plots.py tests the drawing itself, and the shipped ideas'
smoke bench draws them. The patch is undone when the session ends.
PYTEST_DONT_REWRITE
"""
from __future__ import annotations

import pytest

from benchkit.report import plots

NOT_DRAWN = "plots not drawn in this test (tests/conftest.py)"
REPLACED = pytest.StashKey[object]()


def not_drawn(folder, report) -> str:
    return NOT_DRAWN


def pytest_configure(config):
    config.stash[REPLACED] = plots.write_plots
    plots.write_plots = not_drawn


def pytest_unconfigure(config):
    plots.write_plots = config.stash.get(REPLACED, plots.write_plots)
