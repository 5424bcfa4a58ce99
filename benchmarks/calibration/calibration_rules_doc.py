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

import calibration_crossfit_doc as crossfit_doc  # noqa: E402

FILES = {"budget_check": "budget_check.json", "margins": "margins.json", **crossfit_doc.FILES}


def load(folder: Path) -> dict:
    return {key: json.loads((Path(folder) / name).read_text())
            for key, name in FILES.items() if (Path(folder) / name).exists()}


def _rate(r: dict) -> str:
    lo, hi = simstats.clopper_pearson(r["count"], r["n"])
    return f"{r['count']}/{r['n']} = {r['rate']:.3f} [{lo:.3f}, {hi:.3f}]"


def _bound(alpha: float, n: int) -> float:
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / n)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _looks(looks: list[int]) -> str:
    return " then ".join(map(str, looks))


def _pair(a: dict, b: dict) -> str:
    return f"{a['rate']:.3f} / {b['rate']:.3f}"


def budget_check(bc: dict) -> str:
    reps = bc["reps"]
    se = 0.5 / math.sqrt(reps)
    head = ("| looks | per-seed gains | sd | before: false alarm | miss | two arms: false alarm "
            "| rule before, median on the threshold: false alarm / miss | after: false alarm | "
            "miss | two arms: false alarm | two arms: miss |")
    rows = [head, "|" + "---|" * 11]
    for r in bc["regimes"]:
        b, m, a = r["before"], r["before_median"], r["after"]
        rows.append(
            f"| {_looks(r['looks'])} | {r['regime']} | {_pct(r['sigma'])} | "
            f"{b['false_alarm']['rate']:.3f} | {b['miss']['rate']:.3f} | "
            f"{b['family_false_alarm']['rate']:.3f} | {_pair(m['false_alarm'], m['miss'])} | "
            f"{a['false_alarm']['rate']:.3f} | {a['miss']['rate']:.3f} | "
            f"{a['family_false_alarm']['rate']:.3f} | {a['family_miss']['rate']:.3f} |")

    def worst_of(rule: str, keys: tuple[str, ...], where=lambda r: True) -> float:
        return max(r[rule][k]["rate"] for r in bc["regimes"] if where(r) for k in keys)
    after = worst_of("after", ("false_alarm", "miss"))
    before = worst_of("before", ("false_alarm", "miss"))
    fam = worst_of("after", ("family_false_alarm", "family_miss"))
    fam_before = worst_of("before", ("family_false_alarm",), lambda r: r["regime"] == "normal")
    normal = worst_of("after", ("false_alarm", "miss"), lambda r: r["regime"] == "normal")
    sb = bc["shared_baseline"]
    power = ["| sd | true mean gain | " + " | ".join(
        f"looks {_looks(b['looks'])}: still improving, before / after | trained out, before / "
        f"after | undetermined, after | check runs, after" for b in bc["rates"]) + " |",
             "|" + "---|" * (2 + 4 * len(bc["rates"]))]
    for k, r in enumerate(bc["rates"][0]["rows"]):
        cells = [_pct(r["sigma"]), _pct(r["mu"])]
        for b in bc["rates"]:
            x = b["rows"][k]
            cells += [_pair(x["before"]["still_improving"], x["after"]["still_improving"]),
                      _pair(x["before"]["trained_out"], x["after"]["trained_out"]),
                      f"{x['after']['undetermined']['rate']:.3f}", f"{x['mean_seeds']:.2f}"]
        power.append("| " + " | ".join(cells) + " |")
    allowance = [r["mean_allowance"] for r in bc["regimes"] if r["regime"] == "selected"]
    cost_of_allowance = "; ".join(
        f"looks {_looks(r['looks'])}, sd {_pct(r['sigma'])}, true gain {_pct(r['mu'])}: "
        f"{_pair(r['before'], r['after'])}" for r in bc["selected_power"])
    c = bc["cost"]
    replay = "; ".join(f"{arm} {d['decision'].replace('below', 'trained out').replace('above', 'still improving')} "
                       f"on {d['seeds']} seeds (mean {_pct(d['mean'])}, bounds "
                       f"{_pct(d['lower'])} to {_pct(d['upper'])})"
                       for arm, d in c["replay"].items())
    worst = "\n".join(f"| {w['configs']} x {w['seeds']} | {_looks(w['looks'])} | "
                       f"{_pct(w['share'])} | {_pct(w['fixed_looks_share'])} |"
                       for w in bc["worst"])
    return f"""## The budget check's sequential decision (`convergence.check_decision`)

**Errors where the gain sits on the threshold.** Per-seed relative gains from each regime below
(`PYTHONPATH=. python benchmarks/calibration/budget_check.py`, {reps:,} simulated checks per
cell, SE of a rate at most {se:.4f}, {bc['seconds']:.0f} s), the threshold
{_pct(bc['threshold'])}, the looks a default 3 x 8 bench gets (3) and a 3 x 16 one (3 then 5).
"Before": the rule of issue 41 (one-sided t bounds of the mean at {bc['level']:g} per look and
side), its true mean gain on the threshold, the estimand it declared. "After": today's rule
(every measured gain of the look and the t bound on the same side, at least
{bc['sign_seeds']} measured seeds; "trained out" below the threshold less the allowance for the
selected config's luck), its true median gain on the threshold, the estimand it declares.
A false alarm is "still improving", a miss "trained out"; "two arms": two independent arms
checked at once, the share of benches where either errs. The gains: normal; lognormal of shape
s, long tail right or left; normal with one seed in ten moved by {_pct(bc['outlier'][1])} (either
way, up, down); normal, measured at the config validation chose among {bc['equal'][0]} equal ones
on {bc['equal'][1]} seeds, each run's luck independent (mean allowance
{_pct(min(allowance))}-{_pct(max(allowance))}):

{chr(10).join(rows)}

Each error after: at most {after:.3f} in every regime (normal gains: {normal:.3f}), against
{before:.3f} before. The bound it states holds for any continuous distribution of independent
gains: at a median on the threshold, every one of k >= 3 gains falls on one side with
probability 2^-k <= 1/8, and a later look's "every seed" contains the first look's, so each
side errs at most 1/8 over all looks; for normal gains the t bound keeps it under 0.05 a look.
With several arms checked each errs on its own: the family's error is at most the sum (two
arms: at most {fam:.3f} measured after; {fam_before:.3f} before, normal gains). At one look of 3
seeds the t bound already implies every seed on its side, so there the rule is the same and the
change is the estimand it states; at 5 seeds the t bound alone can clear the threshold with a
seed on the other side (a skewed or outlying gain), which is where the sign condition bites.

**Benches that reuse a baseline.** Before, every bench checked seeds 0-2, so benches reusing a
baseline inherited one draw: a bench whose baseline check raised a false alarm was repeated by
every other ({sb['before']['repeat']:.2f} of the time, {sb['reps']:,} simulated pairs, gains
normal on the threshold, sd {_pct(sb['sigma'])}). Each bench now draws its checked seeds from
its name and track (`convergence.check_order`): a second bench repeats a false alarm
{sb['after']['repeat']:.2f} of the time (false alarms {sb['after']['a']['rate']:.3f} per bench).

**What the allowance costs.** It is the worst case, so it makes "trained out" rarer where it
is right: at the config chosen among {bc['equal'][0]} equal ones, a true gain under the
threshold, the share called trained out, before / after: {cost_of_allowance}.

**Normal gains at other true gains**, both rules, no selection (the allowance is 0):

{chr(10).join(power)}

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
    if "crossfit" in data:
        out.append(crossfit_doc.section(data))
    if "budget_check" in data:
        out.append(budget_check(data["budget_check"]))
    if "margins" in data:
        out.append(margins(data["margins"]))
    return out
