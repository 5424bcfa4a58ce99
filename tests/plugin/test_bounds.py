"""Upper bounds, each a clear one-line refusal naming what is valid: torch threads, seeds and
grid size (before anything is collected), and report files given to the commands (size, and
files that are not regular: a FIFO would block)."""
from __future__ import annotations

import os

import pytest

from benchkit.cli.commands import main
from benchkit.plugin import settings
from benchkit.spec import SpecError
from builders import parse


def test_threads_and_seeds_options_have_upper_bounds():
    with pytest.raises(ValueError, match=r"99999 is too large; valid: an integer in \[1, 256\]"):
        settings.threads("99999")
    assert settings.threads("256") == 256
    with pytest.raises(ValueError, match=r"too large; valid: an integer in \[2, 1000\]"):
        settings.seeds(str(10 ** 6))


@pytest.mark.parametrize("kwargs,fragment", [
    ({"seeds": 10 ** 6}, "seeds=1000000: need an integer in [2, 1000]"),
    ({"grid": {"lr": list(range(1, 101)), "wd": list(range(100))}},
     "grid has 10000 configs; valid: at most 1000"),
    ({"grid": [{"lr": i} for i in range(1, 1002)]}, "grid has 1001 configs; valid: at most 1000"),
    ({"grid": {"lr": list(range(1, 101))}, "seeds": 101},
     "100 configs x 101 seeds on tabular is 10100 runs per arm; valid: at most 10000"),
])
def test_seeds_and_grid_size_are_bounded_at_collection(kwargs, fragment):
    with pytest.raises(SpecError) as info:
        parse(**kwargs)
    assert fragment in str(info.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_an_oversized_report_is_refused_by_every_command(tmp_path, capsys):
    fifo = tmp_path / "bench_report.json"
    os.mkfifo(fifo)
    big = tmp_path / "big" / "bench_report.json"
    big.parent.mkdir()
    with big.open("wb") as f:
        f.truncate(33 * 1024 * 1024)   # sparse: costs no disk
    for argv in (["compare", fifo, fifo], ["verify", fifo], ["show", fifo], ["verify", big]):
        assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert sum("not a regular file" in line for line in err) == 3, err
    assert "34603008 bytes; valid: a report of at most 33554432 bytes" in err[-1]


def test_a_report_dir_outside_the_project_given_as_a_separate_word_is_refused(pytester,
                                                                             tmp_path_factory):
    """pytest would take it for a test path when it chooses the rootdir: the rootdir and the
    default store would move. Inside the project, or written with '=', it is fine."""
    pytester.makeini("[pytest]\n")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = pytester.runpytest_inprocess("--bench-report-dir", str(elsewhere))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*write --bench-report-dir={elsewhere} (with '=')*"])
    (pytester.path / "inside").mkdir()
    for args in (["--bench-report-dir", "inside"], [f"--bench-report-dir={elsewhere}"]):
        assert pytester.runpytest_inprocess(*args).ret == pytest.ExitCode.NO_TESTS_COLLECTED
