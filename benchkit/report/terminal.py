"""The terminal summary table: one row per idea x track, at most :data:`WIDTH` columns wide.

A row leads with the comparison that decided the verdict (the baseline, or the control the
idea did worst against), with the baseline's beside it when a control decided; configs, means
and per-point figures are in summary.md. Its warnings follow, each saying what it means for the
verdict and what to do (:mod:`benchkit.report.advice`).
"""
from __future__ import annotations

from pathlib import Path

from benchkit.report.advice import warning_lines
from benchkit.report.fmt import mechanism_word, readable, sig
from benchkit.report.sentences import decided_p, deciding, not_run, system_word, verdict_against
from benchkit.report.reading import floor_gap, tested_level
from benchkit.verdict.records import Comparison, Report

WIDTH = 120
COLUMNS = ("idea", "track", "verdict", "decided by", "delta", "wins", "p", "MDE",
           "vs baseline", "mech")
SHRINK = ("idea", "decided by", "track")   # cut to fit WIDTH, the widest first


def _delta(comp: Comparison) -> str:
    return sig(comp.delta_mean if comp.median_delta is None else comp.median_delta, sign=True)


def _p(comp: Comparison, verdict: str | None) -> str:
    return sig(decided_p(comp, verdict))


def row(r: Report) -> tuple[str, ...]:
    verdict = (f'{r.practical_verdict}/{system_word(r)}'
               + (" (exploratory)" if r.exploratory else ""))
    mech = mechanism_word(r.mechanism_ok)
    against, comp, _ = deciding(r)
    base = r.comparison
    if comp is None or base is None:
        return (r.name, r.track, "incomplete", "-", "-", "-", "-", "-", "-", mech)
    beside = ("-" if against == "baseline"
              else f"{_delta(base)}, p {_p(base, verdict_against(r, 'baseline'))}")
    level = tested_level(comp)
    p = _p(comp, r.practical_verdict) + ("" if level == comp.alpha
                                         else f" (level {sig(level)})")
    return (r.name, r.track, verdict, against, _delta(comp),
            f'{comp.idea_wins}/{comp.n_pairs}', p, sig(comp.mde), beside, mech)


def notes(r: Report) -> list[str]:
    """What a row cannot say: a frontier's figures are means over its points; a baseline no
    better than its track's best floor (a trivial model: an own track's too), whose comparisons
    then say little."""
    gap = floor_gap(r)
    below = [] if gap is None or gap[3] > 0 else [
        f"benchkit: WARNING {r.name} {r.track}: the baseline's test mean {sig(gap[2])} is "
        f"no better than the track's best floor, {gap[0]} ({sig(gap[1])}): a trained baseline "
        "should beat it; tune the baseline or the track (summary.md, Floors)"]
    front = r.frontier
    if not front or r.comparison is None:
        return below
    values = ", ".join(sig(v) if isinstance(v, float) else str(v) for v in front.values)
    return [f"benchkit: {r.name} {r.track}: a frontier over {front.axis} ({values}): "
            "every arm at each point; delta, wins and p are of the mean over the points "
            "(each point in summary.md)"] + below


def _fit(table: list[tuple[str, ...]], width: int) -> tuple[list[int], int]:
    """(column widths, gap): two spaces between columns, one when that is what fits, then the
    widest of the columns in :data:`SHRINK` cut one character at a time (none below 8)."""
    widths = [max(len(str(t[i])) for t in table) for i in range(len(COLUMNS))]
    gap = 2 if sum(widths) + 2 * (len(widths) - 1) <= width else 1
    cut = [COLUMNS.index(name) for name in SHRINK]
    while sum(widths) + gap * (len(widths) - 1) > width:
        i = max(cut, key=lambda j: widths[j])
        if widths[i] <= 8:
            break
        widths[i] -= 1
    return widths, gap


def _cell(text: str, w: int) -> str:
    text = str(text)
    return text.ljust(w) if len(text) <= w else text[:w - 1] + "~"


def render(rows: list[tuple[str, ...]], width: int = WIDTH) -> list[str]:
    table = [COLUMNS, *rows]
    widths, gap = _fit(table, width)
    lines = [(" " * gap).join(_cell(c, w) for c, w in zip(t, widths)).rstrip() for t in table]
    lines.insert(1, (" " * gap).join("-" * w for w in widths))
    return lines


Written = list[tuple[Path, Report]]   # each report written, and where


def render_summary(written: Written, root: Path) -> list[str]:
    if not written:
        return []
    lines = render([row(r) for _, r in written])
    lines.append(where(written, root))
    for _, r in written:
        lines += notes(r) + warning_lines(r)
        if r.incomplete:
            inc = r.incomplete
            absent, failed = not_run(r), inc.failed
            lines.append(f"benchkit: INCOMPLETE {r.name} {r.track}: "
                         f"{'; '.join(map(readable, inc.reasons))}"
                         + (f"; not run: {', '.join(absent[:8])}"
                            f"{' ...' if len(absent) > 8 else ''}" if absent else "")
                         + (f"; {len(failed)} failed (listed in summary.md)" if failed else ""))
    return lines


def where(written: Written, root: Path) -> str:
    """One line saying where the reports and their companions are."""
    laid_out = all(Path(p).parent.parts[-2:] == (r.name, r.track) for p, r in written)
    places = sorted({_shown(Path(p).parent.parent.parent, root) + "/<idea>/<track>/"
                     if laid_out else _shown(Path(p).parent, root) + "/" for p, r in written})
    return (f"benchkit: reports in {', '.join(places)} (bench_report.json; summary.md with every "
            "figure and the per-seed table; paired.png, sweep.png)")


def _shown(path: Path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)
