"""``python -m benchkit leaderboard``: the boards of :mod:`benchkit.verdict.leaderboard` as a
terminal table, a JSON file and a plot."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from benchkit.report import plots
from benchkit.report.fmt import pct, signed
from benchkit.spec.idea import cfg_id
from benchkit.verdict.leaderboard import BOOTSTRAP, Leaderboard


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def render(result: Leaderboard) -> list[str]:
    """The terminal lines: a table per board, then the ideas not placed."""
    lines: list[str] = []
    for k, b in enumerate(result.boards, 1):
        how = "Holm" if b.adjustment == "holm" else "Benjamini-Hochberg (FDR)"
        lines.append(f"board {k}: {b.track}, {b.metric} ({b.direction}), baseline "
                     f"{cfg_id(b.baseline.config)} on seeds {b.baseline.seeds}; "
                     f"{b.family_size} idea(s), {how}-adjusted p, alpha {b.alpha:g}")
        rows = [("rank", "idea", "delta", "interval (confidence)", "wins", "p", "p_adjusted",
                 "verdict")]
        for r in b.ideas:
            lo, hi = r.interval
            rows.append((str(r.rank), r.name, signed(r.delta_mean),
                         f"[{signed(lo) if lo is not None else '-inf'}, "
                         f"{signed(hi) if hi is not None else '+inf'}] "
                         f"({pct(100 * (1 - r.interval_level))})",
                         f"{r.idea_wins}/{r.n_pairs}",
                         _num(r.p_value), _num(r.p_adjusted),
                         r.verdict + (" (exploratory)" if r.exploratory else "")))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        table = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines += ["  " + table[0], "  " + "-" * len(table[0]), *("  " + t for t in table[1:])]
        lines += [f"  note: {n}" for n in b.notes]
        lines.append("")
    lines.append("delta: idea - baseline, the mean over seeds of the test metric, as in the "
                 "reports (negative is better where lower is better); interval: the test's at "
                 "the level the verdict was decided at (alpha x p / p_adjusted), excluding 0 "
                 "exactly when the verdict is helps or harms; wins: seeds the idea is better")
    if any(r.exploratory for b in result.boards for r in b.ideas):
        lines.append("(exploratory): the idea's report is exploratory (its plan was changed or "
                     "overridden); its verdict here does not count either")
    if result.aggregate:
        lines += ["", "across tracks (improvement / |baseline mean| per track, mean over tracks: "
                  "positive is better whatever each metric's direction, so not a delta; "
                  f"95% paired bootstrap intervals, {BOOTSTRAP} resamples; descriptive):"]
        for a in result.aggregate:
            lo, hi = a.interval
            plo, phi = a.poi_interval
            lines.append(f"  {a.name} ({', '.join(a.tracks)}): normalised improvement "
                         f"{a.normalised_improvement:+.4g} [{lo:+.4g}, {hi:+.4g}], probability "
                         f"of improvement {a.probability_of_improvement:.3g} "
                         f"[{plo:.3g}, {phi:.3g}]")
    for u in result.unplaced:
        lines.append(f"not placed: {u.name} on {u.track} ({u.report}): {u.reason}")
    return lines


def write_json(result: Leaderboard, path: str | Path) -> None:
    Path(path).write_text(json.dumps(result.to_json(), indent=2, allow_nan=False) + "\n",
                          encoding="utf-8")


TITLE_WIDTH = 70   # characters of a panel title's line: 9-point text across the 7-inch figure


def titles(result: Leaderboard) -> list[str]:
    """Each board's panel title: its number and baseline as the terminal's ``board k`` line
    names them (two boards of one track differ there), wrapped to fit the panel."""
    return [textwrap.fill(f"board {k}: {b.track}, baseline {cfg_id(b.baseline.config)} "
                          f"on {len(b.baseline.seeds)} seeds", TITLE_WIDTH)
            for k, b in enumerate(result.boards, 1)]



def plot(result: Leaderboard, path: str | Path) -> str | None:
    """Per-idea paired intervals, one panel per board; a note instead when matplotlib is
    missing (an optional extra)."""
    mpl = plots.matplotlib_classes()
    if mpl is None:
        return plots.MISSING
    figure_cls, canvas_cls = mpl
    boards = result.boards
    if not boards:
        return "no board to plot"
    heads = titles(result)
    fig = figure_cls(figsize=(7, 1.2 + 0.45 * sum(len(b.ideas) + 1 + t.count("\n")
                                                  for b, t in zip(boards, heads))))
    canvas_cls(fig)
    axes = fig.subplots(len(boards), 1, squeeze=False)[:, 0]
    for ax, b in zip(axes, boards):
        ideas = b.ideas[::-1]
        for y, r in enumerate(ideas):
            lo, hi = r.interval
            m = r.delta_mean
            ax.plot([m if lo is None else lo, m if hi is None else hi], [y, y], color="0.3")
            ax.plot([m], [y], "o", color={"helps": "tab:green", "harms": "tab:red"}.get(
                r.verdict, "0.5"))
        ax.axvline(0, color="0.7", lw=0.8)
        ax.set_yticks(range(len(ideas)), [f"{r.rank}. {r.name}" for r in ideas])
        ax.set_xlabel(f"idea - baseline, test {b.metric} ({b.direction})", fontsize=8)
    for ax, title in zip(axes, heads):
        ax.set_title(title, fontsize=9)
    fig.suptitle("each idea's delta (dot) and the test's interval at the level its verdict was "
                 "decided at", fontsize=8)
    fig.tight_layout()
    # the format named: matplotlib would otherwise write PATH.png for a PATH without suffix
    fig.savefig(path, format=Path(path).suffix[1:].lower() or "png")
    return None
