"""The sections of docs/calibration.md on issue 41's rules, rendered from their JSON files in
benchmarks/results/ (each written by its own script in benchmarks/calibration/; a missing file
gives no section); part of ``calibration.py --doc`` (calibration_doc.render appends them), so
tests/stats/test_calibration.py checks them with the rest of the document.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import simstats  # benchmarks/stats/, put on sys.path by calibration.py

FILES = {"effective_grids": "effective_grids.json", "budget_check": "budget_check.json",
         "planning": "planning_figures.json", "margins": "margins.json"}


def load(folder: Path) -> dict:
    return {key: json.loads((Path(folder) / name).read_text())
            for key, name in FILES.items() if (Path(folder) / name).exists()}


def _rate(r: dict) -> str:
    lo, hi = simstats.clopper_pearson(r["count"], r["n"])
    return f"{r['count']}/{r['n']} = {r['rate']:.3f} [{lo:.3f}, {hi:.3f}]"


def _bound(alpha: float, n: int) -> float:
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / n)


def effective_grids(eg: dict) -> str:
    alpha, reps, reg = eg["alpha"], eg["reps"], eg["regime"]
    bound = _bound(alpha, reps)
    rows = ["| seeds | helps, test alone | helps, with the rule | harms, with the rule | "
            "refused (favoured the idea) | helps within alpha + 2 SE |",
            "|---|---|---|---|---|---|"]
    rows += [f"| {r['seeds']} | {_rate(r['helps_test_alone'])} | {_rate(r['helps'])} | "
             f"{_rate(r['harms'])} | {_rate(r['refused'])} | "
             f"{'yes' if r['helps']['rate'] <= bound else '**no**'} |" for r in eg["rows"]]
    return f"""## Arms with different effective grids (`selection.effective_grids`)

The audit's regime (docs/statistics.md): the idea ignores the lr axis (its own loop), so its
values are the same at every lr, with its true mean equal to the baseline's best config's (the
baseline's configs {', '.join(f'{m:g}' for m in eg['means'])}, lower is better); seed effect sd
{reg['seed_sd']:g} shared by the arms, validation noise sd {reg['val_sd']:g}, test noise sd
{reg['test_sd']:g}. Every helps is a false one. Each bench goes through
`verdict.sweeps.decide_by_selection`, the report's path; "test alone" is the selection-aware p
before the rule. {reps:,} benches per row, alpha {alpha:g} (alpha + 2 SE = {bound:.4f}),
Clopper-Pearson 95% intervals, {eg['seconds']:.0f} s
(`PYTHONPATH=. python benchmarks/calibration/effective_grids.py --reps {reps}`):

{chr(10).join(rows)}

The test alone calls the baseline's tuning loss a help; with the rule a result in the idea's
favour is refused, and a harm is still found when there is one (tests/verdict/test_effective_grids.py)."""


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _looks(looks: list[int]) -> str:
    return " then ".join(map(str, looks))


def budget_check(bc: dict) -> str:
    blocks = bc["rates"]
    head = ["per-seed sd", "true mean gain"]
    for b in blocks:
        head += [f"looks {_looks(b['looks'])}: still improving", "trained out", "undetermined"]
    rows = ["| " + " | ".join(head + ["old rule: median of 8 > threshold"]) + " |",
            "|" + "---|" * (len(head) + 1)]
    for k, r in enumerate(blocks[0]["rows"]):
        cells = [_pct(r["sigma"]), _pct(r["mu"])]
        for b in blocks:
            x = b["rows"][k]
            cells += [f"{x[key]['rate']:.3f}" for key in ("still_improving", "trained_out",
                                                          "undetermined")]
        rows.append("| " + " | ".join(cells + [
            f"{r['median_of_8_still_improving']['rate']:.3f}"]) + " |")
    errors = []
    for b in blocks:
        fa = max(r["still_improving"]["rate"] for r in b["rows"] if r["mu"] <= bc["threshold"])
        miss = max(r["trained_out"]["rate"] for r in b["rows"] if r["mu"] >= bc["threshold"])
        runs = [r["mean_seeds"] for r in b["rows"]]
        errors.append(f"looks {_looks(b['looks'])}: false alarms at most {fa:.3f}, misses at "
                      f"most {miss:.3f}, {min(runs):.2f}-{max(runs):.2f} check runs on average")
    old = [r["median_of_8_still_improving"]["rate"] for r in blocks[0]["rows"] if r["mu"] == 0]
    c = bc["cost"]
    replay = "; ".join(f"{arm} {d['decision'].replace('below', 'trained out').replace('above', 'still improving')} "
                       f"on {d['seeds']} seeds (mean {_pct(d['mean'])}, bounds "
                       f"{_pct(d['lower'])} to {_pct(d['upper'])})"
                       for arm, d in c["replay"].items())
    worst = "\n".join(f"| {w['configs']} x {w['seeds']} | {_looks(w['looks'])} | "
                       f"{_pct(w['share'])} | {_pct(w['fixed_looks_share'])} |"
                       for w in bc["worst"])
    return f"""## The budget check's sequential decision (`convergence.check_decision`)

Per-seed relative gains drawn normal (the rule's assumption) with the true mean and sd below,
decided by the rule (one-sided t bounds at {bc['level']:g} per look and side, threshold
{_pct(bc['threshold'])}) at each of the looks a grid can get: the first 3 seeds, then 5 while
undetermined, the second look cut to the check runs (each 1.5x the epochs) that fit in
{_pct(bc['check_cost'])} of the arm's grid epochs (`convergence.check_looks`). {bc['reps']:,}
simulated checks per row (SE of a rate at most {0.5 / math.sqrt(bc['reps']):.4f}),
{bc['seconds']:.0f} s (`PYTHONPATH=. python benchmarks/calibration/budget_check.py`). "Still
improving" at a true mean gain at or under the threshold is a false alarm, "trained out" at or
above it a miss:

{chr(10).join(rows)}

{'; '.join(errors)} (the union bound allows 0.10 over two looks, 0.05 with one). The rule it
replaces (median of 8 seeds above the threshold) raised false alarms at a true gain of 0 in
{min(old):.3f}-{max(old):.3f} of checks. Where the per-seed sd is large against the threshold,
most checks end undetermined, which the report says, instead of deciding on noise; fewer looks
leave more checks undetermined, at error rates no higher in any row beyond the simulation's SE.

**Cost.** The check's epochs as a share of the grid's when both arms go to the last look (the
worst case), for tabular benches of configs x seeds at 120 epochs (a check run trains 180),
under this rule and under the fixed looks 3 then 5 it replaces:

| configs x seeds | looks | worst case | fixed looks 3 then 5 |
|---|---|---|---|
{worst}

On the committed tabular A/A bench ({c['grid']} configs x {c['seeds']} seeds x 2 arms x
{c['epochs']} epochs = {c['grid_epochs']:,} epochs of grid; looks {_looks(c['looks'])}): its
stored check runs replayed through the rule: {replay}: {c['replay_runs']} check runs,
{_pct(c['replay_share'])} of the grid's epochs (the median rule trained {c['old_rule_runs']},
{_pct(c['old_rule_share'])}). Over {c['bootstrap_reps']:,} benches whose gains are drawn with
replacement from each arm's {c['seeds']} stored gains: {_pct(c['bootstrap_mean_share'])} on
average, at most {_pct(c['bootstrap_max_share'])} (over 20% in
{c['bootstrap_share_over_20pct']:.3f} of them)."""


def planning(pf: dict) -> str:
    rows = ["| regime | seeds | fixed-config figure: median | its true power | selection-aware "
            "figure: median | its true power |", "|---|---|---|---|---|---|"]
    rows += [f"| {r['regime']} | {r['seeds']} | {r['fixed']['median_mde']:.4f} | "
             f"{r['fixed']['mean_power']:.2f} (SE {r['fixed']['se']:.2f}) | "
             f"{r['aware']['median_mde']:.4f} | {r['aware']['mean_power']:.2f} "
             f"(SE {r['aware']['se']:.2f}) |" for r in pf["rows"]]
    return f"""## Planning figures of the test that decides (`selection.mde_power80`)

Does a report's `mde_power80` describe the test that decides? For {pf['benches']} benches per
row drawn from the selection-aware section's two regimes (three configs 0.01 apart, A/A), each
bench's figure is computed two ways: the fixed-config sign-flip figure (`signflip.mde_power80`
at the selected configs' sd, what reports gave before) and the selection-aware one (simulated on
the bench's own sweeps, {pf['reps']} resampled benches, what reports give now). The deciding
test's true power at each bench's figure is then measured on {pf['fresh']} fresh benches from
the same regime with the idea's whole sweep better by that effect; the table gives the mean over
the benches (SE over benches), alpha {pf['alpha']:g}, {pf['seconds']:.0f} s
(`PYTHONPATH=. python benchmarks/calibration/planning_figures.py --benches {pf['benches']}
--fresh {pf['fresh']}`):

{chr(10).join(rows)}

A figure that describes the deciding test has a true power near 0.8. The fixed-config figure
is far too optimistic where validation picks configs by accident and too pessimistic where
it does not; the selection-aware figure is of the right test but estimated from one bench's
seeds, so it scatters around 0.8 and averages below it (a bootstrap from 8-12 seeds
understates the spread of new seeds)."""


def margins(mg: dict) -> str:
    r = mg["regime"]
    bound = _bound(mg["alpha"], mg["reps"])
    rows = ["| margin relative to | false non-inferior | within alpha + 2 SE |", "|---|---|---|"]
    rows += [f"| {x['scale']} | {_rate(x)} | {'yes' if x['rate'] <= bound else '**no**'} |"
             for x in mg["rows"]]
    return f"""## Non-inferiority at its margin with unequal seed levels

Seed levels normal({r['level_mean']:g}, {r['level_sd']:g}), configs
{', '.join(f'{c:g}' for c in r['configs'])} apart, validation noise sd {r['val_sd']:g}, test
noise sd {r['test_sd']:g}, {r['seeds']} seeds, margin {r['margin']:g}, lower is better, the idea
exactly at the margin: per-seed, (1 + margin) times each seed's level, tested with the margin of
each seed's comparator value (the default); declared reference, each seed's level plus margin x
{r['reference']:g}, tested with `margin_reference={r['reference']:g}`. `selection.margin_test`,
{mg['reps']:,} benches each, alpha {mg['alpha']:g} (alpha + 2 SE = {bound:.4f}),
{mg['seconds']:.0f} s (`PYTHONPATH=. python benchmarks/calibration/margins.py --reps
{mg['reps']}`):

{chr(10).join(rows)}"""


def sections(data: dict) -> list[str]:
    out = []
    if "effective_grids" in data:
        out.append(effective_grids(data["effective_grids"]))
    if "budget_check" in data:
        out.append(budget_check(data["budget_check"]))
    if "planning" in data:
        out.append(planning(data["planning"]))
    if "margins" in data:
        out.append(margins(data["margins"]))
    return out
