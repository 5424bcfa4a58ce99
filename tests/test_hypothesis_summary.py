"""benchkit.hypothesis_summary: a bench session that never used Hypothesis does not import it
for Hypothesis's terminal summary; everything that summary could print still appears."""
from __future__ import annotations

import json
import sys
import types

import _hypothesis_pytestplugin
import pytest

from benchkit import hypothesis_summary

IDEA = '''
import pytest
pytestmark = pytest.mark.bench(name="plain", track="tabular", grid={"lr": [1e-2]}, seeds=2)

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.record(val=1.0, test=1.0)

@pytest.mark.arm("idea")
def test_idea(run):
    run.record(val=1.0, test=1.0)
'''

CLAIM = '''
from hypothesis import given, strategies as st

@pytest.mark.mechanism
@given(st.integers())
def test_claim(x):
    assert x < 10
'''

PROBE = '''
import json, sys

def pytest_unconfigure(config):
    who = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    with open(f"modules-{who}.json", "w") as f:
        json.dump({"hypothesis": "hypothesis" in sys.modules}, f)
'''

ARGS = ["-p", "no:randomly", "-p", "no:cacheprovider"]


def controller_probe(pytester) -> dict:
    return json.loads((pytester.path / "modules-controller.json").read_text())


@pytest.mark.parametrize("workers", [None, "2"], ids=["no-xdist", "n2"])
def test_a_bench_without_hypothesis_tests_never_imports_hypothesis(pytester, workers):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_plain=IDEA)
    pytester.makeconftest(PROBE)
    result = pytester.runpytest_subprocess(*ARGS, *(["-n", workers] if workers else []))
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*= benchkit =*", "*4 passed*"])
    assert controller_probe(pytester) == {"hypothesis": False}


def test_asking_for_hypothesis_statistics_keeps_its_summary(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_claims=IDEA + CLAIM.replace("x < 10", "x == x"))
    pytester.makeconftest(PROBE)
    result = pytester.runpytest_subprocess(*ARGS, "-n", "2", "--hypothesis-show-statistics")
    assert result.ret == 0
    # the workers' statistics, printed by the controller's Hypothesis summary
    result.stdout.fnmatch_lines(["*Hypothesis Statistics*", "*test_claim*",
                                 "*passing*"])


def test_a_failing_hypothesis_claim_under_xdist_is_reported_as_before(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_claims=IDEA + CLAIM)
    pytester.makeconftest(PROBE)
    result = pytester.runpytest_subprocess(*ARGS, "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED test_claims.py::test_claim*", "*1 failed, 4 passed*"])
    # the claim ran (and imported Hypothesis) in a worker; the controller needed none of it
    assert controller_probe(pytester) == {"hypothesis": False}


class FakeManager:
    def __init__(self, reports):
        self.reporter = types.SimpleNamespace(stats={"failed": reports})
        self.unregistered = []

    def get_plugin(self, name):
        return {hypothesis_summary.PLUGIN_NAME: _hypothesis_pytestplugin,
                "terminalreporter": self.reporter}.get(name)

    def unregister(self, plugin):
        self.unregistered.append(plugin)


def fake_config(reports):
    manager = FakeManager(reports)
    return types.SimpleNamespace(pluginmanager=manager, getoption=lambda name: False), manager


def test_a_report_carrying_hypothesis_output_keeps_the_summary(monkeypatch):
    monkeypatch.delitem(sys.modules, "hypothesis")  # as on a controller that never imported it
    report = types.SimpleNamespace()
    report.__dict__[_hypothesis_pytestplugin.FAILING_EXAMPLES_KEY] = "[]"
    config, manager = fake_config([report])
    assert hypothesis_summary.drop_if_idle(config) is False
    assert manager.unregistered == []


def test_reports_without_hypothesis_output_drop_the_summary(monkeypatch):
    monkeypatch.delitem(sys.modules, "hypothesis")
    with_statistics = types.SimpleNamespace()  # printed only when asked for: not asked here
    with_statistics.__dict__[_hypothesis_pytestplugin.STATS_KEY] = "stats"
    config, manager = fake_config([types.SimpleNamespace(outcome="failed"), with_statistics])
    assert hypothesis_summary.drop_if_idle(config) is True
    assert manager.unregistered == [_hypothesis_pytestplugin]


def test_hypothesis_imported_in_this_process_keeps_the_summary():
    assert "hypothesis" in sys.modules  # tests/conftest.py imports it
    config, manager = fake_config([])
    assert hypothesis_summary.drop_if_idle(config) is False
    assert manager.unregistered == []
