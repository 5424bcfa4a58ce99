"""Reuse exactly when nothing a run executed changed, as users meet it: a comment edit trains
nothing, an edited lazily imported helper retrains the runs that used it, a baseline that is the
same in two idea modules trains once, and a moved checkout reuses everything."""
from __future__ import annotations

import shutil

import pytest

from idea_modules import arm, idea_module
from sessions import run_session, validate_report

def module(name: str, lr: float) -> str:
    """An idea (its docstring first) whose idea arm imports a local helper."""
    return idea_module(name, arm("baseline"), arm("idea", f"""
        from helpers import epochs
        run.fit(run.track.model(), lr={lr}, epochs=epochs())"""),
                       imports='"""An idea."""\nimport pytest')


def bench(pytester, *args):
    return run_session(pytester, "--bench-epochs", "1", "-p", "no:randomly", *args)


def report(root, name):
    return validate_report(root / "reports" / name / "tabular" / "bench_report.json")


def origins(root, name) -> dict:
    return {(r["arm"], r["seed"]): r["origin"] for r in report(root, name)["runs"]}


@pytest.fixture
def project(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(helpers="def epochs():\n    return 1\n",
                        test_a=module("a", 3e-3))
    return pytester


def test_a_comment_or_docstring_edit_trains_nothing(project):
    assert bench(project).ret == 0
    text = (project.path / "test_a.py").read_text()
    (project.path / "test_a.py").write_text(
        text.replace('"""An idea."""', '"""An idea, described better."""\n# a comment')
        .replace("    run.fit(run.track.model())", "    # the plain model\n"
                 "    run.fit(run.track.model())  # as the track gives it"))
    (project.path / "helpers.py").write_text('"""Helpers."""\n\n\ndef epochs():\n    return 1\n')
    result = bench(project)
    result.stdout.fnmatch_lines(["benchkit: 0 run(s) trained, 4 reused*"])
    assert set(origins(project.path, "a").values()) == {"reused"}


def test_editing_a_helper_imported_inside_an_arm_retrains_the_runs_that_used_it(project):
    assert bench(project).ret == 0
    (project.path / "helpers.py").write_text("def epochs():\n    return 2\n")
    result = bench(project)
    assert result.ret == 0
    assert origins(project.path, "a") == {("baseline", 0): "reused", ("baseline", 1): "reused",
                                          ("idea", 0): "fresh", ("idea", 1): "fresh"}


def test_two_modules_with_the_same_baseline_train_it_once(project):
    project.makepyfile(test_b=module("b", 2e-2))
    result = bench(project, "test_a.py")
    result.stdout.fnmatch_lines(["benchkit: 4 run(s) trained*"])
    result = bench(project, "test_b.py")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["benchkit: 2 run(s) trained, 2 reused from the run store "
                                 "(2 trained by another idea module)*"])
    b = report(project.path, "b")
    assert {(r["arm"], r["origin"], r["trained_in"]) for r in b["runs"]} == {
        ("baseline", "shared", "test_a.py"), ("idea", "fresh", "test_b.py")}
    a = report(project.path, "a")
    assert [r["digest"] for r in a["runs"] if r["arm"] == "baseline"] == \
        [r["digest"] for r in b["runs"] if r["arm"] == "baseline"]


def test_a_moved_checkout_reuses_everything(project, tmp_path_factory):
    assert bench(project).ret == 0
    moved = tmp_path_factory.mktemp("elsewhere") / "checkout"
    shutil.copytree(project.path, moved, ignore=shutil.ignore_patterns("reports"))
    result = bench(project, "--rootdir", str(moved), str(moved))
    assert result.ret == 0
    result.stdout.fnmatch_lines(["benchkit: 0 run(s) trained, 4 reused*"])
    assert report(moved, "a")["runs"] and set(origins(moved, "a").values()) == {"reused"}
