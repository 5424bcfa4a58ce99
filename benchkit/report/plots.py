"""Plots beside a report: ``paired.png`` (each seed's baseline -> idea) and ``sweep.png`` (both
arms over the grid). matplotlib is optional (``pip install benchkit[plot]``) and imported
lazily; figures are drawn on the Agg canvas directly (no pyplot, no global backend switch).
"""
from __future__ import annotations

import io
import math
from pathlib import Path

from benchkit.store.atomic import write_atomic
from benchkit.report.fmt import num, signed
from benchkit.verdict.build import direction_of, paired_values
from benchkit.spec import cfg_id

PLOTS = (("paired.png", "paired seeds"), ("sweep.png", "grid sweep"))
MISSING = "matplotlib is not installed, so no plots were drawn (pip install 'benchkit[plot]')"
COLORS = {"baseline": "#1f77b4", "idea": "#d9641c"}
WIN, LOSS, TIE = "#2a9d4f", "#c0392b", "#888888"
DPI = 130


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


def _save(fig, canvas_cls, path: Path) -> None:
    canvas_cls(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    write_atomic(path, buf.getvalue())


def _seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def _ylabel(report: dict) -> str:
    return f"test {report.get('metric', 'metric')} ({report.get('metric_direction', '')})"


def _title(report: dict, what: str) -> str:
    return f"{report.get('name', '?')} on {report.get('track', '?')}: {what}"


# -- paired.png ---------------------------------------------------------------------------
def plot_paired(report: dict, path, mpl=None) -> None:
    """Each seed as a line from its baseline value to its idea value, the arms' means with 95%
    error bars; a side panel of the per-seed differences with the mean's 95% CI and the MDE."""
    Figure, Canvas = mpl or matplotlib_classes()
    comp = report["comparison"]
    direction = direction_of(report)
    seeds, base, idea, diffs = paired_values(report)

    fig = Figure(figsize=(8.6, 5.0))  # fixed margins: constrained layout doubles the time
    ax, axd = fig.subplots(1, 2, width_ratios=[3, 1.25])
    fig.subplots_adjust(left=0.085, right=0.985, bottom=0.19, top=0.87, wspace=0.3)
    counts = {WIN: 0, LOSS: 0, TIE: 0}
    for b, i, d in zip(base, idea, diffs):
        won = d < 0 if direction == "lower" else d > 0
        color = TIE if d == 0 else (WIN if won else LOSS)
        counts[color] += 1
        ax.plot([0, 1], [b, i], color=color, alpha=0.75, lw=1.6, marker="o", ms=4, zorder=2)
    for x, vals, arm, dx in ((0, base, "baseline", -0.14), (1, idea, "idea", 0.14)):
        mean, half = _mean_ci(vals)
        ax.errorbar([x + dx], [mean], yerr=[half], fmt="D", ms=8, color=COLORS[arm], capsize=6,
                    lw=2.2, zorder=3)
        ax.annotate(num(mean), (x + dx, mean), xytext=(10 if dx > 0 else -10, 0),
                    textcoords="offset points", va="center",
                    ha="left" if dx > 0 else "right", fontsize=9, color=COLORS[arm])
    ax.set_xlim(-0.55, 1.55)
    ax.set_xticks([0, 1], labels=[
        f"baseline\n{cfg_id(report['baseline']['best_cfg'])}",
        f"idea\n{cfg_id(report['idea_config'])}"])
    log = _spans_decades(base + idea)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(_ylabel(report) + (" (log scale)" if log else ""))
    ax.grid(axis="y", alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=color, lw=1.6, marker="o", ms=4,
                      label=f"{what} ({_seeds(counts[color])})")
               for color, what in ((WIN, "idea better"), (LOSS, "idea worse"), (TIE, "tie"))
               if counts[color]]
    handles.append(Line2D([], [], color="k", marker="D", ls="", ms=7,
                          label="arm mean ± 95% CI"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13),
              ncols=len(handles), fontsize=8, frameon=False)  # below: never over the data
    ax.set_title(f"{len(seeds)} paired seeds, selected configs", fontsize=10)

    # the differences: what the test is about
    n = len(diffs)
    jitter = [(k - (n - 1) / 2) * (0.5 / max(n, 1)) for k in range(n)]
    colors = [TIE if d == 0 else (WIN if (d < 0 if direction == "lower" else d > 0) else LOSS)
              for d in diffs]
    mde = comp.get("mde")
    if mde:
        axd.axhspan(-mde, mde, color="#999999", alpha=0.15, lw=0,
                    label=f"±MDE ({num(mde, '.3g')})")
    axd.axhline(0, color="k", lw=0.8)
    axd.scatter(jitter, diffs, c=colors, s=22, zorder=2)
    ci = comp.get("ci95") or [None, None]
    delta = comp["delta_mean"]
    if None not in ci:
        axd.errorbar([0.55], [delta], yerr=[[delta - ci[0]], [ci[1] - delta]], fmt="D",
                     color="k", ms=7, capsize=6, lw=2, zorder=3, label="mean ± 95% CI")
    axd.set_xlim(-0.5, 0.9)
    axd.set_xticks([])
    axd.set_ylabel(f"idea - baseline ({'negative' if direction == 'lower' else 'positive'}"
                   " = idea better)", fontsize=9)
    axd.grid(axis="y", alpha=0.3)
    axd.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=8, frameon=False)
    p = comp.get("p_adjusted")
    p_txt = f"p={num(comp['p_value'], '.3g')}" + (
        "" if p is None or p == comp["p_value"] else f" (adj {num(p, '.3g')})")
    axd.set_title(f"Δ={signed(delta, '+.3g')}, {p_txt}", fontsize=10)
    fig.suptitle(f"{_title(report, 'paired seeds')} → {report.get('practical_verdict')}"
                 f" / {report.get('system_verdict')}", fontsize=11)
    _save(fig, Canvas, Path(path))


# -- sweep.png ----------------------------------------------------------------------------
def _sweep_axis(cfgs: list[dict]):
    """(x values, label, log scale?, tick labels) for the grid configs: the value of a single
    numeric key when there is one (log for lr or a wide positive range), else the index."""
    keys = {tuple(c) for c in cfgs}
    if len(keys) == 1 and len(next(iter(keys))) == 1:
        key = next(iter(keys))[0]
        vals = [c[key] for c in cfgs]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals) and \
                len(set(vals)) == len(vals):
            positive = all(v > 0 for v in vals)
            log = positive and (key == "lr" or max(vals) / min(vals) >= 10)
            return vals, key, log, [format(v, "g") for v in vals]
    return list(range(len(cfgs))), "grid config", False, [cfg_id(c) for c in cfgs]


def edge_note(report: dict, arm: str) -> str | None:
    """The label of an arm's selection still at a grid edge after the extension limit
    (``grid_extensions.at_edge``), or None."""
    ext = report.get("grid_extensions") or {}
    sides = [f"{e['side']} edge of {e['axis']}" for e in ext.get("at_edge", ()) if e["arm"] == arm]
    return (f"at the {', '.join(sides)}\n(extend={ext.get('limit')})") if sides else None


def plot_sweep(report: dict, path, mpl=None) -> None:
    """Both arms' validation and test means over the grid, selected configs ringed (and
    labelled when still at a grid edge after the extensions)."""
    Figure, Canvas = mpl or matplotlib_classes()
    arms = {"baseline": (report["baseline"]["sweep"], report["baseline"]["best_cfg"]),
            "idea": (report["idea_sweep"], report["idea_config"])}
    cfgs = [e["cfg"] for e in arms["baseline"][0]]
    for e in arms["idea"][0]:
        if e["cfg"] not in cfgs:
            cfgs.append(e["cfg"])
    xs, xlabel, log, ticks = _sweep_axis(cfgs)
    x_of = {cfg_id(c): x for c, x in zip(cfgs, xs)}
    fig = Figure(figsize=(9.4, 5.0))
    ax = fig.subplots()
    fig.subplots_adjust(left=0.085, right=0.72, bottom=0.12, top=0.92)
    values = []
    for arm, (sweep, best) in arms.items():
        color = COLORS[arm]
        x = [x_of[cfg_id(e["cfg"])] for e in sweep]
        for key, style, marker, split in (("val_mean", "--", "s", "val"),
                                          ("mean", "-", "o", "test")):
            y = [e.get(key) if e.get(key) is not None else math.nan for e in sweep]
            values += [v for v in y if not math.isnan(v)]
            ax.plot(x, y, ls=style, marker=marker, color=color, lw=1.8, ms=5,
                    label=f"{arm} {split} mean")
            sel = [(xx, yy) for xx, yy, e in zip(x, y, sweep) if e["cfg"] == best]
            if split == "val" and sel and not math.isnan(sel[0][1]):
                ax.plot(*sel[0], marker="o", ms=15, mfc="none", mec=color, mew=2.2, ls="",
                        zorder=3)
                note = edge_note(report, arm)
                if note:
                    ax.annotate(note, sel[0], xytext=(0, -22), textcoords="offset points",
                                color=color, fontsize=8, ha="center", va="top")
        for xx, e in zip(x, sweep):
            if e.get("eligible") is False:
                ax.annotate("not eligible", (xx, 0.02), xycoords=("data", "axes fraction"),
                            color=color, fontsize=8, ha="center", rotation=90, va="bottom")
    from matplotlib.lines import Line2D

    handles, _ = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], marker="o", ms=12, mfc="none", mec="k", mew=2, ls="",
                          label="selected config\n(ringed on its val mean)"))
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="upper left",
              bbox_to_anchor=(1.01, 1.0))  # beside the axes: never over the curves
    if log:
        ax.set_xscale("log")
    if _spans_decades(values):
        ax.set_yscale("log")
    ax.set_xticks(xs, labels=ticks)
    ax.minorticks_off()
    if not log and xlabel == "grid config" and max(len(t) for t in ticks) > 12:
        for t in ax.get_xticklabels():
            t.set_rotation(20)
            t.set_ha("right")
    ax.set_xlabel(xlabel + (" (log scale)" if log else ""))
    n = report.get("n_seeds")
    ax.set_ylabel(f"{report.get('metric', 'metric')} mean over {n} seeds "
                  f"({report.get('metric_direction', '')})")
    ax.grid(alpha=0.3)
    ax.set_title(_title(report, "grid sweep"), fontsize=11, loc="left")
    fig.text(0.735, 0.12, "each arm's config is selected\non its validation mean over\nseeds, "
             "never on test", ha="left", va="bottom", fontsize=8, color="#555555")
    _save(fig, Canvas, Path(path))


# -- both ---------------------------------------------------------------------------------
def _remove_stale(folder: Path) -> None:
    """Plots of an earlier run of the same report would show other data: remove them."""
    for name, _ in PLOTS:
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass


def write_plots(folder, report: dict) -> str | None:
    """Draw ``paired.png`` and ``sweep.png`` into ``folder``. Returns None when both were
    written, else a one-line note saying why not (no exception for a missing matplotlib)."""
    folder = Path(folder)
    mpl = matplotlib_classes()
    if mpl is None:
        _remove_stale(folder)
        return MISSING
    if report.get("comparison") is None:
        _remove_stale(folder)
        return "no plots for an incomplete report (no comparison to draw)"
    plot_paired(report, folder / PLOTS[0][0], mpl)
    plot_sweep(report, folder / PLOTS[1][0], mpl)
    return None
