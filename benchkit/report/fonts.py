"""An Agg canvas whose fonts are read from memory (issue 51: text was a third of a plot's time).

matplotlib's FT2Font reads a font given by path through a Python file object: every glyph
FreeType loads (three times a text: its extent, its layout, its render) costs a seek and a
read on the file, and those system calls were half of the text's time. The same font bytes
held in a :class:`io.BytesIO` give FreeType the same data without them, so the glyphs, and
the pixels, are the same (``tests/report/test_fonts.py`` compares whole plots both ways).

The faster path needs matplotlib's font cache builder (``font_manager._get_font``, private)
with the keywords this module passes; where an installed matplotlib has another one, the
canvas renders as matplotlib's own does."""
from __future__ import annotations

import functools
import inspect
import io
import os
import threading
from pathlib import Path
from typing import Any

from matplotlib import font_manager, rcParams
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

_KEYWORDS = {"_kerning_factor", "thread_id", "enable_last_resort"}
_BUILD = getattr(font_manager, "_get_font", None)
_BUILD = getattr(_BUILD, "__wrapped__", None)  # the builder under its lru_cache
SUPPORTED = (_BUILD is not None and hasattr(font_manager, "FontPath")
             and _KEYWORDS <= set(inspect.signature(_BUILD).parameters))
_FONTS: dict[tuple, Any] = {}  # FT2Font
_SIZES: dict[int, tuple[float, float] | None] = {}  # id of a font in _FONTS: its size
_HEIGHTS: dict[int, tuple | None] = {}  # id of a font in _FONTS: height_table's answer
_BYTES: dict[str, bytes] = {}
_BY_PROPS: dict[tuple, Any] = {}  # (FontProperties, the rcParams findfont reads, thread): font
# the rcParams matplotlib's findfont passes to its own cache: a lookup depends on nothing else
_FIND_RC = (*(f"font.{key}" for key in ("family", "style", "variant", "weight", "stretch", "size",
                                        "serif", "sans-serif", "cursive", "fantasy", "monospace",
                                        "enable_last_resort")), "text.kerning_factor")
_RC_GET = functools.partial(dict.__getitem__, rcParams)  # these keys as stored: RcParams'
# own __getitem__ resolves aliases and the backend, none of which these are


def _forget() -> None:
    """An FT2Font must not cross a fork (matplotlib's rule): the child builds its own."""
    _FONTS.clear()
    _BY_PROPS.clear()
    _SIZES.clear()
    _HEIGHTS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


@functools.lru_cache(64)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def _in_memory(path: str) -> io.BytesIO:
    if path not in _BYTES:
        _BYTES[path] = Path(path).read_bytes()
    return io.BytesIO(_BYTES[path])


def memory_font(found: list) -> Any:
    """The FT2Font (with matplotlib's fallbacks) of the fonts ``found`` for a text's
    properties, built once a thread from the font files' bytes held in memory."""
    paths = tuple((_realpath(f.path), f.face_index) for f in found)
    key = (paths, rcParams["text.kerning_factor"], rcParams["font.enable_last_resort"],
           threading.get_ident())
    if key not in _FONTS:
        font = _BUILD(tuple((_in_memory(p), i) for p, i in paths),  # type: ignore[misc]
                      _kerning_factor=key[1], thread_id=key[3], enable_last_resort=key[2])
        _FONTS[key] = font
        _SIZES[id(font)] = None
    font = _FONTS[key]
    font._set_transform([[0x10000, 0], [0, 0x10000]], [0, 0])  # as get_font leaves it
    return font


def font_for(prop) -> Any:
    """:func:`memory_font` of the fonts matplotlib finds for the FontProperties ``prop``,
    found once per properties, rcParams and font list: a text's extent and its drawing each
    looked the fonts up again (matplotlib's findfont caches the search, not the Python around
    it: 38 us a lookup against 20 here, measured at load 12)."""
    manager = font_manager.fontManager
    key = (prop, *[tuple(v) if isinstance(v, list) else v
                   for v in map(_RC_GET, _FIND_RC)], id(manager), len(manager.ttflist),
           os.environ.get("MPL_IGNORE_SYSTEM_FONTS"), threading.get_ident())
    found = _BY_PROPS.get(key)
    if found is None:  # kept under a copy: a later edit of ``prop`` must not change its key
        found = _BY_PROPS[(prop.copy(), *key[1:])] = memory_font(
            manager._find_fonts_by_props(prop))
    found._set_transform([[0x10000, 0], [0, 0x10000]], [0, 0])  # as get_font leaves it
    return found


def set_size(font, ptsize: float, dpi: float) -> None:
    """Size ``font`` (one of :func:`memory_font`'s), reaching FreeType only when its size
    changes: each FT_Set_Char_Size makes FreeType run the font's hinting set-up program again
    at the next glyph (about 70 us for DejaVu Sans), and matplotlib sizes the font before each
    text's extent, each text's layout and every glyph it draws, nearly all of one size. Other
    fonts (a fallback, mathtext's) are sized as matplotlib sizes them."""
    known = id(font) in _SIZES  # a font kept in _FONTS, never freed: its id is its own
    if not known or _SIZES[id(font)] != (ptsize, dpi):
        font.set_size(ptsize, dpi)  # the size of its fallbacks too
        if known:
            _SIZES[id(font)] = (ptsize, dpi)


class SizedOnce:
    """A font as a text's glyphs are drawn with it, sized by :func:`set_size`."""

    def __init__(self, font) -> None:
        self._font = font
        # the two methods the glyph loop calls for every glyph, bound once a text
        self._set_transform, self._render_glyph = font._set_transform, font._render_glyph

    def set_size(self, ptsize: float, dpi: float) -> None:
        set_size(self._font, ptsize, dpi)

    def __getattr__(self, name: str):
        return getattr(self._font, name)


def height_table(font) -> tuple | None:
    """(units per em, line gap, ascender, descender) in font units: the OS/2 table's
    typographic metrics, else hhea's, as matplotlib reads them for a text's line height; read
    once a font (each read was two table reads through the font file, about 65 us each)."""
    if id(font) not in _HEIGHTS:
        units = font.get_sfnt_table("head")["unitsPerEm"]
        _HEIGHTS[id(font)] = next(
            ((units, *(table[k] for k in keys)) for table, keys in (
                (font.get_sfnt_table("OS/2"), ("sTypoLineGap", "sTypoAscender", "sTypoDescender")),
                (font.get_sfnt_table("hhea"), ("lineGap", "ascent", "descent")))
             if table is not None), None)
    return _HEIGHTS[id(font)]


class MemoryFontRenderer(RendererAgg):
    """RendererAgg taking its fonts from :func:`memory_font` and sizing each once a text:
    the same glyphs, less work."""

    def font(self, prop) -> Any:
        """:func:`font_for` ``prop``, kept for the rest of this renderer's draw (and the
        extents read after it; :meth:`Canvas.draw` empties it): a text's fonts are asked for
        two to three times a draw, and rcParams stay as they are within one, which
        matplotlib's own text-metrics cache assumes too."""
        found = self.__dict__.setdefault("_found", {})
        font = found.get(prop)
        if font is None:
            font = found[prop.copy()] = font_for(prop)
        else:
            font._set_transform([[0x10000, 0], [0, 0x10000]], [0, 0])  # as get_font leaves it
        return font

    def _get_font_height_metrics(self, font_prop):
        """(ascent, descent, line gap) in pixels of a line of ``font_prop``'s font, the hook
        matplotlib's Text asks before reading the font's tables itself: the same arithmetic
        on the same numbers, read once (:func:`height_table`)."""
        table = height_table(self.font(font_prop))
        if table is None:
            return None, None, None
        units, gap, ascent, descent = table
        scale = 1 / units * font_prop.get_size_in_points() * self.dpi / 72
        return ascent * scale, -descent * scale, gap * scale

    def _draw_text_glyphs_and_boxes(self, gc, x, y, angle, glyphs, boxes):
        sized: dict[int, SizedOnce] = {}

        def once(font) -> SizedOnce:
            wrapped = sized.get(id(font))
            if wrapped is None:
                wrapped = sized[id(font)] = SizedOnce(font)
            return wrapped
        super()._draw_text_glyphs_and_boxes(
            gc, x, y, angle, ((once(font), *rest) for font, *rest in glyphs), boxes)

    def _prepare_font(self, font_prop):
        font = self.font(font_prop)
        font.clear()
        set_size(font, font_prop.get_size_in_points(), self.dpi)
        return font


class Canvas(FigureCanvasAgg):
    """FigureCanvasAgg rendering with :class:`MemoryFontRenderer` where :data:`SUPPORTED`."""

    def get_renderer(self):
        renderer = super().get_renderer()
        if SUPPORTED and type(renderer) is RendererAgg:
            renderer.__class__ = MemoryFontRenderer  # its only state: the fonts of a draw
        return renderer

    def draw(self):
        """Draw the figure (FigureCanvasAgg.draw), each text's fonts looked up afresh."""
        self.get_renderer().__dict__.pop("_found", None)
        super().draw()
