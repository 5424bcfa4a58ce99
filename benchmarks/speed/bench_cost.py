"""What a default A/A tabular bench costs against the same trainings written plainly (issue 51):
the 48 runs of a two-arm A/A module (the track's grid x 8 seeds, -n 0) as

- ``plain``: one process, ``torch.optim.Adam`` and ``CosineAnnealingLR`` stepped per minibatch,
  the track's data, model, epochs and batch size, one torch thread, no pytest;
- ``first``: the bench's first session with nothing cached (no ``.pytest_cache``: no stored
  run, no kept floor);
- ``fresh``: a later ``--bench-fresh`` session (every run retrained; floors kept).

Medians of ``--reps`` repetitions run interleaved (plain, first, fresh, plain, ...), wall time
and the CPU time of the processes (children included, so the floors' child counts), and the
ratios to ``plain`` measured in this one run. Before them each command runs once without
training (the plain script's imports, the session's collection), untimed, so that no case pays
for writing bytecode or reading files cold; ``--warm N`` adds N whole untimed rounds. The issue's
figures (48 runs, medians of 3), at the committed bench_cost.json's medians (a round of plain,
first and fresh took 172 s at load 1.4-5.4), take about 9 minutes:

    PYTHONPATH=. .venv/bin/python benchmarks/speed/bench_cost.py --reps 3

``--tree PATH`` times the bench with another checkout of benchkit (an older commit exported with
``git archive``) instead of this one, the plain loop unchanged; ``--against PATH`` times that
checkout's sessions too, interleaved with this one's (``first@old``, ``fresh@old``), for a
before/after ratio from one run; ``--seeds 2`` (12 runs, an exploratory session) where a loaded
machine leaves no time for 48.

Writes benchmarks/results/bench_cost.json (``--out -``: prints only).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import session_phases
from speed import AA_MODULE  # the A/A module speed.py benches (this folder is sys.path[0])

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE.parent / "results" / "bench_cost.json"

# the same trainings as the A/A bench, each written plainly (training.py's plain run: Adam and a
# cosine schedule stepped per minibatch, no pytest, no benchkit training code)
PLAIN = '''
import sys
sys.path.insert(0, {here!r})
import torch
torch.set_num_threads(1)
from benchkit import tracks
from training import plain
track = tracks.get("tabular")
seeds = int(sys.argv[1])
for arm in ("baseline", "idea"):
    for cfg in track.grid:
        for seed in range(seeds):
            plain(track, seed, cfg["lr"])
'''


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def warm_up(cases) -> None:
    """Each case's command once without training, untimed: the plain script with no seed (its
    imports), each session's collection; then the sessions' caches are cleared again."""
    for label, env, cmd, folder, _ in cases:
        warm = [*cmd[:-1], "0"] if label == "plain" else [*cmd, "--collect-only"]
        subprocess.run(warm, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if label != "plain":
            shutil.rmtree(folder / ".pytest_cache", ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=8, help="the bench's default: 8")
    ap.add_argument("--tree", default=None, help="time the bench with this benchkit checkout")
    ap.add_argument("--warm", type=int, default=0,
                    help="whole untimed rounds before the timed ones (each command also runs "
                         "once untrained first)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--phases", action="store_true",
                    help="time each phase of the sessions too (session_phases.py)")
    ap.add_argument("--against", default=None,
                    help="also time the bench with this checkout, interleaved (first@old, ...)")
    args = ap.parse_args()
    if args.seeds < 2 or args.reps < 1:
        ap.error(f"--seeds {args.seeds} --reps {args.reps}: a bench takes 2 seeds or more "
                 "(--bench-seeds' least) and the figure at least one timed round")
    tree = Path(args.tree).resolve() if args.tree else ROOT
    work = Path(tempfile.mkdtemp(prefix="benchkit-cost-"))
    (work / "plain.py").write_text(PLAIN.format(here=str(HERE)))
    size = [] if args.seeds == 8 else ["--bench-seeds", str(args.seeds)]
    plain_env = dict(os.environ, PYTHONPATH=str(ROOT))
    plain_env.pop("PYTHONDONTWRITEBYTECODE", None)  # python's default: bytecode kept between runs
    cases = [("plain", plain_env, [sys.executable, "plain.py", str(args.seeds)], work, False)]
    sides = [("@old", Path(args.against).resolve())] if args.against else []
    for suffix, code in [*sides, ("", tree)]:
        env = dict(plain_env, PYTHONPATH=str(code))
        folder = work / (suffix.strip("@") or "this")   # each side its own .pytest_cache
        folder.mkdir()
        (folder / "test_aa_tabular.py").write_text(AA_MODULE.format(track="tabular"))
        (folder / "pytest.ini").write_text("[pytest]\n")
        if args.phases:
            session_phases.install(folder)
        bench = [sys.executable, "-m", "pytest", "test_aa_tabular.py", "-q", "-n", "0", *size]
        cases += [(f"first{suffix}", env, bench, folder, True),   # nothing cached
                  (f"fresh{suffix}", env, [*bench, "--bench-fresh"], folder, False)]
    warm_up(cases)
    times: dict[str, dict[str, list[float]]] = {c[0]: {"wall": [], "cpu": []} for c in cases}
    started = time.perf_counter()
    phases: dict[str, list[dict[str, float]]] = {c[0]: [] for c in cases if c[0] != "plain"}
    loads = []
    for rep in range(args.reps + args.warm):  # warm-up rounds are not kept
        for label, env_, cmd, folder, clear in cases:
            if clear:
                shutil.rmtree(folder / ".pytest_cache", ignore_errors=True)
                shutil.rmtree(folder / "reports", ignore_errors=True)
            wall, cpu = timed(cmd, folder, env_)
            loads.append(os.getloadavg()[0])
            if rep >= args.warm:
                times[label]["wall"].append(wall)
                times[label]["cpu"].append(cpu)
                if args.phases and label != "plain":
                    phases[label].append(session_phases.breakdown(
                        session_phases.last(folder), cpu))
            print(f"  {label}: {wall:.1f} s wall, {cpu:.1f} s CPU (load {loads[-1]:.1f})",
                  flush=True)
        if rep == 0:
            print(f"  one round took {time.perf_counter() - started:.0f} s; "
                  f"{args.reps + args.warm - 1} more to go", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    med = {k: {c: statistics.median(v[c]) for c in v} for k, v in times.items()}
    ratios = {k: {c: med[k][c] / med["plain"][c] for c in ("wall", "cpu")}
              for k in med if k != "plain"}
    for label, r in ratios.items():
        print(f"{label}: {med[label]['wall']:.1f} s wall ({med[label]['cpu']:.1f} s CPU) = "
              f"{r['wall']:.2f}x the plain loop's {med['plain']['wall']:.1f} s wall "
              f"({r['cpu']:.2f}x its {med['plain']['cpu']:.1f} s CPU)")
    phase_medians = {k: session_phases.medians(v) for k, v in phases.items() if v}
    for label, m in phase_medians.items():
        print(f"{label} CPU s by phase: " + ", ".join(f"{k} {v:.2f}" for k, v in m.items()))
    print(f"medians of {args.reps}, interleaved; load average during: "
          f"{statistics.median(loads):.1f} (min {min(loads):.1f}, max {max(loads):.1f}) on "
          f"{os.cpu_count()} cores")
    if args.out != "-":
        Path(args.out).write_text(json.dumps({
            "command": "python benchmarks/speed/bench_cost.py " + " ".join(sys.argv[1:]),
            "tree": str(tree), "against": args.against, "runs": 6 * args.seeds,
            "python": platform.python_version(), "cores": os.cpu_count(),
            "load_average_during": {"median": statistics.median(loads), "min": min(loads),
                                    "max": max(loads)},
            "seconds": times, "median_s": med, "ratio_vs_plain": ratios,
            **({"phases_cpu_s": phases, "phases_median_cpu_s": phase_medians}
               if args.phases else {})}, indent=2) + "\n")


if __name__ == "__main__":
    main()
