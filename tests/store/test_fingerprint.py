"""What a run depends on, in-process: fingerprints ignore comments and docstrings and see every
code change; the recorder keeps the project code a call executed, the globals it read and the
project files it opened."""
from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from benchkit.store import fingerprint
from benchkit.store import trace

HELPER = '''
"""A helper module."""
import json

SCALE = 2.0


def scaled(x):
    """Scale x."""
    return x * SCALE


def unused(x):
    return x - 1


def reads(path):
    with open(path) as f:
        return json.load(f)["value"]
'''


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def entries(path):
    src = fingerprint.source(path)
    return {kind_name: src.entry(*kind_name.split("|")) for kind_name in
            ("def|scaled", "def|unused", "name|scaled", "name|SCALE", "stmts|")}


def test_comments_docstrings_and_blank_lines_change_no_fingerprint(tmp_path):
    path = write(tmp_path / "helper.py", HELPER)
    before = entries(path)
    write(path, HELPER.replace('"""Scale x."""', '"""Scale x by SCALE (edited)."""')
          .replace("import json", "# a comment\n\nimport json  # trailing"))
    assert entries(path) == before


def test_a_body_edit_changes_that_function_only(tmp_path):
    path = write(tmp_path / "helper.py", HELPER)
    before = entries(path)
    write(path, HELPER.replace("return x * SCALE", "return x * SCALE + 0"))
    after = entries(path)
    assert after["def|scaled"] != before["def|scaled"]
    assert {k: v for k, v in after.items() if k != "def|scaled"} == \
        {k: v for k, v in before.items() if k != "def|scaled"}
    write(path, HELPER.replace("SCALE = 2.0", "SCALE = 3.0"))
    assert entries(path)["name|SCALE"] != before["name|SCALE"]


def test_qualnames_of_lambdas_and_comprehensions_belong_to_their_function(tmp_path):
    src = fingerprint.source(write(tmp_path / "m.py", "class A:\n    def f(self):\n"
                          "        return [lambda: i for i in range(2)]\n"))
    assert src.enclosing("A.f.<locals>.<listcomp>.<lambda>") == "A.f"
    assert src.enclosing("<module>") is None


@pytest.fixture
def project(tmp_path, monkeypatch):
    write(tmp_path / "helper.py", HELPER)
    write(tmp_path / "data.json", '{"value": 5}')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("helper", None)
    yield tmp_path
    sys.modules.pop("helper", None)


def record(project, body):
    """Run ``body`` (a function of the arm module ``arm.py``) under a Recording."""
    write(project / "arm.py", body)
    sys.modules.pop("arm", None)
    arm = importlib.import_module("arm")
    rec = trace.Recording()
    rec.start()
    try:
        value = arm.test_arm()
    finally:
        rec.stop()
        sys.modules.pop("arm", None)
    return value, trace.dependencies(rec.codes, rec.opened, project, project / "arm.py")


def test_the_recorder_keeps_what_ran_and_what_was_read(project):
    value, deps = record(project, """
        import helper

        def test_arm():
            return helper.scaled(1.0) + helper.reads("data.json")
    """)
    assert value == 7.0
    assert "@|def|test_arm" in deps and "helper.py|def|scaled" in deps
    assert "helper.py|def|reads" in deps and "helper.py|def|unused" not in deps
    assert "helper.py|name|SCALE" in deps                     # a global the helper read
    assert deps["|file|data.json"] == fingerprint.file_digest(project / "data.json")
    assert fingerprint.changed(deps, project, project / "arm.py") is None
    write(project / "data.json", '{"value": 6}')
    assert fingerprint.changed(deps, project, project / "arm.py") == "|file|data.json"


def test_a_lazily_imported_helper_is_a_dependency(project):
    _, deps = record(project, """
        def test_arm():
            from helper import scaled
            return scaled(2.0)
    """)
    assert "helper.py|def|scaled" in deps and "helper.py|name|scaled" in deps
    write(project / "helper.py", HELPER.replace("x * SCALE", "x * SCALE * 1"))
    assert fingerprint.changed(deps, project, project / "arm.py") == "helper.py|def|scaled"


def test_an_arm_module_is_named_by_reference_and_paths_are_relative(project):
    _, deps = record(project, """
        import helper

        def test_arm():
            return helper.SCALE
    """)
    assert all(not entry.split("|")[0].startswith("/") for entry in deps)
    other = project / "other"
    other.mkdir()
    write(other / "arm.py", (project / "arm.py").read_text())
    assert fingerprint.changed(deps, project, other / "arm.py") is None   # the same arm elsewhere


def test_pause_stops_recording_calls_until_resumed(project):
    rec = trace.Recording()
    rec.start()
    try:
        paused = trace.pause()
        importlib.import_module("helper").unused(1)
        trace.resume(paused)
        importlib.import_module("helper").scaled(1)
    finally:
        rec.stop()
    names = {code.co_name for code in rec.codes}
    assert "scaled" in names and "unused" not in names
    assert trace.pause() is None  # nothing of ours is tracing now


def test_the_key_covers_every_module_of_benchkit_a_run_may_execute(tmp_path):
    """benchkit's digest in a run's key is of the whole package: an edit to the training loop
    or a track retrains stored runs (it once covered benchkit/store alone)."""

    import benchkit
    from benchkit.store import runs

    assert runs.PACKAGE == Path(benchkit.__file__).resolve().parent
    copy = tmp_path / "benchkit"
    shutil.copytree(runs.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = runs.source_digest(copy)
    assert before == runs.benchkit_source_digest()
    for module in ("training/loop.py", "tracks/tabular.py", "plugin/fixture.py", "codec.py"):
        path = copy / module
        original = path.read_text()
        path.write_text(original + "\n# edited\n")
        assert runs.source_digest(copy) != before, module
        path.write_text(original)
    assert runs.source_digest(copy) == before
