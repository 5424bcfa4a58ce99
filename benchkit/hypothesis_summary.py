"""Skip Hypothesis's terminal summary in a bench session where it has nothing to say.

Hypothesis's pytest plugin ends every session with ``from hypothesis.internal.observability
import _WROTE_TO``, which imports all of Hypothesis (0.12-0.13 s measured with ``-X importtime``)
even when no test of the session used it. That is paid on the controller of every bench whose
tests do not use Hypothesis, and in every rerun of stored runs (0.34-0.46 s in all, measured
on the A/A tabular bench).

The summary can print only three things. Statistics are printed only with
``--hypothesis-show-statistics``; the reports carry them for every Hypothesis test, also from
xdist workers. A patch for failing examples is printed when a report carries one. Observability
files are listed only when Hypothesis wrote them in this process, so only when it was imported.
When none of the three can appear, benchkit unregisters the plugin just before pytest calls the
terminal summary.

Anything unexpected (a renamed plugin or report key) keeps Hypothesis's summary as it is.
"""
from __future__ import annotations

import sys

import pytest

PLUGIN_NAME = "hypothesispytest"  # the name Hypothesis's entry point registers


def drop_if_idle(config: pytest.Config) -> bool:
    """Unregister Hypothesis's plugin when its terminal summary would print nothing; True if
    it was dropped. Call it after the last test report and before the terminal summary."""
    if "hypothesis" in sys.modules:  # used in this process: observability may have output
        return False
    manager = config.pluginmanager
    plugin = manager.get_plugin(PLUGIN_NAME)
    if plugin is None:
        return False
    patch_key = getattr(plugin, "FAILING_EXAMPLES_KEY", None)
    statistics_option = getattr(plugin, "PRINT_STATISTICS_OPTION", None)
    if patch_key is None or statistics_option is None:
        return False
    try:
        if config.getoption(statistics_option):
            return False
    except ValueError:
        return False
    reporter = manager.get_plugin("terminalreporter")
    if reporter is None:
        return False
    for reports in reporter.stats.values():
        for report in reports:
            if patch_key in getattr(report, "__dict__", {}):
                return False
    manager.unregister(plugin)
    return True
