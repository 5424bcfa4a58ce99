"""Pilot for the technique modules' free settings, on seed 100 (and 101; disjoint from a
bench's seeds, as the tracks' own models were chosen on 100-103), before any bench ran.

- tabular: weight decay of each arm of ``test_tabular_adamw``: Adam + L2 and AdamW, each at
  the decay with the best mean validation MSE at the track's middle lr (2e-3), cosine, 120
  epochs; the gradient norms of the track's baseline (seed 100, lr 2e-3): how often
  ``test_tabular_clipping``'s max norm of 1.0 bites;
- mnist1d (``--track mnist1d``): weight decay of each arm of ``test_adamw``: Adam + L2 (0
  included: the track's baseline) and AdamW, each at the decay with the best mean validation
  accuracy at the track's lr (1e-2, constant, 150 epochs); the gradient norms of the track's
  baseline (seed 100), for ``test_clipping``.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques_pilot.py [--track mnist1d]

Writes benchmarks/results/panel/techniques_pilot.json (tabular) or techniques_pilot_mnist1d.json:
the track's validation and test metric per setting and seed, the norms' quantiles, the CPU
seconds.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from benchkit.tracks import get
from benchkit.training import loop
from benchkit.training.optim import schedule_factor

SEEDS = (100, 101)
LR = 2e-3  # tabular's middle lr; mnist1d's grid has one lr, its own
DECAYS = {"tabular": {"adam": (0.0, 1e-5, 1e-4, 3e-4, 1e-3, 2e-3, 4e-3, 1e-2),
                      "adamw": (1e-2, 5e-2, 1e-1, 2e-1, 3e-1, 1.0)},
          # fewer settings: a run costs 25x tabular's
          "mnist1d": {"adam": (0.0, 1e-5, 1e-4, 1e-3, 3e-3), "adamw": (1e-2, 3e-2, 1e-1)}}
RESULTS = Path(__file__).resolve().parents[1] / "results" / "panel"
OUT = {"tabular": RESULTS / "techniques_pilot.json",
       "mnist1d": RESULTS / "techniques_pilot_mnist1d.json"}


def decay_sweep(track, lr: float) -> dict:
    """Per optimizer and decay: each seed's validation and test metric, and the decay whose
    mean validation metric is best (lowest MSE, highest accuracy: the track's direction)."""
    out: dict = {}
    sign = 1 if track.direction == "higher" else -1
    for name, decays in DECAYS[track.name].items():
        rows = []
        for wd in decays:
            fits = []
            for seed in SEEDS:
                torch.manual_seed(seed)
                fit = loop.fit(track.model(), track.data(seed), track, lr=lr,
                               epochs=track.epochs, batch_size=track.batch_size, seed=seed,
                               optimizer=name, weight_decay=wd, schedule=track.schedule)
                fits.append(fit)
            rows.append({"weight_decay": wd, "val": [round(f.val, 4) for f in fits],
                         "test": [round(f.test, 4) for f in fits],
                         "val_mean": round(float(np.mean([f.val for f in fits])), 4)})
        best = max(rows, key=lambda r: sign * r["val_mean"])
        out[name] = {"rows": rows, "best_weight_decay": best["weight_decay"]}
    return out


def gradient_norms(track, lr: float, seed: int = SEEDS[0]) -> dict:
    """The total gradient norm at every step of the baseline's training (Adam at ``lr``, the
    track's schedule), and the share of steps above 1.0."""
    torch.manual_seed(seed)
    model = track.model()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = -(-len(track.data(seed).train) // track.batch_size) * track.epochs
    factor = (schedule_factor(track.schedule, steps) if track.schedule != "constant"
              else (lambda k: 1.0))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    norms = []
    for epoch in loop.minibatches(track.data(seed).train, batch_size=track.batch_size,
                                  epochs=track.epochs, seed=seed):
        for x, y in epoch:
            value = track.loss(model(x), y)
            opt.zero_grad()
            value.backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))))
            opt.step()
            sched.step()
    n = np.array(norms)
    return {"seed": seed, "lr": lr, "schedule": track.schedule, "steps": len(n),
            "quantiles": {str(q): round(float(np.percentile(n, q)), 3)
                          for q in (5, 25, 50, 75, 95, 100)},
            "share_above_1": round(float((n > 1.0).mean()), 3)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--track", choices=sorted(OUT), default="tabular")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    track = get(args.track)
    cpu = time.process_time()
    lr = LR if args.track == "tabular" else track.grid[0]["lr"]
    result = {"seeds": list(SEEDS), "lr": lr, "decay": decay_sweep(track, lr),
              "gradient_norms": gradient_norms(track, lr)}
    result["cpu_seconds"] = round(time.process_time() - cpu, 1)
    OUT[args.track].write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v["best_weight_decay"] for k, v in result.get("decay", {}).items()}),
          json.dumps(result["gradient_norms"]), result["cpu_seconds"])


if __name__ == "__main__":
    main()
