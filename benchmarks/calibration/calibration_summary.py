"""The real-training calibration's summary over seed blocks (benchmarks/calibration/calibration.py).

summarize turns the analysed blocks into the false-positive rate, the p-value distribution,
selection counts, the null differences and the power against each injected effect beside its
two predictions; table prints one run's summary, merge pools the written runs over disjoint
blocks (``calibration.py --merge``). Import it with ``benchmarks/calibration/``
and ``benchmarks/stats/`` on ``sys.path`` (calibration.py puts them there).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from benchkit.stats import paired

import simstats
from simstats import rate


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
    unit = paired.min_p_value(n_seeds)  # sign-flip p-values are multiples of 2^(1-n)
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
    summary["power_mde80_t"] = paired.power_mde(n_seeds, null_sd, alpha, 0.8)
    return summary


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
