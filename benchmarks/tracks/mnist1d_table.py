"""The MNIST-1D paper's table, reproduced on benchkit's ``mnist1d`` track.

Greydanus & Kobak (ICML 2024; the ``mnist1d`` repository's README) report test accuracy of
logistic regression 32%, MLP 68%, CNN 94%, GRU 91%, and with the 40 positions shuffled MLP 68%,
CNN 56%, GRU 57%. Their protocol: Adam at lr 1e-2, batch 100, 6,000 steps (150 epochs of 4,000
examples), the final model's test accuracy. Here each model of
:mod:`benchkit.tracks.models` (``mnist1d_logistic``, ``mnist1d_mlp``, ``mnist1d_cnn``,
``mnist1d_gru``) is trained as the plugin trains a run (every RNG seeded from the seed,
``Run.fit`` with the track's protocol at ``lr=1e-2`` and 150 epochs) on each seed's dataset,
plain and shuffled (``shuffle_seq``: one permutation per seed, drawn by the package), one
thread. The scikit-learn logistic-regression floor of each dataset is recorded beside them.
Results are written after every run (a partial file is usable).

    nice -n 10 .venv/bin/python benchmarks/tracks/mnist1d_table.py [--seeds 4] [--models ...]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "results" / "tracks" / "mnist1d_table.json"
MODELS = ("logistic", "mlp", "cnn", "gru")
PUBLISHED = {"plain": {"logistic": 0.32, "mlp": 0.68, "cnn": 0.94, "gru": 0.91},
             "shuffled": {"logistic": 0.32, "mlp": 0.68, "cnn": 0.56, "gru": 0.57}}


def variant(shuffled: bool):
    from benchkit.tracks import mnist1d

    if not shuffled:
        return mnist1d.TRACK
    return dataclasses.replace(
        mnist1d.TRACK, name="mnist1d_shuffled",
        make_data=lambda seed: mnist1d.to_data(mnist1d.arrays(seed, True)),
        make_floors=lambda seed: mnist1d.floors_of(mnist1d.arrays(seed, True)))


def train(track, model_name: str, seed: int, lr: float, epochs: int) -> dict:
    from benchkit.tracks import models
    from benchkit.training.run import Run, seed_everything

    seed_everything(seed)
    run = Run(arm="baseline", track=track, cfg={"lr": lr}, seed=seed, epochs=epochs)
    t0 = time.perf_counter()
    run.fit(getattr(models, f"mnist1d_{model_name}")())
    return {"val": run.val, "test": run.test, "seconds": round(time.perf_counter() - t0, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--epochs", type=int, default=150)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    result = {"command": "python benchmarks/tracks/mnist1d_table.py " + " ".join(sys.argv[1:]),
              "published": PUBLISHED, "epochs": args.epochs, "lr": args.lr,
              "python": platform.python_version(), "torch": torch.__version__,
              "runs": {"plain": {m: [] for m in args.models},
                       "shuffled": {m: [] for m in args.models}},
              "floors": {"plain": [], "shuffled": []}}
    for seed in range(args.seeds):
        for name, shuffled in (("plain", False), ("shuffled", True)):
            track = variant(shuffled)
            result["floors"][name].append(track.floors([seed])["logistic_regression"])
            for m in args.models:
                row = train(track, m, seed, args.lr, args.epochs)
                result["runs"][name][m].append({"seed": seed, **row})
                print(f"seed {seed} {name} {m}: test {row['test']:.3f} ({row['seconds']} s)",
                      flush=True)
                result["summary"] = summarize(result)
                Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    for name, rows in result["summary"].items():
        print(name, rows)


def summarize(result: dict) -> dict:
    out = {}
    for name, by_model in result["runs"].items():
        out[name] = {}
        for m, rows in by_model.items():
            tests = [r["test"] for r in rows]
            if tests:
                out[name][m] = {"mean": statistics.fmean(tests), "n": len(tests),
                                "sd": statistics.stdev(tests) if len(tests) > 1 else None,
                                "published": PUBLISHED[name][m]}
        floors = result["floors"][name]
        if floors:
            out[name]["floor_logistic_regression"] = statistics.fmean(floors)
    return out


if __name__ == "__main__":
    main()
