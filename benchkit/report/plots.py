"""Plots beside a report: ``paired.png`` (each seed's baseline -> idea) and ``sweep.png`` (both
arms over the grid). matplotlib is optional (``pip install benchkit[plot]``) and imported
lazily; figures are drawn on the Agg canvas directly (no pyplot, no global backend switch),
laid out and written with one render each (:mod:`benchkit.report.render`).
"""
from __future__ import annotations

import math
from pathlib import Path

from benchkit.report.fmt import cfg_text, pct, sig
from benchkit.report.render import DPI, axes_title, keep_inside, save_png
from benchkit.report.sentences import (decided_p, deciding, deciding_interval, system_word,
                                       verdict_against)
from benchkit.report.reading import paired_values
from benchkit.verdict.records import Comparison, Report
from benchkit.verdict.sections import SweepRow

PLOTS = (("paired.png", "paired seeds"), ("sweep.png", "grid sweep"))
MISSING = "matplotlib is not installed, so no plots were drawn (pip install 'benchkit[plot]')"
COLORS = {"baseline": "#1f77b4", "idea": "#d9641c"}
CONTROL_COLORS = ("#6a3d9a", "#2a7f62", "#8c564b", "#b8860b")
WIN, LOSS, TIE = "#2a9d4f", "#c0392b", "#888888"


def matplotlib_classes():
    """(Figure, FigureCanvasAgg), or None when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401  (the top-level import is the availability test)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None
    return Figure, FigureCanvasAgg


def available() -> bool:
    return matplotlib_classes() is not None


def _t975(n: int) -> float:
    from scipy import special

    return float(special.stdtrit(n - 1, 0.975))


def _mean_ci(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% t interval (0 for a single value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, _t975(n) * sd / math.sqrt(n)


def _spans_decades(values) -> bool:
    """A log axis reads better: every value positive and the largest 20x the smallest or more
    (on a linear axis the smaller arm would be squashed flat)."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) >= 20


def _seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def _ylabel(report: Report) -> str:
    return f"test {report.metric} ({report.metric_direction})"


def _title(report: Report, what: str) -> str:
    return f"{report.name} on {report.track}: {what}"


def _wrapped(text: str, inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``inches`` at ``fontsize`` points (about 0.6 em a
    character): a user's long metric, idea or track name must not run off the figure."""
    import textwrap

    width = max(12, int(inches * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(line, width, break_long_words=True) if line else line
                     for line in text.split("\n"))


# -- paired.png ---------------------------------------------------------------------------
def _arm_label(report: Report, arm: str, cfg) -> str:
    """An x tick label: the arm and its selected config (a frontier selects one per point)."""
    front = report.frontier
    if front:
        return f"{arm}\n(mean over {len(front.values)} {front.axis} points)"
    return f"{arm}\n{cfg_text(cfg)}"


def _won(d: float, direction: str) -> bool:
    return d < 0 if direction == "lower" else d > 0


def interval_of(comp: Comparison) -> tuple[list, str]:
    """The interval drawn around the difference and its legend label: the deciding test's
    own at the level the verdict was decided at (:func:`deciding_interval`, the report's one
    interval); ``[None, None]`` (nothing drawn) for a comparison without one."""
    own = deciding_interval(comp)
    if own is None:
        return [None, None], ""
    return [own.lo, own.hi], f"{own.of}, test's {pct(100 * own.confidence)} interval"


def _diff_panel(axd, diffs, comp, direction, other: str, decided: bool,
                verdict: str | None) -> None:
    """The per-seed differences idea - ``other``, their mean's interval and the ±MDE band."""
    n = len(diffs)
    jitter = [(k - (n - 1) / 2) * (0.5 / max(n, 1)) for k in range(n)]
    colors = [TIE if d == 0 else (WIN if _won(d, direction) else LOSS) for d in diffs]
    mde = comp.mde
    if mde:
        axd.axhspan(-mde, mde, color="#999999", alpha=0.15, lw=0, label=f"±MDE ({sig(mde)})")
    axd.axhline(0, color="k", lw=0.8)
    axd.scatter(jitter, diffs, c=colors, s=22, zorder=2, gid=f"diffs:{other}")
    ci, label = interval_of(comp)
    delta = comp.delta_mean
    center = (delta if comp.median_delta is None else comp.median_delta) \
        if label.startswith("median") else delta
    if None not in ci:  # a selection-aware interval need not hold the mean: no negative bar
        axd.errorbar([0.55], [center], yerr=[[max(center - ci[0], 0.0)],
                                             [max(ci[1] - center, 0.0)]],
                     fmt="D", color="k", ms=7, capsize=6, lw=2, zorder=3, label=label)
        axd.vlines(0.55, ci[0], ci[1], color="k", lw=2, zorder=3)
    axd.set_xlim(-0.5, 0.9)
    axd.set_xticks([])
    axd.grid(axis="y", alpha=0.3)
    p = decided_p(comp, verdict)
    p_txt = f"p {sig(p)}" + ("" if p == comp.p_value else " (adj.)")
    axes_title(axd, f"idea - {other}{' (decided)' if decided else ''}\n"
                    f"Δ {sig(delta, sign=True)}, {p_txt}", fontsize=9,
               fontweight="bold" if decided else "normal")
    if axd.get_legend_handles_labels()[0]:  # no MDE band and no interval: no legend
        axd.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7.5, frameon=False)


def figure_paired(report: Report, mpl=None):
    """The comparison that decided the verdict, seed by seed: each seed a line from the deciding
    arm's value (the baseline, or the control the idea did worst against) to the idea's, the
    arms' means with 95% error bars; beside it a panel of the per-seed differences for that
    comparison and, when a control decided, one for the baseline comparison."""
    Figure, _ = mpl or matplotlib_classes()
    direction = report.direction
    seeds, base, idea, base_diffs = paired_values(report)
    name, comp, control = deciding(report)
    assert comp is not None and report.comparison is not None   # drawn for complete reports
    other_cfg: dict | None
    if control is not None:
        other, other_cfg = list(control.full.per_seed), control.best_cfg
        diffs = [i - c for i, c in zip(idea, other)]
    else:
        other, other_cfg, diffs = base, report.baseline.best_cfg, base_diffs

    panels = 3 if control is not None else 2
    fig = Figure(figsize=(10.4 if control is not None else 8.6, 5.4), dpi=DPI)
    axes = fig.subplots(1, panels, width_ratios=[3] + [1.25] * (panels - 1))
    ax = axes[0]
    fig.subplots_adjust(left=0.08, right=0.985, bottom=0.22, top=0.80, wspace=0.42)
    counts = {WIN: 0, LOSS: 0, TIE: 0}
    for o, i, d in zip(other, idea, diffs):
        color = TIE if d == 0 else (WIN if _won(d, direction) else LOSS)
        counts[color] += 1
        ax.plot([0, 1], [o, i], color=color, alpha=0.75, lw=1.6, marker="o", ms=4, zorder=2,
                gid="seed")
    colors = {name: COLORS["baseline"] if control is None else CONTROL_COLORS[0],
              "idea": COLORS["idea"]}
    for x, vals, arm, dx in ((0, other, name, -0.14), (1, idea, "idea", 0.14)):
        mean, half = _mean_ci(vals)
        ax.errorbar([x + dx], [mean], yerr=[half], fmt="D", ms=8, color=colors[arm],
                    capsize=6, lw=2.2, zorder=3)
        ax.annotate(sig(mean), (x + dx, mean), xytext=(10 if dx > 0 else -10, 0),
                    textcoords="offset points", va="center",
                    ha="left" if dx > 0 else "right", fontsize=9, color=colors[arm])
    ax.set_xlim(-0.6, 1.6)
    ax.set_xticks([0, 1], labels=[
        _arm_label(report, name if control is None else f"control {name}", other_cfg),
        _arm_label(report, "idea", report.idea_config)], fontsize=9)
    log = _spans_decades(list(other) + list(idea))
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(_wrapped(_ylabel(report) + (" (log scale)" if log else ""), 3.0, 10))
    ax.grid(axis="y", alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=color, lw=1.6, marker="o", ms=4,
                      label=f"{what} ({_seeds(counts[color])})")
               for color, what in ((WIN, "idea better"), (LOSS, "idea worse"), (TIE, "tie"))
               if counts[color]]
    handles.append(Line2D([], [], color="k", marker="D", ls="", ms=7,
                          label="arm mean ± 95% CI"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2),
              ncols=len(handles), fontsize=8, frameon=False)  # below: never over the data
    axes_title(ax, f"{len(seeds)} paired seeds, idea vs {'control ' if control else ''}{name}",
               fontsize=10)
    _diff_panel(axes[1], diffs, comp, direction, name, decided=True,
                verdict=report.practical_verdict)
    axes[1].set_ylabel(f"idea - other arm ({'negative' if direction == 'lower' else 'positive'}"
                       " = idea better)", fontsize=9)
    if control is not None:
        _diff_panel(axes[2], base_diffs, report.comparison, direction, "baseline",
                    decided=False, verdict=verdict_against(report, "baseline"))
    fig.suptitle(_wrapped(f"{_title(report, 'paired seeds')}: {report.practical_verdict}"
                          f" / {system_word(report)}\ndecided by the comparison with "
                 f"{'the control ' + name if control is not None else 'the baseline'}"
                 + (f" (mean over the {report.frontier.axis} points)"
                    if report.frontier else ""), fig.get_figwidth() - 0.4, 10.5),
                 fontsize=10.5)
    keep_inside(fig)
    return fig


def plot_paired(report: Report, path, mpl=None) -> None:
    save_png(figure_paired(report, mpl), Path(path))


# -- sweep.png ----------------------------------------------------------------------------
def _sweep_arms(report: Report) -> dict[str, tuple[tuple[SweepRow, ...], dict | None]]:
    """arm -> (its sweep entries, its selected config or None when selected per point)."""
    arms = {"baseline": (report.baseline.sweep, report.baseline.best_cfg),
            "idea": (report.idea_sweep, report.idea_config)}
    for name, c in report.controls.items():
        arms[f"control {name}"] = (c.sweep, c.best_cfg)
    if report.frontier:   # selected per point: found again below, per panel
        arms = {arm: (sweep, None) for arm, (sweep, _) in arms.items()}
    return arms


def _x_key(cfgs: list[dict]) -> str | None:
    """The numeric key the sweep runs along: ``lr`` when the grid varies it, else the numeric
    key with the most values; None when no key is numeric."""
    numeric = [k for k in cfgs[0] if all(isinstance(c.get(k), (int, float))
                                         and not isinstance(c.get(k), bool) for c in cfgs)]
    varied = sorted(numeric, key=lambda k: (k != "lr", -len({c[k] for c in cfgs})))
    return varied[0] if varied else None


def _group(cfg: dict, key) -> tuple:
    return tuple((k, v) for k, v in cfg.items() if k != key)


def _selected_in(sweep: list[SweepRow], direction: str):
    """The config an arm selects among ``sweep`` entries (best validation mean of the eligible
    ones, the first on a tie: the report's rule), or None."""
    ok = [(e.val_mean, e.cfg) for e in sweep if e.eligible and e.val_mean is not None]
    if not ok:
        return None
    best = (min if direction == "lower" else max)(v for v, _ in ok)
    return next(cfg for v, cfg in ok if v == best)


def figure_sweep(report: Report, mpl=None):
    """Every arm's validation (dashed) and test (solid) means over the grid, controls included,
    along its numeric axis (lr where the grid varies it) in ascending order; a panel for each
    value of the other keys (a frontier's points), so no line joins different values of them.
    Each arm's selected config is ringed on its validation mean."""
    Figure, _ = mpl or matplotlib_classes()
    arms = _sweep_arms(report)
    cfgs = []
    for sweep, _ in arms.values():
        cfgs += [e.cfg for e in sweep if e.cfg not in cfgs]
    key = _x_key(cfgs)
    groups = list(dict.fromkeys(_group(c, key) for c in cfgs))
    direction = report.direction
    per_point = {(_group(cfg, key), arm): cfg   # the report's choice
                 for p in (report.frontier.points if report.frontier else ())
                 for arm, cfg in (("baseline", p.baseline_cfg), ("idea", p.idea_cfg)) if cfg}
    legend_in = 0.9 + 0.065 * max(len(f"{arm} test") for arm in arms)   # its widest label
    width = 1.0 + 3.6 * len(groups) + legend_in
    fig = Figure(figsize=(width, 5.0), dpi=DPI)
    axes = fig.subplots(1, len(groups), sharey=True, squeeze=False)[0]
    right = 1 - (legend_in + 0.1) / width
    fig.subplots_adjust(left=0.9 / width, right=right, bottom=0.14, top=0.84, wspace=0.08)
    palette = {"baseline": COLORS["baseline"], "idea": COLORS["idea"]}
    for k, arm in enumerate(a for a in arms if a not in palette):
        palette[arm] = CONTROL_COLORS[k % len(CONTROL_COLORS)]
    values = []
    for ax, group in zip(axes, groups):
        for arm, (sweep, best) in arms.items():
            entries = [e for e in sweep if _group(e.cfg, key) == group]
            if key is not None:
                entries.sort(key=lambda e: e.cfg[key])
            xs = [e.cfg[key] if key is not None else cfgs.index(e.cfg) for e in entries]
            chosen = (best if best is not None else per_point.get((group, arm))
                      or _selected_in(entries, direction))
            for field, style, marker, split in (("val_mean", "--", "s", "val"),
                                                ("mean", "-", "o", "test")):
                ys = [math.nan if getattr(e, field) is None else getattr(e, field)
                      for e in entries]
                values += [v for v in ys if not math.isnan(v)]
                ax.plot(xs, ys, ls=style, marker=marker, color=palette[arm], lw=1.7, ms=4.5,
                        label=f"{arm} {split}", gid=f"{arm}|{split}|{group}")
            ring = [(x, e.val_mean) for x, e in zip(xs, entries) if e.cfg == chosen
                    and e.val_mean is not None]
            if ring:
                ax.plot(*ring[0], marker="o", ms=14, mfc="none", mec=palette[arm], mew=2.0,
                        ls="", zorder=3, gid=f"selected|{arm}|{group}")
                note = edge_note(report, arm)
                if note:
                    ax.annotate(note, ring[0], xytext=(0, -20), textcoords="offset points",
                                color=palette[arm], fontsize=7.5, ha="center", va="top")
            for x, e in zip(xs, entries):
                if e.eligible is False:
                    ax.annotate("not eligible", (x, 0.02), xycoords=("data", "axes fraction"),
                                color=palette[arm], fontsize=7.5, ha="center", rotation=90,
                                va="bottom")
        if group:
            axes_title(ax, cfg_text(dict(group)), fontsize=9.5)
        _sweep_x(ax, key, sorted({c[key] for c in cfgs}) if key else list(range(len(cfgs))),
                 cfgs)
        ax.grid(alpha=0.3)
    if _spans_decades(values):
        axes[0].set_yscale("log")
    axes[0].set_ylabel(_wrapped(f"{report.metric} mean over {report.n_seeds} seeds "
                                f"({report.metric_direction})", 3.0, 10))
    from matplotlib.lines import Line2D

    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(Line2D([], [], marker="o", ms=11, mfc="none", mec="k", mew=2, ls="",
                          label="selected config\n(on its val mean)"))
    fig.legend(handles=handles, fontsize=8, frameon=False, loc="upper left",
               bbox_to_anchor=(right + 0.1 / width, 0.84))  # beside the axes, never over them
    fig.suptitle(_wrapped(_title(report, "grid sweep") + "\nval dashed, test solid; each arm's "
                          "config is selected on validation, never on test", width - 0.4, 10.5),
                 fontsize=10.5)
    keep_inside(fig)
    return fig


def _sweep_x(ax, key, ticks, cfgs) -> None:
    """The x axis: the key's values (log for lr or a wide positive range), labelled with 3
    significant digits; the grid config's index when no key is numeric."""
    if key is None:
        ax.set_xticks(ticks, labels=[cfg_text(c) for c in cfgs], rotation=30, ha="right",
                      fontsize=7.5)
        ax.set_xlabel("grid config")
        return
    log = all(v > 0 for v in ticks) and (key == "lr" or max(ticks) / min(ticks) >= 10)
    if log:
        ax.set_xscale("log")
    ax.set_xticks(ticks, labels=[sig(v) for v in ticks], fontsize=8,
                  rotation=30 if len(ticks) > 4 else 0, ha="right" if len(ticks) > 4 else "center")
    ax.minorticks_off()
    ax.set_xlabel(key + (" (log scale)" if log else ""))


def edge_note(report: Report, arm: str) -> str | None:
    """The label of an arm's selection still at a grid edge after the extension limit
    (``grid_extensions.at_edge``), or None."""
    ext = report.grid_extensions
    sides = [f"{e.side} edge of {e.axis}" for e in ext.at_edge if e.arm == arm]
    return (f"at the {', '.join(sides)}\n(extend={ext.limit})") if sides else None


def plot_sweep(report: Report, path, mpl=None) -> None:
    save_png(figure_sweep(report, mpl), Path(path))


# -- both ---------------------------------------------------------------------------------
def _remove_stale(folder: Path) -> None:
    """Plots of an earlier run of the same report would show other data: remove them."""
    for name, _ in PLOTS:
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass


def write_plots(folder, report: Report) -> str | None:
    """Draw ``paired.png`` and ``sweep.png`` into ``folder``. Returns None when both were
    written, else a one-line note saying why not (no exception for a missing matplotlib)."""
    folder = Path(folder)
    mpl = matplotlib_classes()
    if mpl is None:
        _remove_stale(folder)
        return MISSING
    if report.comparison is None:
        _remove_stale(folder)
        return "no plots for an incomplete report (no comparison to draw)"
    plot_paired(report, folder / PLOTS[0][0], mpl)
    plot_sweep(report, folder / PLOTS[1][0], mpl)
    return None
