"""``--bench-audit-fresh K``: retrain K of the session's reused stored runs, each alone in a
fresh pytest process, and fail on a difference in bits.

A run whose result depends on what ran before it in its process (a module global, a function
patched and not restored: what :mod:`benchkit.plugin.isolation` cannot undo) was stored with
bits that a process running it first does not give. ``--bench-audit`` retrains in the
session's own processes, after whatever they ran; this retrains with nothing before it. Each
drawn run is selected by its node id in ``python -m pytest NODEID --bench-audit 1``, with the
session's store, seeds and their offset, epochs, threads and device and a scratch report
folder, so that benchkit's own audit compares it with its record (nothing is stored, no
report is touched).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchkit.plugin.settings import SETTINGS, Settings
from benchkit.spec.payloads import Payload, RunPayload

# Settings -> --bench-<name> (underscores as dashes), passed on unless None or 0
PASSED_ON = ("seeds", "seed_offset", "epochs", "threads", "device", "store")


def draw(payloads: list[Payload], k: int, seed: int) -> list[RunPayload]:
    """``k`` of the reused run payloads (those stored before this session), drawn with the
    session's unpredictable ``seed`` from their node ids in order."""
    reused = sorted((p for p in payloads if isinstance(p, RunPayload) and p.reused
                     and p.outcome == "passed" and p.provenance is not None
                     and p.provenance.digest),
                    key=lambda p: p.nodeid)
    return random.Random(seed).sample(reused, min(k, len(reused)))


def command(nodeid: str, settings: Settings, inipath: Path | None, report_dir: str
            ) -> list[str]:
    """The pytest command that retrains ``nodeid`` alone and audits it against its record."""
    args = [sys.executable, "-m", "pytest", nodeid, "-q", "-p", "no:randomly",
            "--bench-audit", "1", f"--bench-report-dir={report_dir}"]
    if inipath is not None:
        args += ["-c", str(inipath)]
    for name in PASSED_ON:
        value = getattr(settings, name)
        if value is not None and value != 0:
            args.append(f"--bench-{name.replace('_', '-')}={value}")
    return args


def audit(config: pytest.Config, payloads: list[Payload]) -> tuple[list[str], list[str]]:
    """(failure lines, other lines) of the fresh-process audit of this session's payloads."""
    settings = config.stash[SETTINGS]
    drawn = draw(payloads, settings.audit_fresh, settings.audit_seed)
    if not drawn:
        return [], ["benchkit: audit in a fresh process: no stored run was reused in this "
                    "session, none retrained"] if settings.audit_fresh else []
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_CURRENT_TEST", "PYTEST_XDIST"))}
    failures, differ = [], 0
    with tempfile.TemporaryDirectory(prefix="benchkit-audit-") as scratch:
        for payload in drawn:
            args = command(payload.nodeid, settings, config.inipath, scratch)
            done = subprocess.run(args, cwd=config.rootpath, env=env, capture_output=True,
                                  text=True)
            said = [line for line in done.stdout.splitlines()
                    if line.startswith("benchkit: FAIL audit:")]
            if done.returncode == 0 and not said:
                continue
            differ += 1
            if said:
                failures += [line.replace("retrained differs", "retrained alone in a fresh "
                                          "process differs", 1) for line in said]
            else:
                last = (done.stdout.strip().splitlines() or ["no output"])[-1]
                failures.append(f"benchkit: FAIL audit: {payload.nodeid} could not be "
                                f"retrained in a fresh process (exit {done.returncode}: "
                                f"{last[:200]}); `{' '.join(args[1:4])}` shows why")
    return failures, [f"benchkit: audit in a fresh process: {len(drawn)} stored run(s) "
                      f"retrained alone, {len(drawn) - differ} the same in bits"]
