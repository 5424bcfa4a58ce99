"""What the non-binding futility stop (``pytest.mark.bench(futility=...)``) costs and saves.

Looks at 8 and 16 seeds, alpha 0.05, the default union boundaries; per-seed differences
N(-effect, 1) (lower is better, so a positive effect means the idea is better), 10,000 benches
per condition by default. Each bench is decided as a report decides it: the exact sign-flip p
at each look against stats.look_levels, and at look 1, when inconclusive, benchkit.stats.futility's
conditional power against the threshold. Written to benchmarks/results/futility.json:

- reject: P(significant at some look), without and with the stop (family-wise error at effect
  0, power otherwise), with Clopper-Pearson 95% intervals;
- stop: P(stopped for futility at look 1);
- seeds: the expected seeds per bench (8 + 8 x P(the second look runs)).

    .venv/bin/python benchmarks/stats/futility.py [--reps 10000]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchkit.stats import futility, paired

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
sys.path.insert(0, str(HERE))
import simstats  # noqa: E402

LOOKS, ALPHA = (8, 16), 0.05
EFFECTS = (0.0, 0.5, 0.75, 1.0)
THRESHOLDS = (0.1, 0.2)


def simulate(effect: float, reps: int, seed: int) -> dict:
    """Per bench: p and z at each look (first 8 seeds, all 16)."""
    d = np.random.default_rng([seed, int(effect * 1000)]).normal(-effect, 1.0, (reps, LOOKS[1]))
    p1 = np.array(simstats.sign_flip_p_values(d[:, :LOOKS[0]]))
    p2 = np.array(simstats.sign_flip_p_values(d))
    z1 = np.array([futility.improvement_z(row, "lower") for row in d[:, :LOOKS[0]]])
    return {"p1": p1, "p2": p2, "z1": z1, "better1": d[:, :LOOKS[0]].mean(axis=1) < 0,
            "better2": d.mean(axis=1) < 0}


def decide(sim: dict, threshold: float | None, *, towards_idea: bool) -> dict:
    level1, level2 = paired.look_levels(list(LOOKS), LOOKS[1], ALPHA)
    reject1 = sim["p1"] < level1
    power = np.array([futility.conditional_power(z, LOOKS[0], LOOKS[1], level2) for z in sim["z1"]])
    stop = ~reject1 & (power < threshold) if threshold is not None else np.zeros_like(reject1)
    second = ~reject1 & ~stop
    reject2 = second & (sim["p2"] < level2)
    if towards_idea:   # power counts only the wins
        reject1, reject2 = reject1 & sim["better1"], reject2 & sim["better2"]
    reject = reject1 | reject2
    reps = len(reject)
    k = int(reject.sum())
    return {"reject": k / reps, "reject_ci95": simstats.clopper_pearson(k, reps),
            "stop": float(stop.mean()),
            "seeds": float(LOOKS[0] + (LOOKS[1] - LOOKS[0]) * second.mean())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", type=Path, default=RESULTS / "futility.json")
    args = ap.parse_args(argv)
    start = time.monotonic()
    rows = []
    for effect in EFFECTS:
        sim = simulate(effect, args.reps, args.seed)
        for threshold in (None, *THRESHOLDS):
            row = {"effect_sd": effect, "futility": threshold,
                   **decide(sim, threshold, towards_idea=effect > 0)}
            rows.append(row)
            print(f"effect {effect:4.2f} sd  futility {threshold!s:>4}: "
                  f"{'power' if effect else 'FWER'} {row['reject']:.4f} "
                  f"[{row['reject_ci95'][0]:.4f}, {row['reject_ci95'][1]:.4f}]  "
                  f"stopped {row['stop']:.3f}  seeds {row['seeds']:.2f}")
    out = {"command": "python benchmarks/stats/futility.py --reps " + str(args.reps),
           "looks": list(LOOKS), "alpha": ALPHA, "reps": args.reps, "seed": args.seed,
           "seconds": round(time.monotonic() - start, 1), "rows": rows}
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
