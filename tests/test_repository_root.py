"""The repository root holds only what the project names (issue 50: a 142 KB case file of
benchmarks/pipeline/compare_reports.py was committed at the root, and nothing noticed).

Checked on what git would commit: tracked files, and untracked ones that .gitignore does not
cover (a stray file fails here before it is committed). A new root entry is added here on
purpose, with the README or docs naming it."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# every entry the README and docs name at the root, and the tooling's own files
ALLOWED = {".ci", ".gitignore", "README.md", "benchkit", "benchmarks", "conftest.py", "docs",
           "ideas", "pyproject.toml", "reports", "scripts", "tests"}


def root_entries() -> set[str]:
    """The first path component of every file git tracks or would add."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return {name.split("/", 1)[0] for name in listed.split("\0") if name}


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
def test_the_repository_root_holds_only_the_entries_the_project_names():
    stray = sorted(root_entries() - ALLOWED)
    assert not stray, f"unexpected entries at the repository root: {stray}"
