"""The section of docs/calibration.md on the selection-aware test, rendered from
benchmarks/results/selection_calibration.json (``selection_calibration.py``); part of
``calibration.py --doc`` (calibration_doc.render appends it), so tests/stats/test_calibration.py
checks it with the rest of the document.
"""
from __future__ import annotations

import math

import simstats  # benchmarks/stats/, put on sys.path by calibration.py

FILE = "selection_calibration.json"


def _rate(r: dict) -> str:
    lo, hi = simstats.clopper_pearson(r["count"], r["n"])
    return f"{r['count']}/{r['n']} = {r['rate']:.3f} [{lo:.3f}, {hi:.3f}]"


def _bound(alpha: float, n: int) -> float:
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / n)


def _within(r: dict, alpha: float) -> str:
    return "yes" if r["rate"] <= _bound(alpha, r["n"]) else "**no**"


def section(sel: dict) -> str:
    sim, plugin, training = sel.get("simulation"), sel.get("plugin"), sel.get("training")
    parts = ["""## Selection varying: the selection-aware test (`benchkit.stats.selection`)

Measured with the test that issue 49 replaced (it redid both arms' selections under every flip
of the seeds' whole sweeps); the test that decides now is measured in "Arms that differ" below.
The runs above never varied the selection (both arms chose lr = 0.01 in every block); `benchmarks/calibration/selection_calibration.py` measures it where the
selection does vary: A/A benches (the same method in both arms, so every helps or harms is a
false positive) on three configs whose true means differ slightly (0, 0.01, 0.02; lower is
better). "fixed configs" is the test that holds the selected configs fixed (the plain
sign-flip test of their differences, what benchkit decided by before); "selection-aware" is the
test benchkit decides by now. Rates at alpha 0.05 with Clopper-Pearson 95% intervals; a rate
is within when it is at most alpha + 2 SE."""]
    if sim:
        alpha, reps = sim["alpha"], sim["reps"]
        regimes = "; ".join(
            f"**{name}**: seed effect sd {r['seed_sd']:g} (shared by the arms), run-to-run sd "
            f"{r['run_sd']:g} (shared by a run's validation and test), validation noise sd "
            f"{r['val_sd']:g}, test noise sd {r['test_sd']:g}" for name, r in sim["regimes"].items())
        rows = [r for r in sim["rows"] if r["effect_sd"] == 0]
        table = ["| regime | seeds | fixed configs | selection-aware | within |",
                 "|---|---|---|---|---|"]
        table += [f"| {r['regime']} | {r['seeds']} | {_rate(r['fixed_configs'])} | "
                  f"{_rate(r['selection_aware'])} | {_within(r['selection_aware'], alpha)} |"
                  for r in rows]
        power = ["| regime | seeds | effect (sd) | fixed configs | selection-aware |",
                 "|---|---|---|---|---|"]
        power += [f"| {r['regime']} | {r['seeds']} | {r['effect_sd']:g} | "
                  f"{_rate(r['fixed_configs'])} | {_rate(r['selection_aware'])} |"
                  for r in sim["rows"] if r["effect_sd"] > 0]
        margin = ["| regime | seeds | margin | level | false non-inferior | within |",
                  "|---|---|---|---|---|---|"]
        margin += [f"| {m['regime']} | {m['seeds']} | {m['margin']:g} | {m['level']:g} | "
                   f"{_rate(m['false_non_inferior'])} | "
                   f"{_within(m['false_non_inferior'], m['level'])} |"
                   for m in sim.get("margin", [])]
        parts += [f"""### In simulation ({reps:,} benches per cell, {sim['seconds']:.0f} s)

Two regimes: {regimes}. Under the null (A/A):""", "\n".join(table),
                  f"""Every selection-aware rate is within alpha + 2 SE
({_bound(alpha, reps):.4f}): {'yes' if all(_within(r['selection_aware'], alpha) == 'yes'
                                           for r in rows) else '**no**'}. Holding the
selected configs fixed errs far above alpha where validation picks configs by accident (the
first regime) and below it where a run good on validation is good on test (the second).""",
                  """Power: the idea better by 0.5 and 1 sd (the sd of one config's per-seed test
difference between the arms) on every config, validation and test; a detection is a helps
(the right direction) at alpha:""", "\n".join(power),
                  """Where the fixed-config test errs above alpha its "power" includes those
errors, so the comparison there is not like for like; where it is conservative (run-to-run)
the selection-aware test is also the more powerful one.""",
                  """Non-inferiority exactly at the margin (the idea's whole sweep 5% worse, lower
is better), `selection.noninferiority` with the sweep shifted by the margin: a non-inferior
verdict is a false positive:""", "\n".join(margin)]
    if plugin:
        hh = plugin["helps_or_harms"]
        parts.append(f"""### Through the plugin ({plugin['benches']} A/A idea modules, {plugin['seconds']:.0f} s)

{plugin['benches']} idea modules whose arms `run.record` values of the first regime above
({plugin['seeds']} seeds, lr 0.001, 0.003, 0.01, `extend=0`), run in one pytest session and read
back from their reports: helps or harms in {_rate(hh)} (at most alpha + 2 SE =
{_bound(plugin['alpha'], plugin['benches']):.3f}: {_within(hh, plugin['alpha'])}); the arms
selected different configs in {plugin['selection_differs']} of {plugin['benches']}, and the
reports' `p_fixed_configs`, the p of the fixed-config test, is below alpha in
{_rate(plugin['fixed_configs_p_below_alpha'])}. Verdicts: {', '.join(
            f'{k} {v}' for k, v in plugin['verdicts'].items())}.""")
    if training:
        parts.append(f"""### Real training ({training['benches']} A/A benches, {training['seconds']:.0f} s)

The `tabular` track's default grid ({', '.join(f"lr {c['lr']:g}" for c in training['grid'])}),
{training['epochs']} epochs, {training['seeds']} seeds per bench, the idea the baseline with
another initialisation stream (`calibration.py`'s runs): the arms selected different configs in
{training['selection_differs']} of {training['benches']} (at the default grid and epochs the
configs rarely compete, so here the two tests mostly coincide); fixed configs
{_rate(training['fixed_configs'])}, selection-aware {_rate(training['selection_aware'])}
(within alpha + 2 SE: {_within(training['selection_aware'], training['alpha'])});
{_precision(training)}""")
    return "\n\n".join(parts)


def _precision(training: dict) -> str:
    """How far the real-training rate is resolved: a 95% half-width of 0.02 at alpha needs
    about 450 benches."""
    n, per = training["benches"], training["seconds"] / training["benches"]
    half = 1.96 * (training["alpha"] * (1 - training["alpha"]) / n) ** 0.5
    if n >= 450:
        return f"{n} benches give a 95% half-width of about {half:.3f} at alpha ({per:.0f} s a bench)."
    return (f"{n} benches give a 95% half-width of about {half:.3f} at alpha; +-0.02 needs about 450 "
            f"(about {450 * per / 60:.0f} minutes at {per:.0f} s a bench), not run.")
