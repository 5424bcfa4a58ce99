"""The bench marker's numeric ranges: values on, inside and outside every bound, parsed."""
from __future__ import annotations

import math

import pytest

from benchkit.spec import SpecError
from builders import parse


@pytest.mark.parametrize("kwargs, ok", [
    ({"seeds": 2}, True), ({"seeds": 1}, False), ({"seeds": 0}, False), ({"seeds": -3}, False),
    ({"seeds": True}, False), ({"seeds": 2.0}, False), ({"seeds": "8"}, False),
    ({"margin": 0.05}, True), ({"margin": 0.999}, True), ({"margin": 0}, False),
    ({"margin": 1}, False), ({"margin": 5}, False), ({"margin": -0.1}, False),
    ({"margin": True}, False), ({"margin": math.nan}, False), ({"margin": "0.05"}, False),
    ({"max_seeds": 8}, True), ({"max_seeds": 16}, True), ({"max_seeds": 1}, False),
    ({"max_seeds": 2}, False), ({"looks": (8, 16)}, True), ({"looks": (8, 4)}, False),
    ({"max_seeds": 16.0}, False), ({"max_seeds": False}, False),
    ({"grid": {"lr": [1e-3]}}, True), ({"grid": {"lr": [0]}}, False),
    ({"grid": {"lr": [-1e-3]}}, False), ({"grid": {"lr": [math.nan]}}, False),
    ({"grid": {"lr": [math.inf]}}, False), ({"grid": {"lr": [True]}}, False),
    ({"grid": {"lr": ["1e-3"]}}, False), ({"grid": {"lr": []}}, False), ({"grid": {}}, False),
    ({"grid": {"lr": [1e-3], "epochs": [0]}}, False),
    ({"grid": {"lr": [1e-3], "epochs": [1.5]}}, False),
    ({"grid": {"lr": [1e-3], "epochs": [2]}}, True),
    ({"grid": {"lr": [1e-3], "batch_size": [0]}}, False),
    ({"grid": {"lr": [1e-3, 1e-3]}}, False),
])
def test_bench_marker_numeric_ranges(kwargs, ok):
    if ok:
        parse(**kwargs)
    else:
        with pytest.raises(SpecError, match="valid|must|need|duplicate|empty"):
            parse(**kwargs)


def test_margin_keeps_its_relative_meaning():
    assert parse(margin=0.05).margin == 0.05
