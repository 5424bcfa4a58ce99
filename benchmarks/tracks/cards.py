"""The track cards' tables, read from the A/A benches' reports and the per-seed floors, so that
no number in them is copied by hand.

Each track's A/A bench (benchmarks/tracks/test_aa.py, through the plugin at the default
protocol, 16 seeds) leaves benchmarks/results/tracks/aa/aa/<track>/bench_report.json. Its
``floors`` are means over the seeds; the per-seed floors (and the CPU seconds each seed's
floors cost) are in benchmarks/results/tracks/floors.json, made by ``--floors``. Per track the
summary gives the baseline's test mean at its selected config, the strongest floor (limits left
out), the margin between them in the bench's MDEs (issue 40's bar: at least 1), the achievable
limit where the track has one, the median seconds per run and the A/A verdict; per seed, the
strongest floor of that seed, the baseline's test value and the margin in MDEs.

    python benchmarks/tracks/cards.py --floors   # recompute results/tracks/floors.json
    python benchmarks/tracks/cards.py --write    # regenerate the tables in docs/tracks.md
    python benchmarks/tracks/cards.py            # print them
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchkit import tracks
from benchkit.report.fmt import sig
from benchkit.tracks.base import is_limit, strongest_floor

ROOT = Path(__file__).resolve().parents[2]
AA = ROOT / "benchmarks" / "results" / "tracks" / "aa" / "aa"
FLOORS = ROOT / "benchmarks" / "results" / "tracks" / "floors.json"
DOC = ROOT / "docs" / "tracks.md"
BEGIN, END = "<!-- cards.py: begin -->", "<!-- cards.py: end -->"


@dataclass(frozen=True)
class SeedRow:
    seed: int
    floor_name: str
    floor: float
    baseline: float
    margin_mdes: float


@dataclass(frozen=True)
class Card:
    track: str
    metric: str
    lower: bool
    baseline: float
    floor_name: str
    floor: float
    limit: tuple[str, float] | None
    mde: float
    mde_rel_pct: float
    n_seeds: int
    margin_mdes: float
    seconds_per_run: float | None
    floor_cpu_seconds: float | None
    still_improving: bool
    check: dict | None
    verdict: str
    p_value: float
    seeds: tuple[SeedRow, ...]

    @property
    def met(self) -> bool:
        return self.margin_mdes >= 1.0


def margin(lower: bool, floor: float, value: float) -> float:
    """How much better ``value`` is than ``floor`` in the metric's direction."""
    return floor - value if lower else value - floor


def card(report: dict, per_seed: dict[str, dict] | None) -> Card:
    """One track's figures from its A/A report and its per-seed floors (keyed by seed)."""
    lower = report["metric_direction"].startswith("lower")
    direction = "lower" if lower else "higher"
    base = report["baseline"]["full"]["mean"]
    floors = report.get("floors") or {}
    strongest = strongest_floor(floors, direction)
    if strongest is None:
        raise SystemExit(f"{report['track']}: the A/A report has no floors")
    limits = [(k, v) for k, v in floors.items() if is_limit(k)]
    mde = report["comparison"]["mde"]
    best = report["baseline"]["best_cfg"]
    tests = {r["seed"]: r["test"] for r in report["runs"]
             if r["arm"] == "baseline" and r["cfg"] == best}
    rows = []
    for seed in report["protocol"]["seeds"]:
        seed_floors = (per_seed or {}).get(str(seed))
        if seed_floors is None:
            continue
        name, value = strongest_floor(seed_floors["floors"], direction)
        rows.append(SeedRow(seed, name, value, tests[seed],
                            margin(lower, value, tests[seed]) / mde))
    arm = report["convergence"]["arms"]["baseline"]
    checks = [a["budget_check"]["cfg"] for a in report["convergence"]["arms"].values()
              if a.get("budget_check")]   # longer runs: not the protocol's time per run
    seconds = [r["seconds"] for r in report["runs"]
               if r.get("seconds") is not None and r["cfg"] not in checks]
    cpu = [s["cpu_seconds"] for s in (per_seed or {}).values()]
    return Card(track=report["track"], metric=report["metric"], lower=lower, baseline=base,
                floor_name=strongest[0], floor=strongest[1],
                limit=limits[0] if limits else None, mde=mde,
                mde_rel_pct=report["comparison"]["mde_rel_pct"],
                n_seeds=len(report["comparison"]["per_seed_diffs"]),
                margin_mdes=margin(lower, strongest[1], base) / mde,
                seconds_per_run=statistics.median(seconds) if seconds else None,
                floor_cpu_seconds=statistics.median(cpu) if cpu else None,
                still_improving=arm["still_improving"], check=arm.get("budget_check"),
                verdict=report["practical_verdict"], p_value=report["comparison"]["p_value"],
                seeds=tuple(rows))


def trained_out(c: Card) -> str:
    check = c.check
    measured = (f"; {check['epochs']} epochs: {100 * check['gain']:+.1f}%"
                if check and check.get("gain") is not None else
                "; budget check pending" if check else "")
    return (f"no: still improving{measured}" if c.still_improving
            else f"yes{measured}" if measured else "yes (constant schedule: no check)")


def summary_table(cards: list[Card]) -> str:
    lines = ["| track | metric | baseline | strongest floor | margin in MDEs (bar: 1) | "
             "limit | A/A MDE | s/run | floors, CPU s a seed | trained out? | A/A verdict (p) |",
             "|---" * 11 + "|"]
    for c in cards:
        arrow = "↓" if c.lower else "↑"
        limit = "—" if c.limit is None else f"{c.limit[0][len('limit: '):]} {sig(c.limit[1], 3)}"
        met = "met" if c.met else "**NOT met**"
        run = "—" if c.seconds_per_run is None else f"{c.seconds_per_run:.1f}"
        cpu = "—" if c.floor_cpu_seconds is None else f"{c.floor_cpu_seconds:.1f}"
        lines.append(
            f"| {c.track} | {c.metric} {arrow} | {sig(c.baseline, 4)} | {c.floor_name} "
            f"{sig(c.floor, 4)} | {c.margin_mdes:.1f} ({met}) | {limit} | {sig(c.mde)} "
            f"({c.mde_rel_pct:.2g}%, {c.n_seeds} seeds) | {run} | {cpu} | {trained_out(c)} | "
            f"{c.verdict} ({c.p_value:.2g}) |")
    return "\n".join(lines)


def seed_table(c: Card) -> str:
    if not c.seeds:
        return f"*{c.track}: no per-seed floors (run `cards.py --floors`).*"
    lines = [f"**{c.track}, per seed** (MDE {sig(c.mde)}; the baseline at its selected "
             "config; margin = strongest floor − baseline in the metric's direction, in MDEs)",
             "", "| seed | strongest floor | baseline | margin in MDEs |", "|---|---|---|---|"]
    for r in c.seeds:
        lines.append(f"| {r.seed} | {r.floor_name} {sig(r.floor, 4)} | {sig(r.baseline, 4)} | "
                     f"{r.margin_mdes:+.1f} |")
    beat = sum(r.margin_mdes > 0 for r in c.seeds)
    lines.append(f"\nThe baseline beats that seed's strongest floor on {beat} of "
                 f"{len(c.seeds)} seeds, by at least one MDE on "
                 f"{sum(r.margin_mdes >= 1 for r in c.seeds)}.")
    return "\n".join(lines)


def generated(cards: list[Card]) -> str:
    return "\n\n".join([summary_table(cards), *(seed_table(c) for c in cards)])


def compute_floors(names: list[str], n_seeds: int | None = None) -> None:
    """Each track's floors per seed of its A/A report (or of seeds 0 .. ``n_seeds`` - 1),
    with the CPU seconds they cost."""
    out = json.loads(FLOORS.read_text()) if FLOORS.exists() else {}
    for name in names:
        seeds = (range(n_seeds) if n_seeds else
                 json.loads((AA / name / "bench_report.json").read_text())["protocol"]["seeds"])
        track, rows = tracks.get(name), {}
        for seed in seeds:
            track.make_data(seed)          # data generation is not the floors' cost
            start = time.process_time()
            values = track.make_floors(seed)
            rows[str(seed)] = {"floors": values,
                               "cpu_seconds": round(time.process_time() - start, 2)}
        out[name] = {"command": "python benchmarks/tracks/cards.py --floors"
                   + (f" --seeds {n_seeds}" if n_seeds else ""), "seeds": rows}
        FLOORS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    FLOORS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floors", action="store_true", help="recompute the per-seed floors")
    ap.add_argument("--seeds", type=int, help="with --floors: seeds 0..N-1, not the report's")
    ap.add_argument("--write", action="store_true", help="regenerate docs/tracks.md's tables")
    args = ap.parse_args()
    paths = sorted(AA.glob("*/bench_report.json"))
    if not paths:
        sys.exit(f"no A/A reports under {AA}: run benchmarks/tracks/test_aa.py first")
    if args.floors:
        compute_floors([p.parent.name for p in paths], args.seeds)
    per_seed = json.loads(FLOORS.read_text()) if FLOORS.exists() else {}
    cards = [card(json.loads(p.read_text(encoding="utf-8")),
                  (per_seed.get(p.parent.name) or {}).get("seeds")) for p in paths]
    text = generated(cards)
    if not args.write:
        print(text)
        return
    doc = DOC.read_text(encoding="utf-8")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
