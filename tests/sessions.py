"""Helpers of the end-to-end tests that run pytest sessions with ``pytester`` (the idea modules
they write come from tests/idea_modules.py): run a session (``run_session``), match the lines
it prints (``line_with``, ``no_traceback``), and read and validate the report it wrote
(``validate_report``, ``report_path``). Imported by name:
``from sessions import ...`` (``tests/`` is on ``sys.path``: pytest puts the folder of
``tests/conftest.py`` there). tests/conftest.py imports torch and benchkit before any session.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import benchkit

SCHEMA_PATH = Path(benchkit.__file__).parent / "report" / "bench_report.schema.json"


def validate_report(path) -> dict:
    """Load the report at ``path`` and validate it against the shipped JSON Schema (validation
    is skipped only while the package ships no schema yet)."""
    path = Path(path)
    assert path.is_file(), f"no report at {path}"
    report = json.loads(path.read_text(encoding="utf-8"))
    if SCHEMA_PATH.exists():
        report_validator().validate(report)
    return report


@functools.cache
def report_validator():
    """The shipped schema's validator, the schema itself checked once: checking it on every
    report took 15x the validation (the suite validates hundreds of reports)."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def report_path(root, name: str, track: str = "tabular", report_dir: str = "reports") -> Path:
    return Path(root) / report_dir / name / track / "bench_report.json"


# ------------------------------------------------------------------ a session's output
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


def run_session(pytester, *args, subprocess: bool = False) -> pytest.RunResult:
    """``pytest args`` in ``pytester``'s project. In this process (seconds cheaper: torch and
    benchkit are imported once, above) unless the session needs processes of its own: with
    workers (``-n``), or ``subprocess=True`` where a fresh interpreter is what is tested (what
    it imports, a plugin on ``PYTHONPATH``, patches to benchkit that must not reach this
    process). In this process no bytecode is written: a module edited between two sessions
    a moment apart, to the same size, is never imported from a stale ``.pyc``."""
    if subprocess or "-n" in args:
        return pytester.runpytest_subprocess(*args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "dont_write_bytecode", True)
        # an interrupted session (KeyboardInterrupt, SIGTERM) is a result to assert on, as
        # its exit status is in a subprocess: pytester would raise it in this process
        return pytester.runpytest_inprocess(*args, no_reraise_ctrlc=True)


def child_environment(**env_extra) -> dict:
    """This process's environment for a pytest process it starts, ``env_extra`` added: without
    the variables pytest and xdist set for this test (``PYTEST_CURRENT_TEST``,
    ``PYTEST_XDIST_WORKER``, ...) but with ``PYTEST_PLUGINS`` (tests/conftest.py's floor
    stand-in)."""
    return {k: v for k, v in os.environ.items()
            if k == "PYTEST_PLUGINS" or not k.startswith(("PYTEST_", "PYTHONBREAKPOINT"))
            } | env_extra


def run_pytest_subprocess(path, *args, **env_extra) -> pytest.RunResult:
    """``pytest args`` in a fresh interpreter in ``path`` (what ``pytester.runpytest_subprocess``
    does, usable from a module-scoped fixture), with ``env_extra`` added to its environment."""
    env = child_environment(**env_extra)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=path, env=env,
                          capture_output=True, text=True, timeout=600)
    result = pytest.RunResult(proc.returncode, proc.stdout.splitlines(),
                              proc.stderr.splitlines(), time.monotonic() - start)
    print(f"$ pytest {' '.join(args)}  (in {path})\n{proc.stdout}\n{proc.stderr}")
    return result


def shared_session(tmp_path_factory, name: str, files: dict[str, str], *args: str,
                   **env_extra: str) -> tuple[Path, pytest.RunResult]:
    """(project root, result) of ``pytest args`` in a project holding ``files``, run once per
    test session even when xdist's workers each ask for it (the first to ask runs it under a
    file lock; the others read its result): a module-scoped fixture alone ran it once per
    worker that ran one of its tests, and each run starts processes that import torch."""
    from filelock import FileLock  # benchkit[test]; torch needs it too

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the folder every worker's basetemp lies in
    root, saved = base / f"shared-{name}", base / f"shared-{name}.json"
    with FileLock(str(base / f"shared-{name}.lock")):
        if not saved.exists():
            root.mkdir(exist_ok=True)
            for filename, source in files.items():
                (root / filename).write_text(source)
            result = run_pytest_subprocess(root, *args, **env_extra)
            saved.write_text(json.dumps([result.ret, result.outlines, result.errlines,
                                         result.duration]))
    ret, outlines, errlines, duration = json.loads(saved.read_text())
    return root, pytest.RunResult(ret, outlines, errlines, duration)


def assert_gate_exits(pytester, name: str, exits: dict, track: str = "tabular") -> None:
    """One session per ``--bench-gate`` value in ``exits`` (gate -> exit status); a failing
    gate also prints its ``benchkit: FAIL`` line."""
    for gate, code in exits.items():
        result = pytester.runpytest("--bench-gate", gate)
        assert result.ret == code, (gate, result.stdout.str()[-2000:])
        if code:
            result.stdout.fnmatch_lines([f"benchkit: FAIL {name} {track}: gate '{gate}' not met*"])

