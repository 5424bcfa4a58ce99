"""The benchkit pytest plugin, end to end: a bench declared wrongly is one clear collection
error naming what is wrong and what is valid, and nothing trains (with and without
``-n 2``).
"""
from __future__ import annotations

import pytest

from idea_modules import idea_module, TORCH, Source, BASELINE, FAST, IDEA_SAME
from sessions import line_with

# pytester sessions that train: longer than the suite's 120 s default
pytestmark = pytest.mark.timeout(600)


# ======================================================================== collection errors
def _two_modules_same_name(imports: str = TORCH):
    return {"test_a": idea_module("dup", BASELINE, IDEA_SAME, imports=imports),
            "test_b": idea_module("dup", BASELINE, IDEA_SAME, imports=imports)}


# what the arms touch when they train, without TORCH's module-level `import torch`: each
# worker of a session stopped at collection would import it (seconds) only to collect
TRAINED_ONLY = '''
from pathlib import Path
import pytest
TRAINED = Path(__file__).with_name("trained")
'''


COLLECTION_ERRORS = {
    "no-baseline": (
        {"test_e": idea_module("e", IDEA_SAME, imports=TORCH)},
        ["no 'baseline' arm test", "valid: exactly one test marked pytest.mark.arm('baseline')",
         "pytest.mark.arm('idea')"]),
    "two-baselines": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME,
                          BASELINE.replace("test_baseline", "test_baseline_2"), imports=TORCH)},
        ["2 (test_baseline, test_baseline_2) 'baseline' arm test",
         "valid: exactly one test marked pytest.mark.arm('baseline')"]),
    "misspelled-arm": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME.replace('arm("idea")',
                                                                   'arm("ideaa")'), imports=TORCH)},
        ["arm('ideaa')", "unknown arm", "valid:", "pytest.mark.arm('idea')"]),
    "unknown-track": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, track="tabulr")},
        ["unknown track 'tabulr'", "known tracks: dynamics, mnist1d, tabular"]),
    "retired-track": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, track="digits")},
        ["track 'digits' was retired: it sat at its ceiling", "use 'mnist1d'"]),
    "empty-grid": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, grid={})},
        ["grid is empty", "valid: a dict of non-empty lists"]),
    "empty-lr-list": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, grid={"lr": []})},
        ["grid['lr'] is an empty list", "valid: a dict of non-empty lists"]),
    "non-numeric-lr": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, grid={"lr": ["fast"]})},
        ["lr='fast'", "must be a positive number"]),
    "negative-lr": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, grid={"lr": [-1e-3]})},
        ["lr=-0.001", "must be a positive number"]),
    "one-seed": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, seeds=1)},
        ["seeds=1", "need an integer >= 2"]),
    "duplicate-name": (
        _two_modules_same_name(),
        ["test_b.py", "idea name 'dup' is already used by test_a.py",
         "give each module its own name="]),
    "arm-without-run": (
        {"test_e": idea_module("e", BASELINE, '''
            @pytest.mark.arm("idea")
            def test_idea():
                TRAINED.touch()
            ''', imports=TORCH)},
        ["arm test test_idea does not take the run fixture", "def test_x(run)"]),
    # issue 50: told "no 'baseline' arm test", or tracebacks
    "arms-in-a-class": (
        {"test_e": idea_module("e", '''
            class TestArms:
                @pytest.mark.arm("baseline")
                def test_baseline(self, run):
                    TRAINED.touch()

                @pytest.mark.arm("idea")
                def test_idea(self, run):
                    TRAINED.touch()
            ''', imports=TORCH)},
        ["arm test(s) inside a class (TestArms.test_baseline, TestArms.test_idea)",
         "written at module level (not in a class)"]),
    "iterator-grid": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH,
                               grid=Source('{"lr": iter([3e-3])}'))},
        ["grid['lr'] is an iterator", "give list(...) of it"]),
    "track-a-number": (
        {"test_e": idea_module("e", BASELINE, IDEA_SAME, imports=TORCH, track=5)},
        ["track=5 must be a track name or a list of names", "known tracks:"]),
}


@pytest.mark.parametrize("files, fragments", list(COLLECTION_ERRORS.values()),
                         ids=list(COLLECTION_ERRORS))
def test_collection_error(pytester, files, fragments):
    pytester.makepyfile(**files)
    result = pytester.runpytest(*FAST)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([line_with("benchkit:", *fragments)])
    result.stdout.fnmatch_lines(["*Interrupted: 1 error*"])
    assert not (pytester.path / "trained").exists(), "an arm trained despite the error"
    assert not (pytester.path / "reports").exists()


def test_collection_error_under_xdist_trains_nothing(pytester):
    pytester.makepyfile(**_two_modules_same_name(TRAINED_ONLY))
    result = pytester.runpytest_subprocess(*FAST, "-n", "2")
    assert result.ret != 0
    result.stdout.fnmatch_lines([line_with("idea name 'dup' is already used by test_a.py")])
    assert not (pytester.path / "trained").exists(), "an arm trained despite the error"
    assert not (pytester.path / "reports").exists()
