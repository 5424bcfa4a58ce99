"""What ``parse_bench_marker`` returns, field by field: the declaration every verdict rests on.

In-process (no pytester) so that a changed default, a dropped override or a misread argument
fails here directly rather than only through a whole bench.
"""
from __future__ import annotations

import math

import pytest

from benchkit import tracks
from benchkit.spec import (DEFAULT_SEEDS, IdeaSpec, SpecError, family_seeds_needed,
                           parse_bench_marker, parse_grid, unreachable_family)

MODULE = "ideas/test_my_idea.py"


def parse(seeds_override=None, epochs_override=None, /, **kwargs):
    return parse_bench_marker(pytest.mark.bench(**kwargs).mark, MODULE,
                              seeds_override=seeds_override, epochs_override=epochs_override)


def test_defaults_come_from_the_module_and_the_track():
    spec = parse(track="tabular")
    tabular = tracks.get("tabular")
    assert spec.name == "my_idea"
    assert spec.module == MODULE
    assert spec.tracks == ("tabular",)
    assert spec.grids == {"tabular": tabular.grid}
    assert spec.seeds == tuple(range(tabular.seeds)) == tuple(range(64))  # the track's own
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
    assert spec.protocols["dynamics"] == tracks.get("dynamics").protocol(1)


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


# ----------------------------------------------- every argument's range, at its boundaries
WHERE = f"{MODULE}: pytest.mark.bench"


@pytest.mark.parametrize("kwargs, words", [
    ({"name": "../up"}, ": name='../up' cannot name a report folder"),
    ({"track": "a b"}, ": track='a b' cannot name a report folder"),
    ({"grid": {"lr": []}}, ": grid['lr'] is an empty list; valid: a dict"),
    ({"looks": (8, 4)}, ": looks=(8, 4); valid: looks=(8, 16)"),
    ({"boundary": "pocock"}, ": boundary='pocock'; valid: 'union', 'exact'"),
    ({"boundary": "exact"}, ": boundary='exact' needs two or more declared looks"),
    ({"claim_type": "better"}, ": claim_type='better'; valid:"),
    ({"claim_type": "non-inferiority"}, ": claim_type='non-inferiority' needs margin="),
    ({"seeds": 1}, ": seeds=1: need an integer >= 2"),
    ({"extend": -1}, ": extend=-1 must be an integer in [0, 1000]"),
    ({"test": "median"}, ": test='median'; valid: 'mean'"),
])
def test_every_marker_error_names_the_module_and_the_argument(kwargs, words):
    """The error starts with where the declaration is (module and marker), then the argument."""
    kwargs.setdefault("track", "tabular")
    with pytest.raises(SpecError) as err:
        parse(**kwargs)
    assert str(err.value).startswith(WHERE + words), str(err.value)


def test_the_default_name_is_the_file_name_without_test_and_py_at_any_depth():
    for module in ("ideas/sub/test_deep_idea.py", "test_deep_idea.py", "a/b/c/test_deep_idea.py"):
        spec = parse_bench_marker(pytest.mark.bench(track="tabular").mark, module,
                                  seeds_override=None, epochs_override=None)
        assert spec.name == "deep_idea" and spec.module == module


@pytest.mark.parametrize("track", [[], (), [1], ["tabular", 2]])
def test_an_empty_or_non_string_track_list_is_refused(track):
    with pytest.raises(SpecError, match=r"must be a track name or a list of names; known tracks"):
        parse(track=track)


def test_a_track_whose_data_module_is_missing_is_refused_at_collection(monkeypatch):
    import dataclasses
    needs = dataclasses.replace(tracks.get("tabular"), name="needs_x",
                                requires=(("no_such_module_for_benchkit", "pip install x"),))
    monkeypatch.setitem(tracks._REGISTRY, "needs_x", needs)
    with pytest.raises(SpecError) as err:
        parse(track="needs_x")
    assert str(err.value) == (f"{WHERE}: track 'needs_x' needs no_such_module_for_benchkit, "
                              "which is not installed: pip install x")


@pytest.mark.parametrize("kwargs, seeds, looks", [
    ({"looks": (4, 10)}, 4, (4, 10)),          # seeds default to the first look, not 8
    ({"looks": (3, 5, 9)}, 3, (3, 5, 9)),
    ({"looks": (4, 10), "seeds": 10}, 10, (4, 10)),
    ({"max_seeds": 80}, 64, (64, 80)),         # seeds: the track's default (Track.seeds)
    ({"max_seeds": 12, "seeds": 5}, 5, (5, 12)),
])
def test_the_seeds_follow_the_first_declared_look(kwargs, seeds, looks):
    spec = parse(track="tabular", **kwargs)
    assert spec.seeds == tuple(range(seeds)) and spec.looks == looks and spec.looks_declared


def own_track(monkeypatch, name: str, seeds: int | None):
    """tabular's track registered again as ``name``, asking for ``seeds`` by default."""
    import dataclasses
    track = dataclasses.replace(tracks.get("tabular"), name=name, seeds=seeds)
    monkeypatch.setitem(tracks._REGISTRY, name, track)
    return track


def test_a_mark_without_seeds_runs_its_track_s_default_and_declared_seeds_win(monkeypatch):
    """Track.seeds is the seeds of a bench that declares none (benchkit's 8 for a track
    that sets none); the mark's seeds=, its first look, and --bench-seeds override it."""
    own_track(monkeypatch, "many", 24)
    own_track(monkeypatch, "plain", None)
    assert parse(track="many").seeds == tuple(range(24))
    assert parse(track="plain").seeds == tuple(range(DEFAULT_SEEDS))
    assert parse(track="many", seeds=6).seeds == tuple(range(6))
    assert parse(track="many", looks=(4, 10)).seeds == tuple(range(4))
    assert parse(3, track="many").seeds == tuple(range(3))
    override = parse(3, track="many")
    assert override.overrides == {"seeds": 3} and override.looks == (24,)


def test_several_tracks_run_the_most_seeds_any_of_them_asks_for(monkeypatch):
    """Each track's comparison should have the power its track's default aims at."""
    own_track(monkeypatch, "many", 24)
    own_track(monkeypatch, "plain", None)
    assert parse(track=["plain", "many"]).seeds == tuple(range(24))
    own_track(monkeypatch, "few", 4)
    assert parse(track=["plain", "few"]).seeds == tuple(range(DEFAULT_SEEDS))


def test_max_seeds_below_the_seeds_is_refused():
    with pytest.raises(SpecError, match=r"max_seeds=4 is below seeds=6: it must be >= seeds"):
        parse(track="tabular", max_seeds=4, seeds=6)
    assert parse(track="tabular", max_seeds=6, seeds=6).looks == (6,)
    with pytest.raises(SpecError, match=r"max_seeds=16 is below seeds=64 \(the track's "
                                        r"default: declare seeds= to change it\): it must be"):
        parse(track="tabular", max_seeds=16)


@pytest.mark.parametrize("kwargs, boundary", [
    ({}, "union"), ({"looks": (4, 8)}, "union"), ({"looks": (4, 8), "boundary": "exact"}, "exact"),
    ({"max_seeds": 96, "boundary": "exact"}, "exact"),   # max_seeds: two looks (64, 96)
])
def test_the_boundary_is_read_with_the_looks(kwargs, boundary):
    assert parse(track="tabular", **kwargs).boundary == boundary


@pytest.mark.parametrize("seeds_override, epochs_override, overrides", [
    (None, None, {}), (4, None, {"seeds": 4}), (None, 2, {"epochs": 2}),
    (3, 1, {"seeds": 3, "epochs": 1}),
])
def test_overrides_are_recorded_as_given(seeds_override, epochs_override, overrides):
    spec = parse(seeds_override, epochs_override, track="tabular")
    assert spec.overrides == overrides
    assert spec.to_plain()["overrides"] == overrides


@pytest.mark.parametrize("seeds_override", [1, 0, True, 2.5])
def test_a_seed_override_below_two_or_not_an_integer_is_refused(seeds_override):
    with pytest.raises(SpecError, match=f"seeds={seeds_override!r}: need an integer >= 2"):
        parse(seeds_override, None, track="tabular")


@pytest.mark.parametrize("extend, ok", [
    (0, True), (1, True), (2, True), (5, True), (-1, False), (True, False), (False, False),
    (1.0, False), ("2", False), (None, False),
])
def test_extend_is_an_integer_from_zero(extend, ok):
    if ok:
        assert parse(track="tabular", extend=extend).extend == extend
    else:
        with pytest.raises(SpecError,
                           match=rf"extend={extend!r} must be an integer in \[0, 1000\]"):
            parse(track="tabular", extend=extend)


def test_extend_defaults_to_two_steps():
    assert parse(track="tabular").extend == 2


@pytest.mark.parametrize("claim_type, margin", [
    ("superiority", None), ("non-inferiority", 0.05), ("equivalence", 0.1),
])
def test_claim_types_with_a_margin_are_kept(claim_type, margin):
    spec = parse(track="tabular", claim_type=claim_type, margin=margin)
    assert spec.claim_type == claim_type and spec.margin == margin


def test_the_frontier_multiplies_every_grid_config_by_its_values():
    spec = parse(track=["tabular", "dynamics"], grid={"lr": [1e-3, 3e-3]},
                 frontier={"width": [8, 16]})
    expected = ({"lr": 1e-3, "width": 8}, {"lr": 3e-3, "width": 8},
                {"lr": 1e-3, "width": 16}, {"lr": 3e-3, "width": 16})
    assert spec.grids == {"tabular": expected, "dynamics": expected}
    assert spec.frontier == {"width": (8, 16)}
    with pytest.raises(SpecError, match="frontier axis 'lr' is also a grid key"):
        parse(track="tabular", grid={"lr": [1e-3]}, frontier={"lr": [1e-3, 1e-2]})


@pytest.mark.parametrize("key", ["epochs", "batch_size"])
@pytest.mark.parametrize("value, ok", [(1, True), (2, True), (0, False), (-1, False),
                                       (1.0, False), ("1", False)])
def test_epochs_and_batch_size_grid_axes_are_positive_integers(key, value, ok):
    if ok:
        assert parse_grid({key: [value]}, "here") == ({key: value},)
    else:
        with pytest.raises(SpecError, match=f"{key}={value!r} must be a positive integer"):
            parse_grid({key: [value]}, "here")


def test_real_numbers_of_other_types_become_floats():
    from fractions import Fraction
    (cfg,) = parse_grid({"lr": [Fraction(1, 4)], "width": [3], "act": ["relu"], "bn": [True]},
                        "here")
    assert cfg == {"lr": 0.25, "width": 3, "act": "relu", "bn": True}
    assert [type(v) for v in cfg.values()] == [float, int, str, bool]


def test_a_malformed_grid_names_the_valid_forms():
    for grid in ({}, [], {"lr": []}, {"lr": 1}, {1: [1]}, [{}], 3):
        with pytest.raises(SpecError, match=r"; valid: a dict of non-empty lists such as "
                                            r"\{'lr': \[1e-3, 3e-3\]\}, or a non-empty list"):
            parse_grid(grid, "here")


@pytest.mark.parametrize("kwargs, boundary, test", [
    ({}, "union", "mean"), ({"test": "sign"}, "union", "sign"),
    ({"looks": (4, 8), "boundary": "exact", "test": "mean"}, "exact", "mean"),
])
def test_every_parsed_field_reaches_the_spec(kwargs, boundary, test):
    spec = parse(track="tabular", extend=3, **kwargs)
    assert (spec.boundary, spec.test, spec.extend) == (boundary, test, 3)
    assert spec.declared_grids == spec.grids == {"tabular": tracks.get("tabular").grid}
    assert spec.claim_type == "superiority" and spec.frontier is None
    assert spec.budget_tolerance == {} and spec.budget_waiver == {}
    plain = spec.to_plain()
    assert (plain["boundary"], plain["test"], plain["extend"]) == (boundary, test, 3)


@pytest.mark.parametrize("kwargs", [
    {}, {"looks": (4, 8), "boundary": "exact", "margin": 0.1, "claim_type": "non-inferiority"},
    {"frontier": {"keep": [0.25, 0.5]}, "budget_waiver": {"steps": "why"}, "futility": 0.2,
     "looks": (4, 8)},
])
def test_the_controller_judges_the_spec_the_workers_trained(kwargs):
    """A payload carries the plain spec; the controller's :meth:`IdeaSpec.from_plain` gives
    back the same typed value, and its plain form byte for byte."""
    import dataclasses
    import json

    spec = dataclasses.replace(parse(track="tabular", **kwargs), arms=("baseline", "idea",
                               "control:c"), arm_tests=(("baseline", "test_b"), ("idea", "test_i")),
                               mechanism_tests=("test_claim",))
    wire = json.loads(json.dumps(spec.to_plain()))
    assert IdeaSpec.from_plain(wire) == spec
    assert IdeaSpec.from_plain(wire).to_plain() == spec.to_plain()


def test_a_plain_spec_with_an_unknown_field_is_refused():
    with pytest.raises(SpecError, match=r"unknown spec field\(s\) \['seed'\]; valid: "):
        IdeaSpec.from_plain({**parse(track="tabular").to_plain(), "seed": 3})


def test_declared_budgets_reach_the_spec():
    spec = parse(track="tabular", budget_tolerance={"params": 0.1},
                 budget_waiver={"steps": "the claim is about steps"})
    assert spec.budget_tolerance == {"params": 0.1}
    assert spec.budget_waiver == {"steps": "the claim is about steps"}


@pytest.mark.parametrize("n, family, said", [
    (5, 1, "only 5 seeds cannot reach p < 0.05 (the smallest possible two-sided p is "
           "0.0625 with the sign-flip test); 6 seeds or more can"),
    (6, 2, "only 6 seeds cannot reach p < 0.05 after Holm over 2 track(s) (the smallest "
           "possible two-sided p is 0.03125 with the sign-flip test); 7 seeds or more can"),
])
def test_the_unreachable_sentence_names_the_family(n, family, said):
    assert unreachable_family(n, family, 0.05) == said


@pytest.mark.parametrize("n, family, reachable", [
    (6, 1, True), (6, 2, False), (7, 2, True), (7, 3, True), (7, 4, False), (2, 1, False),
])
def test_reachability_counts_the_tracks_of_the_family(n, family, reachable):
    assert (unreachable_family(n, family, 0.05) is None) == reachable


@pytest.mark.parametrize("family, alpha, needed", [
    (1, 0.125, 5),   # 2^(1-4) = 0.125 is not < 0.125: p must be strictly below the level
    (2, 0.25, 5), (1, 0.5, 3), (1, math.nextafter(0.125, 1.0), 4),
])
def test_seeds_needed_when_the_smallest_p_sits_on_the_level(family, alpha, needed):
    assert family_seeds_needed(family, alpha) == needed
    assert unreachable_family(needed, family, alpha) is None
    assert unreachable_family(needed - 1, family, alpha) is not None


@pytest.mark.parametrize("kwargs, futility", [
    ({}, None), ({"looks": (4, 8), "futility": 0.1}, 0.1), ({"max_seeds": 96, "futility": 0.2},
                                                            0.2),
])
def test_the_futility_threshold_reaches_the_spec(kwargs, futility):
    spec = parse(track="tabular", **kwargs)
    assert spec.futility == futility and spec.to_plain()["futility"] == futility


@pytest.mark.parametrize("kwargs, words", [
    ({"futility": 0.1}, ": futility=0.1 needs looks to stop at"),
    ({"looks": (4, 8), "futility": 0.1, "claim_type": "non-inferiority", "margin": 0.05},
     ": futility=0.1 applies to superiority claims only; claim_type='non-inferiority'"),
    ({"looks": (4, 8), "futility": 1}, ": futility=1; valid: a conditional power in (0, 1)"),
])
def test_a_futility_threshold_without_looks_or_for_another_claim_is_refused(kwargs, words):
    with pytest.raises(SpecError) as err:
        parse(track="tabular", **kwargs)
    assert str(err.value).startswith(WHERE + words), str(err.value)


@pytest.mark.parametrize("tolerance, kept", [
    (0, {"*": 0.0}), (0.1, {"*": 0.1}), (3, {"*": 3.0}), ({"params": 0.0}, {"params": 0.0}),
    ({"params": 0.1, "steps": 2}, {"params": 0.1, "steps": 2.0}),
    (-0.1, None), (math.inf, None), (math.nan, None), (True, None), ("0.1", None),
    ({"params": -1e-9}, None), ({"params": True}, None), ({1: 0.1}, None), ([0.1], None),
])
def test_budget_tolerances_are_numbers_from_zero(tolerance, kept):
    if kept is not None:
        assert parse(track="tabular", budget_tolerance=tolerance).budget_tolerance == kept
    else:
        with pytest.raises(SpecError, match=r"budget_tolerance=.* must be a number >= 0"):
            parse(track="tabular", budget_tolerance=tolerance)


@pytest.mark.parametrize("waiver", [{"params": ""}, {"params": "  "}, {"params": 1}, ["params"],
                                    {2: "why"}])
def test_a_budget_waiver_needs_a_stated_reason(waiver):
    with pytest.raises(SpecError, match=r"budget_waiver=.* must be a dict of budget name"):
        parse(track="tabular", budget_waiver=waiver)


@pytest.mark.parametrize("looks, ok", [
    ((2, 3), True), ((2,), True), ((True, 8), False), ((2, 2), False), ((1, 4), False),
    ((4, 8.0), False), ([], False),
])
def test_each_look_is_an_integer_of_two_seeds_or_more_and_increasing(looks, ok):
    if ok:
        assert parse(track="tabular", looks=looks).looks == tuple(looks)
    else:
        with pytest.raises(SpecError, match="valid: looks=\\(8, 16\\), strictly increasing"):
            parse(track="tabular", looks=looks)


@pytest.mark.parametrize("max_seeds, looks", [(2, None), (7, None), (8, (8,)), (9, (8, 9))])
def test_max_seeds_from_the_seeds_up_is_one_look_more(max_seeds, looks):
    if looks is None:
        with pytest.raises(SpecError, match=f"max_seeds={max_seeds} is below seeds=8:"):
            parse(track="tabular", max_seeds=max_seeds, seeds=8)
    else:
        assert parse(track="tabular", max_seeds=max_seeds, seeds=8).looks == looks


def test_the_speed_benchmark_s_a_a_module_benches_the_seeds_its_plain_loop_runs():
    """benchmarks/speed/speed.py times its A/A module against a plain loop of DEFAULT_SEEDS
    seeds (48 trainings): the module must not take the track's own default (64 on tabular)."""
    import importlib.util
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "benchmarks" / "speed"))
    try:
        spec = importlib.util.spec_from_file_location("speed_bench", root / "benchmarks"
                                                      / "speed" / "speed.py")
        speed = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(speed)
    finally:
        sys.path.remove(str(root / "benchmarks" / "speed"))
    namespace: dict = {}
    exec(speed.AA_MODULE.format(track="tabular"), namespace)
    parsed = parse_bench_marker(namespace["pytestmark"].mark, "test_aa_tabular.py",
                                seeds_override=None, epochs_override=None)
    assert len(parsed.seeds) == DEFAULT_SEEDS < tracks.get("tabular").seeds
