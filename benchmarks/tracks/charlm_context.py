"""A textbook contrast on ``charlm``: cut the transformer's context to the last ``w``
characters and it falls to about the counted ``(w + 1)``-gram.

Per seed, ``char_transformer(window=w)`` (its first block attends to the last ``w`` positions,
the later ones to themselves only: a neural order-``w`` Markov model) is trained as the plugin
trains a run (every RNG seeded from the seed, ``Run.fit`` with the track's protocol: 16 epochs,
cosine, batch 32) at ``--lr``, one thread; the seed's n-gram floors are recorded beside it.
Results are written after every run (a partial file is usable).

    nice -n 10 .venv/bin/python benchmarks/tracks/charlm_context.py [--seeds 2] [--windows 2 4]
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


def train(window: int | None, seed: int, lr: float) -> dict:
    from benchkit.tracks import charlm
    from benchkit.tracks.models import char_transformer
    from benchkit.training.run import Run, seed_everything

    seed_everything(seed)
    run = Run(arm="baseline", track=charlm.TRACK, cfg={"lr": lr}, seed=seed,
              epochs=charlm.TRACK.epochs)
    t0 = time.perf_counter()
    run.fit(char_transformer(charlm.VOCAB, context=charlm.CONTEXT, window=window))
    return {"val": run.val, "test": run.test, "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--windows", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--lr", type=float, default=1e-2)
    args = ap.parse_args()
    import torch

    from benchkit.tracks import charlm

    torch.set_num_threads(1)
    out = {"command": "python benchmarks/tracks/charlm_context.py " + " ".join(sys.argv[1:]),
           "python": platform.python_version(), "torch": torch.__version__, "lr": args.lr,
           "protocol": charlm.TRACK.protocol(), "floors": [],
           "runs": {w: [] for w in args.windows}}
    for seed in range(args.seeds):
        out["floors"].append({"seed": seed, **charlm.floors(seed)})
        for w in args.windows:
            row = {"seed": seed, **train(w, seed, args.lr)}
            out["runs"][w].append(row)
            print(f"seed {seed} window {w}: {row}", flush=True)
            out["summary"] = {f"window {k}": statistics.fmean(r["test"] for r in rows)
                              for k, rows in out["runs"].items() if rows}
            out["summary"]["floors"] = {k: statistics.fmean(f[k] for f in out["floors"])
                                        for k in out["floors"][0] if k != "seed"}
            OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(out["summary"])


if __name__ == "__main__":
    main()
