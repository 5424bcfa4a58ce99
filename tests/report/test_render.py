"""The plots' PNG writer (benchkit/report/render.py): what an image library reads back is the
canvas's pixels, RGB when opaque, RGBA when not, at the figure's dpi."""
from __future__ import annotations

import io

import numpy as np
import pytest

from benchkit.report.render import png_bytes

PIL = pytest.importorskip("PIL.Image")


def read_back(data: bytes):
    image = PIL.open(io.BytesIO(data))
    return image.mode, image.info.get("dpi"), np.asarray(image)


def test_an_opaque_canvas_reads_back_as_its_rgb_pixels_at_its_dpi():
    rng = np.random.default_rng(0)
    rgba = rng.integers(0, 256, size=(7, 5, 4), dtype=np.uint8)
    rgba[..., 3] = 255
    mode, dpi, pixels = read_back(png_bytes(rgba, 130))
    assert mode == "RGB" and np.array_equal(pixels, rgba[..., :3])
    assert dpi == pytest.approx((130, 130), abs=0.01)


def test_a_canvas_with_transparent_pixels_keeps_its_alpha():
    rgba = np.zeros((3, 4, 4), dtype=np.uint8)
    rgba[1, 2] = (10, 20, 30, 128)
    mode, _, pixels = read_back(png_bytes(memoryview(rgba), 100))
    assert mode == "RGBA" and np.array_equal(pixels, rgba)
