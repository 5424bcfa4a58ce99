"""Each built-in track's floors on seeds 0..7 (the seeds of the A/A benches in
benchmarks/results/tracks.json and results/tracks/mnist1d_aa.json), beside the baseline's
test mean there: how far the default model is from the best trivial baseline.

    nice -n 10 .venv/bin/python benchmarks/tracks/floors.py [--seeds 8]

Writes benchmarks/results/tracks/floors.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
AA = {"tabular": RESULTS / "tracks.json", "dynamics": RESULTS / "tracks.json",
      "charlm": RESULTS / "tracks.json", "mnist1d": RESULTS / "tracks" / "mnist1d_aa.json"}


def baseline_mean(name: str) -> float | None:
    path = AA[name]
    entry = json.loads(path.read_text())["tracks"].get(name) if path.exists() else None
    return None if entry is None else entry["baseline_mean"]


def main() -> None:
    from benchkit import tracks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    args = ap.parse_args()
    out = {"command": "python benchmarks/tracks/floors.py " + " ".join(sys.argv[1:]),
           "seeds": list(range(args.seeds)), "tracks": {}}
    for name in AA:
        track = tracks.get(name)
        t0 = time.perf_counter()
        per_seed = [track.make_floors(s) for s in range(args.seeds)]
        floors = {k: statistics.fmean(f[k] for f in per_seed) for k in per_seed[0]}
        pick = min if track.direction == "lower" else max
        best = pick(floors, key=floors.__getitem__)
        base = baseline_mean(name)
        gap = None if base is None else (
            (floors[best] - base) if track.direction == "lower" else (base - floors[best]))
        out["tracks"][name] = {
            "metric": track.metric_name, "direction": track.direction, "floors": floors,
            "per_seed": per_seed, "best_floor": best, "baseline_mean": base,
            "baseline_better_by_rel": None if gap is None else gap / abs(floors[best]),
            "seconds": round(time.perf_counter() - t0, 2)}
        print(name, {k: v for k, v in out["tracks"][name].items() if k != "per_seed"},
              flush=True)
    (RESULTS / "tracks").mkdir(exist_ok=True)
    (RESULTS / "tracks" / "floors.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
