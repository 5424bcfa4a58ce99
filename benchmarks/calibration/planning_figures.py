"""Do the planning figures describe the test that decides? (issue 41 item 3)

For benches drawn from selection_calibration.py's two regimes (three configs 0.01 apart,
A/A), each bench's ``mde_power80`` is computed two ways: the fixed-config sign-flip figure
(``signflip.mde_power80`` at the selected configs' sd, what reports gave before) and the
selection-aware one (``selection.mde_power80``, simulated on the bench's own sweeps, what
reports give now). Then the deciding test's true power at each figure is measured on fresh
benches from the same regime with the idea's whole sweep better by that effect (validation and
test, every config): a figure that describes the deciding test has a true power near 0.8.

    PYTHONPATH=. nice -n 5 python benchmarks/calibration/planning_figures.py --benches 40
        --fresh 100
writes benchmarks/results/planning_figures.json. Deterministic (seeded).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from benchkit.stats import selection, signflip

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from selection_calibration import REGIMES, sweep_draw  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "planning_figures.json"


def power_at(rng, n: int, regime: dict, effect: float, fresh: int, alpha: float) -> float:
    """The selection-aware test's power (helps at alpha) with the idea better by ``effect``
    (metric units) on every config, validation and test."""
    hits = 0
    for _ in range(fresh):
        bv, bt, iv, it = sweep_draw(rng, n, regime)
        sw = selection.sweeps(bv, bt, iv - effect, it - effect)
        d = selection.observed(sw, "lower").diffs
        hits += float(np.mean(d)) < 0 and selection.p_value(sw, "lower") < alpha
    return hits / fresh


def measure(name: str, n: int, benches: int, fresh: int, alpha: float) -> dict:
    regime = REGIMES[name]
    rng = np.random.default_rng([41, 3, n, len(name)])
    rows = []
    for _ in range(benches):
        sw = selection.sweeps(*sweep_draw(rng, n, regime))
        d = np.asarray(selection.observed(sw, "lower").diffs)
        fixed = signflip.mde_power80(n, float(np.std(d, ddof=1)), alpha)
        aware = selection.mde_power80(sw, "lower", alpha)
        seed = int(rng.integers(2 ** 31))
        row = {"fixed": fixed, "aware": aware}
        for key, mde in (("fixed", fixed), ("aware", aware)):  # same fresh draws for both
            row[f"power_{key}"] = (None if mde is None else
                                   power_at(np.random.default_rng(seed), n, regime, mde, fresh,
                                            alpha))
        rows.append(row)
    out = {"regime": name, "seeds": n, "benches": benches, "fresh": fresh}
    for key in ("fixed", "aware"):
        powers = [r[f"power_{key}"] for r in rows if r[f"power_{key}"] is not None]
        mdes = [r[key] for r in rows if r[key] is not None]
        out[key] = {"mean_power": float(np.mean(powers)),
                    "se": float(np.std(powers, ddof=1) / math.sqrt(len(powers))),
                    "median_mde": float(np.median(mdes)), "none": benches - len(mdes)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benches", type=int, default=40)
    ap.add_argument("--fresh", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    rows = []
    for name in REGIMES:
        for n in (8, 12):
            rows.append(measure(name, n, args.benches, args.fresh, args.alpha))
            print(rows[-1], flush=True)
    out = {"alpha": args.alpha, "benches": args.benches, "fresh": args.fresh,
           "reps": selection.PLAN_REPS, "regimes": REGIMES, "rows": rows,
           "seconds": round(time.time() - t0, 1)}
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
