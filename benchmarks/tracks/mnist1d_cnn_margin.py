"""mnist1d's CNN against the track's floors, per seed, from the CNN idea bench's runs: the
evidence for the bar while the track's own A/A bench at the CNN is not run (docs/tracks.md).

The CNN arm of reports/mnist1d_cnn/mnist1d (the paper's CNN at the track's protocol: Adam,
batch 100, 150 epochs, lr grid 3e-3 / 1e-2 / 3e-2, selected on validation; seeds 0-7) gives
each seed's test accuracy; the track's floors of the same seeds are computed here. Writes
benchmarks/results/tracks/mnist1d_cnn_margin.json.

    nice -n 5 python benchmarks/tracks/mnist1d_cnn_margin.py
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "reports" / "mnist1d_cnn" / "mnist1d" / "bench_report.json"
OUT = ROOT / "benchmarks" / "results" / "tracks" / "mnist1d_cnn_margin.json"


def main() -> None:
    from benchkit import tracks
    from benchkit.tracks.base import strongest_floor

    report = json.loads(REPORT.read_text())
    track = tracks.get("mnist1d")
    seeds = report["protocol"]["seeds"]
    rows = []
    for seed, cnn in zip(seeds, report["idea"]["per_seed"]):
        floors = track.make_floors(seed)
        name, value = strongest_floor(floors, track.direction)
        rows.append({"seed": seed, "cnn_test": cnn, "floors": floors, "strongest": name,
                     "margin": cnn - value})
        print(rows[-1], flush=True)
    OUT.write_text(json.dumps({
        "command": "python benchmarks/tracks/mnist1d_cnn_margin.py",
        "cnn_from": str(REPORT.relative_to(ROOT)), "cnn_config": report["idea_config"],
        "mde_of_that_bench": report["comparison"]["mde"], "seeds": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
