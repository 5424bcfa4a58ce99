"""Exploration for reworking ``dynamics``: does predicting further ahead make the track need
a trained model? Per horizon H (observations ahead; the track predicts H = 1), the floors
(persistence, linear and quadratic least squares on the last two states) and ``rnn_small``
trained as a run (lr 1e-2, Adam, batch 32, the track's schedule) for a few epoch budgets, on
one seed. results/tracks/dynamics_horizon.json records what the rework started from (constant
lr, the track then predicting one step ahead); benchmarks/tracks/dynamics_curves.py measures
the shipped protocol.

    nice -n 10 .venv/bin/python benchmarks/tracks/dynamics_horizon.py [--horizons 1 5 10] \
        [--epochs 8 32]
    nice -n 10 .venv/bin/python benchmarks/tracks/dynamics_horizon.py --curves 5 --epochs 128

``--curves H``: validation after every epoch at horizon H, seeds 0 and 1, lr 5e-3 / 1e-2 / 2e-2,
for ``max(--epochs)`` epochs; writes results/tracks/dynamics_horizon<H>_curves.json.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "results" / "tracks" / "dynamics_horizon.json"


def data_at(horizon: int, seed: int):
    """Clean windows of 16 states, the target ``horizon`` observations after the last (the
    track's data without its observation noise). The JSON files were recorded when the
    normalisation statistics also counted the targets: numbers differ in the last digits."""
    from benchkit.tracks import dynamics

    return list(dynamics.windows(seed, horizon=horizon, noise=0.0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizons", type=int, nargs="+", default=[1, 5, 10])
    ap.add_argument("--epochs", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--curves", type=int, default=None, metavar="H")
    args = ap.parse_args()
    if args.curves is not None:
        return curves(args.curves, max(args.epochs))
    import torch

    from benchkit.tracks import dynamics, floors
    from benchkit.tracks.base import Data, Split
    from benchkit.training.run import Run, seed_everything

    torch.set_num_threads(1)
    out = {"command": "python benchmarks/tracks/dynamics_horizon.py " + " ".join(sys.argv[1:]),
           "seed": args.seed, "horizons": {}}
    for h in args.horizons:
        parts = data_at(h, args.seed)
        (x, y), _, (xt, yt) = parts
        l2, l2t = x[:, -2:].reshape(400, -1), xt[:, -2:].reshape(400, -1)
        row = {"floors": {
            "persistence": float(np.mean((xt[:, -1].astype(np.float64) - yt) ** 2)),
            "linear": floors.least_squares_mse(l2, y, l2t, yt),
            "quadratic": floors.least_squares_mse(floors.quadratic_features(l2), y,
                                                 floors.quadratic_features(l2t), yt),
            "quadratic_last4": floors.least_squares_mse(
                floors.quadratic_features(x[:, -4:].reshape(400, -1)), y,
                floors.quadratic_features(xt[:, -4:].reshape(400, -1)), yt)},
            "gru": {}}
        data = Data(*(Split(torch.from_numpy(a), torch.from_numpy(b)) for a, b in parts))
        track = dataclasses.replace(dynamics.TRACK, make_data=lambda s, d=data: d)
        for e in args.epochs:
            seed_everything(args.seed)
            run = Run(arm="baseline", track=track, cfg={"lr": 1e-2}, seed=args.seed, epochs=e)
            t0 = time.perf_counter()
            run.fit(track.model())
            row["gru"][str(e)] = {"test": run.test, "val": run.val,
                                  "seconds": round(time.perf_counter() - t0, 1)}
        out["horizons"][str(h)] = row
        print(h, row, flush=True)
        OUT.write_text(json.dumps(out, indent=1) + "\n")


def curves(horizon: int, epochs: int) -> None:
    import torch

    from benchkit.tracks import dynamics
    from benchkit.tracks.base import Data, Split
    from benchkit.training import loop
    from benchkit.training.run import Run, seed_everything

    torch.set_num_threads(1)
    out = {"command": "python benchmarks/tracks/dynamics_horizon.py " + " ".join(sys.argv[1:]),
           "horizon": horizon, "val_per_epoch": {}}
    for seed in (0, 1):
        parts = data_at(horizon, seed)
        data = Data(*(Split(torch.from_numpy(a), torch.from_numpy(b)) for a, b in parts))
        track = dataclasses.replace(dynamics.TRACK, make_data=lambda s, d=data: d)
        for lr in (5e-3, 1e-2, 2e-2):
            seed_everything(seed)
            run = Run(arm="baseline", track=track, cfg={"lr": lr}, seed=seed, epochs=epochs)
            model, vals = track.model(), []
            loop.train(model, run.data.train, track, lr=lr, epochs=epochs, batch_size=32,
                       seed=seed, on_epoch=lambda d: vals.append(
                           loop.evaluate(model, run.data.val, track)))
            out["val_per_epoch"][f"seed{seed}-lr{lr:g}"] = vals
            print(seed, lr, [f"{vals[i - 1]:.2e}" for i in (8, 16, 32, 64, epochs)], flush=True)
    path = OUT.with_name(f"dynamics_horizon{horizon}_curves.json")
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
