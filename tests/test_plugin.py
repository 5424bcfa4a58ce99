"""The benchkit pytest plugin, end to end: idea modules written into a temporary project and
benched by a real pytest session (``pytester``), with and without ``-n 2``.

Most run-level cases share one session per mode (``suite``): one small idea module per case,
benched together, so that the expensive part (starting processes that import torch) is paid
twice for all of them rather than twice per case. Every module there has its own name, hence
its own report; each test below reads only its own idea's report and lines.
"""
from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import textwrap
import time

import pytest

# benches of several idea modules per session: longer than the suite's 120 s default
pytestmark = pytest.mark.timeout(600)

MODES = [pytest.param([], id="n0"), pytest.param(["-n", "2"], id="n2")]
FAST = ["--bench-epochs", "1"]

PRELUDE = '''\
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

TRAINED = Path(__file__).with_name("trained")   # touched by arm bodies: proves training ran
'''


def bench(name, *, track='"tabular"', grid='{"lr": [1e-2]}', seeds="2", extra=""):
    """The ``pytestmark = pytest.mark.bench(...)`` line; every argument is source text."""
    return (f"pytestmark = pytest.mark.bench(name={name!r}, track={track}, grid={grid}, "
            f"seeds={seeds}{extra})\n")


def module(mark: str, *bodies: str) -> str:
    return PRELUDE + mark + "".join(textwrap.dedent(b) for b in bodies)


BASELINE = '''
@pytest.mark.arm("baseline")
def test_baseline(run):
    TRAINED.touch()
    run.fit(run.track.model())
'''
IDEA_SAME = '''
@pytest.mark.arm("idea")
def test_idea(run):
    TRAINED.touch()
    run.fit(run.track.model())
'''
CONST_MODEL = '''
class Const(nn.Module):
    """Ignores its input: predicts one learned number."""
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.bias.expand(x.shape[0], 1)
'''
NAN_MODEL = '''
class NaNOut(nn.Module):
    """Its loss is NaN from the first step."""
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return x.sum(1, keepdim=True) * self.w * float("nan")
'''


def esc(text: str) -> str:
    """``text`` as a literal fnmatch pattern (brackets and ? are special there)."""
    return "".join(f"[{c}]" if c in "[]?*" else c for c in text)


def line_with(*fragments: str) -> str:
    """An fnmatch pattern for one line containing the literal fragments in order."""
    return "*" + "*".join(esc(f) for f in fragments) + "*"


def no_traceback(result) -> None:
    text = "\n".join(result.outlines + result.errlines)
    assert "Traceback (most recent call last)" not in text, text
    assert "INTERNALERROR" not in text, text


# ======================================================================== the shared suite
# 2: an idea that ignores its input, six seeds: significantly worse
HARMS = module(bench("const", seeds="6", extra=', budget_waiver={"params": "a constant '
                     'predictor: its harm is the point"}'), BASELINE, CONST_MODEL, '''
    @pytest.mark.arm("idea")
    def test_idea(run):
        run.fit(Const())
    ''')

SUITE = {
    "test_const.py": HARMS,
    # 1, 3, 6: identical arms, three seeds (fewer than 6: the warning)
    "test_same.py": module(bench("same", seeds="3"), BASELINE, IDEA_SAME),
    # 7: numpy scalars and 0-d tensors through run.record / run.signature / run.log
    "test_scalars.py": module(bench("scalars"), '''
        @pytest.mark.arm("baseline")
        def test_baseline(run):
            run.record(val=np.float32(1.5 + run.seed), test=torch.tensor(2.25 + run.seed))
            run.log("n_params", np.int64(7))

        @pytest.mark.arm("idea")
        def test_idea(run):
            run.record(val=torch.tensor(1.25 + run.seed, dtype=torch.float64),
                       test=np.float64(2.0 + run.seed))
            run.signature("zero", observed=torch.tensor(0.0), predicted=np.float32(0.0),
                          tol=np.float64(1e-6))
        '''),
    # 8: the idea arm records nothing
    "test_silent.py": module(bench("silent"), BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.track.model()  # builds a model and forgets to train it
        '''),
    # 9: one run raises after training
    "test_raises.py": module(bench("raises"), BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(run.track.model())
            if run.seed == 1:
                raise RuntimeError("boom on seed 1")
        '''),
    # 10: NaN loss in one config of two; then in every config
    "test_nan_some.py": module(bench("nan_some", grid='{"lr": [1e-2, 3e-3]}'), NAN_MODEL,
                               BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(NaNOut() if run.cfg["lr"] == 1e-2 else run.track.model())
        '''),
    "test_nan_all.py": module(bench("nan_all"), NAN_MODEL, BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(NaNOut())
        '''),
    # 4: mechanism evidence
    "test_mech_fail.py": module(bench("mech_fail"), BASELINE, IDEA_SAME, '''
        @pytest.mark.mechanism
        def test_claim():
            assert 1 + 1 == 3
        '''),
    "test_mech_ok.py": module(bench("mech_ok"), BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(run.track.model())
            run.signature("residual", observed=1e-9, predicted=0.0, tol=1e-6)

        @pytest.mark.mechanism
        def test_claim():
            assert 1 + 1 == 2
        '''),
    "test_mech_sig_off.py": module(bench("mech_sig_off"), BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(run.track.model())
            run.signature("residual", observed=0.5, predicted=0.0, tol=0.1)
        '''),
}
SUITE_OUTCOMES = {"passed": 52, "failed": 4}  # silent: 2 failed; raises: 1; mech_fail: 1
SUITE_ARGS = [*FAST, "--bench-gate=not-harms"]


def run_pytest_subprocess(path, *args) -> pytest.RunResult:
    """``pytest args`` in a fresh interpreter in ``path`` (what ``pytester.runpytest_subprocess``
    does, usable from a module-scoped fixture)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "PYTHONBREAKPOINT"))}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=path, env=env,
                          capture_output=True, text=True, timeout=600)
    result = pytest.RunResult(proc.returncode, proc.stdout.splitlines(),
                              proc.stderr.splitlines(), time.monotonic() - start)
    print(f"$ pytest {' '.join(args)}  (in {path})\n{proc.stdout}\n{proc.stderr}")
    return result


class Suite:
    def __init__(self, tmp_path_factory, read_report):
        self.tmp_path_factory = tmp_path_factory
        self.read_report = read_report
        self.sessions = {}

    def session(self, mode: list[str]):
        """(root, result) of the suite benched with ``mode`` (run once per mode)."""
        key = tuple(mode)
        if key not in self.sessions:
            root = self.tmp_path_factory.mktemp("suite-" + ("-".join(mode) or "n0"))
            (root / "pytest.ini").write_text("[pytest]\n")
            for filename, source in SUITE.items():
                (root / filename).write_text(source)
            self.sessions[key] = root, run_pytest_subprocess(root, *SUITE_ARGS, *mode)
        return self.sessions[key]

    def report(self, mode, name):
        root, _ = self.session(mode)
        return self.read_report(root, name)


@pytest.fixture(scope="module")
def suite(tmp_path_factory, read_report):
    return Suite(tmp_path_factory, read_report)


def runs_of(report):
    return {(r["arm"], json.dumps(r["cfg"]), r["seed"]): r for r in report["runs"]}


@pytest.mark.parametrize("mode", MODES)
def test_suite_outcomes(suite, mode):
    _, result = suite.session(mode)
    result.assert_outcomes(**SUITE_OUTCOMES)
    assert result.ret == 1  # failing tests (and the gate)
    result.stdout.fnmatch_lines(["*= benchkit =*"])


@pytest.mark.parametrize("mode", MODES)
def test_identical_arms_give_zero_diffs_and_p_one(suite, mode):
    report = suite.report(mode, "same")
    comp = report["comparison"]
    assert report["complete"] is True
    assert comp["per_seed_diffs"] == [0.0, 0.0, 0.0]
    assert comp["p_value"] == 1.0
    assert comp["idea_wins"] == 0
    assert report["practical_verdict"] == "inconclusive"
    assert report["baseline"]["full"]["per_seed"] == report["idea"]["per_seed"]
    assert report["mechanism_ok"] is None  # no evidence at all
    assert report["math_verification"]["passed"] is None
    _, result = suite.session(mode)
    # the suite runs with --bench-epochs 1: exploratory, so its only gate failure is that
    failed = [line for line in result.outlines if line.startswith("benchkit: FAIL same ")]
    assert failed and all("exploratory (--bench-epochs 1" in line for line in failed), failed


def test_per_seed_numbers_identical_with_and_without_xdist(suite):
    names = ("const", "same", "scalars", "raises", "nan_some", "nan_all", "mech_ok")

    def numbers(mode):
        out = {}
        for name in names:
            for r in suite.report(mode, name)["runs"]:
                key = (name, r["arm"], json.dumps(r["cfg"]), r["seed"])
                out[key] = (r["outcome"], r["diverged"],
                            None if r["val"] is None else float.hex(r["val"]),
                            None if r["test"] is None else float.hex(r["test"]))
        return out

    serial, distributed = numbers([]), numbers(["-n", "2"])
    assert len(serial) == 12 + 6 + 4 + 4 + 8 + 4 + 4
    assert distributed == serial


@pytest.mark.parametrize("mode", MODES)
def test_mechanism_ok(suite, mode):
    failing = suite.report(mode, "mech_fail")
    assert failing["mechanism_ok"] == 0
    assert failing["math_verification"]["passed"] is False
    [claim] = failing["math_verification"]["tests"]
    assert claim["test"] == "test_mech_fail.py::test_claim"
    assert claim["outcome"] == "failed"

    confirmed = suite.report(mode, "mech_ok")
    assert confirmed["mechanism_ok"] == 1
    assert confirmed["math_verification"]["passed"] is True
    assert confirmed["mechanism_signature"]["signatures"]["residual"]["confirmed"] is True

    off = suite.report(mode, "mech_sig_off")
    assert off["mechanism_ok"] == 0
    sig = off["mechanism_signature"]["signatures"]["residual"]
    assert sig["confirmed"] is False
    assert sig["observed"] == 0.5

    assert suite.report(mode, "same")["mechanism_ok"] is None


@pytest.mark.parametrize("mode", MODES)
def test_few_seeds_warn_loudly(suite, mode):
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines([line_with(
        "benchkit: WARNING same tabular:", "only 3 seeds", "smallest possible two-sided p is 0.25",
        "sign-flip")])
    report = suite.report(mode, "same")
    assert any("smallest possible two-sided p is 0.25" in w and "sign-flip" in w
               for w in report["warnings"]), report["warnings"]


@pytest.mark.parametrize("mode", MODES)
def test_numpy_scalars_and_0d_tensors_land_as_plain_floats(suite, mode):
    report = suite.report(mode, "scalars")
    runs = runs_of(report)
    for seed in (0, 1):
        base = runs[("baseline", '{"lr": 0.01}', seed)]
        idea = runs[("idea", '{"lr": 0.01}', seed)]
        assert (base["val"], base["test"]) == (1.5 + seed, 2.25 + seed)
        assert (idea["val"], idea["test"]) == (1.25 + seed, 2.0 + seed)
        for value in (base["val"], base["test"], idea["val"], idea["test"]):
            assert type(value) is float
        assert base["logs"] == {"n_params": 7.0}
        assert type(base["logs"]["n_params"]) is float
        assert idea["signatures"] == {"zero": 0.0}
    assert report["comparison"]["per_seed_diffs"] == [-0.25, -0.25]
    assert report["mechanism_ok"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_arm_that_records_nothing(suite, mode):
    _, result = suite.session(mode)
    for seed in (0, 1):
        nodeid = f"test_silent.py::test_idea[tabular-lr=0.01-seed{seed}]"
        result.stdout.fnmatch_lines([line_with("benchkit: ", nodeid, " recorded no result"),
                                     line_with("FAILED ", nodeid)])
    report = suite.report(mode, "silent")
    assert report["complete"] is False
    assert report["practical_verdict"] == "incomplete"
    assert report["comparison"] is None
    assert sorted(report["incomplete"]["missing"]) == [
        "idea[tabular-lr=0.01-seed0]", "idea[tabular-lr=0.01-seed1]"]
    result.stdout.fnmatch_lines(["benchkit: FAIL silent tabular: incomplete*"])


@pytest.mark.parametrize("mode", MODES)
def test_run_that_raises(suite, mode):
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines([
        line_with('raise RuntimeError("boom on seed 1")'),
        "E * RuntimeError: boom on seed 1",
    ])
    result.stdout.fnmatch_lines([line_with(
        "FAILED", "test_raises.py::test_idea[tabular-lr=0.01-seed1]")])
    report = suite.report(mode, "raises")
    runs = runs_of(report)
    for arm, seed in (("baseline", 0), ("baseline", 1), ("idea", 0)):
        kept = runs[(arm, '{"lr": 0.01}', seed)]
        assert kept["outcome"] == "passed"
        assert isinstance(kept["val"], float) and isinstance(kept["test"], float)
    assert report["comparison"] is None
    assert report["complete"] is False
    assert report["practical_verdict"] == "incomplete"
    assert report["incomplete"]["missing"] == ["idea[tabular-lr=0.01-seed1]"]
    [failed] = report["incomplete"]["failed"]
    assert failed["run"] == "idea[tabular-lr=0.01-seed1]"
    assert "boom on seed 1" in failed["message"]
    result.stdout.fnmatch_lines(["benchkit: FAIL raises tabular: incomplete*"])


@pytest.mark.parametrize("mode", MODES)
def test_nan_loss_is_diverged_and_its_config_not_eligible(suite, mode):
    report = suite.report(mode, "nan_some")
    runs = runs_of(report)
    for seed in (0, 1):
        nan_run = runs[("idea", '{"lr": 0.01}', seed)]
        assert nan_run["diverged"] is True
        assert nan_run["outcome"] == "passed"  # diverging is a result, not an exception
        assert nan_run["val"] is None and nan_run["test"] is None
        assert runs[("idea", '{"lr": 0.003}', seed)]["diverged"] is False
    sweep = {json.dumps(s["cfg"]): s for s in report["idea_sweep"]}
    assert sweep['{"lr": 0.01}']["eligible"] is False
    assert sweep['{"lr": 0.01}']["diverged_seeds"] == [0, 1]
    assert sweep['{"lr": 0.003}']["eligible"] is True
    assert report["complete"] is True
    assert report["idea_config"] == {"lr": 0.003}
    assert any("diverged" in w for w in report["warnings"]), report["warnings"]


@pytest.mark.parametrize("mode", MODES)
def test_every_config_diverged(suite, mode):
    report = suite.report(mode, "nan_all")
    assert all(r["diverged"] for r in report["runs"] if r["arm"] == "idea")
    assert report["complete"] is False
    assert report["practical_verdict"] == "incomplete"
    assert any("idea" in reason and "diverged" in reason
               for reason in report["incomplete"]["reasons"]), report["incomplete"]
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines(["benchkit: FAIL nan_all tabular: *diverged*"])
    result.stdout.fnmatch_lines(["benchkit: FAIL nan_some tabular: *exploratory (*"])
    result.stdout.no_fnmatch_line("benchkit: FAIL nan_some tabular: incomplete*")


# ======================================================================== harms and the gate


@pytest.mark.parametrize("mode", MODES)
def test_idea_ignoring_its_input_harms(suite, mode):
    report = suite.report(mode, "const")
    assert report["practical_verdict"] == "harms"
    assert report["comparison"]["p_value"] < 0.05
    assert report["comparison"]["delta_mean"] > 0  # MSE: higher is worse
    assert report["n_seeds"] == 6
    assert not any("smallest possible two-sided sign-flip p" in w for w in report["warnings"])
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines(["benchkit: FAIL const tabular: *harms*"])


def test_gate_alone_fails_the_session_without_a_traceback(pytester, read_report):
    pytester.makepyfile(test_const=HARMS)
    result = pytester.runpytest_subprocess(*FAST, "--bench-gate=not-harms")
    result.assert_outcomes(passed=12)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: 12 run(s) trained, 0 reused*",
                                 "benchkit: FAIL const tabular: *harms*mechanism_ok none"])
    assert "None" not in "\n".join(ln for ln in result.outlines if "FAIL" in ln)
    # the session's last line says so, not only the exit status
    assert re.search(r"12 passed, 1 benchkit gate failed", result.outlines[-1])
    no_traceback(result)
    assert read_report(pytester.path, "const")["practical_verdict"] == "harms"


def test_idea_that_harms_passes_without_a_gate(pytester, read_report):
    pytester.makepyfile(test_const=HARMS)
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(passed=12)
    assert result.ret == 0
    result.stdout.no_fnmatch_line("benchkit: FAIL*")
    assert read_report(pytester.path, "const")["practical_verdict"] == "harms"


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
        ["unknown track 'tabulr'", "known tracks: charlm, digits, dynamics, tabular"]),
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


# ======================================================================== -m mechanism
def test_mechanism_only_session_runs_claims_and_writes_no_report(pytester):
    pytester.makepyfile(test_claims=module(bench("claims"), BASELINE, IDEA_SAME, '''
        @pytest.mark.mechanism
        def test_claim():
            assert True
        '''))
    result = pytester.runpytest(*FAST, "-m", "mechanism")
    result.assert_outcomes(passed=1, deselected=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*benchkit*no report written*"])
    assert not (pytester.path / "trained").exists()
    assert not (pytester.path / "reports").exists()


# ======================================================================== options
USAGE_ERRORS = {
    "bogus-gate": (["--bench-gate", "bogus"],
                   ["--bench-gate", "unknown gate 'bogus'", "valid: off, not-harms", "helps",
                    "worked"]),
    "alpha-not-a-number": (["--bench-alpha", "x"],
                           ["--bench-alpha", "'x' is not a number", "valid: a number in (0, 0.5]"]),
    "alpha-out-of-range": (["--bench-alpha", "0.9"],
                           ["--bench-alpha", "out of range", "valid: a number in"]),
    "one-seed": (["--bench-seeds", "1"], ["--bench-seeds", "valid: an integer >= 2"]),
    "epochs-not-an-int": (["--bench-epochs", "many"],
                          ["--bench-epochs", "'many' is not an integer", "valid: an integer"]),
}


@pytest.mark.parametrize("args, fragments", list(USAGE_ERRORS.values()), ids=list(USAGE_ERRORS))
def test_usage_error(pytester, args, fragments):
    """Options are typed through pytest's parser: a wrong value is a usage error that names
    the flag and says what is valid, before anything trains."""
    pytester.makepyfile(test_ok=module(bench("ok"), BASELINE, IDEA_SAME))
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line_with("error: argument", *fragments)])
    assert not (pytester.path / "trained").exists()


@pytest.mark.parametrize("ini, fragments", [
    ("bench_gate = bogus", ["unknown gate 'bogus'", "valid: off"]),
    ("bench_seeds = 1", ["bench_seeds", "valid: an integer >= 2"]),
    ("bench_alpha = lots", ["bench_alpha", "'lots' is not a number"]),
])
def test_ini_values_are_checked_too(pytester, ini, fragments):
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line_with("ERROR: benchkit: ini option", *fragments)])


def test_unwritable_report_dir_is_a_usage_error_before_training(pytester):
    pytester.makepyfile(test_ok=module(bench("ok"), BASELINE, IDEA_SAME))
    (pytester.path / "a_file").write_text("not a directory\n")
    result = pytester.runpytest_subprocess(*FAST, "--bench-report-dir", "a_file/reports")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line_with("ERROR: benchkit: report directory", "a_file",
                                           "not writable", "--bench-report-dir")])
    assert not (pytester.path / "trained").exists()


def test_report_dir_option_moves_the_report(pytester, read_report):
    pytester.makepyfile(test_ok=module(bench("ok"), BASELINE, IDEA_SAME))
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
    pytester.makepyfile(test_ok=module(bench("ok", seeds="8"), BASELINE, IDEA_SAME))
    result = pytester.runpytest()
    result.assert_outcomes(passed=4)  # 2 seeds x 1 config x 2 arms, not 8 seeds
    result.stdout.fnmatch_lines(["benchkit *seeds 2, epochs 1, alpha 0.1*"])
    report = read_report(pytester.path, "ok", report_dir="out")
    assert report["n_seeds"] == 2
    assert report["protocol"]["epochs"] == 1
    assert report["protocol"]["alpha"] == 0.1


def test_command_line_overrides_ini(pytester):
    pytester.makeini("[pytest]\nbench_seeds = 2\n")
    pytester.makepyfile(test_ok=module(bench("ok"), BASELINE, IDEA_SAME))
    result = pytester.runpytest("--collect-only", "-q", "--bench-seeds", "3")
    result.stdout.fnmatch_lines(["6 tests collected*"])


def test_report_header(pytester):
    pytester.makepyfile(test_ok=module(bench("ok"), BASELINE, IDEA_SAME))
    result = pytester.runpytest("--collect-only", "--bench-gate", "helps")
    result.stdout.fnmatch_lines(["benchkit *gate helps*"])
