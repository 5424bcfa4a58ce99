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
    ({"max_seeds": 8, "seeds": 8}, True), ({"max_seeds": 16, "seeds": 8}, True),
    ({"max_seeds": 64}, True), ({"max_seeds": 1}, False),  # 64: the track's seeds
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


# issue 50: declarations that gave tracebacks at collection, or were merged silently
@pytest.mark.parametrize("kwargs, fragment", [
    ({"grid": {"lr": iter([3e-3])}}, "grid['lr'] is an iterator, used up by its first reading"),
    ({"grid": {"lr": (x for x in [3e-3])}}, "is an iterator"),
    ({"track": 5}, "track=5 must be a track name or a list of names"),
    ({"track": None}, "no track given"),
    ({"grid": [{"a": 1.0, "b": 2.0}, {"a=1.0-b": 2.0}]},
     "have the same id 'a=1.0-b=2.0', which names their runs; valid: keys without '=' or '-'"),
    ({"grid": [{"lr": 1e-3, "opt": "a-b"}, {"lr": 1e-3, "opt": "a", "-b": 1}]}, None),
])
def test_iterators_odd_tracks_and_configs_of_one_id_are_collection_errors(kwargs, fragment):
    if fragment is None:   # the ids differ ('opt='a-b'' quotes the string): both kept
        assert len(parse(**kwargs).grids["tabular"]) == 2
        return
    with pytest.raises(SpecError) as info:
        parse(**kwargs)
    assert fragment in str(info.value)
