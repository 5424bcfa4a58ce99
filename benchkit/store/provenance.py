"""What ties a report to what produced it: the idea module's digest and, in a git checkout,
the commit and whether the tree had uncommitted changes (the plan each stored run was trained
under: :mod:`benchkit.verdict.plan`)."""
from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path
from typing import Any


def provenance(rootdir: str | Path | None, module: str) -> dict[str, Any]:
    """``{"module_digest": sha256 of the module file or null, "git": {...} or null}``; both
    null without a rootdir."""
    if rootdir is None:
        return {"module_digest": None, "git": None}
    try:
        module_digest = hashlib.sha256(Path(rootdir, module).read_bytes()).hexdigest()
    except OSError:
        module_digest = None
    return {"module_digest": module_digest, "git": git_state(str(Path(rootdir).resolve()))}


@functools.lru_cache(maxsize=4)
def git_state(rootdir: str) -> dict[str, Any] | None:
    """``{"commit": ..., "dirty": bool}`` of the git checkout holding ``rootdir``; None outside
    one (or without git)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", rootdir, *args], capture_output=True,
                                  text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


