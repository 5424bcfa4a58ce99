"""docs/calibration.md, rendered entirely from the JSON files benchmarks/calibration/calibration.py
writes (``calibration.py --doc``).

Every number in the document is read from, or computed from, the files in benchmarks/results/:
calibration.json and calibration_blocks200-399.json (RUNS, the real-training runs),
sequential_boundaries.json (SEQUENTIAL, ``calibration.py --sequential``) and
calibration_statistics.json (STATISTICS, ``calibration.py --statistics``).
tests/stats/test_calibration.py checks that the committed document is this rendering of the committed
files, so a hand edit or a stale figure fails. In the order of the file: number and rate
formatting; the sections on the training runs (protocol, what to expect, false-positive rate,
power); the sections on the simulation-only studies (sequential boundaries, the spending rule,
the sign-flip planning figures, its interval, the margin tests); loading the files and
assembling the document (introduction, reproduce section, paragraph refill).
"""
from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import numpy as np

import calibration_rules_doc as rules_doc
import calibration_selection_doc as selection_doc
import simstats  # benchmarks/stats/, put on sys.path by calibration.py

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
DOC = HERE.parents[1] / "docs" / "calibration.md"
RUNS = ("calibration.json", "calibration_blocks200-399.json")  # disjoint seed blocks, in order
SEQUENTIAL = "sequential_boundaries.json"
STATISTICS = "calibration_statistics.json"
NOISE_SALT = 0xCA11B  # calibration.NOISE_SALT: the injected noise's stream (a name, not a figure)


# ---------------------------------------------------------------- formatting


def num(x: float, digits: int = 3) -> str:
    """x with `digits` decimals, or one more when that shows it exactly (0.0275, 0.035)."""
    s = f"{x:.{digits + 1}f}"
    return s if abs(float(s) - x) < 1e-12 and not s.endswith("0") else f"{x:.{digits}f}"


def ci(lo: float, hi: float, digits: int = 3) -> str:
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def rate_text(k: int, n: int, digits: int = 3) -> str:
    lo, hi = simstats.clopper_pearson(k, n)
    return f"{k}/{n} = {num(k / n, digits)} {ci(lo, hi, digits)}"


def blocks_label(run: dict) -> str:
    a = run["protocol"]["first_block"]
    return f"blocks {a}-{a + run['protocol']['blocks'] - 1}"


def rt(r: dict, digits: int = 3) -> str:
    """A rate dict of simstats.rate as 'k/n = rate [lo, hi]'."""
    return rate_text(r["k"], r["n"], digits)


def lv(level: float) -> str:
    return f"{level:.4g}"


def yes(flag: bool) -> str:
    return "yes" if flag else "**no**"


# ---------------------------------------------------------------- the training runs


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
    dist.append("| pooled [95% CI] | " + " | ".join(cells) + " |")
    dist.append("| exact | " + " | ".join(f"{u:g}" for u in us) + " |")
    (i0, z0, o0), (_, z1, _) = z_max[0], z_max[1]
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


# ---------------------------------------------------------------- the simulation-only studies


def sequential(seq: dict, stats_json: dict | None) -> str:
    looks, alpha, reps = seq["looks"], seq["alpha"], seq["reps"]
    lv = seq["union_levels"]
    qs = [math.ceil(level * 2 ** (n - 1)) - 1 for level, n in zip(lv, looks)]
    union_bound = sum(q / 2 ** (n - 1) for q, n in zip(qs, looks))
    bound_text = " + ".join(f"{q}/{2 ** (n - 1)}" for q, n in zip(qs, looks))
    conds = seq["conditions"]
    names = list(conds)
    effect_name = next(c for c in names if "effect" in c)
    effect = float(re.search(r"effect ([0-9.]+)", effect_name).group(1))
    seeds = ", ".join(str(seq["seed"] + k) for k in range(len(names)))
    med = ", ".join(f"{conds[c]['exact_final_level_median']:.4f} ({c})" for c in names)
    rows = []
    for c in names:
        u, e = conds[c]["union"], conds[c]["exact"]
        cells = [f"{x['rate']:.4f} {ci(*x['ci95'], 4)}" for x in (u, e)]
        if "H0" in c:
            gu, ge = u["null_error_given_magnitudes"], e["null_error_given_magnitudes"]
            cells += [f"{gu['mean']:.5f} (SE {gu['se']:.5f}, max {gu['max']:.5f})",
                      f"{ge['mean']:.5f} (max {ge['max']:.5f})"]
        else:
            cells += ["", ""]
        rows.append(f"| {c} | " + " | ".join(cells) + " |")
    h0 = [c for c in names if "H0" in c]
    exact_max = max(conds[c]["exact"]["null_error_given_magnitudes"]["max"] for c in h0)
    union_mean = np.mean([conds[c]["union"]["null_error_given_magnitudes"]["mean"] for c in h0])
    pu, pe = conds[effect_name]["union"], conds[effect_name]["exact"]
    apart = pu["ci95"][1] < pe["ci95"][0]
    text = f"""## Sequential looks: union-bound vs exact boundaries

`benchmarks/calibration/calibration.py --sequential --sim-reps {reps} --effect {effect:g}` (no training,
{seq['seconds']:,.0f} s on a shared 2-core machine; `benchmarks/results/{SEQUENTIAL}`) simulates benches
of {looks[-1]} paired differences looked at after {' and '.join(map(str, looks))} seeds, alpha
{alpha:g}, {reps:,} benches per condition (seeds {seeds}). A bench rejects when look 1 has p
below its level or look 2 does. Union-bound levels (`boundary="union"`, the default, from
`stats.look_levels`): {', '.join(f'{x:.5f}' for x in lv)}. Their union bound over the discrete
sign-flip levels is {bound_text} = {union_bound:.4f}. Exact levels (`boundary="exact"`): look 1
the same; look 2 calibrated per bench on the exact joint sign-flip null of its magnitudes,
median {med}. Rates with 95% Clopper-Pearson intervals; "error given magnitudes" is, per bench,
the exact share of all 2^{looks[-1]} sign vectors of its |differences| that some look rejects
(the error under H0 with those magnitudes), averaged over the benches (mean, its standard error,
and the largest single bench):

| condition | union: rejected | exact: rejected | union: error given magnitudes | exact: error given magnitudes |
|---|---|---|---|---|
{chr(10).join(rows)}

The exact boundary keeps the family-wise error at most alpha in every simulated bench (the error
given magnitudes never exceeds {exact_max:.5f}), and {'raises' if pe['rate'] > pu['rate'] else 'changes'}
the power at {effect:g} sd from {pu['rate']:.2f} to {pe['rate']:.2f}
({'the intervals do not overlap' if apart else 'the intervals overlap'}). The union bound wastes
about {exact_max - union_mean:.3f} of alpha here. `tests/stats/test_exact_boundary.py` checks the
FWER <= alpha exactly, by enumeration with `stats.sign_flip_p_value`, for distinct, tied and
outlying magnitudes; `tests/stats/test_sequential.py` checks by simulation that the spending rule stays
at or below alpha and that testing every look at the full alpha exceeds it. The default stays
`union` for now: exact levels apply to the two-sided test of a single comparison only (margin
tests and Holm families of several comparisons keep the union levels)."""
    return text


def spending_section(st: dict) -> str:
    sp = st["spending"]
    looks, alpha, levels = sp["looks"], sp["alpha"], sp["levels"]
    qs = [math.ceil(x * 2 ** (n - 1)) - 1 for x, n in zip(levels, looks)]
    union = sum(q / 2 ** (n - 1) for q, n in zip(qs, looks))
    rows = [f"| {dist} | {rt(c['spending'], 4)} | {rt(c['naive'], 4)} |"
            for dist, c in sp["conditions"].items()]
    below = all(c["spending"]["ci95"][0] <= union for c in sp["conditions"].values())
    above = all(c["naive"]["ci95"][0] > alpha for c in sp["conditions"].values())
    reps = next(iter(sp["conditions"].values()))["spending"]["n"]
    return f"""## Sequential seeds: the spending rule

`calibration.py --statistics` ({reps:,} seeded benches per distribution,
{sp['seconds']:.0f} s) simulates H0: {looks[-1]} i.i.d. symmetric paired differences, normal
and heavy-tailed t(3), looked at after {' and '.join(map(str, looks))} of max_seeds =
{looks[-1]} with benchkit's sign-flip test (`simstats.sign_flip_p_values`, exact, batched) and
`simstats.sequential_decision`. Levels from `stats.look_levels({looks}, {looks[-1]}, {alpha:g})`:
{', '.join(f'{x:.5f}' for x in levels)}. Family-wise error (reject at look 1, or not at 1 and at
look 2), with 95% Clopper-Pearson intervals:

| differences | spending rule | naive (both looks at {alpha:g}) |
|---|---|---|
{chr(10).join(rows)}

The union bound of the discrete sign-flip levels is {' + '.join(f'{q}/{2 ** (n - 1)}' for q, n in zip(qs, looks))}
= {union:.4f}. {'Every' if below else 'Not every'} interval of the spending rule reaches down
to that bound or below; the naive rule's {'lie wholly above' if above else 'do not all lie above'}
{alpha:g}. `tests/stats/test_sequential.py` asserts both on its own draws."""


def planning_section(st: dict) -> str:
    pl, reps = st["planning"], st["sim_reps"]
    rows = []
    for r in pl["power"]:
        rows.append(f"| {r['n']} | {r['effect_sd']:g} | {lv(r['level'])} | {r['benchkit']:.3f} | "
                    f"{rt(r['simulated'])} | {r['combined_se']:.3f} | {yes(r['within_2se'])} |")
    own = [r for r in pl["power"] if r.get("own_draws")]
    bad = [r for r in own if r["own_draws"]["p_differs_from_float64"]]
    own_text = ""
    if own:
        worst = max(own, key=lambda r: r["benchkit"] - r["own_draws"]["power_float64"])
        own_text = (
            f"\n\nWhere `power` tests exactly (n <= 11), its own {own[0]['own_draws']['benches']:,} "
            f"draws were retested with the float64 test (`simstats.sign_flip_p_values`, equal to "
            f"`stats.sign_flip_p_value`): the p-values differ in "
            + ", ".join(f"{r['own_draws']['p_differs_from_float64']} (n = {r['n']}, "
                        f"{r['effect_sd']:g} sd)" for r in own)
            + " of them")
        if bad:
            smaller = all(r["own_draws"]["p_smaller"] == r["own_draws"]["p_differs_from_float64"]
                          for r in bad)
            own_text += (
                f", {'always smaller' if smaller else 'not always smaller'}: `power` computes "
                f"p in float32 with a tolerance (1e-12 of the sum of |d|) below float32 "
                f"rounding, so the observed sign vector itself can fail to count. It overstates "
                f"power by up to {worst['benchkit'] - worst['own_draws']['power_float64']:.4f} "
                f"(n = {worst['n']}, {worst['effect_sd']:g} sd: {worst['benchkit']:.4f} against "
                f"{worst['own_draws']['power_float64']:.4f} on the same draws), within its "
                f"Monte Carlo error but one-sided.")
        else:
            own_text += ": `power` tests each simulated bench exactly as benchkit's test does."
    for r in pl["power"]:
        if r["within_2se"]:
            continue
        gap = (r["benchkit"] - r["simulated"]["rate"]) / r["combined_se"]
        own_text += (f"\n\nAt n = {r['n']}, {r['effect_sd']:g} sd, `power` ({r['benchkit']:.3f}) "
                     f"is {abs(gap):.1f} combined SE {'above' if gap > 0 else 'below'} the "
                     f"simulation ({rt(r['simulated'])}).")
        if r.get("own_draws"):
            f64 = r["own_draws"]["power_float64"]
            own_text += (f" On its own draws the float64 test gives {f64:.4f}: its "
                         f"{r['own_draws']['benches']:,} draws at n = {r['n']} run "
                         f"{'high' if f64 > r['simulated']['rate'] else 'low'} by "
                         f"{f64 - r['simulated']['rate']:+.3f} (the same draws serve every effect "
                         f"at one n, so this Monte Carlo error is shared by the figures made "
                         f"at that n)"
                         + (f", and its test adds {r['benchkit'] - f64:+.4f}." if bad else "."))
    # both Monte Carlo errors at a power of 0.8: benchkit's (its own simulation) and ours
    cse = math.sqrt(0.16 / pl["benchkit_sim_reps"] + 0.16 / reps)
    sn = []
    for r in pl["seeds_needed"]:
        one = rt(r["power_one_fewer"]) if r["power_one_fewer"] else "(below the minimum)"
        ok_at = r["power_at"]["rate"] >= 0.8 - 2 * cse
        ok_below = r["power_one_fewer"] is None or r["power_one_fewer"]["rate"] < 0.8 + 2 * cse
        sn.append(f"| {r['effect_sd']:g} | {lv(r['level'])} | {r['min_pairs']} | "
                  f"{r['seeds_needed']} | {rt(r['power_at'])} | {one} | {yes(ok_at and ok_below)} |")
    md = []
    for r in pl["mde_power80"]:
        md.append(f"| {r['n']} | {lv(r['level'])} | {r['mde_sd']:.3f} | {r['t_mde_sd']:.3f} | "
                  f"{100 * (r['mde_sd'] / r['t_mde_sd'] - 1):+.0f}% | {rt(r['power_at_mde'])} | "
                  f"{yes(abs(r['power_at_mde']['rate'] - 0.8) <= 2 * cse)} |")
    effects = list(pl["reachable"][0]["seeds_needed_by_effect_sd"])
    rc = [f"| {lv(r['level'])} | {r['min_pairs']} | {r['min_p_at_min_pairs']:g} / "
          f"{r['min_p_one_fewer']:g} | "
          + " | ".join(str(r["seeds_needed_by_effect_sd"][e]) for e in effects)
          + f" | {r['below_min_pairs']} |" for r in pl["reachable"]]
    below = sum(r["below_min_pairs"] for r in pl["reachable"])
    agree = sum(r["within_2se"] for r in pl["power"])
    return f"""## Planning figures of the sign-flip test (`benchkit.stats.signflip`)

A report's `mde_power80` and, when not significant, `seeds_needed` are computed for the
sign-flip test at the level its first Holm step uses (the look's level over the family size),
from `signflip.power`: a seeded simulation of normal per-seed differences (the stated
assumption). `calibration.py --statistics` checks each against an independent seeded simulation
of benchkit's own test (`simstats.sign_flip_p_values`, exact, float64), {reps:,} benches per
condition, with 95% Clopper-Pearson intervals ({pl['seconds']:.0f} s). Effects are in units of
the differences' sd; {lv(st['look1_level'])} is the level of look 1 of looks (8, 16).

`signflip.power(n, effect, level)` against the simulation (combined SE: both Monte Carlo
errors):

| n | effect (sd) | level | `power` | simulated | combined SE | within 2 SE |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

{agree} of {len(rows)} agree within 2 combined SE.{own_text}

`signflip.seeds_needed(effect, 1, level)` and the simulated power there and one seed fewer.
Both `seeds_needed` and `mde_power80` search on `signflip.power` ({pl['benchkit_sim_reps']:,}
simulated benches), so each is right within the combined Monte Carlo error at a power of 0.8,
SE = {cse:.4f}: right when the power at n reaches 0.8 - 2 SE and one fewer stays below
0.8 + 2 SE:

| effect (sd) | level | fewest pairs with p < level possible | `seeds_needed` | power at it | power one fewer | right |
|---|---|---|---|---|---|---|
{chr(10).join(sn)}

`signflip.mde_power80(n, 1, level)` (in sd units) against the t approximation
(`stats.power_mde`) and the simulated power at it (right when within 2 SE of 0.8):

| n | level | `mde_power80` | t approximation | sign-flip / t | power at it | right |
|---|---|---|---|---|---|---|
{chr(10).join(md)}

Never below the reachable minimum: the fewest pairs at which p < level is possible
(`signflip.min_pairs`; the smallest two-sided p there and one pair fewer) and `seeds_needed`
for true effects of {', '.join(effects)} sd. Cases below the minimum: {below}.

| level | min pairs | smallest p: at min / one fewer | {' | '.join(f'{e} sd' for e in effects)} | below min |
|---|---|---|{'---|' * len(effects)}---|
{chr(10).join(rc)}"""


def interval_section(st: dict) -> str:
    iv = st["interval"]
    ag = iv["agreement"]
    dis = ", ".join(f"{v} at level {lv(float(k))}" for k, v in ag["disagreements"].items())
    rows = [f"| {r['n']} | {r['differences']} | {rt(r['covered'])} | {r['exact_coverage']:.4f} | "
            f"{rt(r['signflip_ci_disagrees_with_p'])} | {rt(r['t_ci95_disagrees_with_p'])} |"
            for r in iv["coverage"]]
    return f"""## The sign-flip interval (`signflip.sign_flip_ci`)

A report's `signflip_ci` inverts the test: the shifts c for which the sign-flip test of
`diffs - c` has p >= level. It must exclude 0 exactly when compare's p is below the level. Over
{ag['benches']:,} seeded benches of {ag['n_range'][0]}-{ag['n_range'][1]} pairs ({ag['mix']}), each
at three levels, the interval and p disagreed in: {dis}.

Coverage of the true shift at level 0.05 ({iv['seconds']:.0f} s for this section): the
differences are symmetric about the shift, so the test of `diffs - shift` is exact and the
interval covers with probability 1 - (the largest attainable p below 0.05) ("exact"). Beside it,
how often the paired t interval (`benchkit.stats.paired.ci95`, which no report holds: a
report's `ci95` is the deciding test's own interval) and the sign-flip interval exclude 0
while p >= 0.05 or include it while p < 0.05:

| n | differences | covered | exact | sign-flip interval disagrees with p | t interval disagrees with p |
|---|---|---|---|---|---|
{chr(10).join(rows)}"""


def margins_section(st: dict) -> str:
    mg = st["margins"]
    ni = [f"| {r['direction']} | {r['n']} | {r['base_sd']:g} | {lv(r['level'])} | "
          f"{rt(r['non_inferior'])} | {r['bound']:.4f} | {yes(r['non_inferior']['rate'] <= r['bound'])} |"
          for r in mg["noninferiority_at_margin"]]
    harm = mg["harm_within_margin"]
    hr = [f"| {r['n']} | {rt(r['gate_passed'])} | {rt(r['non_inferior'])} | "
          f"{rt(r['also_significantly_worse'])} |" for r in harm]
    gates = [r["gate_passed"]["rate"] for r in harm]
    rising = all(a < b for a, b in zip(gates, gates[1:]))
    h0 = harm[0]
    tost = [f"| {r['n']} | {r['idea']} | {rt(r['equivalent'])} | {r['bound']:.4f} | "
            f"{yes(r['equivalent']['rate'] <= r['bound'])} |" for r in mg["tost_at_margin"]]
    t0 = mg["tost_at_margin"][0]
    n0 = mg["noninferiority_at_margin"][0]
    return f"""## Non-inferiority and equivalence at their margins

A margin claim is tested per seed on w = worse_by - margin * |baseline| (`stats.noninferiority`;
`benchkit.stats.equivalence.tost` tests both sides), so the relative margin is not treated as a known
constant. The simulated idea is exactly at the margin in expectation: {n0['idea']}, i.e.
(1 + margin) times each seed's baseline, plus heteroscedastic noise of sd {n0['noise']:g} x
|baseline|; baselines normal(1, base sd). A "non-inferior" here is a false positive; it must
stay within level + 2 SE ({n0['non_inferior']['n']:,} benches per condition,
{mg['seconds']:.0f} s for this section):

| direction | n | base sd | level | false non-inferior | level + 2 SE | within |
|---|---|---|---|---|---|---|
{chr(10).join(ni)}

An idea {h0['idea']} with a {h0['margin']:.0%} margin (base sd {h0['base_sd']:g}, noise sd
{h0['noise']:g} x |baseline|), through the report's path (`stats.compare` with `margin=`, then
`decision.claim_verdict` at level {h0['level']:g}): how often it passes the non-inferior gate
(verdict helps, non-inferior or equivalent), {h0['gate_passed']['n']:,} benches per seed count.
A within-margin harm is `non-inferior`, even when it is also significantly worse:

| seeds | passes the non-inferior gate | non-inferior | also significantly worse |
|---|---|---|---|
{chr(10).join(hr)}

The pass rate {'rises with every doubling of the seeds' if rising else 'does NOT rise with every doubling of the seeds'}.

Equivalence (TOST, `claim_type="equivalence"`) exactly at either margin (base sd
{t0['base_sd']:g}, noise sd {t0['noise']:g} x |baseline|, level {t0['level']:g}): a shown
"equivalent" is a false positive:

| n | idea | false equivalent | level + 2 SE | within |
|---|---|---|---|---|
{chr(10).join(tost)}"""


def statistics_sections(st: dict) -> list[str]:
    return [planning_section(st), interval_section(st), margins_section(st)]


# ---------------------------------------------------------------- the document


def load(folder: Path = RESULTS) -> dict:
    """The JSON files the document is rendered from (statistics may be absent: no section)."""
    folder = Path(folder)
    data = {"runs": [json.loads((folder / name).read_text()) for name in RUNS],
            "sequential": json.loads((folder / SEQUENTIAL).read_text())}
    stats_path = folder / STATISTICS
    data["statistics"] = json.loads(stats_path.read_text()) if stats_path.exists() else None
    sel_path = folder / selection_doc.FILE
    data["selection"] = json.loads(sel_path.read_text()) if sel_path.exists() else None
    data["rules"] = rules_doc.load(folder)
    return data


def intro(runs: list[dict]) -> str:
    p = runs[0]["protocol"]
    return f"""# Calibration of benchkit's paired test

<!-- Generated by `benchmarks/calibration/calibration.py --doc` from benchmarks/results/calibration*.json,
sequential_boundaries.json and calibration_statistics.json; do not edit by hand
(tests/stats/test_calibration.py compares). -->

Does benchkit's verdict mean what it says? Two measurements on the `{p['track']}` track, by
`benchmarks/calibration/calibration.py`, at the protocol recorded with them (the table below:
the track as it was when they ran; docs/tracks.md has today's):

1. **False-positive rate under a real null.** The idea is the baseline itself with another
   initialisation stream, so it has no effect; how often does `stats.compare` call it
   significant at alpha = {p['alpha']:g}?
2. **Power against known effects.** Effects of known size are injected; how often are they
   detected, and does the power that benchkit predicts agree?

Later sections record the sequential-seeds rule and its boundaries (simulated differences, no
training) and the statistics that describe the test that decides (`benchkit.stats.signflip`,
non-inferiority, equivalence), by seeded simulation."""


def reproduce(runs: list[dict], seq: dict, stats_json: dict | None) -> str:
    env = runs[0]["environment"]
    timing = []
    for name, r in zip(RUNS, runs):
        t = r["timing"]
        timing.append(f"`{name}` "
                      f"({blocks_label(r)}) took {t['blocks_s']:.0f} s of training "
                      f"({t['ms_per_run']:.1f} ms/run), {t['total_s']:.0f} s in all")
    lines = [".venv/bin/python benchmarks/calibration/calibration.py                     # blocks 0-199 -> benchmarks/results/calibration.json",
             ".venv/bin/python benchmarks/calibration/calibration.py --first-block 200 \\",
             "    --out benchmarks/results/calibration_blocks200-399.json            # blocks 200-399",
             ".venv/bin/python benchmarks/calibration/calibration.py --merge benchmarks/results/calibration.json \\",
             "    benchmarks/results/calibration_blocks200-399.json                   # the pooled rates, printed",
             f".venv/bin/python benchmarks/calibration/calibration.py --sequential --sim-reps {seq['reps']} --effect "
             f"{float(re.search(r'effect ([0-9.]+)', next(c for c in seq['conditions'] if 'effect' in c)).group(1)):g} \\",
             "    --out benchmarks/results/sequential_boundaries.json                 # union vs exact boundaries"]
    if stats_json is not None:
        lines.append(f".venv/bin/python benchmarks/calibration/calibration.py --statistics --sim-reps "
                     f"{stats_json['sim_reps']}   # -> benchmarks/results/{STATISTICS}")
    lines += ["PYTHONPATH=. .venv/bin/python benchmarks/calibration/selection_calibration.py --sim --plugin",
              "PYTHONPATH=. .venv/bin/python benchmarks/calibration/selection_calibration.py --training \\",
              "    --benches 450 --seeds 8 --epochs 30                                # -> selection_calibration.json",
              "PYTHONPATH=. .venv/bin/python benchmarks/calibration/crossfit_calibration.py --reps 2000   # -> crossfit_calibration.json",
              "PYTHONPATH=. .venv/bin/python benchmarks/calibration/crossfit_plugin.py    # -> crossfit_plugin.json",
              "PYTHONPATH=. .venv/bin/python benchmarks/calibration/planning_power.py     # -> planning_power.json",
              ".venv/bin/python benchmarks/calibration/calibration.py --doc            # this document, from the JSON files",
              ".venv/bin/python -m pytest tests/stats/test_calibration.py tests/stats/test_sequential.py -q"]
    if stats_json is not None:
        timing.append(f"`{STATISTICS}` ({stats_json['sim_reps']:,} benches per condition) "
                      f"took {stats_json['seconds']:.0f} s")
    return f"""## Reproduce

```
{chr(10).join(lines)}
```

The results are deterministic (seeded streams, one torch thread). The training runs used torch
{env['torch']}, numpy {env['numpy']}, Python {env['python']}, {env['threads']} thread on
{env['device']}. Options: `--blocks`, `--first-block`, `--seeds`, `--epochs`, `--lrs`,
`--noise-sd`, `--alpha`, `--sim-reps`.

Timing (2 cores, shared with other work, so the speed drifts between runs): {'; '.join(timing)}.
`--blocks` scales the time linearly."""


def wrap(text: str, width: int = 96) -> str:
    """Refill the prose paragraphs (not tables, code, headings, lists or comments)."""
    blocks, out = text.split("\n\n"), []
    for block in blocks:
        if block.lstrip().startswith(("|", "```", "#", "<!--", "- ", "1. ")):
            out.append(block)
        else:
            out.append(textwrap.fill(" ".join(block.split()), width, break_long_words=False,
                                     break_on_hyphens=False))
    return "\n\n".join(out)


def render(data: dict) -> str:
    runs, seq, st = data["runs"], data["sequential"], data.get("statistics")
    parts = [intro(runs), protocol(runs), expectation(runs), fpr(runs), power(runs)]
    if st is not None:
        parts.append(spending_section(st))
    parts.append(sequential(seq, st))
    if st is not None:
        parts += statistics_sections(st)
    if data.get("selection"):
        parts.append(selection_doc.section(data["selection"]))
    parts += rules_doc.sections(data.get("rules") or {})
    parts.append(reproduce(runs, seq, st))
    return "\n\n".join(wrap(part) for part in parts) + "\n"


def write(folder: Path = RESULTS, doc: Path = DOC) -> Path:
    doc.write_text(render(load(folder)))
    return doc
