"""Calibration of benchkit's paired test on a real null and with known injected effects.

A script, not a test (tests/test_calibration.py runs a small deterministic version of it).
One process, one torch thread, no pytest: it calls the same code an arm test does
(benchkit.run.seed_everything, then benchkit.run.Run.fit), then benchkit.stats.select_config
and benchkit.stats.compare, exactly as a report does.

Null (A/A with different init streams). The "idea" is the baseline model, built after
``torch.manual_seed(seed + IDEA_INIT_OFFSET)`` instead of the seed's own init stream; the data
(track.data(seed)) and the minibatch order (benchkit.train.order_generator(seed)) stay those of
the seed. Both init streams are draws from the same distribution, so H0 holds exactly. Seed
block b uses seeds SEEDS*b .. SEEDS*b + SEEDS-1; each block is one bench: every arm runs every
grid config on every seed, each arm selects its config on the validation mean, and the
selected configs' test MSEs are compared. The false-positive rate is the share of blocks with
p < alpha, with its exact (Clopper-Pearson) 95% interval.

Power. A known effect is injected by adding Gaussian noise of standard deviation s to the
idea's test predictions (selected config; selection is on validation, untouched): the idea's
expected test MSE rises by exactly s^2. The same standard-normal draws (seeded by the seed
alone) are scaled for every s. Detection = compare's verdict "idea worse (significant)".

    .venv/bin/python benchmarks/calibration.py               # the documented run
    .venv/bin/python benchmarks/calibration.py --blocks 20   # a quick look
    .venv/bin/python benchmarks/calibration.py --first-block 200 \
        --out benchmarks/calibration_blocks200-399.json       # 200 more, disjoint blocks
    .venv/bin/python benchmarks/calibration.py --merge benchmarks/calibration.json \
        benchmarks/calibration_blocks200-399.json             # pooled rates
    .venv/bin/python benchmarks/calibration.py --sequential   # union vs exact look boundaries

    .venv/bin/python benchmarks/calibration.py --doc          # docs/calibration.md from the JSON

Writes benchmarks/calibration.json; ``--doc`` renders docs/calibration.md from the JSON files
(benchmarks/calibration_doc.py).
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

from benchkit import stats, tracks
from benchkit.environment import environment
from benchkit.run import Run, seed_everything

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import simstats  # noqa: E402
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


def analyse_block(block: dict, track, *, alpha: float, noise_sd: list[float]) -> dict:
    """select_config per arm on validation, compare on test (the report's path); also the
    comparison of every fixed config (no selection) and the injected effects."""
    direction = track.direction
    sel = {arm: stats.select_config(block[arm]["val"], direction) for arm in ("baseline", "idea")}
    out = {"seeds": block["seeds"], "selected": sel}
    if sel["baseline"] is None or sel["idea"] is None:
        out["incomplete"] = True  # a diverged run: never a verdict on fewer pairs
        return out
    base = block["baseline"]["test"][sel["baseline"]]
    idea = block["idea"]["test"][sel["idea"]]
    cmp = stats.compare(base, idea, direction=direction, alpha=alpha)
    out.update(p=cmp["p_value"], verdict=cmp["verdict"], diffs=cmp["per_seed_diffs"],
               base_mean=float(np.mean(base)), idea_mean=float(np.mean(idea)))
    out["p_by_config"] = [
        stats.compare(b, i, direction=direction, alpha=alpha)["p_value"]
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
        c = stats.compare(base, noisy, direction=direction, alpha=alpha)
        power.append({"sd": sd, "p": c["p_value"], "verdict": c["verdict"],
                      "delta": c["delta_mean"], "diffs": c["per_seed_diffs"]})
    out["power"] = power
    return out


# ---------------------------------------------------------------- summary over blocks


def rate(k: int, n: int) -> dict:
    lo, hi = simstats.clopper_pearson(k, n) if n else (None, None)
    return {"k": int(k), "n": int(n), "rate": k / n if n else None, "ci95": [lo, hi]}


def simulated_sign_flip_power(delta: float, sd: float, n: int, alpha: float, reps: int,
                              seed: int) -> float:
    """Power of the sign-flip test itself (detection in delta's direction) when the n paired
    diffs are i.i.d. normal(delta, sd): seeded simulation with benchkit's own test."""
    d = np.random.default_rng(seed).normal(delta, sd, size=(reps, n))
    p = np.asarray(simstats.sign_flip_p_values(d))
    hit = (p < alpha) & (np.sign(d.mean(axis=1)) == np.sign(delta))
    return float(np.mean(hit))


def summarize(results: list[dict], *, alpha: float, n_seeds: int, grid, n_test: int,
              sim_reps: int = 20000) -> dict:
    done = [r for r in results if not r.get("incomplete")]
    n = len(done)
    summary = {"blocks": len(results), "complete_blocks": n,
               "incomplete_blocks": len(results) - n}
    if not n:
        return summary
    p = np.array([r["p"] for r in done])
    unit = stats.min_p_value(n_seeds)  # sign-flip p-values are multiples of 2^(1-n)
    # exact null: P(p <= j * unit) = j * unit when diffs are exchangeable in sign (no ties)
    attainable = math.ceil(alpha / unit) - 1
    summary["fpr"] = {
        "selected": rate(int(np.sum(p < alpha)), n),
        "expected_exact": attainable * unit,
        "by_config": [rate(sum(r["p_by_config"][k] < alpha for r in done
                               if r["p_by_config"][k] is not None),
                           sum(r["p_by_config"][k] is not None for r in done))
                      for k in range(len(grid))],
    }
    summary["p_distribution"] = [
        {"threshold": j * unit, "observed": float(np.mean(p <= j * unit * (1 + 1e-9))),
         "expected": j * unit}
        for j in (1, 2, 4, 8, 16) if j * unit <= 1]
    sel = np.array([[r["selected"]["baseline"], r["selected"]["idea"]] for r in done])
    summary["selection"] = {
        "baseline_counts": [int(np.sum(sel[:, 0] == k)) for k in range(len(grid))],
        "idea_counts": [int(np.sum(sel[:, 1] == k)) for k in range(len(grid))],
        "arms_disagree": int(np.sum(sel[:, 0] != sel[:, 1]))}
    diffs = np.concatenate([r["diffs"] for r in done])
    base_mean = float(np.mean([r["base_mean"] for r in done]))
    idea_mean = float(np.mean([r["idea_mean"] for r in done]))
    null_sd = float(np.std(diffs, ddof=1))
    summary["null_diffs"] = {"mean": float(np.mean(diffs)), "sd": null_sd,
                             "share_positive": float(np.mean(diffs > 0)),
                             "exact_zeros": int(np.sum(diffs == 0)),
                             "baseline_mean_test": base_mean, "idea_mean_test": idea_mean}
    power = []
    for j, sd in enumerate(r0["sd"] for r0 in done[0]["power"]):
        rows = [r["power"][j] for r in done]
        k = sum(row["verdict"] == "idea worse (significant)" for row in rows)
        delta = sd ** 2
        # predicted sd of the diffs: the null's, plus the noise term's variance
        # var(mean((pred - y + e)^2) - mean((pred - y)^2)) = (4 s^2 MSE + 2 s^4) / n_test
        sd_pred = math.sqrt(null_sd ** 2 + (4 * sd ** 2 * idea_mean + 2 * sd ** 4) / n_test)
        d_all = np.concatenate([row["diffs"] for row in rows])
        power.append({
            "noise_sd": sd, "delta_true": delta, "delta_rel_pct": 100 * delta / base_mean,
            "delta_observed_mean": float(np.mean([row["delta"] for row in rows])),
            "diff_sd_predicted": sd_pred, "diff_sd_observed": float(np.std(d_all, ddof=1)),
            "detected": rate(k, n),
            "predicted_t": simstats.paired_t_power(delta, sd_pred, n_seeds, alpha),
            "predicted_sign_flip_normal": simulated_sign_flip_power(
                delta, sd_pred, n_seeds, alpha, sim_reps, seed=1000 + j),
        })
    summary["power"] = power
    summary["power_mde80_t"] = stats.power_mde(n_seeds, null_sd, alpha, 0.8)
    return summary


# ---------------------------------------------------------------- the script


def identical_stream_check(track, seeds, grid, epochs) -> dict:
    """A/A with the idea on the baseline's own init stream: every diff must be exactly 0."""
    block = run_block(track, seeds, grid, epochs, same_stream=True)
    diffs = [float(i - b) for cb, ci in zip(block["baseline"]["test"], block["idea"]["test"])
             for b, i in zip(cb, ci)]
    return {"seeds": list(seeds), "runs_per_arm": len(diffs),
            "max_abs_diff": max(abs(x) for x in diffs), "all_exactly_zero": not any(diffs)}


def table(summary: dict, args) -> str:
    f = summary["fpr"]
    s = f["selected"]
    lines = [
        f"blocks {args.first_block}..{args.first_block + args.blocks - 1}: "
        f"{summary['complete_blocks']} complete of {summary['blocks']}; "
        f"{args.seeds} seeds each, grid lr={[c['lr'] for c in args.grid_cfgs]}, "
        f"{args.epochs} epochs",
        f"FPR at alpha={args.alpha} (selected configs): {s['k']}/{s['n']} = {s['rate']:.4f}, "
        f"95% CI [{s['ci95'][0]:.4f}, {s['ci95'][1]:.4f}]; exact expectation "
        f"{f['expected_exact']:.5f}",
    ]
    for cfg, r in zip(args.grid_cfgs, f["by_config"]):
        lines.append(f"  fixed lr={cfg['lr']:g} (no selection): {r['k']}/{r['n']} = "
                     f"{r['rate']:.4f}, 95% CI [{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]")
    lines.append("p-value calibration (P(p <= u), observed vs exact): " + ", ".join(
        f"{d['threshold']:.4g}: {d['observed']:.3f}/{d['expected']:.3f}"
        for d in summary["p_distribution"]))
    sel = summary["selection"]
    nd = summary["null_diffs"]
    lines.append(f"selection counts baseline {sel['baseline_counts']}, idea "
                 f"{sel['idea_counts']}, arms disagree in {sel['arms_disagree']} blocks")
    lines.append(f"null diffs: mean {nd['mean']:.5f}, sd {nd['sd']:.5f}, share > 0 "
                 f"{nd['share_positive']:.3f}; baseline mean test MSE "
                 f"{nd['baseline_mean_test']:.4f}; t-MDE(80%) {summary['power_mde80_t']:.4f}")
    lines.append("| noise sd | true delta | rel % | diff sd pred/obs | detected | 95% CI | "
                 "pred sign-flip (normal) | pred t |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in summary["power"]:
        d = r["detected"]
        lines.append(
            f"| {r['noise_sd']:g} | {r['delta_true']:.4f} | {r['delta_rel_pct']:.1f} | "
            f"{r['diff_sd_predicted']:.4f}/{r['diff_sd_observed']:.4f} | {d['rate']:.3f} | "
            f"[{d['ci95'][0]:.3f}, {d['ci95'][1]:.3f}] | {r['predicted_sign_flip_normal']:.3f} | "
            f"{r['predicted_t']:.3f} |")
    return "\n".join(lines)


def merge(paths: list[Path]) -> str:
    """Pool the rates of several runs over disjoint seed blocks (sums of counts, exact CIs)."""
    runs = [json.loads(Path(p).read_text()) for p in paths]
    firsts = sorted((r["protocol"].get("first_block", 0), r["protocol"]["blocks"]) for r in runs)
    if any(a0 + n0 > a1 for (a0, n0), (a1, _) in zip(firsts, firsts[1:])):
        raise SystemExit(f"seed blocks overlap: (first_block, blocks) = {firsts}")
    keys = ("track", "seeds_per_block", "epochs", "grid", "alpha", "noise_sd")
    if any(r["protocol"][k] != runs[0]["protocol"][k] for r in runs for k in keys):
        raise SystemExit("runs differ in protocol: " + ", ".join(keys))

    def pooled(get) -> str:
        k = sum(get(r["summary"])["k"] for r in runs)
        n = sum(get(r["summary"])["n"] for r in runs)
        lo, hi = simstats.clopper_pearson(k, n)
        return f"{k}/{n} = {k / n:.4f} [{lo:.4f}, {hi:.4f}]"

    s0 = runs[0]["summary"]
    lines = [f"pooled over {len(runs)} runs, {sum(r['summary']['complete_blocks'] for r in runs)}"
             f" blocks: (first_block, blocks) = {firsts}",
             f"FPR selected: {pooled(lambda s: s['fpr']['selected'])} (exact expectation "
             f"{s0['fpr']['expected_exact']:.5f})"]
    for k, cfg in enumerate(runs[0]["protocol"]["grid"]):
        lines.append(f"  fixed lr={cfg['lr']:g}: {pooled(lambda s: s['fpr']['by_config'][k])}")
    lines.append("| noise sd | detected (pooled) | pred sign-flip (normal) | pred t |")
    lines.append("|---|---|---|---|")
    for j, row in enumerate(s0["power"]):
        w = [r["summary"]["power"][j]["detected"]["n"] for r in runs]
        avg = lambda key: sum(wi * r["summary"]["power"][j][key]  # noqa: E731
                              for wi, r in zip(w, runs)) / sum(w)
        lines.append(f"| {row['noise_sd']:g} | {pooled(lambda s: s['power'][j]['detected'])} | "
                     f"{avg('predicted_sign_flip_normal'):.3f} | {avg('predicted_t'):.3f} |")
    return "\n".join(lines)


def sequential_boundaries(reps: int, alpha: float, effect: float, seed: int = 17) -> dict:
    """FWER and power of the two boundary kinds at looks (8, 16), on simulated paired
    differences (no training): per condition ``reps`` benches of 16 differences, seeded; a
    bench rejects when look 1 (8 seeds) has p below its level, or look 2 (16) does. Exact
    Clopper-Pearson 95% intervals."""
    from benchkit import sequential

    looks = [8, 16]
    union = stats.look_levels(looks, looks[-1], alpha)
    draws = {"normal, H0": lambda r: r.normal(0.0, 1.0, 16),
             "t(3), H0": lambda r: r.standard_t(3, 16),
             f"normal, effect {effect:g} sd": lambda r: r.normal(effect, 1.0, 16)}
    out = {"looks": looks, "alpha": alpha, "reps": reps, "seed": seed,
           "union_levels": union, "conditions": {}}
    for k, (name, draw) in enumerate(draws.items()):
        rng = np.random.default_rng(seed + k)
        hits = {"union": 0, "exact": 0}
        final_levels, conditional = [], {"union": [], "exact": []}
        prefix = np.arange(2 ** 16) & (2 ** 8 - 1)  # row r's first 8 signs: row r mod 256
        for _ in range(reps):
            d = draw(rng)
            p1, p2 = stats.sign_flip_p_value(d[:8]), stats.sign_flip_p_value(d)
            exact = sequential.exact_levels(d, looks, alpha)
            final_levels.append(exact[1])
            hits["union"] += p1 < union[0] or p2 < union[1]
            hits["exact"] += p1 < exact[0] or p2 < exact[1]
            # the error given these magnitudes, over every sign vector: under H0 its mean over
            # benches is the FWER, with far less Monte Carlo error than the rejection count
            r1 = sequential._p_per_row(sequential._signs(8), np.abs(d[:8]))[prefix]
            r2 = sequential._p_per_row(sequential._signs(16), np.abs(d))
            for kind, lv in (("union", union), ("exact", exact)):
                conditional[kind].append(float(np.mean((r1 < lv[0]) | (r2 < lv[1]))))
        out["conditions"][name] = {
            kind: {"rejected": h, "rate": h / reps, "ci95": simstats.clopper_pearson(h, reps),
                   "null_error_given_magnitudes": {
                       "mean": float(np.mean(conditional[kind])),
                       "max": float(np.max(conditional[kind])),
                       "se": float(np.std(conditional[kind], ddof=1) / math.sqrt(reps))}}
            for kind, h in hits.items()}
        out["conditions"][name]["exact_final_level_median"] = float(np.median(final_levels))
        print(name, {k: out["conditions"][name][k]["rate"] for k in hits}, flush=True)
    return out


# ---------------------------------------------------------------- --statistics (no training)

STAT_SALT = 0x57A75   # the --statistics streams: default_rng([STAT_SALT, condition])
STAT_REPS = 3000      # simulated benches per condition (the floor is 2,000)
HARM_SHARE = 6        # the harm-within-margin curve runs reps // 6 benches per seed count:
#                       each is the report's full path (compare, then equivalence.verdict),
#                       0.1-0.3 s per bench at 16-64 seeds on the shared 2-core machine
GATE_PASSES = ("helps", "non-inferior", "equivalent")  # the non-inferior gate (aggregate)


def _bound(level: float, n: int) -> float:
    """level + 2 binomial SE of a rate of n benches: the issue's tolerance for a rate <= level."""
    return level + 2 * math.sqrt(level * (1 - level) / n)


def _sim_power(d: np.ndarray, level: float) -> dict:
    """Share of the benches (rows of d) whose two-sided sign-flip p (benchkit's test, batched:
    simstats.sign_flip_p_values) is below level."""
    return rate(int(np.sum(np.asarray(simstats.sign_flip_p_values(d)) < level)), len(d))


def planning_statistics(reps: int, look1: float) -> dict:
    """signflip.power / mde_power80 / seeds_needed against independent simulations of the test
    they describe, and seeds_needed against the smallest n at which p < level is possible."""
    from benchkit import signflip

    def normal(n: int, es: float, cond: int) -> np.ndarray:
        return np.random.default_rng([STAT_SALT, cond]).standard_normal((reps, n)) + es

    out = {"benchkit_sim_reps": signflip.SIM_REPS,
           "power": [], "seeds_needed": [], "mde_power80": [], "reachable": []}
    for c, (n, es, level) in enumerate([(6, 1.0, 0.05), (8, 0.5, 0.05), (8, 1.0, 0.05),
                                        (12, 1.0, 0.01), (10, 0.8, look1), (16, 0.6, 0.05)]):
        sim = _sim_power(normal(n, es, 100 + c), level)
        claimed = signflip.power(n, es, level)
        se = math.sqrt(claimed * (1 - claimed) / signflip.SIM_REPS
                       + sim["rate"] * (1 - sim["rate"]) / reps)
        row = {"n": n, "effect_sd": es, "level": level, "benchkit": claimed,
               "simulated": sim, "combined_se": se,
               "within_2se": abs(claimed - sim["rate"]) <= 2 * se}
        if n <= 11:  # power() tests exactly here: its own draws, its own p against float64
            own = np.random.default_rng([0, n]).standard_normal((signflip.SIM_REPS, n)) + es
            p_power = signflip._p_values(own, signflip._flips(n), True)
            p64 = np.asarray(simstats.sign_flip_p_values(own))
            row["own_draws"] = {"benches": len(own),
                                "p_differs_from_float64": int(np.sum(np.abs(p_power - p64) > 1e-9)),
                                "p_smaller": int(np.sum(p_power < p64 - 1e-9)),
                                "power_float64": float(np.mean(p64 < level))}
        out["power"].append(row)
    for c, (es, level) in enumerate([(1.0, 0.05), (0.8, 0.05), (1.2, 0.01), (1.0, look1)]):
        n = signflip.seeds_needed(es, 1.0, level)
        at = _sim_power(normal(n, es, 200 + 2 * c), level)
        below = (_sim_power(normal(n - 1, es, 201 + 2 * c), level)
                 if n - 1 >= signflip.min_pairs(level) else None)
        out["seeds_needed"].append({"effect_sd": es, "level": level, "seeds_needed": n,
                                    "min_pairs": signflip.min_pairs(level),
                                    "power_at": at, "power_one_fewer": below})
    for c, (n, level) in enumerate([(6, 0.05), (8, 0.05), (12, 0.01), (10, look1)]):
        mde = signflip.mde_power80(n, 1.0, level)
        out["mde_power80"].append({"n": n, "level": level, "mde_sd": mde,
                                   "t_mde_sd": stats.power_mde(n, 1.0, level),
                                   "power_at_mde": _sim_power(normal(n, mde, 300 + c), level)})
    for level in (0.1, 0.05, look1, 0.025, 0.01, look1 / 2, 0.005):
        first = signflip.min_pairs(level)
        needed = {es: signflip.seeds_needed(es, 1.0, level) for es in (0.5, 1.0, 2.0, 5.0, 20.0)}
        out["reachable"].append({
            "level": level, "min_pairs": first, "min_p_at_min_pairs": stats.min_p_value(first),
            "min_p_one_fewer": stats.min_p_value(first - 1),
            "seeds_needed_by_effect_sd": {f"{k:g}": v for k, v in needed.items()},
            "below_min_pairs": sum(v is not None and v < first for v in needed.values())})
    return out


def interval_statistics(reps: int, look1: float) -> dict:
    """signflip.sign_flip_ci as a report computes it (on the per-seed differences, at the
    level): does it exclude 0 exactly when compare's p is below the level, and how often does
    it cover the true shift (symmetric differences: the test of d - shift is exact)?"""
    from benchkit import signflip

    rng = np.random.default_rng([STAT_SALT, 400])
    levels = (0.05, 0.01, look1)
    disagree = {f"{lv:g}": 0 for lv in levels}
    for b in range(reps):
        n = int(rng.integers(2, 21))
        kind = b % 3
        d = (rng.normal(rng.choice([0.0, 0.7, 1.5]), 1.0, n) if kind == 0 else
             rng.integers(-3, 4, n).astype(float) if kind == 1 else  # ties and zeros
             rng.standard_t(2, n))
        p = stats.sign_flip_p_value(d)
        for lv in levels:
            lo, hi = signflip.sign_flip_ci(d, lv)
            excludes = (lo is not None and lo > 0) or (hi is not None and hi < 0)
            disagree[f"{lv:g}"] += excludes != (p < lv)
    out = {"agreement": {"benches": reps, "n_range": [2, 20],
                         "mix": "thirds: normal(0, 0.7 or 1.5; sd 1), integers -3..3, t(2)",
                         "disagreements": disagree}, "coverage": []}
    for c, (n, dist) in enumerate([(6, "normal"), (8, "normal"), (12, "normal"), (8, "t(3)")]):
        r = np.random.default_rng([STAT_SALT, 410 + c])
        shift = 1.0
        d = (r.standard_normal((reps, n)) if dist == "normal" else r.standard_t(3, (reps, n))) \
            + shift
        cover = t_disagree = sf_disagree = 0
        for row in d:
            lo, hi = signflip.sign_flip_ci(row, 0.05)
            cover += (lo is None or lo <= shift) and (hi is None or shift <= hi)
            comp = stats.compare(np.zeros(n), row, direction="lower")
            t_lo, t_hi = comp["ci95"]
            significant = comp["p_value"] < 0.05
            t_disagree += (t_lo > 0 or t_hi < 0) != significant
            sf_disagree += ((lo is not None and lo > 0) or (hi is not None and hi < 0)) \
                != significant
        unit = stats.min_p_value(n)
        out["coverage"].append({
            "n": n, "differences": f"{dist} + {shift:g}", "level": 0.05,
            "covered": rate(cover, reps),
            "exact_coverage": 1 - (math.ceil(0.05 / unit) - 1) * unit,
            "t_ci95_disagrees_with_p": rate(t_disagree, reps),
            "signflip_ci_disagrees_with_p": rate(sf_disagree, reps)})
    return out


def _margin_bench(rng, n: int, *, base_sd: float, scale: float, noise: float,
                  direction: str) -> tuple[np.ndarray, np.ndarray]:
    """One bench whose idea is ``scale`` times the baseline in the metric's worse direction
    (1.05: 5% worse), with heteroscedastic per-seed noise noise*|baseline|."""
    b = rng.normal(1.0, base_sd, n)
    factor = scale if direction == "lower" else 2 - scale
    return b, factor * b + rng.normal(0.0, noise * np.abs(b), n)


def noninferiority_at_margin(reps: int, look1: float) -> list[dict]:
    """stats.noninferiority (as equivalence.verdict calls it) on ideas exactly at the 5% margin
    in expectation, both directions, small and large baseline spread, at alpha and at look 1's
    level: the false 'non-inferior' rate, to stay <= level + 2 SE."""
    out, c = [], 500
    for direction in ("lower", "higher"):
        for base_sd in (0.05, 0.4):
            for level in ((0.05, look1) if base_sd == 0.4 and direction == "lower" else (0.05,)):
                c += 1
                rng, k = np.random.default_rng([STAT_SALT, c]), 0
                for _ in range(reps):
                    b, i = _margin_bench(rng, 8, base_sd=base_sd, scale=1.05, noise=0.03,
                                         direction=direction)
                    k += stats.noninferiority(b, i, direction=direction, margin=0.05,
                                              alpha=level)["non_inferior"]
                out.append({"direction": direction, "n": 8, "base_sd": base_sd, "noise": 0.03,
                            "idea": "5% worse (the margin)", "margin": 0.05, "level": level,
                            "non_inferior": rate(k, reps), "bound": _bound(level, reps)})
    return out


def harm_within_margin(reps: int, seeds=(8, 16, 32, 64)) -> list[dict]:
    """An idea 1% worse with a 5% margin through the report's path (stats.compare with
    margin=, then equivalence.verdict): how often it passes the non-inferior gate."""
    from benchkit import equivalence

    out = []
    for c, n in enumerate(seeds):
        rng, gate, ni, harms = np.random.default_rng([STAT_SALT, 520 + c]), 0, 0, 0
        for _ in range(reps):
            b, i = _margin_bench(rng, n, base_sd=0.1, scale=1.01, noise=0.1, direction="lower")
            comp = stats.compare(b, i, direction="lower", margin=0.05)
            comp["p_adjusted"], comp["family_size"] = comp["p_value"], 1
            v = equivalence.verdict(comp, b, i, direction="lower", level=0.05, family_size=1,
                                    claim_type="non-inferiority")
            gate += v in GATE_PASSES
            ni += comp["noninferiority"]["non_inferior"]
            harms += comp["p_value"] < 0.05
        out.append({"n": n, "idea": "1% worse", "margin": 0.05, "base_sd": 0.1, "noise": 0.1,
                    "level": 0.05, "gate_passed": rate(gate, reps),
                    "non_inferior": rate(ni, reps),
                    "also_significantly_worse": rate(harms, reps)})
    return out


def tost_at_margin(reps: int) -> list[dict]:
    """equivalence.tost on ideas exactly 5% worse / 5% better in expectation (relative margin,
    heteroscedastic): the false 'equivalent' rate, to stay <= alpha + 2 SE."""
    from benchkit import equivalence

    out, c = [], 540
    for n in (8, 12):
        for scale in (1.05, 0.95):
            c += 1
            rng, k = np.random.default_rng([STAT_SALT, c]), 0
            for _ in range(reps):
                b, i = _margin_bench(rng, n, base_sd=0.3, scale=scale, noise=0.03,
                                     direction="lower")
                k += equivalence.tost(b, i, direction="lower", margin=0.05,
                                      level=0.05)["equivalent"]
            out.append({"n": n, "idea": f"{abs(scale - 1):.0%} {'worse' if scale > 1 else 'better'}",
                        "margin": 0.05, "base_sd": 0.3, "noise": 0.03, "level": 0.05,
                        "equivalent": rate(k, reps), "bound": _bound(0.05, reps)})
    return out


def margin_statistics(reps: int, look1: float) -> dict:
    """Non-inferiority and TOST exactly at their margins, and the within-margin harm's gate."""
    return {"noninferiority_at_margin": noninferiority_at_margin(reps, look1),
            "harm_within_margin": harm_within_margin(max(10, reps // HARM_SHARE)),
            "tost_at_margin": tost_at_margin(reps)}


def spending_statistics(reps: int, alpha: float = 0.05) -> dict:
    """The sequential spending rule at looks (8, 16) of 16 against testing both looks at the
    full alpha, under H0 (normal and t(3) differences): family-wise error."""
    looks = [8, 16]
    levels = stats.look_levels(looks, looks[-1], alpha)
    out = {"looks": looks, "alpha": alpha, "levels": levels, "conditions": {}}
    for c, dist in enumerate(("normal", "t(3)")):
        r = np.random.default_rng([STAT_SALT, 600 + c])
        d = r.standard_normal((reps, 16)) if dist == "normal" else r.standard_t(3, (reps, 16))
        p1 = simstats.sign_flip_p_values(d[:, :looks[0]])
        p2 = simstats.sign_flip_p_values(d)
        hits = {name: sum(simstats.sequential_decision([a, b], lv)["rejected_at"] is not None
                          for a, b in zip(p1, p2))
                for name, lv in (("spending", levels), ("naive", [alpha, alpha]))}
        out["conditions"][dist] = {k: rate(v, reps) for k, v in hits.items()}
    return out


def statistics(reps: int) -> dict:
    look1 = stats.look_levels([8, 16], 16, 0.05)[0]
    out = {"sim_reps": reps, "salt": STAT_SALT, "look1_level": look1}
    for name, fn in (("planning", planning_statistics), ("interval", interval_statistics),
                     ("margins", margin_statistics),
                     ("spending", lambda r, _: spending_statistics(r))):
        t0 = time.perf_counter()
        out[name] = fn(reps, look1)
        out[name]["seconds"] = time.perf_counter() - t0
        print(f"{name}: {out[name]['seconds']:.0f} s", flush=True)
    return out


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
        args.out = HERE / ("sequential_boundaries.json" if args.sequential else
                           "calibration_statistics.json" if args.statistics else
                           "calibration.json")
    if args.statistics:
        t0 = time.perf_counter()
        result = {"command": " ".join(["benchmarks/calibration.py", *(
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
        "command": " ".join(["benchmarks/calibration.py", *(argv if argv is not None
                                                             else sys.argv[1:])]),
        "protocol": {"track": args.track, "seeds_per_block": args.seeds,
                     "blocks": args.blocks, "first_block": args.first_block,
                     "epochs": args.epochs, "grid": args.grid_cfgs,
                     "alpha": args.alpha, "selection": "per arm, best validation mean",
                     "test": "benchkit.stats.compare (two-sided paired sign-flip)",
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
