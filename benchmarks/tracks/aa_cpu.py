"""One session of a track's A/A bench (benchmarks/tracks/test_aa.py) with the CPU it cost, so that
the cost of a bench at the track's default protocol is measured, not estimated.

The session runs ``python -m pytest benchmarks/tracks/test_aa.py -n 2`` with
``BENCHKIT_AA_TRACK=<track>`` (run this script under ``nice -n 15``). ``--seeds N`` adds
``--bench-seeds N``: an exploratory block of seeds 0 .. N-1, its report under scratch/ (on a
shared machine a bench is trained in blocks, each session under 10 minutes, the next reusing
the stored runs). Without it the session is the bench at the track's default seeds and writes
benchmarks/results/tracks/aa. Past ``--limit`` wall seconds a session is sent SIGTERM (benchkit
keeps the finished runs; xdist workers may finish the runs they hold first, for at most GRACE
seconds, then the session is killed: the CPU of a killed session's processes is not counted,
so size blocks to end within the limit). Its CPU is the
user + system time of the pytest process and its workers (``RUSAGE_CHILDREN``: training,
floors, reports, imports), which a shared machine's load inflates far less than wall time.
Each session is appended to benchmarks/results/tracks/aa_cpu.json under its track: a bench's
CPU is the sum over the sessions of one protocol (``protocol`` in each entry), which trained
each run once.

    nice -n 15 python benchmarks/tracks/aa_cpu.py --track tabular --seeds 16   # a block
    nice -n 15 python benchmarks/tracks/aa_cpu.py --track tabular   # the bench at its default
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "tracks" / "aa_cpu.json"
REPORTS = "benchmarks/results/tracks/aa"
BLOCKS = "scratch/aa_blocks"
GRACE = 60  # seconds a stopped session's workers get to finish before they are killed


def command(track: str, seeds: int | None, keep: list[str], workers: int = 2) -> list[str]:
    """The pytest command of one session (``seeds``: an exploratory block, None: the bench;
    ``keep``: further pytest arguments, e.g. ``-k`` for a part of it)."""
    where = BLOCKS if seeds else REPORTS
    extra = ["--bench-seeds", str(seeds)] if seeds else []
    return [sys.executable, "-m", "pytest", "benchmarks/tracks/test_aa.py", "-n", str(workers),
            "-q",
            "-p", "no:randomly", "--bench-report-dir", where, *extra, *keep]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", required=True)
    ap.add_argument("--seeds", type=int, help="an exploratory block of seeds 0 .. N-1")
    ap.add_argument("--limit", type=float, default=540, help="wall seconds, then SIGTERM (the "
                    "finished runs are stored; default 540)")
    ap.add_argument("--workers", type=int, default=2, help="xdist workers (default 2)")
    ap.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = ap.parse_args()
    from benchkit import tracks

    cmd = command(args.track, args.seeds, args.pytest_args, args.workers)
    env = {**os.environ, "BENCHKIT_AA_TRACK": args.track}
    load, cpu, wall = os.getloadavg()[0], children_cpu(), time.perf_counter()
    with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True,
                          stderr=subprocess.STDOUT, start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=args.limit)
            stopped = False
        except subprocess.TimeoutExpired:  # benchkit keeps the finished runs
            # SIGTERM, not SIGINT: a shell starts a background job with SIGINT ignored, and
            # this script's children inherit that, so a SIGINT stopped nothing
            os.killpg(proc.pid, signal.SIGTERM)
            try:  # xdist workers finish the runs they hold: give them a minute, no more
                out, _ = proc.communicate(timeout=GRACE)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # their unfinished runs are lost
                out, _ = proc.communicate()
            stopped = True
    cpu, wall = children_cpu() - cpu, time.perf_counter() - wall
    tail = out.strip().splitlines()[-1:] if out.strip() else []
    entry = {"command": "python " + " ".join(cmd[1:]),
             "track": args.track, "seeds": args.seeds or tracks.get(args.track).seeds,
             "block": bool(args.seeds), "protocol": tracks.get(args.track).protocol(),
             "cpu_seconds": round(cpu, 1), "wall_seconds": round(wall, 1),
             "load_average_1min": [round(load, 1), round(os.getloadavg()[0], 1)],
             "exit_status": proc.returncode, "signalled_at_limit": stopped,
             "pytest_last_line": tail[0] if tail else "",
             "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
    log = json.loads(OUT.read_text()) if OUT.exists() else {}
    log.setdefault(args.track, []).append(entry)
    OUT.write_text(json.dumps(log, indent=1) + "\n")
    print(json.dumps({k: entry[k] for k in ("seeds", "cpu_seconds", "wall_seconds",
                                            "exit_status", "pytest_last_line")}))
    if proc.returncode not in (0, 1) and not stopped:
        print(out[-3000:])


if __name__ == "__main__":
    main()
