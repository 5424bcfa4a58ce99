"""A run's time limit (--bench-timeout) and SIGTERM to the process that runs the session:
each stops what it must, the session writes what it has, and no process is left behind."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from idea_modules import arm, idea_module
from sessions import validate_report

pytestmark = pytest.mark.timeout(600)
# The hanging run's limit. The timer covers the run's call only (benchkit's and torch's imports
# come before it) and the other runs record fixed values instead of training, so they finish in
# milliseconds however loaded the machine: 2 s is a wide margin, and no test waits longer.
LIMIT = "2"
PRELOAD = "import torch  # imported at collection, outside every run's timer\n"
MODES = [pytest.param([], id="n0"), pytest.param(["-n", "2"], id="n2")]

HANGS = idea_module("hangs", arm("baseline", "run.record(val=1.0 + run.seed, test=1.0 + run.seed)"),
                    arm("idea", """
    if run.seed == 1:
        Path("hung.pid").write_text(str(os.getpid()))
        time.sleep(3600)
    run.record(val=0.9 + run.seed, test=0.9 + run.seed)"""),
                    imports="import os\nimport time\nfrom pathlib import Path\nimport pytest",
                    seeds=3)


def test_bench_timeout_is_checked_like_every_option(pytester):
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest("--bench-timeout", "-3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-timeout*out of range; valid: a number of seconds*"])
    pytester.makeini("[pytest]\nbench_timeout = soon\n")
    result = pytester.runpytest("--bench-fresh")   # read where benchkit is active (issue 50)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option bench_timeout: 'soon' is not a number*"])


@pytest.mark.parametrize("xdist", MODES)
def test_a_run_past_the_timeout_fails_and_the_session_goes_on(pytester, xdist):
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(PRELOAD)
    pytester.makepyfile(test_hangs=HANGS)
    start = time.monotonic()
    result = pytester.runpytest_subprocess("--bench-epochs", "1", "--bench-timeout", LIMIT,
                                           *xdist)
    assert time.monotonic() - start < 300
    result.assert_outcomes(passed=5, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"*test_idea*seed1*ran past --bench-timeout {LIMIT} s*"])
    report = validate_report(pytester.path / "reports/hangs/tabular/bench_report.json")
    assert report["complete"] is False and report["practical_verdict"] == "incomplete"
    failed, = report["incomplete"]["failed"]
    assert failed["run"] == "idea[tabular-lr=0.01-seed1]"
    assert f"ran past --bench-timeout {LIMIT} s" in failed["message"]


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie nobody reaps counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("xdist", MODES)
def test_sigterm_writes_a_partial_report_and_leaves_no_process(pytester, xdist):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_hangs=HANGS)
    log = (pytester.path / "out.txt").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                             "--bench-epochs", "1", "-p", "no:randomly", *xdist],
                            cwd=pytester.path, stdout=log, stderr=subprocess.STDOUT)
    hung = pytester.path / "hung.pid"
    deadline = time.monotonic() + 240
    while not (hung.exists() and hung.read_text()) and time.monotonic() < deadline:
        assert proc.poll() is None, (pytester.path / "out.txt").read_text()
        time.sleep(0.2)
    worker = int(hung.read_text())
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == pytest.ExitCode.INTERRUPTED
    out = (pytester.path / "out.txt").read_text()
    assert "KeyboardInterrupt" in out and "INTERNALERROR" not in out
    deadline = time.monotonic() + 30
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(worker), f"process {worker} was left running"
    report = validate_report(pytester.path / "reports/hangs/tabular/bench_report.json")
    assert report["complete"] is False
    assert "the session was interrupted" in report["incomplete"]["reasons"]
    assert "idea[tabular-lr=0.01-seed1]" in report["incomplete"]["missing"]
