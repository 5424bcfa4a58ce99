"""What the plots draw, read back from matplotlib's artists: every arm present (controls too),
lines sorted along their axis, no line across a frontier's points, each selected config ringed,
the deciding comparison first, and no text clipped or overlapping at the default size."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from benchkit.report import plots
from builders import as_comparison, as_report, make_report

needs_mpl = pytest.mark.skipif(not plots.available(), reason="matplotlib is not installed")


def with_control_and_extension(frontier: bool = False) -> dict:
    """A report whose control decided (the idea is worse than it), whose grid was extended
    below its lowest lr (the entry last, as the report lists it), optionally over two keep
    points (a frontier)."""
    r = make_report(effect=-0.3)
    for sweep in (r["baseline"]["sweep"], r["idea_sweep"]):
        low = copy.deepcopy(sweep[0])
        low["cfg"] = {"lr": 0.000333333333333}
        low["val_mean"] += 1.0
        sweep.append(low)
    control = {"arm": "control:shortcut", "best_cfg": {"lr": 0.003},
               "sweep": copy.deepcopy(r["idea_sweep"]), "verdict": "harms",
               "full": {**r["idea"], "per_seed": [v - 0.1 for v in r["idea"]["per_seed"]],
                        "mean": r["idea"]["mean"] - 0.1},
               "comparison": {**r["comparison"], "delta_mean": 0.1, "p_adjusted": 0.0078}}
    for e in control["sweep"]:
        e["val_mean"] = e["val_mean"] - 0.2 + (0.5 if e["cfg"]["lr"] != 0.003 else 0.0)
    r["controls"] = {"shortcut": control}
    r["decided_by"], r["practical_verdict"] = "control:shortcut", "harms"
    if frontier:
        for arm in (r["baseline"]["sweep"], r["idea_sweep"], control["sweep"]):
            arm += [dict(copy.deepcopy(e), cfg={"keep": 0.5, **e["cfg"]}) for e in arm]
            for e in arm[:len(arm) // 2]:
                e["cfg"] = {"keep": 0.25, **e["cfg"]}
        r["frontier"] = {"axis": "keep", "values": [0.25, 0.5], "points": []}
        for arm in (r["baseline"], control):
            arm["best_cfg"] = {"keep": "selected per point (see frontier.points)"}
        r["idea_config"] = r["baseline"]["best_cfg"]
    return r


def drawn(fig):
    """The figure drawn on the Agg canvas: (renderer, its width, its height)."""
    _, canvas_cls = plots.matplotlib_classes()
    canvas_cls(fig).draw()
    return fig.canvas.get_renderer(), fig.bbox.width, fig.bbox.height


def assert_nothing_clipped_or_overlapping(fig):
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    renderer, width, height = drawn(fig)
    for artist in fig.findobj(lambda a: isinstance(a, (Text, Legend))):
        if not artist.get_visible() or (isinstance(artist, Text) and not artist.get_text()):
            continue
        box = artist.get_window_extent(renderer)
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, \
            getattr(artist, "get_text", lambda: artist)()
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        assert not any(a.overlaps(b) for k, a in enumerate(boxes) for b in boxes[k + 1:])


def lines_of(fig, prefix):
    return [ln for ax in fig.axes for ln in ax.get_lines()
            if str(ln.get_gid() or "").startswith(prefix)]


@pytest.mark.slow
@needs_mpl
def test_the_sweep_shows_every_arm_sorted_along_lr_with_its_selection_ringed():
    r = with_control_and_extension()
    fig = plots.figure_sweep(as_report(r))
    for arm, best in (("baseline", r["baseline"]["best_cfg"]), ("idea", r["idea_config"]),
                      ("control shortcut", {"lr": 0.003})):
        for split in ("val", "test"):
            (line,) = lines_of(fig, f"{arm}|{split}|")
            xs = list(line.get_xdata())
            assert xs == sorted(xs) and len(xs) == 4   # the extension in its place: no loop
        (ring,) = lines_of(fig, f"selected|{arm}|")
        assert list(ring.get_xdata()) == [best["lr"]]
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["3.33e-4", "0.001", "0.003", "0.01"]
    assert_nothing_clipped_or_overlapping(fig)


@needs_mpl
def test_a_frontier_sweep_has_a_panel_per_point_and_rings_each_arms_selection_there():
    r = with_control_and_extension(frontier=True)
    fig = plots.figure_sweep(as_report(r))
    assert [ax.get_title() for ax in fig.axes] == ["keep=0.25", "keep=0.5"]
    for line in lines_of(fig, "baseline|val|"):   # one line per point, never across them
        assert len(line.get_xdata()) == 4
    assert len(lines_of(fig, "baseline|val|")) == 2
    assert len(lines_of(fig, "selected|control shortcut|")) == 2   # selected per point
    assert_nothing_clipped_or_overlapping(fig)


@needs_mpl
def test_paired_leads_with_the_control_that_decided_and_shows_the_baseline_beside_it():
    r = with_control_and_extension()
    fig = plots.figure_paired(as_report(r))
    main, decided, baseline = fig.axes[:3]
    assert "idea vs control shortcut" in main.get_title()
    assert decided.get_title().startswith("idea - shortcut (decided)")
    assert baseline.get_title().startswith("idea - baseline\n")
    (points,) = [c for c in decided.collections if c.get_gid() == "diffs:shortcut"]
    ys = sorted(points.get_offsets()[:, 1])
    assert ys == pytest.approx(sorted([0.1] * len(ys)))   # idea - control, seed by seed
    seeds = [ln for ln in main.get_lines() if ln.get_gid() == "seed"]
    assert len(seeds) == r["n_seeds"]
    assert "decided by the comparison with the control shortcut" in fig._suptitle.get_text()
    assert_nothing_clipped_or_overlapping(fig)
    plain = plots.figure_paired(as_report(make_report(effect=-0.3)))
    assert len(plain.axes) == 2 and plain.axes[1].get_title().startswith("idea - baseline (d")
    assert_nothing_clipped_or_overlapping(plain)


def test_summary_per_seed_table_leads_with_the_control_that_decided():
    from benchkit.report.summary import render_summary_md

    md = render_summary_md(as_report(with_control_and_extension()))
    header = next(ln for ln in md.splitlines() if ln.startswith("| seed |"))
    assert header == ("| seed | idea | shortcut (decided) | diff (idea - shortcut) | baseline | "
                      "diff (idea - baseline) | better than baseline |")


def test_the_drawn_interval_is_the_deciding_tests_own():
    """A t interval can exclude 0 where the selection-aware test does not reject (the committed
    pruning report: t [-0.127, -0.015], the test's [-0.154, +0.014], p 0.070): the diff panel
    draws only the deciding test's interval (the sign test's under test="sign"), never a t
    interval; an unbounded end draws nothing, not another interval."""
    comp = {"test": "sign-flip", "signflip_ci": {"confidence": 0.95, "lo": -0.154, "hi": 0.014}}
    assert plots.interval_of(as_comparison(comp)) == ([-0.154, 0.014],
                                                      "mean, test's 95% interval")
    assert plots.interval_of(as_comparison({"signflip_ci": None})) == ([None, None], "")
    assert plots.interval_of(as_comparison({**comp, "signflip_ci": {
        "confidence": 0.95, "lo": None, "hi": 0.1}}))[0] == [None, 0.1]
    sign = {**comp, "test": "sign", "sign_ci": {"confidence": 0.975, "lo": -0.2, "hi": -0.01}}
    assert plots.interval_of(as_comparison(sign)) == ([-0.2, -0.01],
                                                     "median, test's 97.5% interval")


@needs_mpl
@pytest.mark.parametrize("figure", [plots.figure_paired, plots.figure_sweep])
def test_long_metric_idea_and_track_names_stay_inside_the_figure(figure):
    """A user's track names its metric at length (issue 44: skdigits' y label and the legend's
    "idea better (5 seeds)" were cut at the left edge of paired.png)."""
    r = make_report(effect=-0.3)
    r["metric"] = "top1_accuracy_on_the_held_out_digits_images"
    r["metric_direction"] = "higher is better"
    r["name"] = "silu_instead_of_relu_with_a_much_longer_idea_name"
    r["track"] = "skdigits_with_a_long_track_name"
    assert_nothing_clipped_or_overlapping(figure(as_report(r)))
    assert_nothing_clipped_or_overlapping(figure(as_report(with_control_and_extension() | {
        "metric": r["metric"], "name": r["name"], "track": r["track"]})))


@needs_mpl
def test_each_plot_is_rendered_once_when_its_labels_fit(tmp_path, monkeypatch):
    """The layout check's render is the one written (issue 51: rendering twice, then
    savefig's layout and render, was most of a report's time); the PNG holds those pixels."""
    _, canvas_cls = plots.matplotlib_classes()
    renders = []
    draw = canvas_cls.draw
    monkeypatch.setattr(canvas_cls, "draw", lambda self: renders.append(1) or draw(self))
    assert plots.write_plots(tmp_path, as_report(make_report(effect=-0.3))) is None
    assert len(renders) == 2
    fig = plots.figure_paired(as_report(make_report(effect=-0.3)))
    from PIL import Image

    pixels = np.asarray(Image.open(tmp_path / "paired.png"))
    assert np.array_equal(pixels, np.asarray(fig.canvas.buffer_rgba())[..., :3])


@needs_mpl
def test_a_title_stands_above_its_axis_offset_text():
    """Values that differ in their fifth decimal around 1000 put an offset text (``1e-5+1e3``)
    above the y axis: the titles, placed by hand, are lifted over it as matplotlib would."""
    r = with_control_and_extension()
    for values in (r["baseline"]["full"]["per_seed"], r["idea"]["per_seed"],
                   r["controls"]["shortcut"]["full"]["per_seed"]):
        values[:] = [1000 + v * 1e-4 for v in values]
    fig = plots.figure_paired(as_report(r))
    renderer, _, _ = drawn(fig)
    main = fig.axes[0]
    offset = main.yaxis.offsetText
    assert offset.get_text()
    assert not offset.get_window_extent(renderer).overlaps(main.title.get_window_extent(renderer))
