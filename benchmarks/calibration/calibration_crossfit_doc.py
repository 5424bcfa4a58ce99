"""The section of docs/calibration.md on issue 49's selection-aware test (arms that differ),
rendered from benchmarks/results/crossfit_calibration.json (the compare stage, simulated),
crossfit_calibration_before.json (the same draws through the test it replaced, when present)
crossfit_plugin.json (through the plugin) and planning_power.json (the planning figures' true
power); part of ``calibration.py --doc`` via
calibration_rules_doc.sections, so tests/stats/test_calibration.py checks it.
"""
from __future__ import annotations

import math

import simstats  # benchmarks/stats/, put on sys.path by calibration.py

FILES = {"crossfit": "crossfit_calibration.json",
         "crossfit_before": "crossfit_calibration_before.json",
         "crossfit_plugin": "crossfit_plugin.json",
         "planning_power": "planning_power.json",
         "planning_needed": "planning_power_needed.json"}


def _rate(r: dict) -> str:
    lo, hi = simstats.clopper_pearson(r["count"], r["n"])
    return f"{r['count']}/{r['n']} = {r['rate']:.3f} [{lo:.3f}, {hi:.3f}]"


def _ok(r: dict, alpha: float) -> str:
    bound = alpha + 2 * math.sqrt(alpha * (1 - alpha) / r["n"])
    return "yes" if r["rate"] <= bound else "**no**"


def _level_rows(rows: list[dict], alpha: float) -> list[str]:
    out = ["| regime | seeds | false helps | false harms | both within alpha + 2 SE |",
           "|---|---|---|---|---|"]
    out += [f"| {r['regime']} | {r['seeds']} | {_rate(r['helps'])} | {_rate(r['harms'])} | "
            f"{'yes' if _ok(r['helps'], alpha) == _ok(r['harms'], alpha) == 'yes' else '**no**'}"
            " |" for r in rows if r["kind"] == "level"]
    return out


def _power_rows(rows: list[dict], before: dict | None) -> list[str]:
    old = {(r["regime"], r["seeds"], -r["estimand"]): r for r in (before or {}).get("rows", [])}
    out = ["| regime | delta | seeds | helps, this test | helps, the whole-sweep test it "
           "replaced | harms (wrong side), this test | harms, the replaced test | helps, "
           "true best configs known (no selection) | lost to selection (known - this test) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] != "power":
            continue
        o = old.get((r["regime"], r["seeds"], -r["estimand"]))
        known = r.get("helps_oracle")
        lost = f"{known['rate'] - r['helps']['rate']:+.3f}" if known else "not measured"
        out.append(f"| {r['regime']} | {-r['estimand']:g} | {r['seeds']} | {_rate(r['helps'])} "
                   f"| {_rate(o['helps_test_alone']) if o else 'not measured'} "
                   f"| {_rate(r['harms'])} "
                   f"| {_rate(o['harms_test_alone']) if o else 'not measured'} "
                   f"| {_rate(known) if known else 'not measured'} | {lost} |")
    return out


def _cells(s: dict | None) -> str:
    return (f"{s['mean_true_power']:.3f} ± {s['se']:.3f} | {s['share_below_080']:.2f}" if s
            else "not measured | ")


def _power(s: dict | None) -> str:
    return f"{s['mean_true_power']:.3f}" if s else "not measured"


def _planning_rows(rows: list[dict]) -> list[str]:
    out = ["| regime | seeds | benches | figure before issue 49 item 4 (median) | its mean true "
           "power ± SE | previous figure's (helps side only, chi-square bound) | figure now "
           "(median) | its mean true power, helps ± SE | share below 0.8 | the idea worse by "
           "it: harms found ± SE | share below 0.8 |", "|---|---|---|---|---|---|---|---|---|---|"
           "---|"]
    for r in sorted(rows, key=lambda r: (r["seeds"], r["regime"])):
        before = (f"{r['median_mde_before']:.4f} | {r['before']['mean_true_power']:.3f} ± "
                  f"{r['before']['se']:.3f}" if "before" in r else "not measured | ")
        if "harms" not in r:  # a row the previous code wrote: its figure is the previous one
            out.append(f"| {r['regime']} | {r['seeds']} | {r['benches']} | {before} | "
                       f"{_power(r['after'])} | not re-measured | | | | |")
            continue
        out.append(f"| {r['regime']} | {r['seeds']} | {r['benches']} | {before} | "
                   f"{_power(r.get('previous_after'))} | {r['median_mde_after']:.4f} | "
                   f"{_cells(r['after'])} | {_cells(r['harms'])} |")
    return out


def _needed_rows(rows: list[dict]) -> list[str]:
    out = ["| regime | seeds | true effect | benches (simulated) | seeds_needed now (median) | "
           "mean true power, every simulated bench ± SE | benches whose figure is <= 40 seeds: "
           "power now ± SE (benches) | the previous code's, <= 40 seeds |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r.get("seeds_needed")
        if not n or "simulated" not in n:
            continue
        low, prev = n["at_most_40"], n.get("previous_at_most_40")
        out.append(f"| {r['regime']} | {r['seeds']} | {n['effect']:g} | {n['benches']} "
                   f"({n['simulated']}) | {n['median_after']:g} | "
                   f"{n['after']['mean_true_power']:.3f} ± {n['after']['se']:.3f} | "
                   f"{low['mean_true_power']:.3f} ± {low['se']:.3f} "
                   f"({n['benches_at_most_40']}) | "
                   f"{_power(prev)} |")
    return out


def planning_section(pp: dict, pn: dict | None) -> str:
    """The planning figures' true power, before issue 49's item 4, at the previous figure and
    now, both sides (planning_power.json; ``pn``: planning_power_needed.json, seeds_needed's)."""
    rows = pp["rows"]
    worst = min(min(r["after"]["mean_true_power"], r["harms"]["mean_true_power"])
                for r in rows if "harms" in r)
    text = f"""### Planning figures of the test that decides (issue 49 items 3-4)

`mde_power80` is meant to be the effect the deciding test finds 80% of the time. Before issue
49's item 4 it was the binding paired test's figure alone (the sd's 70% chi-square bound): that
test ignores what the idea's tuning costs it against fixed comparator configs. The previous
figure added the idea's bootstrapped tuning loss (mean to the effect, spread to the sd) at the
sd's 80% chi-square bound, the helps side only. Now the sd bound is the larger of the
chi-square bound and Bonett's kurtosis-adjusted one, and each side counts its tuned arm's loss
(helps: the idea's; harms: the comparator's), the figure being the larger side's
(docs/statistics.md). On the regimes above, A/A benches (the idea as the regime says, no
effect): each bench's figure through the report's functions
(`verdict.decision.planning_figures` after `compare_arms`), and its true power: the share of
{rows[0]['fresh_per_bench']} fresh benches of the regime, the idea better by that figure at
every config, that the compare stage calls helps, and the share of as many with the idea worse
by it called harms; averaged over the benches (`PYTHONPATH=. python
benchmarks/calibration/planning_power.py --seeds 8 12 --benches {rows[0]['benches']}`, one
invocation per row, merged in planning_power.json; the earlier figures' columns are carried
from the rows they replaced). The lowest mean true power now, either side, is {worst:.3f}
(target >= 0.78):

{chr(10).join(_planning_rows(rows))}"""
    prev = [r for r in rows if r.get("harms_previous")]
    if prev:
        text += "\n\nThe harms side at the previous figure (the comparator's loss not counted; " \
            "`--previous`): " + "; ".join(
                f"{r['regime']}, {r['seeds']} seeds: {r['harms_previous']['mean_true_power']:.3f}"
                f" ± {r['harms_previous']['se']:.3f} (now {r['harms']['mean_true_power']:.3f})"
                for r in prev) + "."
    needed = _needed_rows((pn or {}).get("rows", []))
    if len(needed) > 2:
        text += f"""

`seeds_needed` the same way: each bench's figure for a true effect (as if the observed delta
were that effect), and the share of {rows[0]['fresh_per_bench']} fresh benches with that many
seeds and that effect called helps ({"; ".join(f"`{c}`" for c in (pn or {}).get("commands", []))
or "`planning_power.py --needed-benches`"}, rows merged in planning_power_needed.json). Every
bench whose figure is at most 200 seeds is simulated (the rest, whose figure is larger, are
counted in the benches column only). The previous measurement kept only benches whose figure
was at most 40 seeds; the column for those shows that a small figure is more often a low sd
estimate, most under skew:

{chr(10).join(needed)}"""
        short = [r["regime"] for r in (pn or {}).get("rows", [])
                 if r.get("seeds_needed") and r["seeds_needed"]["after"]["mean_true_power"] < 0.78]
        if short:
            text += (f"\n\nWhere the mean true power is below 0.78 ({', '.join(short)}) "
                     "`seeds_needed` is still optimistic: not fixed.")
    return text


PLANNING_BENCHES = 30


def _plugin_rows(rows: list[dict], alpha: float) -> list[str]:
    out = ["| regime | kind | seeds | helps | harms | within alpha + 2 SE | planning figure: "
           "mean true power (benches) |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["seeds"], r["kind"], r["regime"])):
        both = _ok(r["helps"], alpha) == _ok(r["harms"], alpha) == "yes"
        ok = ("yes" if both else "**no**") if r["kind"] == "level" else ""
        pl = r.get("planning")
        plan = f"{pl['mean_true_power']:.3f} ({pl['benches']})" if pl else ""
        if pl and "harms_mean_true_power" in pl:
            plan += f"; harms {pl['harms_mean_true_power']:.3f}"
        elif pl:
            plan += " (the previous figure)"
        out.append(f"| {r['regime']} | {r['kind']} | {r['seeds']} | {_rate(r['helps'])} | "
                   f"{_rate(r['harms'])} | {ok} | {plan} |")
    return out


def _commands(plugin: dict) -> str:
    """The invocations that wrote the plugin rows, where the file lists them."""
    cmds = plugin.get("commands") or []
    if not cmds:
        return ""
    return " (the rows with a planning figure: " + "; ".join(f"`{c}`" for c in cmds) + ")"


def section(data: dict) -> str:
    cf = data["crossfit"]
    alpha, noise = cf["alpha"], cf["noise"]
    text = f"""## Arms that differ: the selection-aware test (issue 49, `benchkit.stats.selection`)

The estimand (docs/statistics.md): the idea's best config's expected test metric minus the
comparator's best config's; the test, an intersection-union of paired sign-flip tests of the
idea (each seed at the configs it selects on the other seeds) against every comparator config,
and the mirror. Regimes (`benchmarks/calibration/crossfit_regimes.py`): the comparator's three
configs have true means {', '.join(f'{m:g}' for m in cf['means'])} (lower is better), seed
effect sd {noise['seed_sd']:g} shared by every run of a seed, validation noise sd
{noise['val_sd']:g}, test noise sd {noise['test_sd']:g}; the idea as the regime says (A/A: the
same; flat A/A: both arms flat; lr-blind: one run repeated at every lr, at the comparator's
best mean; + 1e-12: plus a 1e-12 wobble; clamped lr: its configs 2 and 3 the same run; 10x less
lr-sensitive; pair grid: four (lr, wd) pairs; noisier idea: 3x the noise; heavy tails: t(3)
noise; skewed idea: centred lognormal(0, 1) test noise, 3x; different optimum: its best lr the
comparator's worst). In every level regime both arms' best configs have the same true mean, so
each helps or harms is false. Compare stage (`verdict.comparison.compare_arms` with the arms'
sweeps, the report's path), {cf['reps']:,} benches per row, alpha {alpha:g}, Clopper-Pearson 95%
intervals, {cf['seconds']:.0f} s
(`PYTHONPATH=. python benchmarks/calibration/crossfit_calibration.py --reps {cf['reps']}`):

{chr(10).join(_level_rows(cf['rows'], alpha))}

Power: the idea better by delta than the comparator's best config (lr-blind: one run at every
lr; different optimum: the idea's lr curve reversed and moved by delta; A/A: moved by delta at
every config). The replaced test's column is the same draws through the whole-sweep
permutation test before issue 49 without its effective-grid rule (the audit's "plain
selection-aware test"; `crossfit_calibration.py` run with that checkout first on PYTHONPATH,
written to crossfit_calibration_before.json):

{chr(10).join(_power_rows(cf['rows'], data.get('crossfit_before')))}

An lr-insensitive idea better than the comparator's best config is found more often than by the
replaced test (which its effective-grid rule then refused outright). Where the arms' best
configs differ, a small effect is found less often: the idea pays its own tuning loss against
the comparator's best config, the price of a claim that holds without exchangeable arms (the
replaced test counted the comparator's tuning loss as the idea's gain, and called some of those
ideas harms). The last two columns measure that price: the plain sign-flip test of both arms at
their true best configs, known before the bench (no selection at all), is the most any test of
this estimand could find; what this test finds less is what selecting the configs on the
bench's own validation costs. In the level table the skewed idea comes closest to the bound, on its helps side
alone: the sign-flip test's null is symmetry, not a zero mean (docs/statistics.md), and a
skewed difference with mean 0 is not symmetric."""
    plugin = data.get("crossfit_plugin")
    if plugin and plugin.get("rows"):
        text += f"""

Through the plugin (`benchmarks/calibration/crossfit_plugin.py`: bench modules whose runs
record these regimes' values, one pytest session per row, verdicts read from the written
reports; 200 modules a row unless the helps column says otherwise). The planning column: at
each of the first benches' own `mde_power80` as the report gives it, the share of 100 fresh
simulated benches of the regime with the idea better by that figure that the compare stage
calls helps, averaged, and (today's figure) with the idea worse by it called harms; the
figures of the first {PLANNING_BENCHES} modules are rerun alone by `--kinds planning` (the same
modules; the modules run on tabular without its floors, which enter no verdict). A row's draws are seeded by its regime's place in the invocation's
`--regimes`, so each row is reproduced by the invocation that wrote it{_commands(plugin)}:

{chr(10).join(_plugin_rows(plugin['rows'], alpha))}"""
    if data.get("planning_power"):
        text += "\n\n" + planning_section(data["planning_power"], data.get("planning_needed"))
    return text
