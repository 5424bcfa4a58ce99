"""A textbook contrast on ``charlm``: cut the transformer's context to the last ``w``
characters and it falls to about the counted ``(w + 1)``-gram (validation after every epoch).

Per seed and window, ``char_transformer(window=w)`` (its first block attends to the last ``w``
positions, the later ones to themselves only: a neural order-``w`` Markov model; ``full``: the
track's model) is trained as the plugin trains a run (``Run``'s seeding and data,
``benchkit.training.loop.train`` with the track's protocol: its epochs, optimizer, schedule and
batch) at ``--lr`` and ``--weight-decay`` (default: the config the A/A bench selects), one thread,
with the validation metric after every epoch and the test metric at the end; the seed's n-gram
floors are recorded beside it. Reported per curve: the relative validation gain over the last
quarter (``benchkit.verdict.convergence``'s rule, positive = better). Results are written after
every run (a partial file is usable).

    nice -n 10 .venv/bin/python benchmarks/tracks/charlm_context.py [--seeds 0 1] \
        [--windows full 2 4]
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "results" / "tracks" / "charlm_context.json"


def train(window: int | None, seed: int, lr: float, weight_decay: float) -> dict:
    from benchkit.tracks import charlm
    from benchkit.tracks.models import char_transformer
    from benchkit.training import loop
    from benchkit.training.run import Run, seed_everything

    track = charlm.TRACK
    seed_everything(seed)
    run = Run(arm="baseline", track=track, cfg={"lr": lr, "weight_decay": weight_decay},
              seed=seed, epochs=track.epochs)
    model = char_transformer(charlm.VOCAB, context=charlm.CONTEXT, window=window)
    vals: list[float] = []
    t0 = time.perf_counter()
    loop.train(model, run.data.train, track, lr=lr, epochs=track.epochs,
               batch_size=track.batch_size, seed=seed, schedule=track.schedule,
               weight_decay=weight_decay,
               on_epoch=lambda done: vals.append(loop.evaluate(model, run.data.val, track)))
    seconds = time.perf_counter() - t0
    e = track.epochs
    start = max(1, int(0.75 * e))
    return {"test": loop.evaluate(model, run.data.test, track), "val": vals[-1],
            "last_quarter_gain": (vals[start - 1] - vals[e - 1]) / vals[start - 1],
            "seconds": round(seconds, 1), "val_per_epoch": vals}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--windows", nargs="+", default=["full", "2", "4"])
    ap.add_argument("--lr", type=float, default=4e-2)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    import torch

    from benchkit.tracks import charlm

    torch.set_num_threads(1)
    out = {"command": "python benchmarks/tracks/charlm_context.py " + " ".join(sys.argv[1:]),
           "python": platform.python_version(), "torch": torch.__version__, "lr": args.lr,
           "weight_decay": args.weight_decay,
           "protocol": charlm.TRACK.protocol(), "floors": [],
           "runs": {w: [] for w in args.windows}}
    for seed in args.seeds:
        out["floors"].append({"seed": seed, **charlm.floors(seed)})
        for w in args.windows:
            row = {"seed": seed, **train(None if w == "full" else int(w), seed, args.lr,
                                               args.weight_decay)}
            out["runs"][w].append(row)
            print(f"seed {seed} window {w}:",
                  {k: v for k, v in row.items() if k != "val_per_epoch"}, flush=True)
            out["summary"] = {f"window {k}": statistics.fmean(r["test"] for r in rows)
                              for k, rows in out["runs"].items() if rows}
            out["summary"]["floors"] = {k: statistics.fmean(f[k] for f in out["floors"])
                                        for k in out["floors"][0] if k != "seed"}
            Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(out["summary"])


if __name__ == "__main__":
    main()
