"""The sections of docs/calibration.md on the simulation-only studies: the sequential
boundaries (SEQUENTIAL, ``calibration.py --sequential``), the spending rule, the sign-flip
planning figures, its interval and the margin tests (STATISTICS, ``calibration.py
--statistics``)."""
from __future__ import annotations

import math
import re

import numpy as np

from calibration_doc_format import ci, lv, rt, yes

SEQUENTIAL = "sequential_boundaries.json"
STATISTICS = "calibration_statistics.json"


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
about {exact_max - union_mean:.3f} of alpha here. `tests/test_exact_boundary.py` checks the
FWER <= alpha exactly, by enumeration with `stats.sign_flip_p_value`, for distinct, tied and
outlying magnitudes; `tests/test_sequential.py` checks by simulation that the spending rule stays
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
{alpha:g}. `tests/test_sequential.py` asserts both on its own draws."""


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
how often the t interval `ci95` (kept for the reference format) and the sign-flip interval
exclude 0 while p >= 0.05 or include it while p < 0.05:

| n | differences | covered | exact | sign-flip interval disagrees with p | t `ci95` disagrees with p |
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
`equivalence.verdict` at level {h0['level']:g}): how often it passes the non-inferior gate
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
