"""Is tabular's baseline trained out, and does the track reproduce a textbook contrast?

1. Curves: per grid config and seed, the default model trained as the plugin trains a run
   (``Run``'s seeding, the track's schedule) for the default epochs with validation after every
   epoch, and again for twice the epochs (its own cosine over the longer run). Reported: the
   last-quarter validation gain (``benchkit.verdict.convergence``'s rule, positive = better) and
   the gain of the doubled run's end over the default run's end.
2. Data scaling: the MLP (lr chosen on validation from the grid) and the floors fitted on the
   first n train rows of each seed, n = 125 ... 2000: a flexible model loses to the quadratic
   closed form on few rows and overtakes it with more (the bias-variance crossover).

Writes benchmarks/results/tracks/tabular_convergence.json.

    nice -n 10 .venv/bin/python benchmarks/tracks/tabular_curves.py [--seeds 2]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "tracks"
SIZES = (125, 250, 500, 1000, 2000)


def fit(track, data, seed, lr, epochs, curve=None):
    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    seed_everything(seed)
    model = track.model()
    on_epoch = None if curve is None else (
        lambda done: curve.append(round(loop.evaluate(model, data.val, track), 5)))
    loop.train(model, data.train, track, lr=lr, epochs=epochs, batch_size=track.batch_size,
               seed=seed, schedule=track.schedule, on_epoch=on_epoch)
    return loop.evaluate(model, data.val, track), loop.evaluate(model, data.test, track)


def gain(before, after):
    return round((before - after) / before, 4)  # lower is better


def main() -> None:
    import torch

    from benchkit.tracks import floors, tabular
    from benchkit.tracks.base import Data, Split

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    track, e = tabular.TRACK, tabular.TRACK.epochs
    out = {"command": "python benchmarks/tracks/tabular_curves.py " + " ".join(sys.argv[1:]),
           "protocol": track.protocol(), "configs": [], "scaling": []}
    for cfg in track.grid:
        t0, row = time.perf_counter(), {"cfg": dict(cfg), "val_per_epoch": []}
        for seed in range(args.seeds):
            curve: list[float] = []
            val, test = fit(track, track.data(seed), seed, cfg["lr"], e, curve)
            val2, test2 = fit(track, track.data(seed), seed, cfg["lr"], 2 * e)
            row["val_per_epoch"].append(curve)
            for key, value in (("val", val), ("test", test), ("val_2x", val2),
                               ("test_2x", test2), ("last_quarter_gain",
                                                    gain(curve[int(0.75 * e) - 1], curve[-1])),
                               ("gain_2x", gain(val, val2))):
                row.setdefault(key, []).append(round(value, 5))
        row["seconds_per_run"] = round((time.perf_counter() - t0) / (3 * args.seeds), 2)
        out["configs"].append(row)
        print({k: v for k, v in row.items() if k != "val_per_epoch"}, flush=True)
    for seed in range(args.seeds):
        full = track.data(seed)
        (x, y), _, (xt, yt) = tabular.arrays(seed)
        for n in SIZES:
            data = Data(Split(full.train.x[:n], full.train.y[:n]), full.val, full.test)
            runs = [fit(track, data, seed, cfg["lr"], e) for cfg in track.grid]
            val, test = min(runs)
            q = floors.least_squares_mse(floors.quadratic_features(x[:n]), y[:n],
                                        floors.quadratic_features(xt), yt)
            row = {"seed": seed, "n_train": n, "mlp_test": round(test, 4),
                   "quadratic": round(q, 4),
                   "linear": round(floors.least_squares_mse(x[:n], y[:n], xt, yt), 4)}
            out["scaling"].append(row)
            print(row, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tabular_convergence.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
