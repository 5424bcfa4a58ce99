"""How -n 2 scales with the size of a bench: the A/A bench of speed.py at several seed counts.

A script, not a test. For each seed count it times ``pytest -n 0`` and ``pytest -n 2``
(cold workers; medians of REPS, interleaved) and fits, over all seed counts,
``time = fixed + runs * per_run`` for each mode. The fit separates what -n 2 can split (the
training) from what every process pays once (start-up, the torch import, the report): the
speedup tends to ``per_run(-n 0) / per_run(-n 2)`` for a long bench, and a short bench is
bounded by the fixed parts. Writes benchmarks/results/scaling.json.

    .venv/bin/python benchmarks/speed/scaling.py [--reps 3] [--track tabular] [--seeds 8 16 32]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
sys.path.insert(0, str(HERE))

from speed import aa_dir, pytest_cmd, timed  # noqa: E402


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (intercept, slope) of ys over xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys))
             / sum((x - mx) ** 2 for x in xs))
    return my - slope * mx, slope


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--track", default="tabular")
    ap.add_argument("--seeds", type=int, nargs="+", default=[8, 16, 32])
    args = ap.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as speed.py: the bytecode cache on
    measure(args, env)


def measure(args, env) -> None:
    d = aa_dir(args.track)
    modes = {"n0": [], "n2": ["-n", "2"]}
    commands = {(seeds, mode): pytest_cmd(args.track, "-p", "no:cacheprovider",
                                          "--bench-seeds", str(seeds), *extra)
                for seeds in args.seeds for mode, extra in modes.items()}
    timed(commands[(args.seeds[0], "n0")], d, env)  # warm-up, not timed
    times = {key: [] for key in commands}
    for _ in range(args.reps):
        for key, cmd in commands.items():
            times[key].append(timed(cmd, d, env))
    shutil.rmtree(d, ignore_errors=True)
    runs_per_seed = 6  # 2 arms x the track's 3 learning rates
    rows = []
    for seeds in args.seeds:
        n0 = statistics.median(times[(seeds, "n0")])
        n2 = statistics.median(times[(seeds, "n2")])
        rows.append({"seeds": seeds, "runs": seeds * runs_per_seed, "n0_s": n0, "n2_s": n2,
                     "speedup": n0 / n2, "all_n0_s": times[(seeds, "n0")],
                     "all_n2_s": times[(seeds, "n2")]})
    fits = {}
    for mode in modes:
        fixed, per_run = fit_line([r["runs"] for r in rows], [r[f"{mode}_s"] for r in rows])
        fits[mode] = {"fixed_s": fixed, "per_run_s": per_run}
    result = {"track": args.track, "cores": os.cpu_count(), "reps": args.reps, "rows": rows,
              "fit": fits,
              "speedup_limit_long_bench": fits["n0"]["per_run_s"] / fits["n2"]["per_run_s"]}
    (RESULTS / "scaling.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"A/A bench on {args.track}, {os.cpu_count()} cores, medians of {args.reps}:")
    print("| seeds | runs | pytest -n 0 | pytest -n 2 | -n 2 speedup |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['seeds']} | {r['runs']} | {r['n0_s']:.2f} s | {r['n2_s']:.2f} s | "
              f"{r['speedup']:.2f}x |")
    for mode, f in fits.items():
        print(f"fit {mode}: {f['fixed_s']:.2f} s fixed + {1000 * f['per_run_s']:.1f} ms per run")
    print(f"speedup limit of a long bench: {result['speedup_limit_long_bench']:.2f}x")


if __name__ == "__main__":
    main()
