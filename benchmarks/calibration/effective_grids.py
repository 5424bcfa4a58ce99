"""The audit's regime of arms with different effective grids (issue 41 item 2), re-measured.

A/A in the tuned means: the idea ignores the lr axis (its own loop, a fixed lr), so its values
are the same at every lr, and its mean equals the baseline's best config's (true means 0, 0.01,
0.02, lower is better); validation is noisier than test (seed effect sd 0.1 shared by the arms,
validation noise sd 0.05, test noise sd 0.01: selection_calibration.py's "selection noise"
regime). Every helps is a false one. Each bench goes through
:func:`benchkit.verdict.sweeps.decide_by_selection`, the report's path: "test alone" is the
selection-aware p before the effective-grid rule (``p_unexchangeable`` where it was refused),
"with the rule" the p the verdict uses.

    PYTHONPATH=. nice -n 5 python benchmarks/calibration/effective_grids.py [--reps 2000]
writes benchmarks/results/effective_grids.json. Deterministic (seeded).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np

from benchkit.stats import paired, selection
from benchkit.verdict import comparison, sweeps

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "effective_grids.json"
MEANS = (0.0, 0.01, 0.02)
GRID = [{"lr": 1e-3}, {"lr": 3e-3}, {"lr": 1e-2}]
REGIME = {"seed_sd": 0.1, "val_sd": 0.05, "test_sd": 0.01}


def draw(rng, n: int):
    """base_val, base_test, idea_val, idea_test: the idea's one value repeated along lr."""
    k = len(MEANS)
    seed = rng.normal(0, REGIME["seed_sd"], (n, 1))
    base = 1 + seed + np.asarray(MEANS)
    idea = 1 + seed + MEANS[0]
    return (base + rng.normal(0, REGIME["val_sd"], (n, k)),
            base + rng.normal(0, REGIME["test_sd"], (n, k)),
            np.repeat(idea + rng.normal(0, REGIME["val_sd"], (n, 1)), k, axis=1),
            np.repeat(idea + rng.normal(0, REGIME["test_sd"], (n, 1)), k, axis=1))


def rate(k: int, n: int) -> dict:
    return {"count": k, "n": n, "rate": k / n, "se": math.sqrt(max(k * (n - k), 1) / n ** 3)}


def measure(n: int, reps: int, alpha: float) -> dict:
    rng = np.random.default_rng([41, 2, n])
    counts = {"helps_test_alone": 0, "harms_test_alone": 0, "helps": 0, "harms": 0,
              "refused": 0}
    for _ in range(reps):
        sw = selection.sweeps(*draw(rng, n), grid=GRID)
        d = selection.observed(sw, "lower").diffs
        compared = comparison.of_figures(paired.compare(np.zeros(len(d)), d, direction="lower"))
        comp = sweeps.decide_by_selection(dataclasses.replace(compared, p_value=1.0), sw,
                                          "lower")
        raw = comp.p_value if comp.p_unexchangeable is None else comp.p_unexchangeable
        better = comp.delta_mean < 0
        counts["helps_test_alone"] += raw < alpha and better
        counts["harms_test_alone"] += raw < alpha and not better
        counts["helps"] += comp.p_value < alpha and better
        counts["harms"] += comp.p_value < alpha and not better
        counts["refused"] += comp.p_unexchangeable is not None
    return {"seeds": n, **{k: rate(v, reps) for k, v in counts.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    rows = [measure(n, args.reps, args.alpha) for n in (8, 12)]
    out = {"alpha": args.alpha, "reps": args.reps, "means": list(MEANS), "regime": REGIME,
           "rows": rows, "seconds": round(time.time() - t0, 1)}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    for r in rows:
        print(r["seeds"], {k: v["rate"] for k, v in r.items() if k != "seeds"})


if __name__ == "__main__":
    main()
