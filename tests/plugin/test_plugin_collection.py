"""The benchkit pytest plugin, end to end: a bench declared wrongly is one clear collection
error naming what is wrong and what is valid, and nothing trains (with and without
``-n 2``).
"""
from __future__ import annotations

import pytest

from sessions import BASELINE, FAST, IDEA_SAME, bench, line_with, module

# pytester sessions that train: longer than the suite's 120 s default
pytestmark = pytest.mark.timeout(600)


# ======================================================================== collection errors
def _two_modules_same_name():
    return {"test_a": module(bench("dup"), BASELINE, IDEA_SAME),
            "test_b": module(bench("dup"), BASELINE, IDEA_SAME)}


COLLECTION_ERRORS = {
    "no-baseline": (
        {"test_e": module(bench("e"), IDEA_SAME)},
        ["no 'baseline' arm test", "valid: exactly one test marked pytest.mark.arm('baseline')",
         "pytest.mark.arm('idea')"]),
    "two-baselines": (
        {"test_e": module(bench("e"), BASELINE, IDEA_SAME,
                          BASELINE.replace("test_baseline", "test_baseline_2"))},
        ["2 (test_baseline, test_baseline_2) 'baseline' arm test",
         "valid: exactly one test marked pytest.mark.arm('baseline')"]),
    "misspelled-arm": (
        {"test_e": module(bench("e"), BASELINE, IDEA_SAME.replace('arm("idea")',
                                                                   'arm("ideaa")'))},
        ["arm('ideaa')", "unknown arm", "valid:", "pytest.mark.arm('idea')"]),
    "unknown-track": (
        {"test_e": module(bench("e", track='"tabulr"'), BASELINE, IDEA_SAME)},
        ["unknown track 'tabulr'", "known tracks: dynamics, mnist1d, tabular"]),
    "retired-track": (
        {"test_e": module(bench("e", track='"digits"'), BASELINE, IDEA_SAME)},
        ["track 'digits' was retired: it sat at its ceiling", "use 'mnist1d'"]),
    "empty-grid": (
        {"test_e": module(bench("e", grid="{}"), BASELINE, IDEA_SAME)},
        ["grid is empty", "valid: a dict of non-empty lists"]),
    "empty-lr-list": (
        {"test_e": module(bench("e", grid='{"lr": []}'), BASELINE, IDEA_SAME)},
        ["grid['lr'] is an empty list", "valid: a dict of non-empty lists"]),
    "non-numeric-lr": (
        {"test_e": module(bench("e", grid='{"lr": ["fast"]}'), BASELINE, IDEA_SAME)},
        ["lr='fast'", "must be a positive number"]),
    "negative-lr": (
        {"test_e": module(bench("e", grid='{"lr": [-1e-3]}'), BASELINE, IDEA_SAME)},
        ["lr=-0.001", "must be a positive number"]),
    "one-seed": (
        {"test_e": module(bench("e", seeds="1"), BASELINE, IDEA_SAME)},
        ["seeds=1", "need an integer >= 2"]),
    "duplicate-name": (
        _two_modules_same_name(),
        ["test_b.py", "idea name 'dup' is already used by test_a.py",
         "give each module its own name="]),
    "arm-without-run": (
        {"test_e": module(bench("e"), BASELINE, '''
            @pytest.mark.arm("idea")
            def test_idea():
                TRAINED.touch()
            ''')},
        ["arm test test_idea does not take the run fixture", "def test_x(run)"]),
    # issue 50: told "no 'baseline' arm test", or tracebacks
    "arms-in-a-class": (
        {"test_e": module(bench("e"), '''
            class TestArms:
                @pytest.mark.arm("baseline")
                def test_baseline(self, run):
                    TRAINED.touch()

                @pytest.mark.arm("idea")
                def test_idea(self, run):
                    TRAINED.touch()
            ''')},
        ["arm test(s) inside a class (TestArms.test_baseline, TestArms.test_idea)",
         "written at module level (not in a class)"]),
    "iterator-grid": (
        {"test_e": module(bench("e", grid='{"lr": iter([3e-3])}'), BASELINE, IDEA_SAME)},
        ["grid['lr'] is an iterator", "give list(...) of it"]),
    "track-a-number": (
        {"test_e": module(bench("e", track="5"), BASELINE, IDEA_SAME)},
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
    pytester.makepyfile(**_two_modules_same_name())
    result = pytester.runpytest_subprocess(*FAST, "-n", "2")
    assert result.ret != 0
    result.stdout.fnmatch_lines([line_with("idea name 'dup' is already used by test_a.py")])
    assert not (pytester.path / "trained").exists(), "an arm trained despite the error"
    assert not (pytester.path / "reports").exists()
