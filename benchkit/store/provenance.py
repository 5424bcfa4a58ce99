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


PLAN_KEYS = ("looks", "boundary", "test", "claim_type", "margin")


def declared_plan(spec: dict) -> dict:
    """How the module says its runs are judged (not what they train): recorded with each run,
    since a change to it after a look changes what the verdict means."""
    return {k: (list(spec.get(k) or ()) if k == "looks" else spec.get(k)) for k in PLAN_KEYS
            if k == "looks" or spec.get(k) is not None}


def plan_changes(plan: dict, runs) -> list[str]:
    """Why the session is exploratory when stored runs of this module (origin ``reused``) were
    trained under another declared plan: a plan chosen after seeing results is no plan. Empty
    when none was (records without a plan are not judged)."""
    before = [r["planned"] for r in runs if r.get("origin") == "reused"
              and r.get("planned") is not None and r["planned"] != plan]
    changes = sorted({f"{k} {old.get(k)!r} -> {plan.get(k)!r}" for old in before
                      for k in PLAN_KEYS if old.get(k) != plan.get(k)})
    if not changes:
        return []
    return [f"the plan changed after a look: stored runs were judged under another plan "
            f"({'; '.join(changes)}); declare it before the first look, or --bench-fresh "
            "retrains under the new one"]
