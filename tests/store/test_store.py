"""Run reuse and resume, as users meet them: the same command twice trains nothing, an edit
retrains what it touches, more seeds train only the new ones, an interrupted session resumes."""
from __future__ import annotations

import json
import os

import pytest

from idea_modules import arm, idea_module
from sessions import run_session, validate_report

def reuse_module(*parts: str, fit: str = "", imports: str = "") -> str:
    """The idea module these sessions bench: ``fit`` added to the idea arm's ``run.fit``
    arguments, ``imports`` after its own, ``parts`` after its arms."""
    return idea_module("reuse", arm("baseline"), arm("idea", f"""
        if os.environ.get("BENCH_TEST_INTERRUPT") == str(run.seed):
            raise KeyboardInterrupt
        run.fit(run.track.model(){fit})"""), *parts, imports="import os\nimport pytest\n" + imports)


@pytest.fixture
def project(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_reuse=reuse_module())
    return pytester


def bench(pytester, *args, subprocess=False):
    """A session in this process, or in a fresh one with -n or ``subprocess`` (conftest)."""
    result = run_session(pytester, "--bench-epochs", "1", "-p", "no:randomly", *args,
                         subprocess=subprocess)
    path = pytester.path / "reports" / "reuse" / "tabular" / "bench_report.json"
    report = validate_report(path) if path.exists() else None
    return result, report


def reused(report) -> dict:
    return {(r["arm"], r["seed"]): r["reused"] for r in report["runs"]}


def numbers(report) -> list:
    return [(r["arm"], r["seed"], r["val"].hex(), r["test"].hex()) for r in report["runs"]]


def test_unchanged_rerun_trains_nothing_and_gives_the_same_report(project):
    """In one process (a run reused by an xdist worker: the subset session below, -n 2)."""
    first, r1 = bench(project)
    assert first.ret == 0
    assert not any(reused(r1).values())
    second, r2 = bench(project)
    assert second.ret == 0
    assert all(reused(r2).values())
    assert numbers(r1) == numbers(r2)
    assert [r["seconds"] for r in r1["runs"]] == [r["seconds"] for r in r2["runs"]]
    for report in (r1, r2):
        report.pop("created")
        for r in report["runs"]:
            assert r.pop("origin") == ("reused" if r.pop("reused") else "fresh")
            assert r["trained_in"] == "test_reuse.py" and len(r["digest"]) == 64
    assert r1 == r2


def test_a_rerun_of_stored_runs_does_not_import_torch(project):
    """A stored run is restored from plain values: a rerun where every run is stored never
    imports torch, and its report is the first session's."""
    project.makepyfile(test_reuse=reuse_module(fit=", lr=3e-3"))  # arms differ: sd > 0
    project.makeconftest("""
import json, sys

def pytest_unconfigure(config):
    with open("imported.json", "w") as f:
        json.dump({m: m in sys.modules for m in ("torch",)}, f)
""")
    bench(project, subprocess=True)  # what a session imports: a fresh process each
    imported = json.loads((project.path / "imported.json").read_text())
    assert imported["torch"]  # the first session trains
    result, report = bench(project, subprocess=True)
    assert result.ret == 0 and all(reused(report).values())
    assert report["comparison"]["planning"]["min_seeds"] == 6  # the planning figures, no torch
    assert json.loads((project.path / "imported.json").read_text()) == {"torch": False}


def test_the_terminal_counts_runs_trained_and_reused_and_collection_counts_what_is_left(project):
    """scripts/bench reads the collect-only line to run without workers when nothing trains."""
    def left(*args):
        result = run_session(project, "--bench-epochs", "1", "--collect-only", "-q", *args)
        result.stdout.fnmatch_lines(["benchkit: 4 arm run(s) selected, * to train*"])
        line = next(ln for ln in result.outlines if "to train" in ln)
        return int(line.split("selected, ")[1].split()[0])

    assert left() == 4
    first, _ = bench(project)
    first.stdout.fnmatch_lines(["benchkit: 4 run(s) trained, 0 reused*"])
    assert left() == 0 and left("--bench-fresh") == 4
    again, _ = bench(project)
    again.stdout.fnmatch_lines(["benchkit: 0 run(s) trained, 4 reused*"])


def test_fresh_option_retrains_everything(project):
    bench(project)
    _, report = bench(project, "--bench-fresh")
    assert not any(reused(report).values())


def test_editing_the_idea_arm_retrains_only_its_runs(project):
    _, before = bench(project)
    project.makepyfile(test_reuse=reuse_module(fit=", epochs=2"))
    _, after = bench(project)
    assert reused(after) == {("baseline", 0): True, ("baseline", 1): True,
                             ("idea", 0): False, ("idea", 1): False}
    idea = lambda rep: [r["test"] for r in rep["runs"] if r["arm"] == "idea"]  # noqa: E731
    assert idea(before) != idea(after)


def test_editing_a_local_module_it_imports_retrains(project):
    project.makepyfile(helper="EPOCHS = 1\n")
    project.makepyfile(test_reuse=reuse_module(fit=", epochs=helper.EPOCHS",
                                               imports="import helper"))
    bench(project)
    _, same = bench(project)
    assert all(reused(same).values())
    project.makepyfile(helper="EPOCHS = 2\n")
    _, edited = bench(project)
    assert reused(edited) == {("baseline", 0): True, ("baseline", 1): True,
                              ("idea", 0): False, ("idea", 1): False}


def test_more_seeds_train_only_the_new_seeds(project):
    bench(project)
    result, report = bench(project, "--bench-seeds", "3")
    assert result.ret == 0
    assert reused(report) == {("baseline", 0): True, ("baseline", 1): True,
                              ("baseline", 2): False, ("idea", 0): True, ("idea", 1): True,
                              ("idea", 2): False}


def test_interrupted_session_writes_a_partial_report_and_resumes(project, monkeypatch):
    monkeypatch.setenv("BENCH_TEST_INTERRUPT", "1")
    result, partial = bench(project)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert partial["complete"] is False
    assert partial["practical_verdict"] == "incomplete"
    assert "the session was interrupted" in partial["incomplete"]["reasons"]
    assert "idea[tabular-lr=0.01-seed1]" in partial["incomplete"]["missing"]
    done = {(r["arm"], r["seed"]) for r in partial["runs"] if r["outcome"] == "passed"}
    assert ("baseline", 0) in done and ("idea", 0) in done
    monkeypatch.delenv("BENCH_TEST_INTERRUPT")
    result, resumed = bench(project)
    assert result.ret == 0 and resumed["complete"] is True
    flags = reused(resumed)
    assert all(flags[run] for run in done)          # nothing finished is trained again
    assert flags[("idea", 1)] is False              # what was missing is trained now


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_a_subset_session_completes_its_report_from_stored_runs(project, xdist):
    """-k/-m runs a part of an idea: the deselected runs that are stored fill the report, so
    a complete report is not written over by an incomplete one."""
    first, full = bench(project)
    assert first.ret == 0 and full["complete"] is True
    result, subset = bench(project, "-k", "idea and seed1", *xdist)
    assert result.ret == 0
    assert subset["complete"] is True
    assert numbers(subset) == numbers(full)
    assert subset["comparison"] == full["comparison"]
    assert all(reused(subset).values())
    result.stdout.fnmatch_lines(["benchkit: reuse: 3 run(s) not run in this session taken "
                                 "from the store*"])


def test_a_subset_session_completes_a_control_arm_from_stored_runs(project):
    project.makepyfile(test_reuse=reuse_module(arm("control", name="same")))
    first, full = bench(project)
    assert first.ret == 0 and full["complete"] is True and full["controls"]
    result, subset = bench(project, "-k", "test_idea")
    assert result.ret == 0 and subset["complete"] is True
    assert numbers(subset) == numbers(full)
    result.stdout.fnmatch_lines(["benchkit: reuse: 4 run(s) not run in this session taken "
                                 "from the store*"])  # the baseline's and the control's


def test_a_subset_session_takes_only_stored_runs(project):
    bench(project, "-k", "baseline and seed0")  # only this one is stored
    result, subset = bench(project, "-k", "idea")
    assert result.ret == 0
    assert subset["complete"] is False
    assert sorted(subset["incomplete"]["missing"]) == ["baseline[tabular-lr=0.01-seed1]"]
    assert reused(subset) == {("baseline", 0): True, ("idea", 0): False, ("idea", 1): False}


def test_a_fresh_subset_session_takes_nothing_from_the_store(project):
    bench(project)
    result, subset = bench(project, "-k", "idea", "--bench-fresh")
    assert result.ret == 0
    assert subset["complete"] is False
    assert {(r["arm"], r["reused"]) for r in subset["runs"]} == {("idea", False)}
    assert "from the store" not in result.stdout.str()


@pytest.mark.parametrize("paths", [["test_reuse.py"], []], ids=["module-given", "no-path"])
def test_last_failed_reruns_the_crashed_run_and_completes_the_report(project, monkeypatch,
                                                                     paths):
    project.makepyfile(test_reuse=reuse_module().replace(
        "raise KeyboardInterrupt", "raise RuntimeError('crashed')"))
    monkeypatch.setenv("BENCH_TEST_INTERRUPT", "1")
    result, crashed = bench(project)
    assert result.ret == pytest.ExitCode.TESTS_FAILED and crashed["complete"] is False
    monkeypatch.delenv("BENCH_TEST_INTERRUPT")
    # with the module given, --lf deselects what passed; without, it never collects it
    result, report = bench(project, *paths, "--lf")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*1 passed*"])
    assert report["complete"] is True
    assert reused(report) == {("baseline", 0): True, ("baseline", 1): True,
                              ("idea", 0): True, ("idea", 1): False}


def test_a_session_selecting_no_arm_run_still_writes_no_report(project):
    _, full = bench(project)
    path = project.path / "reports" / "reuse" / "tabular" / "bench_report.json"
    before = path.read_bytes()
    for args in (["-k", "nothing_matches"], ["--collect-only"]):
        result, _ = bench(project, *args)
        assert result.ret in (pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.OK)
        assert path.read_bytes() == before, args


CLAIMED = reuse_module('''
    @pytest.mark.mechanism
    def test_claim():
        assert True
    ''')


@pytest.mark.parametrize("args", [["-k", "idea and not claim"], ["-m", "not mechanism"]],
                         ids=["k", "m"])
def test_a_session_without_the_claims_says_they_did_not_run(project, args):
    project.makepyfile(test_reuse=CLAIMED)
    _, full = bench(project)
    assert full["complete"] is True and full["math_verification"]["passed"] is True
    assert full["mechanism_ok"] is None  # a mechanism test alone is no evidence from the runs
    assert not any("did not run" in w for w in full["warnings"])
    result, subset = bench(project, *args)
    assert result.ret == 0 and subset["complete"] is True
    assert subset["math_verification"]["tests"] == []
    assert ("mechanism test(s) test_claim did not run in this session (-k/-m?): mechanism_ok "
            "and the system verdict leave them out") in subset["warnings"]
    result.stdout.fnmatch_lines(["*WARNING reuse tabular: mechanism test(s) test_claim did not "
                                 "run*"])


def test_another_cpu_retrains_and_the_report_names_the_cpu(project, monkeypatch):
    """The same seed gives other bits on another CPU (benchkit/store/hardware.py), so a run cache
    shared across machines must not hand one machine's runs to another."""
    from benchkit.store import hardware

    plugins = project.mkdir("plugins")
    (plugins / "other_cpu.py").write_text(
        "import benchkit.store.hardware\n"
        "benchkit.store.hardware.cpu = lambda: 'Other CPU (avx2)'\n")
    first, r1 = bench(project)
    assert first.ret == 0 and not any(reused(r1).values())
    assert r1["environment"]["cpu"] == hardware.cpu()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(plugins), os.environ.get("PYTHONPATH")) if p))
    # a fresh process: the plugin patches benchkit.store.hardware, which must not reach this one
    other, r2 = bench(project, "-p", "other_cpu", subprocess=True)
    assert other.ret == 0
    assert not any(reused(r2).values()), "runs of another CPU are not reused"
    assert r2["environment"]["cpu"] == "Other CPU (avx2)"
    again, r3 = bench(project, "-p", "no:other_cpu")
    assert all(reused(r3).values()), "this CPU's stored runs are still there"
