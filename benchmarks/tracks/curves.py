"""Validation curves of a track's default model at each config of its grid: is the baseline
trained out at the track's epochs? (``Track.budget``.)

Per config and seed, the default model trained as the plugin trains a run (``Run``'s seeding,
``benchkit.training.loop.train``) for ``--epochs`` epochs, with the validation metric after
every epoch. Reported per curve: the relative validation gain over the last quarter of the
track's default epochs (``benchkit.verdict.convergence``'s rule, positive = better), and from
the default epochs to the end. Writes benchmarks/results/tracks/<track>_convergence.json.

    nice -n 10 .venv/bin/python benchmarks/tracks/curves.py --track mnist1d --epochs 150 [--seeds 2]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "tracks"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from convergence import curve, gain  # noqa: E402  (one curve, one gain rule for both scripts)


def main() -> None:
    from benchkit import tracks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", required=True)
    ap.add_argument("--epochs", type=int, required=True, help="train this long (>= the default)")
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    track = tracks.get(args.track)
    e = track.epochs
    quarter = max(1, int(0.75 * e))
    out = {"command": "python benchmarks/tracks/curves.py " + " ".join(sys.argv[1:]),
           "track": track.name, "default_epochs": e, "direction": track.direction,
           "configs": []}
    for cfg in track.grid:
        t0 = time.perf_counter()
        curves = [curve(track, s, dict(cfg), args.epochs) for s in range(args.seeds)]
        row = {"cfg": dict(cfg), "val_per_epoch": curves,
               "last_quarter_gain": [gain(c[quarter - 1], c[e - 1], track.direction)
                                     for c in curves],
               "gain_after_default": [gain(c[e - 1], c[-1], track.direction) for c in curves],
               "best_epoch": [max(range(len(c)), key=lambda i: c[i] if track.direction ==
                                  "higher" else -c[i]) + 1 for c in curves],
               "seconds": round(time.perf_counter() - t0, 1)}
        out["configs"].append(row)
        print({k: v for k, v in row.items() if k != "val_per_epoch"}, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{track.name}_convergence.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
