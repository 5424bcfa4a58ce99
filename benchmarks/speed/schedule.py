"""Per-run cost of a cosine-scheduled run: benchkit's fused Adam applying the schedule itself,
against ``torch.optim.Adam(fused=True)`` stepped by a ``LambdaLR`` with the same factors (what
``run.fit`` built for any schedule before). Both give the same bits (checked here); the
figure is the ratio of their medians over interleaved repetitions, one torch thread.

    .venv/bin/python benchmarks/speed/schedule.py [--tracks tabular dynamics] [--reps 5] \
        [--epochs N]

Writes benchmarks/results/schedule_speed.json.
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

OUT = Path(__file__).resolve().parents[1] / "results" / "schedule_speed.json"


def timed_fit(track, schedule, epochs):
    from benchkit.training.run import Run, seed_everything

    seed_everything(0)
    run = Run(arm="baseline", track=track, cfg={"lr": dict(track.grid[0])["lr"]}, seed=0,
              epochs=epochs)
    model = track.model()
    t0 = time.perf_counter()
    run.fit(model, schedule=schedule)
    return time.perf_counter() - t0, run.test


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tracks", nargs="+", default=["tabular", "dynamics"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=None, help="default: the track's")
    args = ap.parse_args()
    import torch

    from benchkit import tracks
    from benchkit.training.optim import schedule_factor

    torch.set_num_threads(1)
    out = {"command": "python benchmarks/speed/schedule.py " + " ".join(sys.argv[1:]),
           "python": platform.python_version(), "torch": torch.__version__, "tracks": {}}
    for name in args.tracks:
        track = dataclasses.replace(tracks.get(name), schedule="cosine")
        epochs = args.epochs or track.epochs
        steps = -(-len(track.data(0).train) // track.batch_size) * epochs
        factor = schedule_factor("cosine", steps)

        def lambda_lr(opt):
            return torch.optim.lr_scheduler.LambdaLR(opt, factor)

        timed_fit(track, "cosine", 1)  # warm both paths
        timed_fit(track, lambda_lr, 1)
        fused, plain, same = [], [], True
        for _ in range(args.reps):
            a, test_a = timed_fit(track, "cosine", epochs)
            b, test_b = timed_fit(track, lambda_lr, epochs)
            fused.append(a)
            plain.append(b)
            same &= test_a == test_b
        row = {"epochs": epochs, "steps": steps, "fused_s": statistics.median(fused),
               "torch_optim_s": statistics.median(plain), "same_bits": same}
        row["ratio"] = row["fused_s"] / row["torch_optim_s"]
        out["tracks"][name] = row
        print(f"{name}: {steps} steps, fused {row['fused_s']:.3f} s, torch.optim + LambdaLR "
              f"{row['torch_optim_s']:.3f} s, ratio {row['ratio']:.2f}, same bits {same}",
              flush=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
