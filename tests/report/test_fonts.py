"""The plots' canvas (benchkit/report/fonts.py) draws the pixels matplotlib's own Agg canvas
draws, reading its fonts from memory and sizing them once a size."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from benchkit.report import fonts  # noqa: E402


def drawn(canvas_class) -> np.ndarray:
    """A figure of texts in two sizes, bold, rotated, mathtext and a glyph DejaVu Sans lacks
    (drawn by a fallback font), each size again after another, as the plots mix them."""
    fig = Figure(figsize=(4, 3), dpi=130)
    ax = fig.subplots()
    ax.plot([1e-4, 3e-3, 1e-2], [0.5, 0.25, 0.375])
    ax.set_xscale("log")
    ax.set_ylabel("test mse (lower)")
    ax.set_title("idea - baseline (decided)\nΔ +0.0123, p 0.041", fontsize=9, fontweight="bold")
    for k, size in enumerate((8, 10.5, 7.5, 8, 10.5)):
        fig.text(0.1 + 0.15 * k, 0.05, f"val {0.0137 * k:.4f}", fontsize=size, rotation=15 * k)
    fig.text(0.6, 0.9, r"$\alpha^2 \pm \sqrt{x}$ ±MDE", fontsize=9)
    fig.text(0.1, 0.9, "\u6f22 kan", fontsize=9)  # not in DejaVu Sans: matplotlib's last resort
    canvas = canvas_class(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


@pytest.mark.filterwarnings("ignore:Glyph 28450")
def test_the_canvas_draws_matplotlibs_pixels():
    assert np.array_equal(drawn(fonts.Canvas), drawn(FigureCanvasAgg))


def test_the_installed_matplotlib_takes_the_faster_path():
    """The pin the speed rests on: with matplotlib 3.11's private font builder the canvas
    renders with memory fonts; with another one it falls back to matplotlib's renderer."""
    canvas = fonts.Canvas(Figure(figsize=(1, 1)))
    if not fonts.SUPPORTED:
        pytest.skip("this matplotlib has another font builder: the canvas is matplotlib's")
    assert isinstance(canvas.get_renderer(), fonts.MemoryFontRenderer)


def test_a_known_font_reaches_freetype_only_when_its_size_changes():
    class Counting:
        def __init__(self) -> None:
            self.calls: list[tuple[float, float]] = []

        def set_size(self, ptsize: float, dpi: float) -> None:
            self.calls.append((ptsize, dpi))

    known, other = Counting(), Counting()
    fonts._SIZES[id(known)] = None
    try:
        for font in (known, other):
            for size in (8, 8, 9, 9, 8):
                fonts.set_size(font, size, 130)
    finally:
        del fonts._SIZES[id(known)]
    assert known.calls == [(8, 130), (9, 130), (8, 130)]
    assert len(other.calls) == 5  # not one of the canvas's own fonts: sized every time


def test_a_draw_finds_the_fonts_of_equal_properties_once(monkeypatch):
    """Each text's extent and drawing asked matplotlib's font search again (about 40 us of
    Python a lookup, several a text); the canvas asks once per properties."""
    from matplotlib import font_manager

    if not fonts.SUPPORTED:
        pytest.skip("this matplotlib has another font builder: the canvas is matplotlib's")
    searched = []
    find = font_manager.fontManager._find_fonts_by_props
    monkeypatch.setattr(font_manager.fontManager, "_find_fonts_by_props",
                        lambda prop, *a, **k: searched.append(prop) or find(prop, *a, **k))
    fig = Figure(figsize=(3, 2), dpi=130)
    for k in range(12):  # a size no other test draws: its fonts are not kept yet
        fig.text(0.05, 0.05 + 0.07 * k, f"seed {k}: {0.01 * k:.3f}", fontsize=8.37)
    fonts.Canvas(fig).draw()
    assert len(searched) == 1


def test_fonts_follow_rcparams_changed_between_draws():
    """Fonts found under one family are not reused under another: the same pixels as
    matplotlib's canvas under each."""
    import matplotlib

    def texts(canvas_class) -> np.ndarray:
        fig = Figure(figsize=(2, 1), dpi=100)
        fig.text(0.1, 0.4, "val 0.0137 (lower)", fontsize=9)
        canvas = canvas_class(fig)
        canvas.draw()
        return np.asarray(canvas.buffer_rgba()).copy()

    sans = texts(fonts.Canvas)
    with matplotlib.rc_context({"font.family": "serif"}):
        serif = texts(fonts.Canvas)
        assert np.array_equal(serif, texts(FigureCanvasAgg))
    assert not np.array_equal(sans, serif)
