"""The benchkit pytest plugin, end to end: its options and their ini equivalents: a wrong
value is a usage error before anything trains; a right one reaches the report and the
header.
"""
from __future__ import annotations

import pytest

from idea_modules import idea_module, TORCH, BASELINE, FAST, IDEA_SAME
from sessions import line_with, run_session

# pytester sessions that train: longer than the suite's 120 s default
pytestmark = pytest.mark.timeout(600)


# ======================================================================== options
USAGE_ERRORS = {
    "bogus-gate": (["--bench-gate", "bogus"],
                   ["--bench-gate", "unknown gate 'bogus'", "valid: off, not-harms", "helps",
                    "worked"]),
    "alpha-not-a-number": (["--bench-alpha", "x"],
                           ["--bench-alpha", "'x' is not a number", "valid: a number in (0, 0.5]"]),
    "alpha-out-of-range": (["--bench-alpha", "0.9"],
                           ["--bench-alpha", "out of range", "valid: a number in"]),
    "one-seed": (["--bench-seeds", "1"], ["--bench-seeds", "valid: an integer in [2, 1000]"]),
    "epochs-not-an-int": (["--bench-epochs", "many"],
                          ["--bench-epochs", "'many' is not an integer", "valid: an integer"]),
}


@pytest.mark.parametrize("args, fragments", list(USAGE_ERRORS.values()), ids=list(USAGE_ERRORS))
def test_usage_error(pytester, args, fragments):
    """Options are typed through pytest's parser: a wrong value is a usage error that names
    the flag and says what is valid, before anything trains."""
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH))
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line_with("error: argument", *fragments)])
    assert not (pytester.path / "trained").exists()


@pytest.mark.parametrize("ini, fragments", [
    ("bench_gate = bogus", ["unknown gate 'bogus'", "valid: off"]),
    ("bench_seeds = 1", ["bench_seeds", "valid: an integer in [2, 1000]"]),
    ("bench_alpha = lots", ["bench_alpha", "'lots' is not a number"]),
])
def test_ini_values_are_checked_too(pytester, ini, fragments):
    """Where a module benches (a collection error, before anything trains) or a --bench-*
    option is given (a usage error); a session that benches nothing never reads them (issue
    50: the ini is the project's, and may hold a key of its own by that name)."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH))
    result = run_session(pytester)  # in this process: torch imported once, not per value
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([line_with("benchkit: ini option", *fragments)])
    assert not (pytester.path / "trained").exists()
    result = pytester.runpytest_subprocess("--bench-fresh")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line_with("ERROR: benchkit: ini option", *fragments)])


def test_unwritable_report_dir_is_a_usage_error_before_training(pytester):
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH))
    (pytester.path / "a_file").write_text("not a directory\n")
    result = pytester.runpytest_subprocess(*FAST, "--bench-report-dir", "a_file/reports")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line_with("ERROR: benchkit: report directory", "a_file",
                                           "not writable", "--bench-report-dir")])
    assert not (pytester.path / "trained").exists()


def test_report_dir_option_moves_the_report(pytester, read_report):
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH))
    result = pytester.runpytest(*FAST, "--bench-report-dir", "out/benches")
    result.assert_outcomes(passed=4)
    read_report(pytester.path, "ok", report_dir="out/benches")
    assert not (pytester.path / "reports").exists()


@pytest.mark.parametrize("ini_file", ["pytest.ini", "pyproject.toml"])
def test_ini_equivalents(pytester, read_report, ini_file):
    if ini_file == "pytest.ini":
        pytester.makeini("[pytest]\nbench_seeds = 2\nbench_epochs = 1\n"
                         "bench_report_dir = out\nbench_alpha = 0.1\n")
    else:
        pytester.makepyprojecttoml('[tool.pytest.ini_options]\nbench_seeds = "2"\n'
                                   'bench_epochs = "1"\nbench_report_dir = "out"\n'
                                   'bench_alpha = "0.1"\n')
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH, seeds=8))
    result = pytester.runpytest()
    result.assert_outcomes(passed=4)  # 2 seeds x 1 config x 2 arms, not 8 seeds
    result.stdout.fnmatch_lines(["benchkit *seeds 2, epochs 1, alpha 0.1*"])
    report = read_report(pytester.path, "ok", report_dir="out")
    assert report["n_seeds"] == 2
    assert report["protocol"]["epochs"] == 1
    assert report["protocol"]["alpha"] == 0.1


def test_command_line_overrides_ini(pytester):
    pytester.makeini("[pytest]\nbench_seeds = 2\n")
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH))
    result = pytester.runpytest("--collect-only", "-q", "--bench-seeds", "3")
    result.stdout.fnmatch_lines(["6 tests collected*"])


def test_report_header(pytester):
    pytester.makepyfile(test_ok=idea_module("ok", BASELINE, IDEA_SAME, imports=TORCH))
    result = pytester.runpytest("--collect-only", "--bench-gate", "helps")
    result.stdout.fnmatch_lines(["benchkit *gate helps*"])
