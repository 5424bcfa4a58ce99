"""Per-run training cost: benchkit's ``run.fit`` on one tabular run against the same run written
as a plain torch loop (``torch.optim.Adam``, ``CosineAnnealingLR`` stepped per minibatch, the
track's model, data, epochs and batch size, one torch thread), in one process. The figure is
the ratio of their medians (wall and CPU time) over runs interleaved one by one; ``--profile``
prints where ``run.fit``'s time goes instead (cProfile, the top lines by own time).

    PYTHONPATH=. .venv/bin/python benchmarks/speed/training.py [--reps 3] [--runs 4] [--profile]

Writes benchmarks/results/training_speed.json (not with --profile or --out -).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "results" / "training_speed.json"
LR = 5e-3  # the tabular grid's middle config


def plain(track, seed: int, lr: float = LR) -> tuple[float, float]:
    """One run as a person writes it without benchkit (bench_cost.py's plain bench runs it too)."""
    import torch

    torch.manual_seed(seed)
    data = track.data(seed)
    model = track.model()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x, y = data.train.x, data.train.y
    per_epoch = -(-len(x) // track.batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=per_epoch * track.epochs)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(track.epochs):
        order = torch.randperm(len(x), generator=gen)
        for start in range(0, len(x), track.batch_size):
            idx = order[start:start + track.batch_size]
            loss = track.loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    with torch.no_grad():
        model.eval()
        return (float(track.metric(model(data.val.x), data.val.y)),
                float(track.metric(model(data.test.x), data.test.y)))


def bench(track, seed: int) -> tuple[float, float]:
    """The same run through ``run.fit`` (the track's protocol: its Adam and cosine schedule)."""
    from benchkit.training.run import Run, seed_everything

    seed_everything(seed)
    run = Run(arm="baseline", track=track, cfg={"lr": LR}, seed=seed, epochs=track.epochs)
    run.fit(track.model())
    return run.val, run.test


def timed(fn, track, seed: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one run: with one torch thread the CPU
    time is the run's own work, steadier than the wall time on a shared machine."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn(track, seed)
    return time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="seeds per repetition")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--with-floors", action="store_true",
                    help="instead: run.fit alone against run.fit while the floors' child "
                         "process computes tabular floors (does computing them meanwhile "
                         "slow the training?)")
    ap.add_argument("--out", default=str(OUT), help="'-': print only")
    args = ap.parse_args()
    import torch

    from benchkit import tracks

    torch.set_num_threads(1)
    track = tracks.get("tabular")
    for seed in range(args.runs):
        track.data(seed)  # the data are built once a process in both; not timed
    bench(track, 0), plain(track, 0)  # warm both paths
    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.runcall(bench, track, 0)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    if args.with_floors:
        return beside_floors(track, args)
    times: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []}
                                                 for k in ("plain", "benchkit")}
    for _ in range(args.reps):  # interleaved run by run: the machine's drift hits both alike
        for seed in range(args.runs):
            for label, fn in (("plain", plain), ("benchkit", bench)):
                wall, cpu = timed(fn, track, seed)
                times[label]["wall"].append(wall)
                times[label]["cpu"].append(cpu)
    med = {k: {c: statistics.median(v[c]) for c in v} for k, v in times.items()}
    ratio = {c: med["benchkit"][c] / med["plain"][c] for c in ("wall", "cpu")}
    print(f"tabular, one run ({track.epochs} epochs, batch {track.batch_size}, 1 thread), "
          f"medians of {args.reps * args.runs} runs each, interleaved, load "
          f"{os.getloadavg()[0]:.1f}: plain torch loop {med['plain']['wall']:.3f} s wall "
          f"({med['plain']['cpu']:.3f} s CPU), run.fit {med['benchkit']['wall']:.3f} s wall "
          f"({med['benchkit']['cpu']:.3f} s CPU): ratio {ratio['wall']:.2f}x wall, "
          f"{ratio['cpu']:.2f}x CPU")
    if args.out != "-":
        Path(args.out).write_text(json.dumps({
            "command": "python benchmarks/speed/training.py " + " ".join(sys.argv[1:]),
            "python": platform.python_version(), "torch": torch.__version__,
            "load_1min_after": os.getloadavg()[0], "seconds_per_run": times,
            "median_s": med, "ratio_vs_plain": ratio}, indent=2) + "\n")

def beside_floors(track, args) -> None:
    """run.fit's wall and CPU time alone and while :class:`benchkit.store.floor_ahead.Ahead`
    computes floors of seeds no run uses (so never a cached answer), interleaved."""
    from benchkit.store.floor_ahead import Ahead

    times: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []}
                                                 for k in ("alone", "beside floors")}
    asked = 100
    for _ in range(args.reps):
        for label in times:
            ahead = Ahead() if label != "alone" else None
            for seed in range(args.runs):
                if ahead is not None:
                    ahead.want(track, asked)
                    asked += 1
                wall, cpu = timed(bench, track, seed)
                times[label]["wall"].append(wall)
                times[label]["cpu"].append(cpu)
            if ahead is not None:
                ahead.close()
    med = {k: {c: statistics.median(v[c]) for c in v} for k, v in times.items()}
    print(f"run.fit alone {med['alone']['wall']:.3f} s wall ({med['alone']['cpu']:.3f} s CPU), "
          f"beside the floors' child {med['beside floors']['wall']:.3f} s wall "
          f"({med['beside floors']['cpu']:.3f} s CPU): "
          f"{med['beside floors']['wall'] / med['alone']['wall']:.2f}x wall, "
          f"{med['beside floors']['cpu'] / med['alone']['cpu']:.2f}x CPU (medians of "
          f"{args.reps * args.runs}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if args.out != "-":
        Path(args.out).with_name("training_beside_floors.json").write_text(json.dumps({
            "command": "python benchmarks/speed/training.py " + " ".join(sys.argv[1:]),
            "load_1min_after": os.getloadavg()[0], "seconds_per_run": times,
            "median_s": med}, indent=2) + "\n")


if __name__ == "__main__":
    main()
