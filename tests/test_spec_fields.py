"""What ``parse_bench_marker`` returns, field by field: the declaration every verdict rests on.

In-process (no pytester) so that a changed default, a dropped override or a misread argument
fails here directly rather than only through a whole bench.
"""
from __future__ import annotations

import pytest

from benchkit import tracks as registry
from benchkit.spec import (DEFAULT_SEEDS, SpecError, family_seeds_needed, parse_bench_marker,
                           parse_grid, unreachable_family)

MODULE = "ideas/test_my_idea.py"


def parse(seeds_override=None, epochs_override=None, /, **kwargs):
    return parse_bench_marker(pytest.mark.bench(**kwargs).mark, MODULE,
                              seeds_override=seeds_override, epochs_override=epochs_override)


def test_defaults_come_from_the_module_and_the_track():
    spec = parse(track="tabular")
    tabular = registry.get("tabular")
    assert spec.name == "my_idea"
    assert spec.module == MODULE
    assert spec.tracks == ("tabular",)
    assert spec.grids == {"tabular": tabular.grid}
    assert spec.seeds == tuple(range(DEFAULT_SEEDS)) == tuple(range(8))
    assert spec.epochs == {"tabular": tabular.epochs}
    assert spec.protocols == {"tabular": tabular.protocol(tabular.epochs)}
    assert spec.claim is None and spec.margin is None


def test_declared_values_are_kept_as_declared():
    spec = parse(track=["dynamics", "tabular"], name="other", seeds=6, claim="it helps",
                 margin=0.05, grid={"lr": [1e-3, 3e-3]})
    assert spec.name == "other"
    assert spec.tracks == ("dynamics", "tabular")
    assert spec.seeds == tuple(range(6))
    assert spec.claim == "it helps"
    assert spec.margin == 0.05 and isinstance(spec.margin, float)
    assert spec.grids == {"dynamics": ({"lr": 1e-3}, {"lr": 3e-3}),
                          "tabular": ({"lr": 1e-3}, {"lr": 3e-3})}


def test_overrides_replace_seeds_and_epochs_on_every_track():
    spec = parse(3, 1, track=["tabular", "dynamics"])
    assert spec.seeds == (0, 1, 2)
    assert spec.epochs == {"tabular": 1, "dynamics": 1}
    assert spec.protocols["dynamics"] == registry.get("dynamics").protocol(1)


def test_seed_override_wins_over_the_declared_count():
    assert parse(4, None, track="tabular", seeds=10).seeds == (0, 1, 2, 3)


@pytest.mark.parametrize("seeds", [1, 0, -3, 2.0, True, "8"])
def test_seed_counts_below_two_or_not_integers_are_refused(seeds):
    with pytest.raises(SpecError, match="seeds="):
        parse(track="tabular", seeds=seeds)


def test_two_seeds_is_the_smallest_count_accepted():
    assert parse(track="tabular", seeds=2).seeds == (0, 1)


@pytest.mark.parametrize("margin", [0, 1, 5, -0.1, True, "0.05"])
def test_margins_outside_the_open_unit_interval_are_refused(margin):
    with pytest.raises(SpecError, match="margin="):
        parse(track="tabular", margin=margin)


@pytest.mark.parametrize("margin", [1e-6, 0.5, 0.999])
def test_margins_inside_the_open_unit_interval_are_kept(margin):
    assert parse(track="tabular", margin=margin).margin == margin


def test_grid_dict_is_the_product_in_declared_order():
    configs = parse_grid({"lr": [1e-3, 2e-3], "width": ["a", "b"]}, "here")
    assert configs == ({"lr": 1e-3, "width": "a"}, {"lr": 1e-3, "width": "b"},
                       {"lr": 2e-3, "width": "a"}, {"lr": 2e-3, "width": "b"})


def test_integer_grid_axes_other_than_lr_stay_integers():
    configs = parse_grid([{"lr": 1e-3, "epochs": 2}], "here")
    assert configs == ({"lr": 1e-3, "epochs": 2},) and isinstance(configs[0]["epochs"], int)


@pytest.mark.parametrize("grid, words", [
    ({}, "empty"), ([], "empty"), ({"lr": []}, "empty list"), ({"lr": 1e-3}, "not a list"),
    ({1: [1e-3]}, "not a string"), ([{}], "non-empty dicts"), ({"lr": [0.0]}, "positive"),
    ({"lr": [float("nan")]}, "finite"), ({"epochs": [0]}, "positive integer"),
    ({"batch_size": [1.5]}, "positive integer"), ([{"lr": 1e-3}, {"lr": 1e-3}], "duplicate"),
    ("lr=1e-3", "str"),
])
def test_malformed_grids_are_refused_with_the_reason(grid, words):
    with pytest.raises(SpecError, match=words):
        parse_grid(grid, "here")


def test_unknown_tracks_and_arguments_are_refused_naming_the_valid_ones():
    with pytest.raises(SpecError, match="known tracks: .*tabular"):
        parse(track="nope")
    with pytest.raises(SpecError, match="no track given"):
        parse()
    with pytest.raises(SpecError, match="unknown argument"):
        parse(track="tabular", sedes=8)
    with pytest.raises(SpecError, match="twice"):
        parse(track=["tabular", "tabular"])


@pytest.mark.parametrize("family, alpha, needed", [(1, 0.05, 6), (2, 0.05, 7), (1, 0.01, 8),
                                                   (3, 0.05, 7), (4, 0.05, 8)])
def test_seeds_needed_for_a_family_is_the_first_reachable_count(family, alpha, needed):
    assert family_seeds_needed(family, alpha) == needed
    assert 2.0 ** (1 - needed) < alpha / family <= 2.0 ** (2 - needed)
    assert unreachable_family(needed, family, alpha) is None
    assert f"{needed} seeds or more" in unreachable_family(needed - 1, family, alpha)
