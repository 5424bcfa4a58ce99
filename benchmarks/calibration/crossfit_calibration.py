"""Level and power of the deciding test on the arms-that-differ regimes (issue 49), simulated
through the report's compare stage (:func:`benchkit.verdict.comparison.compare_arms` with the
arms' sweeps, as build.py calls it). No training.

Level: every regime of crossfit_regimes.NULLS, where the declared estimand (the best configs'
difference) is 0: a helps or harms at alpha is a false one. Power: an lr-insensitive idea
better than the comparator's best config by delta, arms whose best configs differ (the idea's
best lr is the comparator's worst), and an idea better by delta at every config; ``estimand``
is then -delta.

    PYTHONPATH=. nice -n 15 python benchmarks/calibration/crossfit_calibration.py [--reps 2000]

merges its rows into benchmarks/results/crossfit_calibration.json (``--out``; ``seconds`` is
the last invocation's). Power rows also give ``helps_oracle``: the plain sign-flip test at both
arms' true best configs, known in advance (no selection), the most the estimand allows
(``--oracle-only`` adds it to the rows already written, on their draws). Run
with another checkout first on PYTHONPATH (e.g. main's) to measure its test on the same
draws: ``p`` is then the p its report decides by, ``p_test_alone`` the selection-aware p
before its effective-grid rule.
Deterministic (seeded).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import crossfit_regimes as cr  # noqa: E402

from benchkit.stats import paired, selection  # noqa: E402
from benchkit.verdict import comparison  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "crossfit_calibration.json"
POWER = (("lr-blind", 0.02), ("lr-blind", 0.01), ("different optimum", 0.01),
         ("different optimum", 0.02), ("A/A", 0.01), ("A/A", 0.02))


def rate(k: int, n: int) -> dict:
    return {"count": k, "n": n, "rate": k / n, "se": math.sqrt(max(k * (n - k), 1) / n ** 3)}


def decide(bv, bt, iv, it) -> tuple[float, float, float]:
    """(p the report decides by, p before any effective-grid rule, delta_mean)."""
    fixed = []
    for v, t in ((bv, bt), (iv, it)):
        score = np.where(np.all(np.isfinite(v), axis=0), v.mean(axis=0), np.inf)
        fixed.append(t[:, int(np.argmin(score))].tolist())
    sw = selection.sweeps(bv, bt, iv, it)
    comp = comparison.compare_arms(fixed[0], fixed[1], direction="lower", alpha=0.05,
                                   margin=None, test="mean", sweeps=sw)
    raw = getattr(comp, "p_unexchangeable", None)
    return comp.p_value, comp.p_value if raw is None else raw, comp.delta_mean


def oracle(regime: str, bt, it) -> tuple[float, float]:
    """(p, delta) of the plain sign-flip test at both arms' true best configs, known before
    the bench (no selection): what the estimand allows at most; the power the deciding test
    loses to selection is this test's power less its own."""
    d = it[:, cr.best_config(regime)] - bt[:, 0]
    return paired.sign_flip_p_value(d.tolist()), float(np.mean(d))


def count(regime: str, n: int, reps: int, alpha: float, effect: float, salt: int,
          oracle_only: bool = False) -> dict:
    """The row's rates; ``oracle_only``: the known-configs test's alone, on the same draws."""
    rng = np.random.default_rng([49, salt, n])
    k = {"helps_oracle": 0} if oracle_only else {
        "helps": 0, "harms": 0, "helps_test_alone": 0, "harms_test_alone": 0, "helps_oracle": 0}
    for _ in range(reps):
        bv, bt, iv, it = cr.draw(regime, rng, n, effect)
        p_o, delta_o = oracle(regime, bt, it)
        k["helps_oracle"] += p_o < alpha and delta_o < 0
        if oracle_only:
            continue
        p, raw, delta = decide(bv, bt, iv, it)
        k["helps"] += p < alpha and delta < 0
        k["harms"] += p < alpha and delta > 0
        k["helps_test_alone"] += raw < alpha and delta < 0
        k["harms_test_alone"] += raw < alpha and delta > 0
    return {key: rate(v, reps) for key, v in k.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seeds", type=int, nargs="+", default=[8, 12])
    ap.add_argument("--kinds", nargs="+", default=["level", "power"])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--oracle-only", action="store_true",
                    help="add helps_oracle to the power rows already in --out (same draws)")
    args = ap.parse_args()
    if args.oracle_only:
        return add_oracle(args)
    t0 = time.time()
    rows = []
    for n in args.seeds:
        cases = [("level", regime, 0.0, 100 + i) for i, regime in enumerate(cr.NULLS)] + \
            [("power", regime, effect, 200 + j) for j, (regime, effect) in enumerate(POWER)]
        for kind, regime, effect, salt in cases:
            if kind not in args.kinds:
                continue
            row = {"kind": kind, "regime": regime, "seeds": n, "estimand": -effect,
                   **count(regime, n, args.reps, args.alpha, effect, salt)}
            rows.append(row)
            print(n, kind, regime, effect,
                  {k: v["rate"] for k, v in row.items() if isinstance(v, dict)}, flush=True)
    old = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
    keys = {(r["kind"], r["regime"], r["seeds"], r["estimand"]) for r in rows}
    rows = [r for r in old if (r["kind"], r["regime"], r["seeds"], r["estimand"]) not in keys] \
        + rows  # rows of other invocations kept: one file for every kind and seed count
    out = {"code": str(Path(selection.__file__).resolve().parents[2]), "alpha": args.alpha,
           "reps": args.reps, "means": list(cr.MEANS),
           "noise": {"seed_sd": cr.SEED_SD, "val_sd": cr.VAL_SD, "test_sd": cr.TEST_SD},
           "rows": rows, "seconds": round(time.time() - t0, 1)}
    args.out.write_text(json.dumps(out, indent=1) + "\n")


def add_oracle(args) -> None:
    """The known-configs column for the power rows already in ``--out``, on their draws."""
    data = json.loads(args.out.read_text())
    salts = {(regime, effect): 200 + j for j, (regime, effect) in enumerate(POWER)}
    for row in data["rows"]:
        if row["kind"] == "power":
            row.update(count(row["regime"], row["seeds"], data["reps"], data["alpha"],
                             -row["estimand"], salts[(row["regime"], -row["estimand"])],
                             oracle_only=True))
            print(row["regime"], row["seeds"], row["helps_oracle"]["rate"], flush=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
