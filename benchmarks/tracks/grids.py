"""Where the learning-rate optimum of each arm lies, and the default grid that brackets it.

For the tabular and dynamics tracks, trains every arm that benches on the track (the track's
default model, and both arms of the shipped idea module) over a wide ladder of learning rates
(1-2-5 per decade) and a few seeds, in one process, at the track's default protocol. Each arm's
optimum is the ladder value with the best validation mean (the rule benchkit selects by). The
recommended grid runs from one ladder step below the lowest arm's optimum to one step above the
highest's, so every arm's optimum is interior with a step of margin. Writes
benchmarks/results/grids.json; the grids in benchkit/tracks/*.py are set from it
(tests/tracks/test_tracks.py checks they still bracket the recorded optima).

    .venv/bin/python benchmarks/tracks/grids.py [--seeds 3] [--tracks tabular dynamics]
    .venv/bin/python benchmarks/tracks/grids.py --smoke  # 2 seeds, 1 epoch, 3 rates; writes nothing
    .venv/bin/python benchmarks/tracks/grids.py --tracks tabular --default-only \
        --out benchmarks/results/tracks/tabular_grid.json  # one track's file; the test reads both
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
LADDER = [m * 10.0 ** e for e in range(-5, 0) for m in (1, 2, 5)]
SWEEP = {"tabular": (5e-4, 5e-2), "dynamics": (5e-3, 2e-1)}   # the ladder's span per track
IDEAS = {"tabular": "ideas/test_task_visible_pruning.py",
         "dynamics": "ideas/test_moment_preserving_compression.py"}


def default_arm(run):
    run.fit(run.track.model())


def arms_of(track: str, default_only: bool = False) -> dict:
    """name -> arm function: the track's default model, then the shipped idea's two arms."""
    arms = {"default_model": default_arm}
    if default_only:
        return arms
    spec = importlib.util.spec_from_file_location(f"idea_{track}", ROOT / IDEAS[track])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, obj in vars(module).items():
        for mark in getattr(obj, "pytestmark", []):
            if mark.name == "arm":
                arms[f"{Path(IDEAS[track]).stem}::{name} ({mark.args[0]})"] = obj
    return arms


def sweep(track_name: str, seeds: int, epochs: int | None, smoke: bool,
          default_only: bool = False) -> dict:
    from benchkit import tracks
    from benchkit.training.run import Run, seed_everything

    track = tracks.get(track_name)
    lo, hi = SWEEP[track_name]
    ladder = [lr for lr in LADDER if lo * 0.99 <= lr <= hi * 1.01]
    if smoke:
        ladder = ladder[:3]
    out = {}
    for arm, fn in arms_of(track_name, default_only).items():
        rows = []
        for lr in ladder:
            vals, tests, secs = [], [], []
            for seed in range(seeds):
                run = Run(arm="baseline", track=track, cfg={"lr": lr}, seed=seed, epochs=epochs)
                seed_everything(seed)
                t0 = time.perf_counter()
                fn(run)
                secs.append(time.perf_counter() - t0)
                vals.append(run.val if not run.diverged else float("inf"))
                tests.append(run.test if not run.diverged else float("inf"))
            rows.append({"lr": lr, "val_mean": statistics.fmean(vals),
                         "test_mean": statistics.fmean(tests), "val": vals, "test": tests,
                         "seconds_per_run": statistics.median(secs)})
            print(f"{track_name} {arm} lr={lr:g} val={rows[-1]['val_mean']:.5g}", flush=True)
        best = (min if track.direction == "lower" else max)(rows, key=lambda r: r["val_mean"])
        out[arm] = {"rows": rows, "optimum_lr": best["lr"]}
    return {"ladder": ladder, "epochs": epochs or track.epochs, "arms": out,
            "recommended_grid": recommend(ladder, [a["optimum_lr"] for a in out.values()]),
            "grid_when_measured": [c["lr"] for c in track.grid]}


def recommend(ladder: list[float], optima: list[float]) -> list[float] | None:
    """One ladder step below the lowest optimum to one above the highest (at least 3 points);
    None when an optimum sits at the ladder's end (the sweep was too narrow)."""
    lo, hi = ladder.index(min(optima)), ladder.index(max(optima))
    if lo == 0 or hi == len(ladder) - 1:
        return None
    lo, hi = lo - 1, hi + 1
    while hi - lo < 2:
        hi += 1
    return ladder[lo:hi + 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--tracks", nargs="+", default=list(SWEEP), choices=list(SWEEP))
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--default-only", action="store_true",
                    help="sweep the track's default model only, not the shipped idea's arms")
    ap.add_argument("--out", type=Path, default=RESULTS / "grids.json")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    import torch

    torch.set_num_threads(1)  # benchkit's default: one thread per process
    seeds, epochs = (2, 1) if args.smoke else (args.seeds, None)
    t0 = time.perf_counter()
    result = {"command": "python benchmarks/tracks/grids.py " + " ".join(sys.argv[1:]),
              "seeds": seeds, "python": platform.python_version(),
              "torch": torch.__version__, "machine": platform.machine(), "tracks": {}}
    for name in args.tracks:
        result["tracks"][name] = sweep(name, seeds, epochs, args.smoke, args.default_only)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    for name, r in result["tracks"].items():
        optima = {arm: a["optimum_lr"] for arm, a in r["arms"].items()}
        print(f"{name}: optima {optima} -> grid {r['recommended_grid']}")
    if any(r["recommended_grid"] is None for r in result["tracks"].values()) and not args.smoke:
        raise SystemExit("an optimum sits at the end of its sweep: widen SWEEP and rerun")
    if not args.smoke:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
