"""The sections of docs/calibration.md on the real-training runs: protocol, what to expect,
false-positive rate and power, read from the runs benchmarks/calibration/calibration.py writes (RUNS)."""
from __future__ import annotations

import math
import re

import numpy as np

import simstats
from calibration_doc_format import blocks_label, ci, rate_text

RUNS = ("calibration.json", "calibration_blocks200-399.json")  # disjoint seed blocks, in order
NOISE_SALT = 0xCA11B  # calibration.NOISE_SALT: the injected noise's stream (a name, not a figure)


def seeds_range(run: dict) -> tuple[int, int]:
    p = run["protocol"]
    return p["seeds_per_block"] * p["first_block"], \
        p["seeds_per_block"] * (p["first_block"] + p["blocks"]) - 1


def leq(p, u: float) -> bool:
    return p is not None and p <= u * (1 + 1e-9)


def protocol(runs: list[dict]) -> str:
    p = runs[0]["protocol"]
    n, grid = p["seeds_per_block"], p["grid"]
    lrs = [f"{c['lr']:g}" for c in grid]
    ranges = [seeds_range(r) for r in runs]
    block_text = ", then ".join(
        f"{r['protocol']['blocks']} {'blocks' if k == 0 else 'more'} (seeds {a}-{b})"
        for k, (r, (a, b)) in enumerate(zip(runs, ranges)))
    per_block = 2 * len(grid) * n
    offset = int(re.search(r"\+\s*(\d+)", p["idea_init"]).group(1))
    last_seed = ranges[-1][1]
    check = runs[0]["identical_stream_check"]
    same = ("gave bit-identical results (max |diff| = "
            f"{check['max_abs_diff']!r}), which shows that the pairing holds"
            if check["all_exactly_zero"] else
            f"did NOT give identical results (max |diff| = {check['max_abs_diff']!r})")
    return f"""## Protocol (reduced, stated)

| | |
|---|---|
| track | `{p['track']}` ({p['n_test']} test examples), optimizer {p['optimizer']}, batch {p['batch_size']} |
| seeds per bench | {n} |
| grid | lr {', '.join(lrs)} (reproduce with `--lrs {' '.join(lrs)}`); each arm runs every config on every seed |
| epochs | **{p['epochs']}** (reduced from the track's default to fit the time budget) |
| selection | per arm, the config with the best validation mean (`stats.select_config`) |
| test | `stats.compare` on the selected configs' test MSE, paired by seed (two-sided sign-flip, exact) |
| blocks | block b uses seeds {n}b .. {n}b+{n - 1}; {block_text} |
| runs | per block 2 arms x {len(grid)} configs x {n} seeds = {per_block}, i.e. {runs[0]['timing']['runs']} training runs per {p['blocks']} blocks |
| execution | one process, `torch.set_num_threads(1)`, no pytest; each run as the plugin makes it: `seed_everything(seed)`, build `track.model()`, `Run.fit` |

**The null.** The baseline of seed s is built right after `seed_everything(s)`; the idea is the
same model built after `seed_everything(s)` followed by `torch.manual_seed(s + {offset})`.
Data (`track.data(s)`) and minibatch order (`benchkit.training.loop.order_generator(s)`, its own torch
generator) are the seed's in both arms. (The idea's init seeds, {offset} and up, do not collide
with the baseline's {ranges[0][0]}-{last_seed}.) Both init streams are draws from the same
distribution, so there is no effect. Before the blocks, the script runs one block with the idea
on the baseline's *own* stream: all {check['runs_per_arm']} paired runs {same}.

**The injected effect.** Gaussian noise of standard deviation s is added to the idea's test
predictions (selected config; selection uses validation, which is untouched). This raises the
idea's expected test MSE by exactly s²: E[(p + e - y)²] = E[(p - y)²] + s². Each seed has its
own standard-normal draws (`np.random.default_rng([0x{NOISE_SALT:X}, seed])`), and every s
scales the same draws. The noise makes the idea worse, so a detection is compare's verdict
`idea worse (significant)`. The test is two-sided and symmetric, so detecting a harm is the same
problem as detecting a help of the same size."""


def expectation(runs: list[dict]) -> str:
    p = runs[0]["protocol"]
    n, alpha = p["seeds_per_block"], p["alpha"]
    m = 2 ** (n - 1)
    j = math.ceil(alpha * m) - 1  # p < alpha <=> p <= j / m
    exact = runs[0]["summary"]["fpr"]["expected_exact"]
    assert exact == j / m
    only = (f"**p < {alpha:g} happens only at p = 1/{m} = {1 / m:g}, i.e. when all {n} "
            f"differences have the same sign.**" if j == 1 else
            f"**p < {alpha:g} happens at p <= {j}/{m}.**")
    n8 = n + 2
    j8 = math.ceil(alpha * 2 ** (n8 - 1)) - 1
    sel = [r["summary"]["selection"] for r in runs]
    total = sum(r["summary"]["complete_blocks"] for r in runs)
    counts = np.sum([s["baseline_counts"] for s in sel], axis=0) + \
        np.sum([s["idea_counts"] for s in sel], axis=0)
    if np.count_nonzero(counts) == 1:
        k = int(np.flatnonzero(counts)[0])
        caveat = (f"**Caveat: at {p['epochs']} epochs selection never varied.** Both arms chose "
                  f"lr = {p['grid'][k]['lr']:g} in all {total} blocks: the lrs are far apart "
                  f"when training is this short. So the \"selected\" rate here equals the "
                  f"lr = {p['grid'][k]['lr']:g} rate, and this run does not test how selection "
                  f"interacts with the null. A protocol where configs compete (more epochs) "
                  f"would test it, at a higher cost.")
    else:
        caveat = (f"Configs selected over the {total} blocks (baseline + idea): "
                  f"{counts.tolist()}.")
    return f"""## What to expect: {n} seeds make the test discrete

With n = {n} pairs, the two-sided sign-flip p takes only the values j/{m} (a multiple of
2^(1-n)). {only} With one fixed config, the {n} differences under this null are independent and
symmetric about 0, because the two init streams are exchangeable. The test is then exact:
P(p <= j/{m}) = j/{m}. So the false-positive rate to expect at alpha = {alpha:g} is
**{j}/{m} = {exact:g}, not {alpha:g}**. At {n} seeds the test is conservative by construction.
(With {n8} seeds the attainable level below {alpha:g} is {j8}/{2 ** (n8 - 1)} =
{j8 / 2 ** (n8 - 1):.3f}.)

Per-arm selection breaks the exact per-seed symmetry, since the chosen config depends on all {n}
seeds. That rate is measured, not derived. {caveat}"""


def fpr(runs: list[dict]) -> str:
    p = runs[0]["protocol"]
    n, alpha, grid = p["seeds_per_block"], p["alpha"], p["grid"]
    m = 2 ** (n - 1)
    exact = runs[0]["summary"]["fpr"]["expected_exact"]
    total = sum(r["summary"]["complete_blocks"] for r in runs)
    head = " | ".join(blocks_label(r) for r in runs)
    rows = []

    def row(name, get):
        cells = [get(r["summary"]) for r in runs]
        k, nn = sum(c["k"] for c in cells), sum(c["n"] for c in cells)
        return k, nn, (f"| {name} | " + " | ".join(rate_text(c["k"], c["n"]) for c in cells)
                       + f" | {rate_text(k, nn)} |")

    k_sel, n_sel, line = row("selected configs (the report's path)",
                             lambda s: s["fpr"]["selected"])
    rows.append(line.replace(f"| {rate_text(k_sel, n_sel)} |", f"| **{rate_text(k_sel, n_sel)}** |"))
    intervals = [simstats.clopper_pearson(k_sel, n_sel)]
    for c, cfg in enumerate(grid):
        k, nn, line = row(f"fixed lr {cfg['lr']:g} (no selection)",
                          lambda s, c=c: s["fpr"]["by_config"][c])
        rows.append(line)
        intervals.append(simstats.clopper_pearson(k, nn))
    all_in = all(lo <= exact <= hi for lo, hi in intervals)
    lo, hi = intervals[0]
    # the distribution of p
    us = [j / m for j in (1, 2, 4, 8, 16) if j <= m]
    ps = [[b["p"] for b in r["blocks"] if b["p"] is not None] for r in runs]
    pooled = [x for run in ps for x in run]
    dist = ["| u | " + " | ".join(f"{round(u * m)}/{m}" for u in us) + " |",
            "|---|" + "---|" * len(us)]
    z_max = []
    for r, run_p in zip(runs, ps):
        obs = [np.mean([leq(x, u) for x in run_p]) for u in us]
        dist.append(f"| {blocks_label(r)} | " + " | ".join(f"{o:.3f}" for o in obs) + " |")
        z = [(o - u) / math.sqrt(u * (1 - u) / len(run_p)) if u < 1 else 0.0
             for o, u in zip(obs, us)]
        z_max.append(max(range(len(us)), key=lambda i: abs(z[i])))
        z_max[-1] = (z_max[-1], z[z_max[-1]], obs[z_max[-1]])
    cells, tight = [], None
    for u in us:
        k = sum(leq(x, u) for x in pooled)
        lo_u, hi_u = simstats.clopper_pearson(k, len(pooled))
        cells.append(f"{k / len(pooled):.3f} {ci(lo_u, hi_u)}")
        margin = min(u - lo_u, hi_u - u)
        if tight is None or margin < tight[0]:
            tight = (margin, u, lo_u, hi_u, lo_u <= u <= hi_u)
    pooled_all_in = all(
        simstats.clopper_pearson(sum(leq(x, u) for x in pooled), len(pooled))[0] <= u <=
        simstats.clopper_pearson(sum(leq(x, u) for x in pooled), len(pooled))[1] for u in us)
    dist.append(f"| pooled [95% CI] | " + " | ".join(cells) + " |")
    dist.append("| exact | " + " | ".join(f"{u:g}" for u in us) + " |")
    (i0, z0, o0), (i1, z1, _) = z_max[0], z_max[1]
    u0 = us[i0]
    # the fixed configs that were never selected, at that u
    sel = runs[0]["summary"]["selection"]
    unselected = [c for c in range(len(grid))
                  if sum(r["summary"]["selection"]["baseline_counts"][c] +
                         r["summary"]["selection"]["idea_counts"][c] for r in runs) == 0]
    scatter = []
    for r in runs:
        vals = [np.mean([leq(b["p_by_config"][c], u0) for b in r["blocks"]
                         if b["p_by_config"] and b["p_by_config"][c] is not None])
                for c in unselected]
        scatter.append(" and ".join(f"{v:.3f}" for v in vals) + f" in {blocks_label(r)}")
    del sel
    nd = [r["summary"]["null_diffs"] for r in runs]
    base = np.mean([x["baseline_mean_test"] for x in nd])

    def sl(key, fmt):
        return " / ".join(fmt(x[key]) for x in nd)
    text = f"""## Results: false-positive rate (alpha = {alpha:g})

Rejections out of the blocks, with exact Clopper-Pearson 95% intervals:

| comparison | {head} | pooled, {total} blocks |
|---|{'---|' * len(runs)}---|
{chr(10).join(rows)}

{'Every interval contains' if all_in else 'Not every interval contains'} the exact {exact:g}. The 95% upper bound of the
selected configs' pooled rate is {hi:.3f}: {total} blocks resolve the rate to about
±{100 * (hi - lo) / 2:.1f} points.

The whole p-value distribution (selected configs), P(p <= u) observed vs exact u:

{chr(10).join(dist)}

The first {runs[0]['protocol']['blocks']} blocks deviate most at u = {round(u0 * m)}/{m}
({o0:.3f}, about {abs(z0):.1f} binomial sd {'above' if z0 > 0 else 'below'} {u0:g}). That is
why a second, disjoint set of {runs[1]['protocol']['blocks']} blocks was run: their largest
deviation is {abs(z1):.1f} binomial sd. {'Every' if pooled_all_in else 'Not every'} pooled
interval contains the exact value; the closest is u = {round(tight[1] * m)}/{m}
({ci(tight[2], tight[3])} vs {tight[1]:g}), and it is one of many cells looked at."""
    if unselected:
        text += (f" The fixed lr{'s' if len(unselected) > 1 else ''} that "
                 f"{'were' if len(unselected) > 1 else 'was'} never selected "
                 f"({', '.join(format(grid[c]['lr'], 'g') for c in unselected)}) scatter around the "
                 f"exact values: at u = {round(u0 * m)}/{m} they give " + ", ".join(scatter) + ".")
    labels = " / ".join(blocks_label(r).replace("blocks ", "") for r in runs)
    text += f"""

Null differences (blocks {labels}): mean {sl('mean', lambda v: f'{v:+.4f}')}, sd
{sl('sd', lambda v: f'{v:.3f}')}, share positive {sl('share_positive', lambda v: f'{v:.3f}')}.
Baseline mean test MSE {base:.2f} after {p['epochs']} epochs."""
    return text


def sim_reps_of(run: dict) -> int:
    m = re.search(r"--sim-reps\s+(\d+)", run["command"])
    return int(m.group(1)) if m else 20000  # calibration.DEFAULTS["sim_reps"]


def power(runs: list[dict]) -> str:
    from scipy import stats as sps

    p = runs[0]["protocol"]
    n, alpha = p["seeds_per_block"], p["alpha"]
    total = sum(r["summary"]["complete_blocks"] for r in runs)
    rows, inside, outside, low, t_over = [], [], [], [], []
    dev = 0.0
    for j, r0 in enumerate(runs[0]["summary"]["power"]):
        rs = [r["summary"]["power"][j] for r in runs]
        k, nn = sum(x["detected"]["k"] for x in rs), sum(x["detected"]["n"] for x in rs)
        w = [x["detected"]["n"] for x in rs]
        sf = sum(wi * x["predicted_sign_flip_normal"] for wi, x in zip(w, rs)) / sum(w)
        tp = sum(wi * x["predicted_t"] for wi, x in zip(w, rs)) / sum(w)
        lo, hi = simstats.clopper_pearson(k, nn)
        s = r0["noise_sd"]
        dev = max(dev, *(abs(x["diff_sd_observed"] / x["diff_sd_predicted"] - 1) for x in rs))
        rows.append(f"| {s:g} | {r0['delta_true']:.2g} | {r0['delta_rel_pct']:.2g}% | "
                    f"{r0['diff_sd_predicted']:.3f} / {r0['diff_sd_observed']:.3f} | "
                    f"{rate_text(k, nn)} | {sf:.3f} | {tp:.3f} |")
        if lo <= sf <= hi:
            inside.append(s)
        else:
            side = "above" if sf > hi else "below"
            gap = sf - hi if sf > hi else lo - sf
            outside.append(f"at s = {s:g} it is {gap:.3f} {side} the interval ({sf:.3f} vs "
                           f"{ci(lo, hi)}: {nn - k} misses in {nn} where "
                           f"{nn * (1 - sf):.0f} were predicted)")
        if sf < k / nn:
            low.append(s)
        if tp - k / nn > 0.1:
            t_over.append((s, tp - k / nn))
    sd0 = runs[0]["summary"]["null_diffs"]["sd"]
    mde_t = runs[0]["summary"]["power_mde80_t"]
    m = 2 ** (n - 1)
    only_all_agree = math.ceil(alpha * m) - 1 == 1
    text = f"""## Results: power

Per block: the same null runs with noise s added to the idea's selected-config test
predictions. True effect δ = s²; "rel" is δ as a share of the baseline mean test MSE. Detection
rates pooled over the {total} blocks, with Clopper-Pearson 95% intervals:

| noise sd s | δ = s² | rel | sd of diffs, predicted / observed ({blocks_label(runs[0])}) | detected, {total} blocks | predicted: sign-flip test (simulated) | predicted: noncentral t (`paired_t_power`) |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

How the two predictions are made, with nothing fitted to the detection data:

- The sd of the differences is predicted from the null alone:
  σ_d² = σ_null² + (4 s² MSE_idea + 2 s⁴) / n_test. Here σ_null is the pooled sd of the null
  differences, MSE_idea the idea's mean test MSE, n_test = {p['n_test']}. It matches the observed
  sd of the injected differences to within {100 * dev:.1f}%.
- **Sign-flip test (simulated)**: the power of benchkit's own test
  (`simstats.sign_flip_p_values` in `benchmarks/stats/simstats.py`, {sim_reps_of(runs[0]):,} seeded
  replicates) when the {n} differences are i.i.d. normal(δ, σ_d), counting a detection only in
  δ's direction.{f' At {n} seeds this is Φ(δ/σ_d)^{n}: all {n} must agree.' if only_all_agree else ''}
- **Noncentral t**: `simstats.paired_t_power(δ, σ_d, {n}, {alpha:g})`. This is the t
  approximation behind `stats.power_mde` and the report's `mde` (the report's `mde_power80` and
  `seeds_needed` are now the sign-flip test's own, `benchkit.stats.signflip`: see below).

**The sign-flip prediction is the one that holds.** It lies inside the 95% interval of the
observed rate at {len(inside)} of the {len(rows)} sizes."""
    if outside:
        text += " " + "; ".join(o[0].upper() + o[1:] for o in outside) + "."
    if low:
        text += (f" It is below the observed rate at s = {', '.join(f'{s:g}' for s in low)}. "
                 "The prediction assumes normal differences, and these are not exactly normal.")
    if t_over:
        gaps = [g for _, g in t_over]
        text += (f"\nThe t prediction overstates power at {n} seeds, by {min(gaps):.2f}-"
                 f"{max(gaps):.2f} at s = {t_over[0][0]:g}-{t_over[-1][0]:g}. It assumes a test "
                 f"that can reject without all {n} seeds agreeing.")
    text += (f" So on this protocol the t-based 80%-power effect (`stats.power_mde`) is "
             f"{mde_t:.3f} (σ_null = {sd0:.3f})")
    if only_all_agree:
        z = float(sps.norm.ppf(0.8 ** (1 / n)))
        text += (f", while the sign-flip test's own 80%-power effect is Φ⁻¹(0.8^(1/{n})) σ = "
                 f"{z:.2f} σ ≈ {z * sd0:.3f}, about {100 * (z * sd0 / mde_t - 1):.0f}% larger")
    text += (". The gap shrinks as n grows and the permutation distribution becomes finer; the "
             "report's planning figures are the sign-flip test's own.")
    return text
