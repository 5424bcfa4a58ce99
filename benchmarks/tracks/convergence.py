"""Is each track's baseline trained out at its default epochs? The measured curve behind
``Track.budget``.

Per track, the baseline (default model, ``Run.fit``) at the config the baseline selects in
benchmarks/results/tracks.json, trained for twice the track's epochs with the validation metric after
every epoch (``benchkit.training.loop.train``'s ``on_epoch``), 2 seeds. Reported per seed: the relative
validation gain over the last quarter of the default epochs (``benchkit.verdict.convergence``'s rule,
positive = better) and the gain from the default epochs to twice as many. Writes
benchmarks/results/convergence.json.

    nice -n 10 .venv/bin/python benchmarks/tracks/convergence.py [--seeds 2] [--tracks tabular ...]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
TRACKS = ("tabular", "dynamics", "charlm", "mnist1d")


def curve(track, seed: int, cfg: dict, epochs: int) -> list[float]:
    from benchkit.training import loop as train
    from benchkit.training.run import Run, seed_everything

    seed_everything(seed)
    run = Run(arm="baseline", track=track, cfg=cfg, seed=seed, epochs=epochs)
    model = track.model()
    vals: list[float] = []
    train.train(model, run.data.train, track, lr=cfg["lr"], epochs=epochs,
                batch_size=track.batch_size, seed=seed, schedule=track.schedule,
                on_epoch=lambda done: vals.append(train.evaluate(model, run.data.val, track)))
    return vals


def gain(before: float, after: float, direction: str) -> float:
    return ((before - after) if direction == "lower" else (after - before)) / abs(before)


def main() -> None:
    from benchkit import tracks

    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--tracks", nargs="+", default=list(TRACKS), choices=TRACKS)
    args = ap.parse_args()
    selected = json.loads((RESULTS / "tracks.json").read_text())["tracks"]
    out = {}
    for name in args.tracks:
        track = tracks.get(name)
        cfg = selected[name]["selected"]["baseline"]
        e = track.epochs
        t0 = time.perf_counter()
        curves = [curve(track, s, cfg, 2 * e) for s in range(args.seeds)]
        quarter = max(1, int(0.75 * e))
        out[name] = {
            "cfg": cfg, "epochs": e, "direction": track.direction, "val_per_epoch": curves,
            "last_quarter_gain": [None if quarter == e else gain(c[quarter - 1], c[e - 1],
                                                                  track.direction)
                                  for c in curves],
            "gain_doubling_epochs": [gain(c[e - 1], c[2 * e - 1], track.direction)
                                     for c in curves],
            "seconds": round(time.perf_counter() - t0, 1)}
        print(name, {k: v for k, v in out[name].items() if k != "val_per_epoch"}, flush=True)
    (RESULTS / "convergence.json").write_text(json.dumps(
        {"seeds": args.seeds, "tracks": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
