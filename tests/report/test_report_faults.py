"""Names that cannot name a report folder are refused at collection; a report that cannot be
written is one ``benchkit: ERROR`` line, the other ideas' reports are still written, the exit
status is non-zero and a previous report stays as it was."""
from __future__ import annotations

import subprocess
import sys

import pytest

from idea_modules import idea_source
from sessions import run_session, validate_report

pytestmark = pytest.mark.timeout(600)

ESCAPING_TRACK = '''
import dataclasses
from benchkit import tracks
tracks.register(dataclasses.replace(tracks.get("tabular"), name="../../escaped"))
'''


@pytest.mark.parametrize("name, track", [
    ("bad\\x1b[31mname", "tabular"), ("x" * 101, "tabular"), ("..", "tabular"),
    (".hidden", "tabular"), ("a/b", "tabular"), ("ok", "../../escaped")])
def test_a_name_that_cannot_name_a_report_folder_is_a_collection_error(pytester, name, track):
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(ESCAPING_TRACK)
    pytester.makepyfile(test_named=idea_source(name, track=track))
    result = pytester.runpytest_subprocess("--bench-epochs", "1")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error: nothing trains
    result.stdout.fnmatch_lines(["*cannot name a report folder; valid: 1 to 100 letters, "
                                 "digits*"])
    assert "INTERNALERROR" not in result.stdout.str()
    assert not (pytester.path / "escaped").exists()
    assert not (pytester.path / "reports").exists()


def test_a_report_that_cannot_be_written_spares_the_other_ideas(pytester):
    """In this process only: reports are written on the controller, with or without workers."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_blocked=idea_source("blocked"),
                        test_fine=idea_source("fine"))
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "blocked").write_text("a file where a folder should be")
    result = run_session(pytester, "--bench-epochs", "1")
    assert result.ret == 1
    result.assert_outcomes(passed=8)
    errors = [ln for ln in result.stdout.lines if ln.startswith("benchkit: ERROR")]
    assert len(errors) == 1, result.stdout.str()
    assert "blocked tabular: cannot write" in errors[0]
    assert "reports/blocked" in errors[0]
    assert errors[0].endswith((": Not a directory", ": File exists")), errors[0]
    assert "Traceback" not in result.stdout.str() and "INTERNALERROR" not in result.stdout.str()
    validate_report(pytester.path / "reports/fine/tabular/bench_report.json")
    result.stdout.fnmatch_lines(["*8 passed*1 benchkit report not written*"])


FILE_SIZE_LIMIT = '''
import resource
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))  # reports are larger
    return (yield)
'''


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_file_size_limit_keeps_the_previous_report_intact(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_fine=idea_source("fine"))
    first = run_session(pytester, "--bench-epochs", "1", "-p", "no:cacheprovider")
    assert first.ret == 0, first.stdout.str()
    # the limit is set in the session's own process: a fresh one
    cmd = [sys.executable, "-m", "pytest", "--bench-epochs", "1", "-p", "no:cacheprovider"]
    path = pytester.path / "reports/fine/tabular/bench_report.json"
    before = path.read_bytes()
    pytester.makeconftest(FILE_SIZE_LIMIT)
    second = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True)
    assert second.returncode == 1, second.stdout
    errors = [ln for ln in second.stdout.splitlines() if ln.startswith("benchkit: ERROR")]
    assert len(errors) == 1 and "fine tabular: cannot write" in errors[0], second.stdout
    assert "File too large" in errors[0]
    assert "Traceback" not in second.stdout + second.stderr
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
