"""Human-facing companions of a ``bench_report.json``: ``summary.md`` beside it, always, and
the plots of :mod:`benchkit.report.plots` when matplotlib is installed (``pip install
benchkit[plot]``).

Pure Python: reads the report's record only, never torch.
"""
from __future__ import annotations

import sys
from pathlib import Path

from benchkit.report import plots
from benchkit.report.advice import warnings_for_people
from benchkit.report.bench_report import is_finite
from benchkit.report import summary_checks  # budgets, controls, frontier, mechanism
from benchkit.report.summary_stats import better, comparison_lines
from benchkit.report.fmt import (cfg_text, markdown_cell, markdown_table,
                                 mechanism_word, num, pct, readable, rel_pct, signed)
from benchkit.report.sentences import (mechanism_sentence, missing_evidence,
                                       not_run, practical_sentence, system_sentence)
from benchkit.store import atomic
from benchkit.report.reading import floor_gap, paired_values
from benchkit.verdict.records import ControlArm, Report
from benchkit.verdict.sections import ArmConvergence, SweepRow

SUMMARY_NAME = "summary.md"
MAX_LISTED = 20  # missing/failed runs listed by name before "... and N more"

_printed_notes: set[str] = set()


# -- sections ---------------------------------------------------------------------------------
def _protocol_lines(report: Report) -> list[str]:
    proto = report.protocol
    seeds = proto.get("seeds")
    grid = proto.get("grid")
    lines = ["## Protocol", ""]
    # the report knows the track's default model, not what each arm's test built (a module
    # may train another model, as the pruning ideas do): never name it as the arms' model
    lines.append(f"- track `{report.track}`, metric `{report.metric}` "
                 f"({report.metric_direction}); the track's default model is `{report.model}`, "
                 "which an arm trains only where its test builds it")
    if seeds is not None:
        lines.append(f"- seeds: {len(seeds)} paired seeds ({', '.join(map(str, seeds))}); both "
                     "arms of a seed see the same data and minibatch order")
    else:
        lines.append(f"- seeds: {report.n_seeds}")
    if grid is not None:
        lines.append(f"- grid: {'; '.join(cfg_text(c) for c in grid)}; each arm runs every config "
                     "on every seed (equal tuning budget)")
    train = [f"{k} {proto[k]}" for k in ("epochs", "optimizer", "batch_size") if k in proto]
    if train:
        lines.append("- training: " + ", ".join(train).replace("batch_size", "batch size"))
    conv = report.convergence
    if conv.budget:
        lines.append("- epochs: " + ("a fixed budget" if conv.budget == "fixed" else
                                     "meant to converge") + ", as the track declares"
                     + (f" ({conv.budget_reason})" if conv.budget_reason else ""))
    checks = [f"{arm.removeprefix('control:')} {_check_text(a)}"
              for arm, a in conv.arms.items() if a.budget_check]
    if checks:
        lines.append("- budget check (the selected config trained longer; validation): "
                     + "; ".join(checks))
    if proto.get("selection"):
        lines.append(f"- selection: {proto['selection']}")
    if proto.get("test"):
        lines.append(f"- test: {proto['test']}, alpha {num(proto.get('alpha'), 'g')}")
    if proto.get("margin") is not None:
        lines.append(f"- margin: {pct(100 * proto['margin'])} of the baseline mean")
    base_cfg = report.baseline.best_cfg
    if report.frontier and base_cfg is not None:
        lines.append(f"- selected: each arm's config at each {report.frontier.axis} point "
                     "(see Frontier)")
    elif base_cfg is not None or report.idea_config is not None:
        lines.append(f"- selected: baseline {_cfg(base_cfg)}, "
                     f"idea {_cfg(report.idea_config)}")
    return lines + [""]


def _check_text(arm: ArmConvergence) -> str:
    c = arm.budget_check
    assert c is not None   # the arms with a check only
    if c.pending or c.gain is None:
        return f"at {c.epochs} epochs {'pending' if c.pending else 'not measurable'}"
    gain = f"{pct(100 * abs(c.gain))} " + (
        "better" if c.gain > 0 else "worse" if c.gain < 0 else "no better")
    if c.decision is None:  # reports before the sequential check: a median
        return (f"at {c.epochs} epochs {gain} (median of {c.seeds} seeds): "
                f"{'still improving' if arm.still_improving else 'trained out'}")
    bounds = (f", one-sided {100 * (1 - c.level):.0f}% bounds of the gain "
              f"{pct(100 * c.lower)} to {pct(100 * c.upper)}"
              if c.lower is not None and c.upper is not None and c.level is not None else "")
    return f"at {c.epochs} epochs {gain} (mean of {c.seeds} seeds{bounds}): {c.decision}"


def floor_lines(report: Report) -> list[str]:
    """The track's floors and how far the baseline's test mean is from the best of them (in
    the metric's direction, as a percentage of the floor); nothing without floors, and on a
    frontier only why they are left out (:func:`benchkit.report.reading.floor_gap`)."""
    floors = {k: v for k, v in (report.floors or {}).items() if is_finite(v)}
    if not floors:
        return []
    if report.frontier:
        return ["## Floors", "", f"- left out: on the frontier over "
                f"`{report.frontier.axis}` every arm's figure is a mean over points at "
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


def _per_seed_lines(report: Report) -> list[str]:
    """Seed by seed: the idea against the arm that decided the verdict (a control, when one
    did), then against the baseline."""
    comp, idea_full, base_full = report.comparison, report.idea, report.baseline.full
    assert comp is not None and idea_full is not None and base_full is not None   # complete
    direction = report.direction
    seeds, base, idea, diffs = paired_values(report)
    control = _deciding_control(report)
    rows = []
    for k, (s, b, i, d) in enumerate(zip(seeds, base, idea, diffs)):
        who = "tie" if d == 0 else ("idea" if better(d, direction) else "baseline")
        row = [s, num(i)]
        if control is not None:
            c = control.full.per_seed[k]
            row += [num(c), signed(i - c)]
        rows.append(row + [num(b), signed(d), who])
    mean = ["**mean**", num(idea_full.mean)]
    if control is not None:
        mean += [num(control.full.mean), signed(control.comparison.delta_mean)]
    rows.append(mean + [num(base_full.mean), signed(comp.delta_mean),
                        f"idea wins {comp.idea_wins}/{comp.n_pairs}"])
    header = ["seed", "idea"]
    if control is not None:
        name = control.arm.removeprefix("control:")
        header += [f"{name} (decided)", f"diff (idea - {name})"]
    header += ["baseline", "diff (idea - baseline)", "better than baseline"]
    return ([f"## Per seed (test {report.metric}, selected configs)", ""]
            + markdown_table(header, rows)
            + ["", f"{report.metric_direction.capitalize()}: a "
               f"{'negative' if direction == 'lower' else 'positive'} diff means the idea won "
               "that seed.", ""])


def _deciding_control(report: Report) -> ControlArm | None:
    """The control arm whose comparison decided the verdict, with per-seed values, or None."""
    name = report.decided_by or ""
    control = report.controls.get(name.removeprefix("control:"))
    if not name.startswith("control:") or control is None or report.idea is None:
        return None
    return control if len(control.full.per_seed) == len(report.idea.per_seed) else None


def _sweep_lines(report: Report) -> list[str]:
    sweeps: dict[str, tuple[SweepRow, ...]] = {"baseline": report.baseline.sweep,
                                               "idea": report.idea_sweep}
    selected = {"baseline": report.baseline.best_cfg, "idea": report.idea_config}
    rows = []
    for arm, sweep in sweeps.items():
        for entry in sweep:
            note = "selected" if entry.cfg == selected[arm] else "-"
            if entry.eligible is False:
                div = entry.diverged_seeds
                note = (f"not eligible: diverged on seed(s) {', '.join(map(str, div))}" if div
                        else "not eligible: runs missing")
            rows.append([arm, f"`{cfg_text(entry.cfg)}`", num(entry.val_mean),
                         num(entry.mean), note])
    if not rows:
        return []
    return (["## Sweep (means over seeds)", ""]
            + markdown_table(["arm", "config", "val mean", "test mean", "note"], rows) + [""])


def _incomplete_lines(report: Report) -> list[str]:
    inc = report.incomplete
    lines = ["## Incomplete: no verdict", "",
             "This comparison lacks runs, so benchkit computed no statistics and no verdict "
             "(it never compares on silently fewer pairs).", ""]
    for reason in inc.reasons if inc else ():
        lines.append(f"- {readable(reason)}")
    missing = not_run(report)
    if missing:
        lines += ["", f"Runs not run (none stored) ({len(missing)}):", ""]
        lines += [f"- `{m}`" for m in missing[:MAX_LISTED]]
        if len(missing) > MAX_LISTED:
            lines.append(f"- ... and {len(missing) - MAX_LISTED} more")
    failed = inc.failed if inc else ()
    if failed:
        lines += ["", f"Failed runs ({len(failed)}):", ""]
        lines += [f"- `{f.run}`: {markdown_cell(f.message or 'failed')}"
                  for f in failed[:MAX_LISTED]]
        if len(failed) > MAX_LISTED:
            lines.append(f"- ... and {len(failed) - MAX_LISTED} more")
    return lines + [""]


def _runs_lines(report: Report) -> list[str]:
    runs, env = report.runs, report.environment
    if not runs and not env:
        return []
    lines = ["## Runs and environment", ""]
    if runs:
        diverged = sum(1 for r in runs if r.diverged)
        reused = sum(1 for r in runs if r.reused)
        seconds = sum(r.seconds or 0.0 for r in runs)
        lines.append(f"- {len(runs)} runs recorded ({diverged} diverged, {reused} reused from "
                     f"the run store), {seconds:.1f} s of training in total")
    if env:
        lines.append("- " + ", ".join(f"{k} {v}" for k, v in env.items()))
    return lines + [""]


def render_summary_md(report: Report) -> str:
    """The report as a page for people: claim, protocol, per-seed table, statistics, mechanism
    evidence, verdicts in words, warnings; for an incomplete report, what is missing."""
    complete = report.comparison is not None
    lines = [f"# {report.name} on {report.track}", ""]
    if report.claim:
        lines += [f"> **Claim:** {report.claim}", ""]
    lines += ["## Verdict", "",
              f"- **practical: {report.practical_verdict}**: "
              f"{practical_sentence(report)}.",
              f"- **system: {report.system_verdict}**: {system_sentence(report)}"
              + (" (`failed` is the reference format's word: here it means not shown, for want "
                 "of evidence, not evidence against the idea)." if missing_evidence(report)
                 else "."),
              f"- **mechanism_ok: {mechanism_word(report.mechanism_ok)}**: "
              f"{mechanism_sentence(report)}.", ""]
    if report.exploratory:
        lines[-1:-1] = ["- **exploratory**: " + "; ".join(report.exploratory.reasons)
                        + ". This session is not a look of the declared plan: its verdicts "
                        "are descriptive only and every gate fails."]
    meta = [f"module `{report.module}`" if report.module else None,
            f"written {report.created}" if report.created else None,
            f"bench_version {report.bench_version}"]
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
        lines += comparison_lines(report)
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


def write_companions(path, report: Report, *, echo: bool = True,
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
        notes.append(_note(plot_note, echo and report.comparison is not None))
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
