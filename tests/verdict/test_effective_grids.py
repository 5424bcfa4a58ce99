"""Arms with different effective grids (issue 41 item 2): an arm whose results are identical
along a grid axis (its own loop, a fixed lr) pays no tuning loss there while the other arm
does, so the selection-aware test cannot separate a better arm from the other's tuning loss.
The claims that favour the arm with the smaller effective grid are refused, with a warning;
claims against it stay. In process, hand-made runs, no training.
"""
from __future__ import annotations

import numpy as np
import pytest
from builders import ALPHA, GRID, TRACK, built, decided, make_run, make_spec

from benchkit.stats import selection
from benchkit.verdict import sweeps
from benchkit.verdict.records import Comparison

N = 8




def runs(shift: float, constant: str = "idea", margin_noise: float = 0.0):
    """``constant``'s values ("idea", "baseline" or "both") are the same at every lr (its own
    loop); the other arm's vary
    with lr. The idea is ``shift`` lower (better) than the baseline's best config."""
    out = []
    for s in range(N):
        level = 1.0 + 0.01 * s
        for k, cfg in enumerate(GRID):
            base = level + (0.0 if constant in ("baseline", "both") else 0.05 * k)
            idea = level - shift + (0.0 if constant in ("idea", "both") else 0.05 * k)
            idea += margin_noise * ((-1) ** s)
            out += [make_run("baseline", cfg, s, base, base), make_run("idea", cfg, s, idea, idea)]
    return out


def report_of(run_list, **spec_fields):
    return decided(built(make_spec(GRID, N, **spec_fields), TRACK, run_list, [],
                                alpha=ALPHA), holm=True)


def test_an_idea_constant_along_lr_cannot_be_helps():
    report = report_of(runs(0.05))
    comp = report["comparison"]
    assert comp["effective_grids"] == {"idea_constant": ["lr"], "comparator_constant": []}
    assert comp["p_unexchangeable"] < ALPHA  # the test alone would say helps
    assert comp["p_value"] == 1.0 and report["practical_verdict"] == "inconclusive"
    assert any("effective grids differ: the idea's results are identical at every value of lr"
               in w and "cannot be helps" in w for w in report["warnings"])
    assert comp["signflip_ci"]["hi"] is None and comp["signflip_ci"]["lo"] < 0


def test_a_harm_of_an_idea_constant_along_lr_is_still_found():
    report = report_of(runs(-0.05))
    assert report["comparison"]["p_value"] < ALPHA
    assert report["practical_verdict"] == "harms"
    assert report["comparison"].get("p_unexchangeable") is None


def test_the_mirror_refuses_harms_and_keeps_helps():
    helps = report_of(runs(0.05, constant="baseline"))
    assert helps["comparison"]["effective_grids"]["comparator_constant"] == ["lr"]
    assert helps["practical_verdict"] == "helps"
    harms = report_of(runs(-0.05, constant="baseline"))
    assert harms["comparison"]["p_value"] == 1.0
    assert harms["practical_verdict"] == "inconclusive"


def test_equal_effective_grids_change_nothing():
    report = report_of(runs(0.05, constant="both"))
    assert report["comparison"]["effective_grids"] is None
    assert report["practical_verdict"] == "helps"


def test_non_inferiority_is_refused_to_an_idea_constant_along_lr():
    report = report_of(runs(0.0, margin_noise=0.001), margin=0.05)
    ni = report["comparison"]["noninferiority"]
    assert ni["non_inferior"] is False and ni["p_value"] == 1.0 and ni["bound"] is None
    assert report["practical_verdict"] == "inconclusive"


def test_axes_are_compared_within_the_other_axes_values():
    """lr x wd: the idea ignores lr but uses wd, so only lr is an unexchangeable axis."""
    grid = [{"lr": lr, "wd": wd} for wd in (0.0, 0.1) for lr in (1e-3, 1e-2)]
    rng = np.random.default_rng(0)
    base = rng.normal(size=(N, 4))
    idea = np.repeat(rng.normal(size=(N, 2)), 2, axis=1)  # columns (wd 0: lr a, b), (wd .1: ...)
    sw = selection.sweeps(base, base, idea, idea, grid=grid)
    assert selection.effective_grids(sw).idea_constant == ("lr",)
    assert selection.blocked(sw) == {"idea"}
    assert selection.blocked(selection.sweeps(base, base, idea, idea)) == set()  # no grid


def test_a_frontier_axis_is_not_an_axis_of_selection():
    grid = [{"lr": lr, "keep": keep} for keep in (0.5, 1.0) for lr in (1e-3, 1e-2)]
    rng = np.random.default_rng(1)
    base = rng.normal(size=(N, 4))
    idea = np.repeat(rng.normal(size=(N, 1)), 4, axis=1)  # constant along keep and lr
    sw = selection.sweeps(base, base, idea, idea, groups=[[0, 1], [2, 3]], grid=grid)
    assert [axis for axis, _ in sw.axes] == ["lr"]


def test_recheck_and_report_agree_on_the_refusal():
    report = report_of(runs(0.05))
    comp = dict(report["comparison"])
    again = sweeps.decide_by_selection(
        Comparison.from_json({**comp, "p_value": comp["p_fixed_configs"]}),
        sweeps.of_report(report), "lower")
    assert again.p_value == 1.0 and again.p_unexchangeable == comp["p_unexchangeable"]


def test_the_report_with_a_refusal_validates_against_the_schema():
    import json

    from jsonschema import Draft202012Validator

    from benchkit.report import bench_report

    schema = json.loads(bench_report.SCHEMA_PATH.read_text(encoding="utf-8"))
    report = json.loads(json.dumps(report_of(runs(0.05)), default=float))
    comp_schema = schema["properties"]["comparison"]
    errors = list(Draft202012Validator(comp_schema).iter_errors(report["comparison"]))
    assert report["comparison"]["effective_grids"] and errors == []


def test_the_comparison_holds_the_effective_grids_record_and_writes_its_json():
    """decide_by_selection puts the EffectiveGrids record in the Comparison; the report's
    object is its to_json, read back by Comparison.from_json; other shapes are refused."""
    report = report_of(runs(0.05))
    comp = Comparison.from_json(dict(report["comparison"]))
    assert comp.effective_grids == selection.EffectiveGrids(("lr",), ())
    assert comp.to_json()["effective_grids"] == {"idea_constant": ["lr"],
                                                 "comparator_constant": []}
    again = sweeps.decide_by_selection(
        Comparison.from_json({**report["comparison"], "p_value": comp.p_fixed_configs}),
        sweeps.of_report(report), "lower")
    assert again.effective_grids == comp.effective_grids
    with pytest.raises(ValueError, match=r"effective_grids has the keys \['idea_constant', "
                                         r"'comparator_constant'\], each a list of axis names"):
        selection.EffectiveGrids.from_json({"idea_constant": ["lr"]})
    with pytest.raises(ValueError, match="each a list of axis names"):
        selection.EffectiveGrids.from_json({"idea_constant": "lr", "comparator_constant": []})
