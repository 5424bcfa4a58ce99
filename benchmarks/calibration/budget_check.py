"""The budget check's sequential three-way decision (benchkit.verdict.convergence, issue 41
item 1): its error rates on simulated per-seed gains, and its cost on tabular benches.

``rates``: per-seed relative gains normal with mean ``mu`` and sd ``sigma`` (the stated
assumption), decided by :func:`benchkit.verdict.convergence.check_decision`'s rule
(:func:`benchkit.stats.sequential.three_way` at CHECK_LEVEL), at the looks of each bench in
BENCHES (:func:`benchkit.verdict.convergence.check_looks`: the second look cut to what the
grid affords): the shares called still improving, trained out and undetermined, and the mean
number of check runs; beside them the rule it replaces (median of 8 seeds' gains above the
threshold). A false alarm is "still improving" when mu <= threshold, a miss "trained out" when
mu >= threshold.

``cost``: the committed tabular A/A report (benchmarks/results/tracks/aa/aa/tabular): its
stored check runs replayed through the rule at its grid's looks, and 2,000 benches whose
per-seed gains are drawn with replacement from each arm's stored gains (as many as its seeds);
the check's epochs as a share of the grid's (2 arms x configs x seeds x epochs). ``worst``:
every checked arm to the last look, for the bench sizes in BENCHES, under this rule and under
the fixed looks (3, 5) it replaces.

    PYTHONPATH=. nice -n 5 python benchmarks/calibration/budget_check.py
writes benchmarks/results/budget_check.json. Deterministic (seeded).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

from benchkit.spec.idea import cfg_id
from benchkit.stats import sequential
from benchkit.verdict import convergence, sweeps

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "budget_check.json"
AA = ROOT / "benchmarks" / "results" / "tracks" / "aa" / "aa" / "tabular" / "bench_report.json"
MUS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.04)
SIGMAS = (0.005, 0.023, 0.05, 0.128)  # 2.3%-12.8%: the audit's per-seed sds
THRESHOLD = convergence.STILL_IMPROVING
SEEDS = 8  # the old rule's seeds (every seed checked)
FIXED_LOOKS = (3, 5)  # the looks before the cut to what the grid affords
# (configs, seeds) of tabular benches: the A/A bench (3 lrs x 16 seeds), a default bench (3 x
# 8), and the A/A bench this rule was first measured on (4 x 8)
BENCHES = ((3, 16), (3, 8), (4, 8))


def decide(gains, looks) -> sequential.ThreeWay:
    return sequential.three_way(list(gains), THRESHOLD, looks=looks,
                                level=convergence.CHECK_LEVEL)


def share(k: int, n: int) -> dict:
    return {"count": int(k), "n": n, "rate": k / n, "se": math.sqrt(max(k * (n - k), 1) / n ** 3)}


def rates(reps: int, looks: tuple[int, ...], seeds: int) -> list[dict]:
    rows = []
    for sigma in SIGMAS:
        for mu in MUS:
            rng = np.random.default_rng([41, 1, int(mu * 1e4), int(sigma * 1e4)])
            g = rng.normal(mu, sigma, (reps, max(seeds, SEEDS)))
            got = [decide(row[:seeds], looks) for row in g]
            count = {d: sum(x.decision == d for x in got) for d in ("above", "below",
                                                                  "undetermined")}
            old = int(np.count_nonzero(np.median(g[:, :SEEDS], axis=1) > THRESHOLD))
            rows.append({"mu": mu, "sigma": sigma,
                         "still_improving": share(count["above"], reps),
                         "trained_out": share(count["below"], reps),
                         "undetermined": share(count["undetermined"], reps),
                         "mean_seeds": float(np.mean([x.called for x in got])),
                         "median_of_8_still_improving": share(old, reps)})
    return rows


def worst(configs: int, seeds: int, epochs: int = 120) -> dict:
    """Every checked arm (2) to its last look: the check's share of the grid's epochs."""
    grid_epochs = 2 * configs * seeds * epochs
    check_epochs = math.ceil(convergence.BUDGET_FACTOR * epochs)
    looks = convergence.check_looks(configs, seeds)
    return {"configs": configs, "seeds": seeds, "looks": list(looks),
            "share": 2 * min(looks[-1], seeds) * check_epochs / grid_epochs,
            "fixed_looks_share": 2 * min(FIXED_LOOKS[-1], seeds) * check_epochs / grid_epochs}


def stored_gains(report: dict) -> dict:
    seeds = report["protocol"]["seeds"]
    runs = {(r["arm"], cfg_id(r["cfg"]), r["seed"]): sweeps.row_result(r)
            for r in report["runs"]}
    direction = "lower" if report["metric_direction"].startswith("lower") else "higher"
    out = {}
    for arm, a in report["convergence"]["arms"].items():
        check = a["budget_check"]
        selected = [runs[(arm, cfg_id(a["cfg"]), s)] for s in seeds]
        longer = [runs.get((arm, cfg_id(check["cfg"]), s)) for s in seeds]
        out[arm] = convergence.check_gains(selected, longer, direction, check["epochs"])
    return out


def cost(reps: int) -> dict:
    report = json.loads(AA.read_text())
    p = report["protocol"]
    seeds = len(p["seeds"])
    grid_epochs = 2 * len(p["grid"]) * seeds * p["epochs"]
    check_epochs = math.ceil(convergence.BUDGET_FACTOR * p["epochs"])
    looks = convergence.check_looks(len(p["grid"]), seeds)
    gains = stored_gains(report)
    replay = {arm: decide(g, looks) for arm, g in gains.items()}
    rng = np.random.default_rng([41, 3])
    runs = []
    for _ in range(reps):
        runs.append(sum(decide(rng.choice(g, size=seeds), looks).called
                        for g in gains.values()))
    replay_runs = sum(d.called for d in replay.values())
    return {"track": report["track"], "grid": len(p["grid"]), "seeds": seeds,
            "epochs": p["epochs"], "looks": list(looks), "check_epochs": check_epochs,
            "grid_epochs": grid_epochs,
            "stored_gains": {arm: [round(x, 6) for x in g] for arm, g in gains.items()},
            "replay": {arm: {"decision": d.decision, "seeds": d.called, "mean": d.mean,
                             "lower": d.lower, "upper": d.upper} for arm, d in replay.items()},
            "replay_runs": replay_runs,
            "replay_share": replay_runs * check_epochs / grid_epochs,
            "old_rule_runs": 2 * seeds,
            "old_rule_share": 2 * seeds * check_epochs / grid_epochs,
            "bootstrap_reps": reps, "bootstrap_mean_runs": statistics.fmean(runs),
            "bootstrap_mean_share": statistics.fmean(runs) * check_epochs / grid_epochs,
            "bootstrap_max_share": max(runs) * check_epochs / grid_epochs,
            "bootstrap_share_over_20pct": sum(r * check_epochs / grid_epochs > 0.2
                                              for r in runs) / reps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--cost-reps", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    looks_studied = sorted({convergence.check_looks(c, n) for c, n in BENCHES}, reverse=True)
    out = {"threshold": THRESHOLD, "level": convergence.CHECK_LEVEL,
           "check_cost": convergence.CHECK_COST, "seeds": SEEDS, "reps": args.reps,
           "rates": [{"looks": list(looks), "rows": rates(args.reps, looks, looks[-1])}
                     for looks in looks_studied],
           "cost": cost(args.cost_reps), "worst": [worst(c, n) for c, n in BENCHES]}
    out["seconds"] = round(time.time() - t0, 1)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    c = out["cost"]
    print(f"cost: replay {c['replay_share']:.3f} ({c['replay']}), bootstrap mean "
          f"{c['bootstrap_mean_share']:.3f}, max {c['bootstrap_max_share']:.3f}")
    for w in out["worst"]:
        print(w)
    for block in out["rates"]:
        for r in block["rows"]:
            print(block["looks"], r["sigma"], r["mu"], r["still_improving"]["rate"],
                  r["trained_out"]["rate"], r["undetermined"]["rate"], r["mean_seeds"],
                  r["median_of_8_still_improving"]["rate"])


if __name__ == "__main__":
    main()
