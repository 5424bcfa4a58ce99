"""Helpers of the tests that run ``python -m benchkit`` as a user would: ``bench(*args)`` runs the
CLI in a fresh interpreter, ``assert_clean_error`` checks a refusal is one ``benchkit: error:``
line and no traceback, ``write_json`` writes a (crafted) report. Imported by name:
``from commands import ...`` (``tests/`` is on ``sys.path``: pytest puts the folder of
``tests/conftest.py`` there).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def bench(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def assert_clean_error(res: subprocess.CompletedProcess, *fragments: str) -> None:
    assert res.returncode == 2, res
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchkit: error: "), res.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
