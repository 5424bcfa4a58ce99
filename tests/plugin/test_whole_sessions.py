"""Whole sessions (issue 50): a session that runs part of an idea's tests (-k, node ids, -m) never
replaces its complete report and never passes a gate on the subset; an arm parametrized over
anything but its run is refused; a damaged earlier report is set aside, never fatal."""
from __future__ import annotations

import json
import os

import pytest

from idea_modules import EDGE_ARMS, RECORDED_ARMS, arm, idea_module
from sessions import line_with, no_traceback, report_path

pytestmark = pytest.mark.timeout(300)

# helps (every idea value 0.5 lower, 6 seeds), a discriminating signature confirmed on every
# run, and a mechanism test that fails: a whole session gives helps/partial, mechanism_ok 0
CLAIM = """\
    run.signature("gap", 1.0, predicted=1.0, tol=0.1, null=5.0)


@pytest.mark.mechanism
@pytest.mark.parametrize("k", [1, 2])
def test_{name}_claim_holds(k):
    assert k == 1, "the claim does not hold at k=2"
"""


def idea(name: str) -> str:
    """The idea module above, named ``name``: the signature line ends its idea arm."""
    return idea_module(name, RECORDED_ARMS, seeds=6) + CLAIM.format(name=name)


def _report(root, name: str, aside: str | None = None) -> dict:
    path = report_path(root, name)
    return json.loads((path.parent / aside / path.name if aside else path).read_text())


@pytest.fixture
def benched(pytester):
    """Two ideas, each benched whole once: helps/partial (a mechanism test fails), exit 1."""
    pytester.makepyfile(test_one=idea("one"), test_two=idea("two"))
    whole = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-gate", "worked")
    assert whole.ret == 1, whole.stdout.str()
    for name in ("one", "two"):
        report = _report(pytester.path, name)
        assert (report["complete"], report["system_verdict"], report["mechanism_ok"]) == \
            (True, "partial", 0)
    return {name: report_path(pytester.path, name).read_bytes() for name in ("one", "two")}


@pytest.mark.parametrize("selection, left_out", [
    (["-k", "baseline or idea"], 2),                              # the example
    (["test_one.py::test_baseline", "test_one.py::test_idea", "test_two.py::test_baseline"], 2),
    (["--deselect", "test_one.py::test_one_claim_holds[2]", "--deselect",
      "test_two.py::test_two_claim_holds[2]"], 1),
], ids=["-k", "node-ids", "--deselect"])
def test_a_subset_session_never_passes_a_gate_nor_replaces_a_complete_report(
        pytester, benched, selection, left_out):
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-gate", "worked",
                                          *selection)
    no_traceback(result)
    assert result.ret == 1, result.stdout.str()
    for name in ("one", "two"):   # the complete reports stand, byte for byte
        assert report_path(pytester.path, name).read_bytes() == benched[name]
        aside = _report(pytester.path, name, "exploratory")
        assert aside["exploratory"] and "did not run in this session" in \
            aside["exploratory"]["reasons"][-1]
    result.stdout.fnmatch_lines([
        line_with(f"benchkit: PARTIAL one: {left_out} of its mechanism test(s) did not run",
                  "exploratory",
                  "NEXT: `pytest -p no:randomly --bench-gate worked"),
        line_with("benchkit: FAIL one tabular: exploratory (")])
    assert "::" not in result.stdout.str().split("NEXT: `")[1].split("`")[0]


def test_a_subset_of_one_idea_leaves_the_other_ideas_report_alone(pytester, benched):
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-k", "one")
    assert report_path(pytester.path, "two").read_bytes() == benched["two"]
    assert not (report_path(pytester.path, "two").parent / "exploratory").exists()
    assert not any("PARTIAL" in line for line in result.outlines)   # one ran whole
    assert report_path(pytester.path, "one").read_bytes() != benched["one"]   # rewritten


def test_a_subset_session_under_xdist_is_exploratory_too(pytester, benched):
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-n", "2", "--bench-gate",
                                           "worked", "test_one.py::test_baseline",
                                           "test_one.py::test_idea")
    assert result.ret == 1, result.stdout.str()
    assert report_path(pytester.path, "one").read_bytes() == benched["one"]
    assert _report(pytester.path, "one", "exploratory")["exploratory"]
    result.stdout.fnmatch_lines([line_with("benchkit: PARTIAL one: 2 of its mechanism test(s)")])


PARAMETRIZED_ARM = idea_module("param", arm("baseline", "run.record(val=1.0, test=1.0)"), """
    @pytest.mark.arm("idea")
    @pytest.mark.parametrize("k", [1, 2])
    def test_idea(run, k):
        run.record(val=1.0 / k, test=1.0 / k)
    """)


def test_an_arm_parametrized_over_more_than_its_run_is_refused_at_collection(pytester):
    pytester.makepyfile(test_param=PARAMETRIZED_ARM)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    no_traceback(result)
    assert result.ret == 2, result.stdout.str()
    result.stdout.fnmatch_lines([line_with(
        "benchkit: test_param.py: arm test test_idea is parametrized over k", "valid: put the "
        "axis in the bench grid (grid={'k': [...]}", "or bench each value in its own module")])
    assert not report_path(pytester.path, "param").exists()


def test_an_arm_with_a_parametrized_fixture_is_refused_too(pytester):
    source = PARAMETRIZED_ARM.replace('@pytest.mark.arm("idea")\n@pytest.mark.parametrize("k", '
                                      '[1, 2])\ndef test_idea(run, k):', """\
@pytest.fixture(params=[1, 2])
def k(request):
    return request.param

@pytest.mark.arm("idea")
def test_idea(run, k):""")
    assert "params=[1, 2]" in source
    pytester.makepyfile(test_param=source)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    assert result.ret == 2, result.stdout.str()
    result.stdout.fnmatch_lines([line_with("arm test test_idea is parametrized over k")])


def _damage(path, how: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
    else:
        path.write_text(how)


@pytest.mark.parametrize("how", ["[]", '"x"', '{"runs": [1]}', "[" * 100_000 + "]" * 100_000,
                                 "fifo", "folder"],
                         ids=["list", "string", "runs-of-ints", "nested-100k", "fifo", "folder"])
def test_a_damaged_earlier_report_is_set_aside_in_one_line_and_replaced(pytester, how):
    """The damaged report of one idea; the other idea's report is written all the same."""
    pytester.makepyfile(test_one=idea("one"), test_two=idea("two"))
    _damage(report_path(pytester.path, "one"), how)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:timeout")
    no_traceback(result)
    assert result.ret == 1, result.stdout.str()   # the failing mechanism test, nothing else
    assert _report(pytester.path, "one")["complete"] and _report(pytester.path, "two")["complete"]
    kept = [p for p in report_path(pytester.path, "one").parent.iterdir()
            if p.name.startswith("bench_report.json.unreadable-")]
    assert len(kept) == 1 and (how != "fifo" or kept[0].is_fifo())
    result.stdout.fnmatch_lines([line_with(
        "benchkit: WARNING one tabular: the earlier report at ", "was not a benchkit report (",
        f"kept aside as {kept[0].name} and replaced")])


EDGE = idea_module("edge", EDGE_ARMS, grid={"lr": [1e-3, 2e-3, 4e-3]}, seeds=2, extend=2)


@pytest.mark.e2e
def test_scripts_bench_goes_on_while_sessions_make_progress_within_its_bound(tmp_path):
    """scripts/bench in a project of its own (its .venv the running interpreter): the grid
    extends at its low edge twice, so the bench takes three sessions. Bounded at two
    (BENCH_SESSIONS), it stops saying so and naming the command; run again, it completes."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from sessions import child_environment

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "scripts").mkdir()
    shutil.copy(root / "scripts" / "bench", tmp_path / "scripts" / "bench")
    (tmp_path / "scripts" / "setup").write_text("#!/usr/bin/env bash\n")
    (tmp_path / "scripts" / "setup").chmod(0o755)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    python = tmp_path / ".venv" / "bin" / "python"   # not a link: a venv's python finds its
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')   # packages by its path
    python.chmod(0o755)
    (tmp_path / "ideas").mkdir()
    (tmp_path / "ideas" / "test_edge.py").write_text(EDGE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")

    def bench(**env):
        proc = subprocess.run(["bash", "scripts/bench", "-p", "no:randomly", "-n", "0"],
                              cwd=tmp_path, env=child_environment(**env), capture_output=True,
                              text=True, timeout=600)
        out = proc.stdout + proc.stderr
        assert "Traceback" not in out, out
        return proc.returncode, out

    rc, out = bench(BENCH_SESSIONS="2")
    assert rc == 1, out
    assert out.count("benchkit: a grid extension or budget check is pending") == 1, out
    assert "benchkit: NEXT: a bench is still pending after 2 sessions (BENCH_SESSIONS=2): run " \
        "scripts/bench -p no:randomly -n 0 again" in out, out
    rc, out = bench()
    assert rc == 0, out
    assert "benchkit: 4 run(s) trained, 16 reused" in out, out
    report = json.loads((tmp_path / "reports" / "edge" / "tabular" / "bench_report.json")
                        .read_text())
    assert report["complete"] and report["baseline"]["best_cfg"] == {"lr": 0.00025}
