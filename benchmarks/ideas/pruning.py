"""What the shipped pruning ideas see at each point of their frontier (``MACS`` of
ideas/mlp_surgery.py), on seeds disjoint from their benches' (100 and up), so that no figure is
read off the bench.

Per seed, the dense ``mlp_tiny`` trained as the pruning arms train it (tabular, lr 5e-3, the
track's 120 cosine epochs); then per budget (the compact model's multiply-adds as a fraction of
the dense model's) each pruning arm's compact model (ideas/test_task_visible_pruning.py): units
replaced per layer, the fraction reached, val and test MSE right after replacement; and the
fine-tune and from-scratch arms (ideas/test_pruning_finetune_vs_scratch.py) trained at each lr
of ``--lrs``, so that its grid can bracket both arms' validation optimum. The dense model is
trained once per seed (the bench trains it in every run, identically); the scratch arm's fresh
init is drawn after ``torch.manual_seed(seed)``, not from the stream the dense fit left.
With ``--dense-lrs`` the dense model is first trained at each of those lrs too (val and test
per lr, and the lr of the best mean validation over the seeds), to check the modules' one
dense lr against the track's data (its teacher is recorded with the figures).

    PYTHONPATH=$PWD nice -n 15 .venv/bin/python benchmarks/ideas/pruning.py --seeds 100
    PYTHONPATH=$PWD nice -n 15 .venv/bin/python benchmarks/ideas/pruning.py --add --seeds 101 102
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from benchkit import tracks
from benchkit.tracks.models import mlp_tiny
from benchkit.training.run import Run, seed_everything

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ideas"))

from mlp_surgery import (MACS, by_crossing, by_magnitude, by_random, drop,  # noqa: E402
                         least_squares, linears, majority_side, multiply_adds, reinitialized,
                         within)

DENSE_LR = 5e-3
OUT = ROOT / "benchmarks" / "results" / "ideas" / "pruning.json"


def arms(seed: int) -> dict:
    """The pruning module's arms: name -> (ranking, surrogate)."""
    return {"baseline": (by_magnitude, drop), "magnitude_shortcut": (by_magnitude, majority_side),
            "magnitude_lstsq": (by_magnitude, least_squares),
            "random_ranking": (by_random(seed), majority_side),
            "idea": (by_crossing, majority_side)}


def dense_sweep(seed: int, lrs: list[float]) -> dict:
    """The dense ``mlp_tiny`` of ``seed`` trained at each lr: val and test per lr."""
    track, found = tracks.get("tabular"), {}
    for lr in lrs:
        seed_everything(seed)
        run = Run(arm="dense", track=track, cfg={"lr": lr}, seed=seed)
        run.fit(mlp_tiny())
        found[str(lr)] = {"val": run.val, "test": run.test}
    return found


def one_seed(seed: int, lrs: list[float], dense_lrs: list[float]) -> dict:
    track = tracks.get("tabular")
    swept = dense_sweep(seed, dense_lrs) if dense_lrs else {}
    seed_everything(seed)
    dense_run = Run(arm="dense", track=track, cfg={"lr": DENSE_LR}, seed=seed)
    dense = dense_run.fit(mlp_tiny())
    x = dense_run.data.train.x
    out: dict = {"dense": {"val": dense_run.val, "test": dense_run.test}, "points": {}}
    if swept:
        out["dense_by_lr"] = swept
    for budget in MACS:
        point: dict = {"pruning": {}, "finetune": {}}
        for name, (order, surrogate) in arms(seed).items():
            compact = within(dense, x, budget, order, surrogate)
            kept = [lin.out_features for lin in compact.main[:-1]]
            point["pruning"][name] = {
                "replaced_per_layer": [lin.out_features - k for lin, k
                                       in zip(linears(dense)[:-1], kept)],
                "multiply_adds_ratio": multiply_adds(compact) / multiply_adds(dense),
                "val": dense_run.evaluate(compact, "val"),
                "test": dense_run.evaluate(compact, "test")}
        pruned = within(dense, x, budget, by_crossing, majority_side)
        for arm in ("fine_tuned", "from_scratch"):
            for lr in lrs:
                torch.manual_seed(seed)
                model = (copy.deepcopy(pruned) if arm == "fine_tuned"
                         else reinitialized(pruned))
                run = Run(arm=arm, track=track, cfg={"lr": lr}, seed=seed)
                run.fit(model)
                point["finetune"].setdefault(arm, {})[str(lr)] = {"val": run.val,
                                                                   "test": run.test}
        out["points"][str(budget)] = point
    return out


def optima(per_seed: dict, lrs: list[float]) -> dict:
    """Per budget and arm, the lr of the best mean validation over the seeds (the bench's rule),
    and whether it lies strictly inside ``lrs``."""
    found: dict = {}
    for budget in MACS:
        for arm in ("fine_tuned", "from_scratch"):
            means = {lr: statistics.mean(s["points"][str(budget)]["finetune"][arm][str(lr)]["val"]
                                         for s in per_seed.values()) for lr in lrs}
            best = min(means, key=means.__getitem__)
            found.setdefault(str(budget), {})[arm] = {
                "val_mean_by_lr": {str(k): v for k, v in means.items()}, "optimum_lr": best,
                "inside": lrs[0] < best < lrs[-1]}
    return found


def dense_optimum(per_seed: dict) -> dict | None:
    """The dense lr of the best mean validation over the seeds that swept it, with the means."""
    swept = [s["dense_by_lr"] for s in per_seed.values() if "dense_by_lr" in s]
    if not swept:
        return None
    means = {lr: statistics.mean(s[lr]["val"] for s in swept) for lr in swept[0]}
    lrs = sorted(means, key=float)
    best = min(means, key=means.__getitem__)
    return {"val_mean_by_lr": means, "optimum_lr": float(best), "seeds": len(swept),
            "inside": lrs[0] != best != lrs[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    ap.add_argument("--lrs", type=float, nargs="+",
                    default=[1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2])
    ap.add_argument("--dense-lrs", type=float, nargs="*", default=[],
                    help="also train the dense model at each of these lrs")
    ap.add_argument("--add", action="store_true", help="add the seeds to the recorded ones")
    args = ap.parse_args()
    torch.set_num_threads(1)
    lrs = sorted(args.lrs)
    kept = json.loads(OUT.read_text()) if args.add and OUT.exists() else {}
    if kept and kept["lrs"] != lrs:
        sys.exit(f"--add: {OUT} was measured at lrs {kept['lrs']}, not {lrs}")
    per_seed, cpu = kept.get("seeds", {}), kept.get("cpu_seconds_per_seed", {})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:  # written after each seed: a long run keeps what it measured
        start = time.process_time()
        per_seed[str(seed)] = one_seed(seed, lrs, sorted(args.dense_lrs))
        cpu[str(seed)] = round(time.process_time() - start, 1)
        OUT.write_text(json.dumps({
            "command": "python benchmarks/ideas/pruning.py --seeds <each seed> [--add] --lrs "
                       + " ".join(map(str, lrs)) + (" --dense-lrs " + " ".join(
                           map(str, sorted(args.dense_lrs))) if args.dense_lrs else ""),
            "track_protocol": tracks.get("tabular").protocol(),
            "dense_lr": DENSE_LR, "dense_optimum": dense_optimum(per_seed), "budgets": MACS,
            "lrs": lrs, "cpu_seconds_per_seed": cpu,
            "finetune_optima": optima(per_seed, lrs), "seeds": per_seed}, indent=1) + "\n")
    print(OUT)


if __name__ == "__main__":
    main()
