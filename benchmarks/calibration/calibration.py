"""Calibration of benchkit's paired test on a real null and with known injected effects.

A script, not a test (tests/stats/test_calibration.py runs a small deterministic version of it).
One process, one torch thread, no pytest: it calls the same code an arm test does
(benchkit.training.run.seed_everything, then benchkit.training.run.Run.fit), then
benchkit.stats.paired.select_config and benchkit.stats.paired.compare, exactly as a report does.

Null (A/A with different init streams). The "idea" is the baseline model, built after
``torch.manual_seed(seed + IDEA_INIT_OFFSET)`` instead of the seed's own init stream; the data
(track.data(seed)) and the minibatch order (benchkit.training.loop.order_generator(seed)) stay those
of the seed. Both init streams are draws from the same distribution, so H0 holds exactly. Seed
block b uses seeds SEEDS*b .. SEEDS*b + SEEDS-1; each block is one bench: every arm runs every
grid config on every seed, each arm selects its config on the validation mean, and the
selected configs' test MSEs are compared. The false-positive rate is the share of blocks with
p < alpha, with its exact (Clopper-Pearson) 95% interval.

Power. A known effect is injected by adding Gaussian noise of standard deviation s to the
idea's test predictions (selected config; selection is on validation, untouched): the idea's
expected test MSE rises by exactly s^2. The same standard-normal draws (seeded by the seed
alone) are scaled for every s. Detection = compare's verdict "idea worse (significant)".

    .venv/bin/python benchmarks/calibration/calibration.py               # the documented run
    .venv/bin/python benchmarks/calibration/calibration.py --blocks 20   # a quick look
    .venv/bin/python benchmarks/calibration/calibration.py --first-block 200 \
        --out benchmarks/results/calibration_blocks200-399.json       # 200 more, disjoint blocks
    .venv/bin/python benchmarks/calibration/calibration.py \
        --merge benchmarks/results/calibration.json \
        benchmarks/results/calibration_blocks200-399.json             # pooled rates
    .venv/bin/python benchmarks/calibration/calibration.py --sequential  # union vs exact bounds

    .venv/bin/python benchmarks/calibration/calibration.py --doc  # docs/calibration.md from JSON

Writes benchmarks/results/calibration.json. This module is the command line and the training path
(train, analyse one block, the identical-stream check); the summary over blocks, its table and
``--merge`` are benchmarks/calibration/calibration_summary.py, the simulation-only studies
(``--sequential``, ``--statistics``) benchmarks/calibration/calibration_sim.py, and ``--doc``
renders docs/calibration.md from the JSON files (benchmarks/calibration/calibration_doc.py).
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from benchkit.stats import paired
from benchkit import tracks
from benchkit.store.environment import environment
from benchkit.training.run import Run, seed_everything
from benchkit.verdict import decision

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
sys.path[:0] = [str(HERE), str(HERE.parent / "stats")]  # calibration_*, simstats
from calibration_sim import STAT_REPS, sequential_boundaries, statistics  # noqa: E402
from calibration_summary import merge, summarize, table  # noqa: E402
IDEA_INIT_OFFSET = 1_000_003     # the idea's init stream: torch.manual_seed(seed + this)
NOISE_SALT = 0xCA11B            # the injected noise's own stream, seeded by the seed alone
DEFAULTS = {"track": "tabular", "blocks": 200, "seeds": 6, "epochs": 3, "alpha": 0.05,
            "noise_sd": [0.1, 0.2, 0.3, 0.4, 0.5, 0.7], "sim_reps": 20000}


# ---------------------------------------------------------------- training (the real path)


def train_one(track, seed: int, cfg: dict, epochs: int, init_seed: int | None):
    """One run as the plugin makes it: seed everything from the seed, optionally switch the
    torch (init) stream, build the track's default model, Run.fit. Returns (val, test,
    test predictions as float64 numpy)."""
    seed_everything(seed)
    if init_seed is not None:
        torch.manual_seed(init_seed)
    run = Run(arm="calibration", track=track, cfg=cfg, seed=seed, epochs=epochs)
    model = run.fit(track.model())
    with torch.no_grad():
        model.eval()
        pred = model(run.data.test.x).double().numpy().reshape(-1)
    return run.val, run.test, pred


def run_block(track, seeds: list[int], grid, epochs: int, *, idea_offset: int | None = None,
              same_stream: bool = False) -> dict:
    """Both arms of one bench over `seeds` and every config of `grid`.

    The idea's init stream is seed + idea_offset (default IDEA_INIT_OFFSET); same_stream=True
    gives the idea exactly the baseline's stream (an identical A/A: diffs must be 0.0)."""
    offset = IDEA_INIT_OFFSET if idea_offset is None else idea_offset
    arms = {"baseline": {"val": [], "test": []}, "idea": {"val": [], "test": [], "pred": []}}
    for cfg in grid:
        rows = {arm: {k: [] for k in v} for arm, v in arms.items()}
        for seed in seeds:
            v, t, _ = train_one(track, seed, cfg, epochs, None)
            rows["baseline"]["val"].append(v)
            rows["baseline"]["test"].append(t)
            v, t, p = train_one(track, seed, cfg, epochs, None if same_stream else seed + offset)
            rows["idea"]["val"].append(v)
            rows["idea"]["test"].append(t)
            rows["idea"]["pred"].append(p)
        for arm in arms:
            for k in arms[arm]:
                arms[arm][k].append(rows[arm][k])
    return {"seeds": list(seeds), "grid": [dict(c) for c in grid], **arms}


# ---------------------------------------------------------------- analysis of one block


def noise_draws(seed: int, n_test: int) -> np.ndarray:
    """Standard-normal draws for the injected noise of one seed (scaled by each sd)."""
    return np.random.default_rng([NOISE_SALT, int(seed)]).standard_normal(n_test)


def fixed_level_words(comp: dict, direction: str, alpha: float) -> str:
    """The reference reports' words for one comparison tested at ``alpha`` alone (no family,
    no looks): what a calibration block counts as a rejection."""
    verdict = decision.practical_verdict(comp["p_value"], comp["delta_mean"], direction, alpha)
    return decision.reference_words(verdict)


def analyse_block(block: dict, track, *, alpha: float, noise_sd: list[float]) -> dict:
    """select_config per arm on validation, compare on test (the report's path); also the
    comparison of every fixed config (no selection) and the injected effects."""
    direction = track.direction
    sel = {arm: paired.select_config(block[arm]["val"], direction) for arm in ("baseline", "idea")}
    out = {"seeds": block["seeds"], "selected": sel}
    if sel["baseline"] is None or sel["idea"] is None:
        out["incomplete"] = True  # a diverged run: never a verdict on fewer pairs
        return out
    base = block["baseline"]["test"][sel["baseline"]]
    idea = block["idea"]["test"][sel["idea"]]
    cmp = paired.compare(base, idea, direction=direction, alpha=alpha).to_json()
    out.update(p=cmp["p_value"], verdict=fixed_level_words(cmp, direction, alpha),
               diffs=cmp["per_seed_diffs"],
               base_mean=float(np.mean(base)), idea_mean=float(np.mean(idea)))
    out["p_by_config"] = [
        paired.compare(b, i, direction=direction, alpha=alpha).p_value
        if all(map(math.isfinite, b + i)) else None
        for b, i in zip(block["baseline"]["test"], block["idea"]["test"])]
    # injected effects on the idea's selected-config test predictions
    preds = block["idea"]["pred"][sel["idea"]]
    power = []
    for sd in noise_sd:
        noisy = []
        for seed, pred in zip(block["seeds"], preds):
            y = track.data(seed).test.y.double().numpy().reshape(-1)
            e = sd * noise_draws(seed, len(y))
            noisy.append(float(np.mean((pred + e - y) ** 2)))
        c = paired.compare(base, noisy, direction=direction, alpha=alpha).to_json()
        power.append({"sd": sd, "p": c["p_value"],
                      "verdict": fixed_level_words(c, direction, alpha),
                      "delta": c["delta_mean"], "diffs": c["per_seed_diffs"]})
    out["power"] = power
    return out


# ---------------------------------------------------------------- the script


def identical_stream_check(track, seeds, grid, epochs) -> dict:
    """A/A with the idea on the baseline's own init stream: every diff must be exactly 0."""
    block = run_block(track, seeds, grid, epochs, same_stream=True)
    diffs = [float(i - b) for cb, ci in zip(block["baseline"]["test"], block["idea"]["test"])
             for b, i in zip(cb, ci)]
    return {"seeds": list(seeds), "runs_per_arm": len(diffs),
            "max_abs_diff": max(abs(x) for x in diffs), "all_exactly_zero": not any(diffs)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--track", default=DEFAULTS["track"])
    ap.add_argument("--blocks", type=int, default=DEFAULTS["blocks"])
    ap.add_argument("--first-block", type=int, default=0,
                    help="index of the first seed block (to add disjoint blocks to a run)")
    ap.add_argument("--seeds", type=int, default=DEFAULTS["seeds"], help="seeds per block")
    ap.add_argument("--epochs", type=int, default=DEFAULTS["epochs"])
    ap.add_argument("--lrs", type=float, nargs="+", default=None,
                    help="grid (default: the track's)")
    ap.add_argument("--alpha", type=float, default=DEFAULTS["alpha"])
    ap.add_argument("--noise-sd", type=float, nargs="+", default=DEFAULTS["noise_sd"])
    ap.add_argument("--sim-reps", type=int, default=None,
                    help=f"simulated replicates (default {DEFAULTS['sim_reps']}; with "
                         f"--statistics, {STAT_REPS} benches per condition)")
    ap.add_argument("--statistics", action="store_true",
                    help="do not train: seeded simulations of the sign-flip planning figures, "
                         "its interval, non-inferiority, TOST and the spending rule -> --out")
    ap.add_argument("--out", type=Path, default=None,
                    help="default calibration.json (sequential_boundaries.json with --sequential)")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                    help="do not train: pool the written results of runs over disjoint blocks")
    ap.add_argument("--sequential", action="store_true",
                    help="do not train: FWER and power of the union and exact boundaries at "
                         "looks (8, 16) on simulated differences -> --out")
    ap.add_argument("--effect", type=float, default=0.75,
                    help="with --sequential: the true mean difference in sd units for power")
    ap.add_argument("--doc", action="store_true",
                    help="do not train: render docs/calibration.md from the JSON files")
    args = ap.parse_args(argv)
    if args.doc:
        import calibration_doc

        print(f"wrote {calibration_doc.write()}")
        return
    if args.sim_reps is None:
        args.sim_reps = STAT_REPS if args.statistics else DEFAULTS["sim_reps"]
    if args.sim_reps < 10:
        ap.error(f"--sim-reps must be an integer >= 10, got {args.sim_reps}")
    if args.out is None:
        args.out = RESULTS / ("sequential_boundaries.json" if args.sequential else
                           "calibration_statistics.json" if args.statistics else
                           "calibration.json")
    if args.statistics:
        t0 = time.perf_counter()
        result = {"command": " ".join(["benchmarks/calibration/calibration.py", *(
            argv if argv is not None else sys.argv[1:])]), **statistics(args.sim_reps)}
        result["seconds"] = time.perf_counter() - t0
        result["environment"] = environment()
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out} ({result['seconds']:.0f} s)")
        return
    if args.sequential:
        t0 = time.perf_counter()
        result = sequential_boundaries(args.sim_reps, args.alpha, args.effect)
        result["seconds"] = time.perf_counter() - t0
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out} ({result['seconds']:.0f} s)")
        return
    if args.merge:
        print(merge(args.merge))
        return
    torch.set_num_threads(1)
    track = tracks.get(args.track)
    args.grid_cfgs = [{"lr": lr} for lr in args.lrs] if args.lrs else [dict(c) for c in track.grid]
    n_test = len(track.data(0).test)

    t0 = time.perf_counter()
    check = identical_stream_check(track, list(range(args.seeds)), args.grid_cfgs, args.epochs)
    print(f"identical init streams (seeds 0..{args.seeds - 1}, {check['runs_per_arm']} runs "
          f"per arm): max |diff| = {check['max_abs_diff']!r}, all exactly zero: "
          f"{check['all_exactly_zero']}", flush=True)
    if not check["all_exactly_zero"]:
        sys.exit("pairing is broken: the same seed and init stream gave different results")
    t_check = time.perf_counter() - t0

    results, t1 = [], time.perf_counter()
    for b in range(args.first_block, args.first_block + args.blocks):
        seeds = list(range(args.seeds * b, args.seeds * (b + 1)))
        block = run_block(track, seeds, args.grid_cfgs, args.epochs)
        results.append(analyse_block(block, track, alpha=args.alpha, noise_sd=args.noise_sd))
        done = len(results)
        if done % 20 == 0 or done == args.blocks:
            el = time.perf_counter() - t1
            print(f"block {done}/{args.blocks}: {el:.0f} s, {el / done:.2f} s/block, "
                  f"null rejections so far {sum(r.get('p', 1) < args.alpha for r in results)}",
                  flush=True)
    t_blocks = time.perf_counter() - t1
    runs = 2 * args.blocks * args.seeds * len(args.grid_cfgs)
    summary = summarize(results, alpha=args.alpha, n_seeds=args.seeds, grid=args.grid_cfgs,
                        n_test=n_test, sim_reps=args.sim_reps)
    total = time.perf_counter() - t0
    timing = {"identical_check_s": t_check, "blocks_s": t_blocks, "total_s": total,
              "runs": runs, "ms_per_run": 1000 * t_blocks / runs if runs else None}
    print(table(summary, args))
    print(f"timing: {runs} runs in {t_blocks:.0f} s ({timing['ms_per_run']:.1f} ms/run), "
          f"total {total:.0f} s")
    out = {
        "command": " ".join(["benchmarks/calibration/calibration.py", *(argv if argv is not None
                                                             else sys.argv[1:])]),
        "protocol": {"track": args.track, "seeds_per_block": args.seeds,
                     "blocks": args.blocks, "first_block": args.first_block,
                     "epochs": args.epochs, "grid": args.grid_cfgs,
                     "alpha": args.alpha, "selection": "per arm, best validation mean",
                     "test": "benchkit.stats.paired.compare (two-sided paired sign-flip)",
                     "idea_init": f"torch.manual_seed(seed + {IDEA_INIT_OFFSET})",
                     "noise_sd": args.noise_sd, "batch_size": track.batch_size,
                     "optimizer": track.optimizer, "n_test": n_test},
        "identical_stream_check": check, "summary": summary, "timing": timing,
        "environment": {**environment(), "python_impl": platform.python_implementation()},
        "blocks": [{"seeds": [r["seeds"][0], r["seeds"][-1]], "selected": r["selected"],
                    "p": r.get("p"), "p_by_config": r.get("p_by_config"),
                    "p_injected": [x["p"] for x in r.get("power", [])]} for r in results],
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
