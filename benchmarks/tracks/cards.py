"""The track cards' summary table, read from the A/A benches' reports, so that no number in it
is copied by hand.

Each track's A/A bench (benchmarks/tracks/test_aa.py, through the plugin at the default
protocol) leaves benchmarks/results/tracks/aa/aa/<track>/bench_report.json. Per track this
prints the baseline's test mean at its selected config, the best floor and how far the baseline
is from it (in the metric's direction, as a share of the floor), whether the baseline was still
improving over its last quarter, the A/A noise (sd of the paired differences) and MDE at the
bench's seeds, the median seconds per run, and the A/A verdict (it must be inconclusive).

    .venv/bin/python benchmarks/tracks/cards.py    # a markdown table on stdout
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from benchkit.report.fmt import sig

AA = Path(__file__).resolve().parents[1] / "results" / "tracks" / "aa" / "aa"


def card_row(report: dict) -> dict:
    """One track's figures from its A/A report."""
    lower = report["metric_direction"].startswith("lower")
    base = report["baseline"]["full"]["mean"]
    floors = report.get("floors") or {}
    best = (min if lower else max)(floors, key=floors.__getitem__) if floors else None
    gain = None if best is None else (floors[best] - base if lower else base - floors[best])
    diffs = report["comparison"]["per_seed_diffs"]
    arm = report["convergence"]["arms"]["baseline"]
    still, check = arm["still_improving"], arm.get("budget_check")
    checks = [a["budget_check"]["cfg"] for a in report["convergence"]["arms"].values()
              if a.get("budget_check")]   # longer runs: not the protocol's time per run
    seconds = [r["seconds"] for r in report["runs"]
               if r.get("seconds") is not None and r["cfg"] not in checks]
    return {"track": report["track"], "metric": report["metric"],
            "direction": "↓" if lower else "↑", "baseline": base, "best_floor": best,
            "floor": None if best is None else floors[best],
            "better_than_floor": None if best is None else gain / abs(floors[best]),
            "budget": report["convergence"]["budget"], "still_improving": still,
            "check": check,
            "aa_sd": statistics.stdev(diffs), "mde": report["comparison"]["mde"],
            "mde_rel_pct": report["comparison"]["mde_rel_pct"], "n_seeds": len(diffs),
            "seconds_per_run": statistics.median(seconds) if seconds else None,
            "verdict": report["practical_verdict"], "p_value": report["comparison"]["p_value"]}


def markdown(rows: list[dict]) -> str:
    lines = ["| track | metric | baseline | best floor | baseline vs best floor | trained out? "
             "| A/A sd · MDE@8 | s/run | A/A verdict (p) |", "|---" * 9 + "|"]
    for r in rows:
        floor = ("none" if r["best_floor"] is None
                 else f"{r['best_floor']} {sig(r['floor'], 4)}")
        versus = ("—" if r["better_than_floor"] is None
                  else f"{100 * r['better_than_floor']:.1f}% better" if r["better_than_floor"] > 0
                  else f"{-100 * r['better_than_floor']:.1f}% worse")
        check = r.get("check")
        measured = (f"; {check['epochs']} epochs: {100 * check['gain']:+.1f}%"
                    if check and check["gain"] is not None else
                    "; budget check pending" if check else "")
        out = (f"no: still improving{measured}" if r["still_improving"]
               else f"yes ({r['budget']}{measured})")
        lines.append(f"| {r['track']} | {r['metric']} {r['direction']} | {sig(r['baseline'], 4)} | "
                     f"{floor} | {versus} | {out} | {sig(r['aa_sd'])} · {sig(r['mde'])} "
                     f"({r['mde_rel_pct']:.2g}%) | {r['seconds_per_run']:.1f} | "
                     f"{r['verdict']} ({r['p_value']:.2g}) |")
    return "\n".join(lines)


def main() -> None:
    paths = sorted(AA.glob("*/bench_report.json"))
    if not paths:
        sys.exit(f"no A/A reports under {AA}: run benchmarks/tracks/test_aa.py first")
    print(markdown([card_row(json.loads(p.read_text(encoding="utf-8"))) for p in paths]))


if __name__ == "__main__":
    main()
