"""Whether the planning figures hold for the test that decides (issue 49 item 4), simulated
through the report's functions: per regime of crossfit_regimes and seed count, ``--benches``
A/A benches (compare stage with the arms' sweeps, then
:func:`benchkit.verdict.decision.planning_figures` as decision_of calls it) give each its
``mde_power80``; its true power is the share of ``--fresh`` new benches of the regime, the idea
better by that figure at every config, that the compare stage calls helps. "before" is the
figure reports gave before this change (the binding paired test alone, its sd's 70% bound, no
tuning loss), on the same benches and fresh draws.

``seeds_needed``: for each of the first ``--needed-benches`` benches, the figure (before and
after) for a true effect ``--needed-effect`` (as if the observed delta were the true one), and
the share of ``--fresh`` new benches with that many seeds and that effect called helps.

    PYTHONPATH=. nice -n 15 python benchmarks/calibration/planning_power.py \
        [--seeds 8 12] [--regimes ...] [--benches 40] [--fresh 100]

merges its rows into benchmarks/results/planning_power.json (``--out``). Deterministic.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import crossfit_regimes as cr  # noqa: E402

from benchkit.stats import planning, selection, signflip  # noqa: E402
from benchkit.verdict import comparison, decision  # noqa: E402

ROOT = HERE.parents[1]
OUT = ROOT / "benchmarks" / "results" / "planning_power.json"
ALPHA = 0.05
OLD_CONFIDENCE = 0.7  # the sd bound before this change
REGIMES = ("A/A", "lr-blind", "clamped lr", "10x less lr-sensitive", "pair grid",
           "noisier idea", "heavy tails", "skewed idea", "different optimum")


def compared(bv, bt, iv, it):
    """(sweeps, the compare stage's comparison) of one bench, as build.py makes them."""
    sw = selection.sweeps(bv, bt, iv, it)
    comp = comparison.compare_arms(bt[:, 0].tolist(), it[:, 0].tolist(), direction="lower",
                                   alpha=ALPHA, margin=None, test="mean", sweeps=sw)
    return sw, comp


def found(regime: str, seeds: int, effect: float, fresh: int, salt) -> float:
    """The share of ``fresh`` new benches, the idea better by ``effect``, called helps."""
    rng = np.random.default_rng([49, 4, *salt])
    hits = 0
    for _ in range(fresh):
        sw = selection.sweeps(*cr.draw(regime, rng, seeds, effect))
        p = selection.p_value(sw, "lower")
        hits += p < ALPHA and float(np.mean(selection.binding(sw, "lower").d)) < 0
    return hits / fresh


def summary(powers: list[float]) -> dict:
    a = np.asarray(powers, float)
    return {"mean_true_power": float(a.mean()), "share_below_080": float(np.mean(a < 0.8)),
            "se": float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else None}


def row(regime: str, n: int, args, salt: int) -> dict:
    rng = np.random.default_rng([49, 40, salt, n])
    after, before, mdes, needed = [], [], [], []
    for b in range(args.benches):
        sw, comp = compared(*cr.draw(regime, rng, n))
        new = decision.planning_figures(comp, ALPHA, significant=False, sw=sw,
                                        direction="lower").mde_power80
        old = signflip.mde_power80(n, planning.planning_sd(np.asarray(comp.per_seed_diffs),
                                                            OLD_CONFIDENCE), ALPHA)
        if new is None or old is None:
            continue
        mdes.append((old, new))
        after.append(found(regime, n, new, args.fresh, (salt, n, b)))
        before.append(found(regime, n, old, args.fresh, (salt, n, b)))
        if b < args.needed_benches:
            d = np.asarray(comp.per_seed_diffs)
            k_new = planning.figures(d, -args.needed_effect, ALPHA, significant=False,
                                     tuning_loss=selection.idea_tuning_loss(sw, "lower")
                                     ).seeds_needed
            k_old = signflip.seeds_needed(-args.needed_effect,
                                          planning.planning_sd(d, OLD_CONFIDENCE), ALPHA)
            if k_new is not None and k_old is not None and k_new <= args.needed_max:
                needed.append((k_old, k_new,
                               found(regime, k_old, args.needed_effect, args.fresh,
                                     (salt, n, b, 1)),
                               found(regime, k_new, args.needed_effect, args.fresh,
                                     (salt, n, b, 1))))
    m = np.asarray(mdes)
    out = {"regime": regime, "seeds": n, "benches": len(after), "fresh_per_bench": args.fresh,
           "median_mde_before": float(np.median(m[:, 0])),
           "median_mde_after": float(np.median(m[:, 1])),
           "before": summary(before), "after": summary(after)}
    if needed:
        k = np.asarray(needed)
        out["seeds_needed"] = {"effect": args.needed_effect, "benches": len(needed),
                               "median_before": float(np.median(k[:, 0])),
                               "median_after": float(np.median(k[:, 1])),
                               "before": summary(list(k[:, 2])),
                               "after": summary(list(k[:, 3]))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[8, 12])
    ap.add_argument("--regimes", nargs="+", default=list(REGIMES))
    ap.add_argument("--benches", type=int, default=40)
    ap.add_argument("--fresh", type=int, default=100)
    ap.add_argument("--needed-benches", type=int, default=0)
    ap.add_argument("--needed-effect", type=float, default=0.02)
    ap.add_argument("--needed-max", type=int, default=40)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    for n in args.seeds:
        for regime in args.regimes:
            t0 = time.time()
            r = row(regime, n, args, cr.NULLS.index(regime))
            r["seconds"] = round(time.time() - t0, 1)
            print(json.dumps(r), flush=True)
            old = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
            rows = [x for x in old if (x["regime"], x["seeds"]) != (regime, n)] + [r]
            args.out.write_text(json.dumps({"alpha": ALPHA, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
