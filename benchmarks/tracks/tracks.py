"""What size of effect each track can see: per-run time, A/A noise and MDE at 8 seeds.

Per track, one A/A bench at the default protocol, run as the plugin runs it (seed everything
from the seed, build the track's default model, ``Run.fit``) but in one process without pytest.
The "idea" arm is the baseline model built from another init stream
(``torch.manual_seed(seed + IDEA_INIT_OFFSET)``, as benchmarks/calibration/calibration.py does), with the
seed's data and minibatch order: the two arms differ only by chance, so H0 holds exactly. Each
arm selects its config on the validation mean (``stats.select_config``) and the selected
configs' test metrics are compared (``stats.compare``). The A/A noise is the sd (ddof=1) of the
paired test differences; the MDE is ``t(0.975, n-1) * sd / sqrt(n)``, the smallest mean
difference a bench of ``n`` seeds can call significant. Writes benchmarks/results/tracks.json.

    .venv/bin/python benchmarks/tracks/tracks.py [--seeds 8] [--tracks tabular dynamics charlm mnist1d]
    .venv/bin/python benchmarks/tracks/tracks.py --smoke    # 2 seeds, 1 epoch, tabular; writes nothing
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
IDEA_INIT_OFFSET = 1_000_003   # benchmarks/calibration/calibration.py's: the idea arm's init stream
TRACKS = ("tabular", "dynamics", "charlm", "mnist1d")


def train(track, seed: int, cfg: dict, epochs: int | None, init_seed: int | None):
    import torch

    from benchkit.training.run import Run, seed_everything

    seed_everything(seed)
    if init_seed is not None:
        torch.manual_seed(init_seed)
    run = Run(arm="aa", track=track, cfg=cfg, seed=seed, epochs=epochs)
    t0 = time.perf_counter()
    run.fit(track.model())
    return run.val, run.test, time.perf_counter() - t0


def measure(name: str, seeds: int, epochs: int | None, lr: float | None = None) -> dict:
    from benchkit.stats import paired as stats
    from benchkit import tracks

    track = tracks.get(name)
    grid = [dict(c) for c in track.grid] if lr is None else [{"lr": lr}]
    val = {"baseline": [], "idea": []}
    test = {"baseline": [], "idea": []}
    seconds = []
    for cfg in grid:
        rows = {arm: ([], []) for arm in val}
        for seed in range(seeds):
            for arm, init in (("baseline", None), ("idea", seed + IDEA_INIT_OFFSET)):
                v, t, s = train(track, seed, cfg, epochs, init)
                rows[arm][0].append(v)
                rows[arm][1].append(t)
                seconds.append(s)
        for arm in val:
            val[arm].append(rows[arm][0])
            test[arm].append(rows[arm][1])
        print(f"{name} {cfg} baseline val {statistics.fmean(rows['baseline'][0]):.5g}",
              flush=True)
    sel = {arm: stats.select_config(val[arm], track.direction) for arm in val}
    cmp = stats.compare(test["baseline"][sel["baseline"]], test["idea"][sel["idea"]],
                        direction=track.direction)
    diffs = cmp["per_seed_diffs"]
    return {
        "metric": track.metric_name, "direction": track.direction, "grid": grid,
        "epochs": epochs or track.epochs, "seeds": seeds,
        "selected": {arm: grid[i] for arm, i in sel.items()},
        "baseline_mean": statistics.fmean(test["baseline"][sel["baseline"]]),
        "aa_sd": statistics.stdev(diffs), "mde": cmp["mde"], "mde_rel_pct": cmp["mde_rel_pct"],
        "p_value": cmp["p_value"], "per_seed_diffs": diffs,
        "seconds_per_run_median": statistics.median(seconds),
        "val": val, "test": test,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--tracks", nargs="+", default=list(TRACKS), choices=TRACKS)
    ap.add_argument("--out", default=str(RESULTS / "tracks.json"),
                    help="merged into, track by track (so tracks can be run apart)")
    ap.add_argument("--lr", type=float, default=None,
                    help="measure at this one config (no selection), for a track too slow to "
                         "sweep on a busy machine; recorded as such")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)  # benchkit's default: one thread per process
    seeds, epochs, names = (2, 1, ["tabular"]) if args.smoke else (args.seeds, None, args.tracks)
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() and not args.smoke else {"tracks": {}}
    for name in names:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        entry = measure(name, seeds, epochs, args.lr)
        entry["selection"] = ("per arm on the validation mean over the grid" if args.lr is None
                              else f"none: both arms at lr={args.lr} (the grid's optimum)")
        entry.update(seconds=round(time.perf_counter() - t0, 1), load_before=load,
                     load_after=os.getloadavg()[0],
                     command="python benchmarks/tracks/tracks.py " + " ".join(sys.argv[1:]),
                     python=platform.python_version(), torch=torch.__version__)
        result["tracks"][name] = entry
        print(f"{name}: {entry['seconds_per_run_median']:.2f} s/run, A/A sd "
              f"{entry['aa_sd']:.3g}, MDE@{seeds} {entry['mde']:.3g} "
              f"({entry['mde_rel_pct']:.2g}% of the baseline mean)", flush=True)
        if not args.smoke:
            out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
