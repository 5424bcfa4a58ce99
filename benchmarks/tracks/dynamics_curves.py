"""Choosing the ``dynamics`` protocol by measurement: per candidate (horizon, observation noise,
train windows), the floors on seeds' splits and ``rnn_small``'s validation MSE after every epoch
under the track's optimizer and schedule (or the one given), per lr, with the test MSE and seconds
of each run (one thread). Writes results/tracks/dynamics_<tag>.json.

    nice -n 10 .venv/bin/python benchmarks/tracks/dynamics_curves.py --tag curves \\
        --epochs 64 --lrs 5e-3 1e-2 2e-2 --seeds 0 1   # defaults: the track's protocol
    nice -n 10 .venv/bin/python benchmarks/tracks/dynamics_curves.py --tag last --inputs last
    nice -n 10 .venv/bin/python benchmarks/tracks/dynamics_curves.py --tag floors --floors-only
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[1] / "results" / "tracks"
TIME_ORDER = np.random.default_rng(0).permutation(16)  # one fixed shuffle of the 16 steps
INPUTS = {"window": lambda x: x,                    # the track's inputs
          "last": lambda x: x[:, -1:],              # the last noisy state alone: no memory
          "shuffled": lambda x: x[:, TIME_ORDER]}   # the window's time order destroyed


def main() -> None:
    from benchkit.tracks import dynamics

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tag", required=True)
    ap.add_argument("--horizon", type=int, default=dynamics.HORIZON)
    ap.add_argument("--noise", type=float, default=dynamics.NOISE)
    ap.add_argument("--n-train", type=int, default=dynamics.N_TRAIN)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--schedule", default=None)
    ap.add_argument("--lrs", type=float, nargs="+", default=None)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--floors-only", action="store_true")
    ap.add_argument("--inputs", choices=sorted(INPUTS), default="window",
                    help="what the GRU sees of each window (the contrast)")
    args = ap.parse_args()
    track = dynamics.TRACK
    epochs = args.epochs or track.epochs
    batch = args.batch_size or track.batch_size
    schedule = args.schedule or track.schedule
    lrs = args.lrs or [c["lr"] for c in track.grid]
    sizes = (args.n_train, dynamics.N_VAL, dynamics.N_TEST)
    out = {"command": "python benchmarks/tracks/dynamics_curves.py " + " ".join(sys.argv[1:]),
           "horizon": args.horizon, "noise": args.noise, "sizes": sizes, "epochs": epochs,
           "batch_size": batch, "schedule": schedule, "inputs": args.inputs, "floors": {},
           "runs": {}}
    path = RESULTS / f"dynamics_{args.tag}.json"
    for seed in args.seeds:
        splits = dynamics.windows(seed, horizon=args.horizon, noise=args.noise, sizes=sizes)
        out["floors"][str(seed)] = dynamics.floor_values(splits)
        print(seed, {k: f"{v:.4g}" for k, v in out["floors"][str(seed)].items()}, flush=True)
    out["floors_mean"] = {k: float(np.mean([f[k] for f in out["floors"].values()]))
                          for k in out["floors"][str(args.seeds[0])]}
    if not args.floors_only:
        runs(args, out, track, sizes, epochs, batch, schedule, lrs)
    path.write_text(json.dumps(out, indent=1) + "\n")


def runs(args, out, track, sizes, epochs, batch, schedule, lrs) -> None:
    import torch

    from benchkit.tracks import dynamics
    from benchkit.tracks.base import Data, Split
    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    torch.set_num_threads(1)
    for seed in args.seeds:
        splits = dynamics.windows(seed, horizon=args.horizon, noise=args.noise, sizes=sizes)
        view = INPUTS[args.inputs]
        data = Data(*(Split(torch.from_numpy(np.ascontiguousarray(view(a))), torch.from_numpy(b))
                      for a, b in splits))
        for lr in lrs:
            seed_everything(seed)
            model, vals = track.model(), []
            t0 = time.perf_counter()
            diverged, _ = loop.train(model, data.train, track, lr=lr, epochs=epochs,
                                     batch_size=batch, seed=seed, schedule=schedule,
                                     on_epoch=lambda d: vals.append(
                                         loop.evaluate(model, data.val, track)))
            seconds = time.perf_counter() - t0
            test = loop.evaluate(model, data.test, track)
            q = max(1, int(0.75 * epochs))
            gain = (vals[q - 1] - vals[-1]) / vals[q - 1] if len(vals) == epochs else None
            out["runs"][f"seed{seed}-lr{lr:g}"] = {
                "val_per_epoch": vals, "test": test, "diverged": diverged,
                "seconds": round(seconds, 2), "last_quarter_gain": gain}
            print(seed, lr, f"test {test:.3g} gain {gain} {seconds:.1f}s",
                  [f"{vals[i - 1]:.3g}" for i in sorted({epochs // 4, epochs // 2, q, epochs})
                   if 0 < i <= len(vals)], flush=True)


if __name__ == "__main__":
    main()
