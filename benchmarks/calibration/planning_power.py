"""Whether the planning figures hold for the test that decides (issue 49 item 4), simulated
through the report's functions: per regime of crossfit_regimes and seed count, ``--benches``
A/A benches (compare stage with the arms' sweeps, then
:func:`benchkit.verdict.decision.planning_figures` as decision_of calls it) give each its
``mde_power80``; its true power is the share of ``--fresh`` new benches of the regime, the idea
better by that figure at every config, that the compare stage calls helps ("after"), and the
share of new benches with the idea worse by it that it calls harms ("harms": each side pays
its tuned arm's loss). With ``--previous``, the harms side's power at the figure the previous
code gave (the chi-square bound alone, the idea's loss alone: "harms_previous"). "before"
(the figure before issue 49's item 4) and "previous_after" are carried from the row this run
replaces, when it has them.

``seeds_needed``: for each of the first ``--needed-benches`` benches, the figure for a true
effect ``--needed-effect`` (as if the observed delta were the true one), and the share of
``--fresh`` new benches with that many seeds and that effect called helps; benches whose figure
is above ``--needed-max`` seeds are counted, not simulated. Summaries over every simulated
bench and over those whose figure is at most 40 seeds.

    PYTHONPATH=. nice -n 15 python benchmarks/calibration/planning_power.py \
        [--seeds 8 12] [--regimes ...] [--benches 30] [--fresh 100]

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
REGIMES = ("A/A", "lr-blind", "clamped lr", "10x less lr-sensitive", "pair grid",
           "noisier idea", "heavy tails", "skewed idea", "different optimum")


def compared(bv, bt, iv, it):
    """(sweeps, the compare stage's comparison) of one bench, as build.py makes them."""
    sw = selection.sweeps(bv, bt, iv, it)
    comp = comparison.compare_arms(bt[:, 0].tolist(), it[:, 0].tolist(), direction="lower",
                                   alpha=ALPHA, margin=None, test="mean", sweeps=sw)
    return sw, comp


def found(regime: str, seeds: int, effect: float, fresh: int, salt, side: str = "helps"
          ) -> float:
    """The share of ``fresh`` new benches, the idea better (``side`` helps) or worse (harms)
    by ``effect``, that the compare stage calls so."""
    rng = np.random.default_rng([49, 4, *salt])
    sign = 1.0 if side == "helps" else -1.0
    hits = 0
    for _ in range(fresh):
        sw = selection.sweeps(*cr.draw(regime, rng, seeds, sign * effect))
        p = selection.p_value(sw, "lower")
        hits += p < ALPHA and sign * float(np.mean(selection.binding(sw, "lower").d)) < 0
    return hits / fresh


def summary(powers: list[float]) -> dict:
    a = np.asarray(powers, float)
    return {"mean_true_power": float(a.mean()), "share_below_080": float(np.mean(a < 0.8)),
            "se": float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else None}


def previous_figure(comp, sw) -> float | None:
    """The figure the previous code gave: the chi-square bound, the idea's loss alone."""
    d = np.asarray(comp.per_seed_diffs)
    loss = selection.idea_tuning_loss(sw, "lower")
    sd = float(np.hypot(planning.chi_square_sd(d), np.sqrt(len(d) * np.var(loss))))
    m = signflip.mde_power80(len(d), sd, ALPHA)
    return None if m is None else float(loss.mean()) + m


def row(regime: str, n: int, args, salt: int) -> dict:
    rng = np.random.default_rng([49, 40, salt, n])
    after, harms, harms_prev, mdes, needed = [], [], [], [], []
    for b in range(args.benches):
        sw, comp = compared(*cr.draw(regime, rng, n))
        new = decision.planning_figures(comp, ALPHA, significant=False, sw=sw,
                                        direction="lower").mde_power80
        if new is None:
            continue
        mdes.append(new)
        after.append(found(regime, n, new, args.fresh, (salt, n, b)))
        harms.append(found(regime, n, new, args.fresh, (salt, n, b, 2), "harms"))
        if args.previous and (old := previous_figure(comp, sw)) is not None:
            harms_prev.append(found(regime, n, old, args.fresh, (salt, n, b, 2), "harms"))
        if b < args.needed_benches:
            d = np.asarray(comp.per_seed_diffs)
            k = planning.figures(d, -args.needed_effect, ALPHA, significant=False,
                                 tuning_loss=selection.idea_tuning_loss(sw, "lower"),
                                 comparator_loss=selection.comparator_tuning_loss(sw, "lower")
                                 ).seeds_needed
            if k is not None:
                needed.append((k, found(regime, k, args.needed_effect, args.fresh,
                                        (salt, n, b, 1)) if k <= args.needed_max else None))
    out = {"regime": regime, "seeds": n, "benches": len(after), "fresh_per_bench": args.fresh,
           "median_mde_after": float(np.median(mdes)), "after": summary(after),
           "harms": summary(harms)}
    if harms_prev:
        out["harms_previous"] = summary(harms_prev)
    if needed:
        done = [(k, p) for k, p in needed if p is not None]
        out["seeds_needed"] = {
            "effect": args.needed_effect, "benches": len(needed), "simulated": len(done),
            "max_seeds_simulated": args.needed_max,
            "median_after": float(np.median([k for k, _ in needed])),
            "after": summary([p for _, p in done]),
            "at_most_40": summary([p for k, p in done if k <= 40]),
            "benches_at_most_40": sum(k <= 40 for k, _ in done),
            "per_bench": [[k, p] for k, p in needed]}
    return out


CARRIED = {"before": "before", "median_mde_before": "median_mde_before",
           "after": "previous_after", "median_mde_after": "previous_median_mde"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[8, 12])
    ap.add_argument("--regimes", nargs="+", default=list(REGIMES))
    ap.add_argument("--benches", type=int, default=40)
    ap.add_argument("--fresh", type=int, default=100)
    ap.add_argument("--needed-benches", type=int, default=0)
    ap.add_argument("--needed-effect", type=float, default=0.02)
    ap.add_argument("--needed-max", type=int, default=200)
    ap.add_argument("--previous", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    for n in args.seeds:
        for regime in args.regimes:
            t0 = time.time()
            r = row(regime, n, args, cr.NULLS.index(regime))
            r["seconds"] = round(time.time() - t0, 1)
            print(json.dumps(r), flush=True)
            kept = json.loads(args.out.read_text()) if args.out.exists() else {}
            old = kept.get("rows", [])
            was = [x for x in old if (x["regime"], x["seeds"]) == (regime, n)]
            if was and "harms" not in was[0]:  # a row of the code before: keep its figures
                r.update({new: was[0][k] for k, new in CARRIED.items() if k in was[0]})
            elif was:
                r.update({k: was[0][k] for k in CARRIED.values() if k in was[0]})
            before = (was[0].get("seeds_needed") or {}) if was else {}
            if "seeds_needed" in r and before:  # the previous code's figure, <= 40 seeds
                r["seeds_needed"]["previous_at_most_40"] = before.get(
                    "previous_at_most_40", before["after"] if "simulated" not in before else None)
            rows = [x for x in old if (x["regime"], x["seeds"]) != (regime, n)] + [r]
            args.out.write_text(json.dumps({**kept, "alpha": ALPHA, "rows": rows}, indent=1)
                                + "\n")


if __name__ == "__main__":
    main()
