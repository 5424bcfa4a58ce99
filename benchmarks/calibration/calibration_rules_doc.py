"""The sections of docs/calibration.md on issue 41's rules, rendered from their JSON files in
benchmarks/results/ (each written by its own script in benchmarks/calibration/; a missing file
gives no section); part of ``calibration.py --doc`` (calibration_doc.render appends them), so
tests/stats/test_calibration.py checks them with the rest of the document.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import simstats  # benchmarks/stats/, put on sys.path by calibration.py

FILES = {"effective_grids": "effective_grids.json"}


def load(folder: Path) -> dict:
    return {key: json.loads((Path(folder) / name).read_text())
            for key, name in FILES.items() if (Path(folder) / name).exists()}


def _rate(r: dict) -> str:
    lo, hi = simstats.clopper_pearson(r["count"], r["n"])
    return f"{r['count']}/{r['n']} = {r['rate']:.3f} [{lo:.3f}, {hi:.3f}]"


def _bound(alpha: float, n: int) -> float:
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / n)


def effective_grids(eg: dict) -> str:
    alpha, reps, reg = eg["alpha"], eg["reps"], eg["regime"]
    bound = _bound(alpha, reps)
    rows = ["| seeds | helps, test alone | helps, with the rule | harms, with the rule | "
            "refused (favoured the idea) | helps within alpha + 2 SE |",
            "|---|---|---|---|---|---|"]
    rows += [f"| {r['seeds']} | {_rate(r['helps_test_alone'])} | {_rate(r['helps'])} | "
             f"{_rate(r['harms'])} | {_rate(r['refused'])} | "
             f"{'yes' if r['helps']['rate'] <= bound else '**no**'} |" for r in eg["rows"]]
    return f"""## Arms with different effective grids (`selection.effective_grids`)

The audit's regime (docs/statistics.md): the idea ignores the lr axis (its own loop), so its
values are the same at every lr, with its true mean equal to the baseline's best config's (the
baseline's configs {', '.join(f'{m:g}' for m in eg['means'])}, lower is better); seed effect sd
{reg['seed_sd']:g} shared by the arms, validation noise sd {reg['val_sd']:g}, test noise sd
{reg['test_sd']:g}. Every helps is a false one. Each bench goes through
`verdict.sweeps.decide_by_selection`, the report's path; "test alone" is the selection-aware p
before the rule. {reps:,} benches per row, alpha {alpha:g} (alpha + 2 SE = {bound:.4f}),
Clopper-Pearson 95% intervals, {eg['seconds']:.0f} s
(`PYTHONPATH=. python benchmarks/calibration/effective_grids.py --reps {reps}`):

{chr(10).join(rows)}

The test alone calls the baseline's tuning loss a help; with the rule a result in the idea's
favour is refused, and a harm is still found when there is one (tests/verdict/test_effective_grids.py)."""


def sections(data: dict) -> list[str]:
    out = []
    if "effective_grids" in data:
        out.append(effective_grids(data["effective_grids"]))
    return out
