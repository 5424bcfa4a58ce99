"""What ties a report to what produced it: the idea module's digest, in a git checkout the
commit and whether the tree had uncommitted changes, and the plan each stored run was trained
under."""
from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path


def provenance(rootdir, module: str) -> dict:
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
def git_state(rootdir: str) -> dict | None:
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


def plan_changes(looks: list[int], runs) -> list[str]:
    """Why the session is exploratory when stored runs of this module (origin ``reused``) were
    trained under other declared looks: the plan changed after a look, and a plan chosen after
    seeing results is no plan. Empty when it did not (or the records predate the field)."""
    before = sorted({tuple(r["planned_looks"]) for r in runs if r.get("origin") == "reused"
                     and r.get("planned_looks") not in (None, list(looks))})
    if not before:
        return []
    return [f"the plan changed after a look: stored runs were trained under looks="
            f"{', '.join(map(str, before))}, now looks={tuple(looks)} (declare every look "
            "before the first; --bench-fresh retrains under the new plan)"]
