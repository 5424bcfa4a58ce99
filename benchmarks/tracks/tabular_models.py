"""Which default model beats tabular's strongest floor (RBF kernel ridge) by an A/A MDE?

Each variant trained as the plugin trains a run (``seed_everything``, the track's data, batch,
epochs and cosine schedule), its lr chosen on validation from its own small grid, on seeds 0
and 1; then the chosen tanh MLP at lr 5e-3 for 120 and 180 epochs (is it trained out?).
Writes benchmarks/results/tracks/tabular_models.json.

    nice -n 5 python benchmarks/tracks/tabular_models.py [--seeds 0 1]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "results" / "tracks" / "tabular_models.json"


def mlp(activation, width: int, depth: int):
    from torch import nn

    def make():
        layers, n_in = [], 10
        for _ in range(depth):
            layers += [nn.Linear(n_in, width), activation()]
            n_in = width
        return nn.Sequential(*layers, nn.Linear(n_in, 1))
    return make


def train(track, seed: int, lr: float, epochs: int) -> tuple[float, float]:
    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    data = track.data(seed)
    seed_everything(seed)
    model = track.model()
    loop.train(model, data.train, track, lr=lr, epochs=epochs, batch_size=track.batch_size,
               seed=seed, schedule=track.schedule)
    return loop.evaluate(model, data.val, track), loop.evaluate(model, data.test, track)


def main() -> None:
    import torch
    from torch import nn

    from benchkit.tracks import tabular

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = ap.parse_args()
    torch.set_num_threads(1)
    variants = {"relu 10-64-64-1 (mlp_tiny)": (mlp(nn.ReLU, 64, 2), (2e-3, 5e-3)),
                "tanh 10-64-64-1 (mlp_tanh)": (mlp(nn.Tanh, 64, 2), (2e-3, 5e-3, 1e-2)),
                "silu 10-128-128-1": (mlp(nn.SiLU, 128, 2), (2e-3, 5e-3)),
                "tanh 10-64-1": (mlp(nn.Tanh, 64, 1), (5e-3, 1e-2, 2e-2)),
                "relu 10-256-256-1": (mlp(nn.ReLU, 256, 2), (1e-3, 2e-3, 5e-3))}
    out = {"command": "python benchmarks/tracks/tabular_models.py " + " ".join(sys.argv[1:]),
           "variants": [], "budget": []}
    for name, (make, lrs) in variants.items():
        track = dataclasses.replace(tabular.TRACK, make_model=make)
        for seed in args.seeds:
            start = time.perf_counter()
            runs = [(*train(track, seed, lr, track.epochs), lr) for lr in lrs]
            val, test, lr = min(runs)
            out["variants"].append({"model": name, "seed": seed, "lr": lr, "val": val,
                                    "test": test, "test_per_lr": {str(r[2]): r[1] for r in runs},
                                    "seconds_per_run": (time.perf_counter() - start) / len(lrs)})
            print(out["variants"][-1], flush=True)
    track = dataclasses.replace(tabular.TRACK, make_model=variants["tanh 10-64-64-1 (mlp_tanh)"][0])
    for seed in args.seeds:
        for epochs in (120, 180):
            val, test = train(track, seed, 5e-3, epochs)
            out["budget"].append({"seed": seed, "epochs": epochs, "lr": 5e-3, "val": val,
                                  "test": test})
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
