"""Human-facing companions of a ``bench_report.json``: ``summary.md`` beside it, always, and
the plots of :mod:`benchkit.report.plots` when matplotlib is installed (``pip install
benchkit[plot]``).

Pure Python: reads the report dict only, never torch.
"""
from __future__ import annotations

import sys
from pathlib import Path

from benchkit.report import plots
from benchkit.report.advice import warnings_for_people
from benchkit.report.bench_report import is_finite
from benchkit.report import summary_checks  # budgets, controls, frontier, mechanism
from benchkit.report.fmt import (cfg_text, interval_text, markdown_cell, markdown_table,
                                 mechanism_word, num, pct, readable, rel_pct, signed)
from benchkit.report.sentences import (deciding_interval, mechanism_sentence, missing_evidence,
                                       not_run, practical_sentence, system_sentence)
from benchkit.store import atomic
from benchkit.report.reading import floor_gap, paired_values, tested_level
from benchkit.verdict.build import direction_of

SUMMARY_NAME = "summary.md"
MAX_LISTED = 20  # missing/failed runs listed by name before "... and N more"

_printed_notes: set[str] = set()


# -- markdown helpers ---------------------------------------------------------------------
def _better(delta: float, direction: str) -> bool:
    return delta < 0 if direction == "lower" else delta > 0


def _seed_word(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


# -- sections ---------------------------------------------------------------------------------
def _protocol_lines(report: dict) -> list[str]:
    proto = report.get("protocol") or {}
    seeds = proto.get("seeds")
    grid = proto.get("grid")
    lines = ["## Protocol", ""]
    lines.append(f"- track `{report.get('track')}`, model `{report.get('model')}`, metric "
                 f"`{report.get('metric', proto.get('metric', 'metric'))}` "
                 f"({report.get('metric_direction')})")
    if seeds is not None:
        lines.append(f"- seeds: {len(seeds)} paired seeds ({', '.join(map(str, seeds))}); both "
                     "arms of a seed see the same data and minibatch order")
    else:
        lines.append(f"- seeds: {report.get('n_seeds')}")
    if grid is not None:
        lines.append(f"- grid: {'; '.join(cfg_text(c) for c in grid)}; each arm runs every config "
                     "on every seed (equal tuning budget)")
    train = [f"{k} {proto[k]}" for k in ("epochs", "optimizer", "batch_size") if k in proto]
    if train:
        lines.append("- training: " + ", ".join(train).replace("batch_size", "batch size"))
    conv = report.get("convergence") or {}
    if conv.get("budget"):
        lines.append("- epochs: " + ("a fixed budget" if conv["budget"] == "fixed" else
                                     "meant to converge") + ", as the track declares"
                     + (f" ({conv['budget_reason']})" if conv.get("budget_reason") else ""))
    checks = [f"{arm.removeprefix('control:')} {_check_text(a)}"
              for arm, a in (conv.get("arms") or {}).items() if a.get("budget_check")]
    if checks:
        lines.append("- budget check (the selected config trained longer; validation): "
                     + "; ".join(checks))
    if proto.get("selection"):
        lines.append(f"- selection: {proto['selection']}")
    if proto.get("test"):
        lines.append(f"- test: {proto['test']}, alpha {num(proto.get('alpha'), 'g')}")
    if proto.get("margin") is not None:
        lines.append(f"- margin: {pct(100 * proto['margin'])} of the baseline mean")
    base_cfg = (report.get("baseline") or {}).get("best_cfg")
    if report.get("frontier") and base_cfg is not None:
        lines.append(f"- selected: each arm's config at each {report['frontier']['axis']} point "
                     "(see Frontier)")
    elif base_cfg is not None or report.get("idea_config") is not None:
        lines.append(f"- selected: baseline {_cfg(base_cfg)}, "
                     f"idea {_cfg(report.get('idea_config'))}")
    return lines + [""]


def _check_text(arm: dict) -> str:
    c = arm["budget_check"]
    if c["pending"] or c["gain"] is None:
        return f"at {c['epochs']} epochs {'pending' if c['pending'] else 'not measurable'}"
    gain = f"{pct(100 * abs(c['gain']))} " + (
        "better" if c["gain"] > 0 else "worse" if c["gain"] < 0 else "no better")
    if "decision" not in c:  # reports before the sequential check: a median
        return (f"at {c['epochs']} epochs {gain} (median of {c['seeds']} seeds): "
                f"{'still improving' if arm['still_improving'] else 'trained out'}")
    bounds = (f", one-sided {100 * (1 - c['level']):.0f}% bounds of the gain "
              f"{pct(100 * c['lower'])} to {pct(100 * c['upper'])}"
              if c.get("lower") is not None else "")
    return f"at {c['epochs']} epochs {gain} (mean of {c['seeds']} seeds{bounds}): {c['decision']}"


def floor_lines(report: dict) -> list[str]:
    """The track's floors and how far the baseline's test mean is from the best of them (in
    the metric's direction, as a percentage of the floor); nothing without floors, and on a
    frontier only why they are left out (:func:`benchkit.report.reading.floor_gap`)."""
    floors = {k: v for k, v in (report.get("floors") or {}).items() if is_finite(v)}
    if not floors:
        return []
    if report.get("frontier"):
        return ["## Floors", "", f"- left out: on the frontier over "
                f"`{report['frontier']['axis']}` every arm's figure is a mean over points at "
                "other budgets, not one model trained at the track's protocol as the floors "
                "are (bench_report.json keeps them)", ""]
    lines = ["## Floors", "", "- baselines fitted on the same seeds' train splits, test "
             "metric averaged over the seeds: " + ", ".join(f"{k} {num(v)}" for k, v in
                                                           floors.items())]
    gap = floor_gap(report)
    if gap is not None:
        best, value, base, gain = gap
        lines.append(f"- the baseline ({num(base)}) is {rel_pct(gain, value)} "
                     f"{'better' if gain > 0 else 'worse' if gain < 0 else 'no better'} than "
                     f"the best floor, {best} ({num(value)})")
    return lines + [""]


def _cfg(cfg) -> str:
    return "-" if cfg is None else f"`{cfg_text(cfg)}`"


def _per_seed_lines(report: dict) -> list[str]:
    """Seed by seed: the idea against the arm that decided the verdict (a control, when one
    did), then against the baseline."""
    comp = report["comparison"]
    direction = direction_of(report)
    seeds, base, idea, diffs = paired_values(report)
    control = _deciding_control(report)
    rows = []
    for k, (s, b, i, d) in enumerate(zip(seeds, base, idea, diffs)):
        who = "tie" if d == 0 else ("idea" if _better(d, direction) else "baseline")
        row = [s, num(i)]
        if control is not None:
            c = control["full"]["per_seed"][k]
            row += [num(c), signed(i - c)]
        rows.append(row + [num(b), signed(d), who])
    mean = ["**mean**", num(report["idea"]["mean"])]
    if control is not None:
        cc = control["comparison"]
        mean += [num(control["full"]["mean"]), signed(cc["delta_mean"])]
    rows.append(mean + [num(report["baseline"]["full"]["mean"]), signed(comp["delta_mean"]),
                        f"idea wins {comp['idea_wins']}/{comp['n_pairs']}"])
    header = ["seed", "idea"]
    if control is not None:
        name = control["arm"].removeprefix("control:")
        header += [f"{name} (decided)", f"diff (idea - {name})"]
    header += ["baseline", "diff (idea - baseline)", "better than baseline"]
    metric = report.get("metric", "metric")
    return ([f"## Per seed (test {metric}, selected configs)", ""]
            + markdown_table(header, rows)
            + ["", f"{report.get('metric_direction', '').capitalize()}: a "
               f"{'negative' if direction == 'lower' else 'positive'} diff means the idea won "
               "that seed.", ""])


def _deciding_control(report: dict) -> dict | None:
    """The control arm whose comparison decided the verdict, with per-seed values, or None."""
    name = str(report.get("decided_by") or "")
    control = (report.get("controls") or {}).get(name.removeprefix("control:"))
    if not name.startswith("control:") or control is None:
        return None
    per_seed = (control.get("full") or {}).get("per_seed") or []
    return control if len(per_seed) == len(report["idea"]["per_seed"]) else None


def _comparison_lines(report: dict) -> list[str]:
    comp = report["comparison"]
    base_mean = report["baseline"]["full"]["mean"]
    direction = direction_of(report)
    n = comp["n_pairs"]
    lines = ["## Comparison", ""]
    delta = comp["delta_mean"]
    word = ("the idea is better" if _better(delta, direction) else
            "the idea is worse" if delta else "the arms are equal")
    lines.append(f"- delta (idea - baseline): {signed(delta)} ({rel_pct(delta, base_mean)} of the "
                 f"baseline mean {num(base_mean)}; {word} on average)")
    if comp.get("verdict"):
        lines.append(f"- `comparison.verdict` \"{comp['verdict']}\" is the reference format's "
                     "words for the verdict against the baseline: helps is \"idea better "
                     "(significant)\", harms \"idea worse (significant)\", any other verdict "
                     "\"no significant win\"; `practical_verdict` above is the verdict")
    own = deciding_interval(comp)
    if own:
        test = "sign test" if own["of"] == "median" else "sign-flip test"
        lines.append(f"- {pct(100 * own['confidence'])} interval of the {own['of']} difference "
                     f"(idea - baseline): {interval_text(own)}; it inverts the {test} at the level "
                     f"the verdict was decided at ({num(1 - own['confidence'])}), so it excludes "
                     "0 exactly when the result is significant (`comparison.ci95`)")
    if comp.get("test") == "sign":
        lines.append(f"- p = {comp['p_value']:.4g} (two-sided exact sign test; its null: on a "
                     "seed the idea is as likely better as worse, i.e. the median difference is "
                     f"0), tested at level {num(tested_level(comp))}; the mean sign-flip test "
                     f"gives p = {comp['p_mean']:.4g}")
    else:
        lines.append(f"- p = {comp['p_value']:.4g} (two-sided paired sign-flip permutation "
                     "test; its null: each seed's difference is as likely to have either sign, "
                     f"i.e. the differences are symmetric about 0), tested at level "
                     f"{num(tested_level(comp))}")
    if comp.get("selection_aware") and comp.get("p_fixed_configs") is not None:
        lines.append(f"- the p above counts the selection: the idea, each seed at the configs "
                     f"selected on the other seeds, against every config of the comparator; "
                     f"with the selected configs held fixed it would be "
                     f"{comp['p_fixed_configs']:.4g}")
    if (comp.get("family_size") or 1) > 1 and comp.get("p_adjusted") is not None:
        lines.append(f"- p_adjusted = {comp['p_adjusted']:.4g} (Holm over the idea's "
                     f"{comp['family_size']} tracks; the verdict uses this one)")
    fut = (report.get("sequential") or {}).get("futility")
    if fut and fut["conditional_power"] is not None:
        lines.append(f"- futility (non-binding, futility={fut['threshold']:g}): the last look "
                     f"({report['sequential']['max_seeds']} seeds) finds the idea better with "
                     f"probability {fut['conditional_power']:.3g} if the effect so far is the "
                     f"true one: {'stop' if fut['stop'] else 'continue'}")
    if comp.get("effect_size") is not None:
        lines.append(f"- effect size (Cohen's dz): {comp['effect_size']:.3g}")
    lines.append(f"- MDE: {num(comp.get('mde'))} absolute, {pct(comp.get('mde_rel_pct'))} of the "
                 "baseline mean (paired t, reference format: the smallest mean difference a "
                 "t-test on these seeds would call significant)")
    ni = comp.get("noninferiority")
    if ni:
        lines.append(f"- non-inferiority (margin {pct(100 * ni['margin_rel'])} = "
                     f"{num(ni.get('margin_abs'))}): one-sided bound of the delta "
                     f"{signed(ni.get('bound'))}, p = {num(ni.get('p_value'), '.3g')}, "
                     f"{'non-inferior' if ni.get('non_inferior') else 'not shown non-inferior'}")
    eq = comp.get("equivalence")
    if eq:
        lines.append(f"- equivalence (margin {pct(100 * eq['margin_rel'])} either way = "
                     f"{num(eq.get('margin_abs'))}): one-sided sign-flip p = "
                     f"{num(eq.get('p_worse'), '.3g')} (worse), {num(eq.get('p_better'), '.3g')}"
                     f" (better) at level {num(eq.get('level'))}, "
                     f"{'equivalent' if eq.get('equivalent') else 'not shown equivalent'}")
    if report.get("practical_verdict") in ("inconclusive", "non-inferior"):
        plan = comp.get("planning") or {}
        at = (f"the {str(plan.get('test') or 'sign-flip test').split(' (')[0]} at level "
              f"{num(plan.get('level'))}")
        suffix = "_mean_test" if "mde_power80_mean_test" in comp else ""  # sign, wilcoxon
        p80 = comp.get("mde_power80" + suffix)
        if p80:
            lines.append(f"- power: a true effect of {num(p80)} ({rel_pct(p80, base_mean)} of the "
                         f"baseline) would be detected 80% of the time by {at} with "
                         f"{_seed_word(n)}; smaller true effects are usually missed")
        elif plan and n < plan["min_seeds"]:
            lines.append(f"- power: none: {at} needs {plan['min_seeds']} seeds or more before "
                         "any p can be below it")
        needed = comp.get("seeds_needed" + suffix)
        if needed is not None:
            lines.append(f"- seeds needed (post hoc): detecting a true effect as large as the "
                         f"observed delta ({signed(delta)}) with 80% power by {at} would take "
                         f"about {needed} seeds (this bench used {n}); a planning figure: "
                         f"{str(plan.get('assumption')).removeprefix('planning figure: ')}. "
                         "Seeds are declared before the first look (seeds= or looks= in "
                         "pytest.mark.bench): raising seeds= now makes the next session "
                         "exploratory until --bench-fresh retrains every run under the new plan")
        elif delta == 0:
            lines.append("- seeds needed: the observed delta is exactly 0, so no number of "
                         "seeds would make it significant")
        else:
            lines.append("- seeds needed: more than 10000 seeds (or undefined: zero spread) to "
                         "detect the observed delta with 80% power")
    return lines + [""]


def _sweep_lines(report: dict) -> list[str]:
    sweeps = {"baseline": (report.get("baseline") or {}).get("sweep"),
              "idea": report.get("idea_sweep")}
    selected = {"baseline": (report.get("baseline") or {}).get("best_cfg"),
                "idea": report.get("idea_config")}
    rows = []
    for arm, sweep in sweeps.items():
        for entry in sweep or []:
            note = "selected" if entry.get("cfg") == selected[arm] else "-"
            if entry.get("eligible") is False:
                div = entry.get("diverged_seeds") or []
                note = (f"not eligible: diverged on seed(s) {', '.join(map(str, div))}" if div
                        else "not eligible: runs missing")
            rows.append([arm, f"`{cfg_text(entry['cfg'])}`", num(entry.get("val_mean")),
                         num(entry.get("mean")), note])
    if not rows:
        return []
    return (["## Sweep (means over seeds)", ""]
            + markdown_table(["arm", "config", "val mean", "test mean", "note"], rows) + [""])


def _incomplete_lines(report: dict) -> list[str]:
    inc = report.get("incomplete") or {}
    lines = ["## Incomplete: no verdict", "",
             "This comparison lacks runs, so benchkit computed no statistics and no verdict "
             "(it never compares on silently fewer pairs).", ""]
    for reason in inc.get("reasons", []):
        lines.append(f"- {readable(reason)}")
    missing = not_run(inc)
    if missing:
        lines += ["", f"Runs not run (none stored) ({len(missing)}):", ""]
        lines += [f"- `{m}`" for m in missing[:MAX_LISTED]]
        if len(missing) > MAX_LISTED:
            lines.append(f"- ... and {len(missing) - MAX_LISTED} more")
    failed = inc.get("failed") or []
    if failed:
        lines += ["", f"Failed runs ({len(failed)}):", ""]
        lines += [f"- `{f['run']}`: {markdown_cell(f.get('message') or 'failed')}"
                  for f in failed[:MAX_LISTED]]
        if len(failed) > MAX_LISTED:
            lines.append(f"- ... and {len(failed) - MAX_LISTED} more")
    return lines + [""]


def _runs_lines(report: dict) -> list[str]:
    runs = report.get("runs") or []
    env = report.get("environment") or {}
    if not runs and not env:
        return []
    lines = ["## Runs and environment", ""]
    if runs:
        diverged = sum(1 for r in runs if r.get("diverged"))
        reused = sum(1 for r in runs if r.get("reused"))
        seconds = sum(r.get("seconds") or 0.0 for r in runs)
        lines.append(f"- {len(runs)} runs recorded ({diverged} diverged, {reused} reused from "
                     f"the run store), {seconds:.1f} s of training in total")
    if env:
        lines.append("- " + ", ".join(f"{k} {v}" for k, v in env.items()))
    return lines + [""]


def render_summary_md(report: dict) -> str:
    """The report as a page for people: claim, protocol, per-seed table, statistics, mechanism
    evidence, verdicts in words, warnings; for an incomplete report, what is missing."""
    name, track = report.get("name", "?"), report.get("track", "?")
    complete = report.get("comparison") is not None
    lines = [f"# {name} on {track}", ""]
    if report.get("claim"):
        lines += [f"> **Claim:** {report['claim']}", ""]
    lines += ["## Verdict", "",
              f"- **practical: {report.get('practical_verdict')}**: "
              f"{practical_sentence(report)}.",
              f"- **system: {report.get('system_verdict')}**: {system_sentence(report)}"
              + (" (`failed` is the reference format's word: here it means not shown, for want "
                 "of evidence, not evidence against the idea)." if missing_evidence(report)
                 else "."),
              f"- **mechanism_ok: {mechanism_word(report.get('mechanism_ok'))}**: "
              f"{mechanism_sentence(report)}.", ""]
    if report.get("exploratory"):
        lines[-1:-1] = ["- **exploratory**: " + "; ".join(report["exploratory"]["reasons"])
                        + ". This session is not a look of the declared plan: its verdicts "
                        "are descriptive only and every gate fails."]
    meta = [f"module `{report['module']}`" if report.get("module") else None,
            f"written {report['created']}" if report.get("created") else None,
            f"bench_version {report.get('bench_version')}"]
    lines += ["_" + ", ".join(m for m in meta if m) + "_", ""]
    warnings = warnings_for_people(report)
    if warnings:
        lines += ["## Warnings", ""] + [f"- **{w}**" for w in warnings] + [""]
    if not complete:
        lines += _incomplete_lines(report)
    lines += _protocol_lines(report)
    lines += floor_lines(report)
    if complete:
        lines += _per_seed_lines(report)
        lines += _comparison_lines(report)
    lines += summary_checks.fairness_lines(report)
    lines += _sweep_lines(report)
    lines += summary_checks.mechanism_lines(report, mechanism_sentence(report))
    lines += _runs_lines(report)
    return "\n".join(lines).rstrip() + "\n"


# -- writing ----------------------------------------------------------------------------------
def _note(text: str, echo: bool) -> str:
    """Print a note to stderr once per process (a session writes many reports)."""
    if echo and text not in _printed_notes:
        _printed_notes.add(text)
        # leading newline: in a pytest session this lands after the unterminated progress line
        print(f"\nbenchkit: {text}", file=sys.stderr)
    return text


def write_companions(path, report: dict, *, echo: bool = True,
                     plots_current: bool = False) -> list[str]:
    """Write ``summary.md`` (always) and ``paired.png``/``sweep.png`` (when matplotlib is
    installed and the report has a comparison) beside the report at ``path``. With
    ``plots_current`` (the report did not change) existing plots are kept as they are.

    Never raises: the report itself is already written, so a problem here becomes a one-line
    note, returned (and printed to stderr once per process when ``echo``). Returns the notes;
    an empty list means everything was written."""
    path = Path(path)
    notes: list[str] = []
    try:
        drawn = all((path.parent / name).is_file() for name, _ in plots.PLOTS)
        # an unchanged report (a rerun that reused every run) keeps its plots: no redraw
        plot_note = None if plots_current and drawn else plots.write_plots(path.parent, report)
    except Exception as exc:  # a plotting problem must not break the session that benched
        plot_note = f"plots not drawn for {path}: {type(exc).__name__}: {exc}"
    if plot_note:   # an incomplete report says so itself: no note on the terminal for it
        notes.append(_note(plot_note, echo and report.get("comparison") is not None))
    try:
        text = render_summary_md(report)
    except Exception as exc:
        notes.append(_note(f"{not_written(path)}: {type(exc).__name__}: {exc}", echo))
        return notes
    if plot_note:
        text += f"\n## Plots\n\n_Not drawn: {plot_note}._\n"
    else:
        text += "\n## Plots\n\n" + "\n\n".join(f"![{title}]({name})"
                                              for name, title in plots.PLOTS) + "\n"
    try:
        atomic.write_atomic(path.parent / SUMMARY_NAME, text)
    except OSError as exc:   # an unwritable folder, a directory named summary.md
        notes.append(_note(f"{not_written(path)}: {exc.strerror or exc}", echo))
    return notes


def not_written(path) -> str:
    """The start of the note saying the summary.md beside the report at ``path`` was not
    written (``render`` tells it from the plots' notes by it)."""
    return f"{Path(path).parent / SUMMARY_NAME} not written"
