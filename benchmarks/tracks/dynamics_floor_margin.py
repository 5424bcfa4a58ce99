"""dynamics: the baseline against a window MLP trained like it (issue 54), by training-set size.

Per training-set size (``--n-train``) and seed, the windows of :func:`dynamics.windows` at
that size (the track's validation and test sizes unless ``--n-val``, ``--n-test``), then

* the baseline (``--model``: ``rnn_small`` the GRU(64), or a name in benchkit.tracks.models
  with integer keyword arguments, ``window_mlp:hidden=256,depth=3``, or this script's
  ``low_rank_window_mlp:rank=6``) at each lr of ``--lrs``,
  trained as the plugin trains a run (the run's seeding, the track's optimizer, schedule,
  batch size and ``--epochs``);
* the window MLP (tanh 128-128 on the flattened window) trained the same way at each lr of
  ``--mlp-lrs``, :func:`benchkit.tracks.trained_floors.trained_floor` (the lr chosen per seed on
  validation, as the track's floors are).

Per size: each baseline lr's validation and test per seed, the lr with the best mean
validation (the bench's selection) and its test mean; the MLP's test per seed and its selected
lrs; the CPU seconds of one baseline run. Writes
benchmarks/results/tracks/dynamics_floor_margin_<tag>.json.

    nice -n 15 .venv/bin/python benchmarks/tracks/dynamics_floor_margin.py --tag n4000 \\
        --n-train 4000 --seeds 2
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "tracks"
MLP_LRS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


def low_rank_window_mlp(rank: int = 6, hidden: int = 128):
    """A window MLP whose first layer is of rank ``rank``: a linear map of the flattened window
    to ``rank`` numbers (a learned filter of the state), then tanh ``hidden``-``hidden``."""
    from torch import nn

    return nn.Sequential(nn.Flatten(), nn.Linear(48, rank), nn.Linear(rank, hidden), nn.Tanh(),
                         nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 3))


def splits_data(seed: int, n_train: int, n_val: int | None, n_test: int | None):
    import torch

    from benchkit.tracks import dynamics
    from benchkit.tracks.base import Data, Split

    sizes = (n_train, n_val or dynamics.N_VAL, n_test or dynamics.N_TEST)
    parts = dynamics.windows(seed, sizes=sizes)
    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tag", required=True)
    ap.add_argument("--n-train", type=int, nargs="+", default=[1000])
    ap.add_argument("--n-val", type=int, default=None)
    ap.add_argument("--n-test", type=int, default=None)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--model", default="rnn_small")
    ap.add_argument("--lrs", type=float, nargs="*", default=[2e-2, 4e-2, 8e-2])
    ap.add_argument("--mlp-lrs", type=float, nargs="*", default=list(MLP_LRS))
    ap.add_argument("--epochs", type=int, default=None)
    args = ap.parse_args()
    import dataclasses

    import torch

    from benchkit.tracks import dynamics, models
    from benchkit.tracks.trained_floors import trained_floor
    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    torch.set_num_threads(1)
    track = dynamics.TRACK
    if args.epochs is not None:
        track = dataclasses.replace(track, epochs=args.epochs)
    name, _, given = args.model.partition(":")
    kwargs = {k: int(v) for k, v in (kv.split("=") for kv in given.split(",") if kv)}
    local = {"low_rank_window_mlp": low_rank_window_mlp}
    make = functools.partial(local.get(name) or getattr(models, name), **kwargs)
    out = {"command": "python benchmarks/tracks/dynamics_floor_margin.py " + " ".join(sys.argv[1:]),
           "model": args.model, "epochs": track.epochs, "batch_size": track.batch_size,
           "schedule": track.schedule, "sizes": []}
    for n_train in args.n_train:
        row: dict = {"n_train": n_train, "baseline": {}, "mlp": []}
        cpu_per_run = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            data = splits_data(seed, n_train, args.n_val, args.n_test)
            for lr in args.lrs:
                seed_everything(seed)
                cpu = time.process_time()
                r = loop.fit(make(), data, track, lr=lr, epochs=track.epochs,
                             batch_size=track.batch_size, seed=seed, schedule=track.schedule)
                cpu_per_run.append(time.process_time() - cpu)
                row["baseline"].setdefault(str(lr), []).append(
                    {"seed": seed, "val": r.val, "test": r.test})
            if args.mlp_lrs:
                f = trained_floor(track, lambda: models.window_mlp(), data, args.mlp_lrs,
                                  seed=seed)
                row["mlp"].append({"seed": seed, "test": f.test, "lr": f.lr,
                                   "val_by_lr": {str(k): v for k, v in f.val_by_lr.items()}})
            print(n_train, seed, {lr: round(v[-1]["test"], 5) for lr, v in
                                  row["baseline"].items()},
                  row["mlp"][-1]["test"] if row["mlp"] else None, flush=True)
        if args.lrs:
            best = min(row["baseline"], key=lambda lr: statistics.fmean(
                r["val"] for r in row["baseline"][lr]))
            row["baseline_selected_lr"] = float(best)
            row["baseline_test"] = [r["test"] for r in row["baseline"][best]]
            row["baseline_cpu_seconds_median"] = round(statistics.median(cpu_per_run), 2)
        if row["mlp"]:
            row["mlp_test"] = [r["test"] for r in row["mlp"]]
        out["sizes"].append(row)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"dynamics_floor_margin_{args.tag}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps([{k: v for k, v in r.items() if k not in ("baseline", "mlp")}
                      for r in out["sizes"]], indent=1))


if __name__ == "__main__":
    main()
