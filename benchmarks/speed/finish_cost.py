"""A ``--bench-fresh`` session's fixed costs, one checkout of benchkit against another (issue
51): the A/A tabular module at 2 seeds and 1 epoch, so that training is next to nothing and
what is left is what every session pays besides its runs (start-up, torch's import, the
session finish, the interpreter's exit), by phase (``session_phases.py``), CPU seconds of
the process and its children.

The two checkouts run in turn, the one going first alternating, ``--reps`` sessions each, each
in its own folder whose floors were computed by an untimed first session (in one folder, a
session after the other side's redrew the plots whenever the two sides' reports differed, a
run key for one: about 1 s CPU of the finish); the figures are each side's medians, measured
in this one run.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/finish_cost.py --tree /tmp/a --against /tmp/b

Writes benchmarks/results/finish_cost.json (``--out -``: prints only).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import session_phases
from speed import AA_MODULE

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "results" / "finish_cost.json"
SESSION = ["-m", "pytest", "test_aa_tabular.py", "-q", "-n", "0", "--bench-seeds", "2",
           "--bench-epochs", "1"]


def session(folder: Path, code: Path, *extra: str) -> float:
    """CPU seconds of one session (children included) with the benchkit at ``code``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *SESSION, *extra], cwd=folder, check=True,
                   env=dict(env, PYTHONPATH=str(code)), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="one benchkit checkout (its root)")
    ap.add_argument("--against", required=True, help="the other")
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    sides = {"tree": Path(args.tree).resolve(), "against": Path(args.against).resolve()}
    folders = {side: Path(tempfile.mkdtemp(prefix=f"benchkit-finish-{side}-")) for side in sides}
    for side, folder in folders.items():   # untimed: the floors, each side's bytecode written
        (folder / "test_aa_tabular.py").write_text(AA_MODULE.format(track="tabular"))
        (folder / "pytest.ini").write_text("[pytest]\n")
        session_phases.install(folder)
        session(folder, sides[side])
    rows: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    loads = []
    for rep in range(args.reps):
        for side in (list(sides) if rep % 2 == 0 else list(sides)[::-1]):
            cpu = session(folders[side], sides[side], "--bench-fresh")
            rows[side].append({**session_phases.breakdown(session_phases.last(folders[side]), cpu),
                               "total": cpu})
            loads.append(os.getloadavg()[0])
            print(f"  {side}: " + ", ".join(f"{k} {v:.2f}" for k, v in rows[side][-1].items()),
                  flush=True)
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    medians = {side: session_phases.medians(r) for side, r in rows.items()}
    for side, m in medians.items():
        print(f"{side} ({sides[side]}) CPU s, medians of {args.reps}: "
              + ", ".join(f"{k} {v:.2f}" for k, v in m.items()))
    print(f"load average during: median {statistics.median(loads):.1f} (min {min(loads):.1f}, "
          f"max {max(loads):.1f}) on {os.cpu_count()} cores")
    if args.out != "-":
        Path(args.out).write_text(json.dumps({
            "command": "python benchmarks/speed/finish_cost.py " + " ".join(sys.argv[1:]),
            "sides": {k: str(v) for k, v in sides.items()}, "session": SESSION,
            "load_average_during": {"median": statistics.median(loads), "min": min(loads),
                                    "max": max(loads)},
            "phases_cpu_s": rows, "medians_cpu_s": medians}, indent=2) + "\n")


if __name__ == "__main__":
    main()
