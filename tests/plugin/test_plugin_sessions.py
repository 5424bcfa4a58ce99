"""The benchkit pytest plugin, end to end: sessions of one idea module each, and how they
end: the gate alone decides a failing exit status (and says so), no gate passes an idea
that harms, and a ``-m mechanism`` session runs the claims and writes no report.
"""
from __future__ import annotations

import re

import pytest

from idea_modules import idea_module, TORCH, BASELINE, FAST, HARMS, IDEA_SAME
from sessions import no_traceback

# pytester sessions that train: longer than the suite's 120 s default
pytestmark = pytest.mark.timeout(600)


# ==================================================================================== the gate
def test_gate_alone_fails_the_session_without_a_traceback(pytester, read_report):
    pytester.makepyfile(test_const=HARMS)
    result = pytester.runpytest(*FAST, "--bench-gate=not-harms")
    result.assert_outcomes(passed=12)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: 12 run(s) trained, 0 reused*",
                                 "benchkit: FAIL const tabular: *harms*mechanism_ok null"])
    assert "None" not in "\n".join(ln for ln in result.outlines if "FAIL" in ln)
    # the session's last line says so, not only the exit status
    assert re.search(r"12 passed, 1 benchkit gate failed", result.outlines[-1])
    no_traceback(result)
    assert read_report(pytester.path, "const")["practical_verdict"] == "harms"


@pytest.mark.plots
def test_a_session_draws_its_plots_beside_the_report_and_keeps_them_when_it_is_unchanged(
        pytester):
    """(The one in-process session that draws: tests/conftest.py turns drawing off in the
    others.)"""
    pytest.importorskip("matplotlib")
    pytester.makepyfile(test_const=HARMS)
    assert pytester.runpytest(*FAST).ret == 0
    folder = pytester.path / "reports" / "const" / "tabular"
    pngs = [folder / "paired.png", folder / "sweep.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)
    assert "![paired seeds](paired.png)" in (folder / "summary.md").read_text()
    drawn = [p.stat().st_mtime_ns for p in pngs]
    result = pytester.runpytest(*FAST)  # the same report again (runs reused): not redrawn
    result.stdout.fnmatch_lines(["benchkit: 0 run(s) trained, 12 reused*"])
    assert [p.stat().st_mtime_ns for p in pngs] == drawn


def test_idea_that_harms_passes_without_a_gate(pytester, read_report):
    pytester.makepyfile(test_const=HARMS)
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(passed=12)
    assert result.ret == 0
    result.stdout.no_fnmatch_line("benchkit: FAIL*")
    assert read_report(pytester.path, "const")["practical_verdict"] == "harms"


# ================================================================================ -m mechanism
def test_mechanism_only_session_runs_claims_and_writes_no_report(pytester):
    pytester.makepyfile(test_claims=idea_module("claims", BASELINE, IDEA_SAME, '''
        @pytest.mark.mechanism
        def test_claim():
            assert True
        ''', imports=TORCH))
    result = pytester.runpytest(*FAST, "-m", "mechanism")
    result.assert_outcomes(passed=1, deselected=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*benchkit*no report written*"])
    assert not (pytester.path / "trained").exists()
    assert not (pytester.path / "reports").exists()
