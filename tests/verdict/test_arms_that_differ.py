"""Arms that are not exchangeable (issue 49 items 1-3): an arm whose results are identical
along lr (its own loop, a fixed lr), or nearly so, is tested as any other by the one
selection-aware test (an intersection-union over the comparator's configs, the idea's config
cross-fitted): better than the comparator's every config is helps, as good as its best is not,
whatever the last bit of its values; no rule sits beside the test and no warning names
effective grids. In process, hand-made runs, no training.
"""
from __future__ import annotations

import json

import pytest
from builders import ALPHA, GRID, TRACK, built, decided, make_run, make_spec

from benchkit.verdict.records import Comparison

N = 8


def runs(shift: float, constant: str = "idea", wobble: float = 0.0):
    """``constant``'s values are the same at every lr (plus +-``wobble`` * k, a last-bit
    difference whose sign alternates over seeds); the other arm's rise with lr. The idea is
    ``shift`` lower (better) than the baseline's best config."""
    out = []
    for s in range(N):
        level, w = 1.0 + 0.01 * s, wobble * (-1) ** s
        for k, cfg in enumerate(GRID):
            base = level + (w * k if constant == "baseline" else 0.05 * k)
            idea = level - shift + (w * k if constant == "idea" else 0.05 * k)
            out += [make_run("baseline", cfg, s, base, base), make_run("idea", cfg, s, idea, idea)]
    return out


def report_of(run_list, **spec_fields):
    return decided(built(make_spec(GRID, N, **spec_fields), TRACK, run_list, [],
                         alpha=ALPHA), holm=True)


@pytest.mark.parametrize("wobble", [0.0, 1e-12])
def test_an_idea_constant_along_lr_better_than_every_config_is_helps(wobble):
    report = report_of(runs(0.05, wobble=wobble))
    comp = report["comparison"]
    assert comp["p_value"] == 2 / 256 and report["practical_verdict"] == "helps"
    assert comp["per_seed_diffs"] == pytest.approx([-0.05] * N)  # against the best config
    assert comp["signflip_ci"]["hi"] < 0 and comp["effective_grids"] is None
    assert not any("effective grids" in w for w in report["warnings"])


@pytest.mark.parametrize("wobble", [0.0, 1e-12, -1e-12])
def test_an_idea_constant_along_lr_as_good_as_the_best_config_is_not_helps(wobble):
    """The baseline pays nothing for tuning here, but an idea only as good as the
    comparator's best config is no win under the declared estimand, bit-identical or not."""
    report = report_of(runs(0.0, wobble=wobble))
    assert report["comparison"]["p_value"] == 1.0
    assert report["practical_verdict"] == "inconclusive"


def test_a_harm_of_an_idea_constant_along_lr_is_found():
    report = report_of(runs(-0.05))
    assert report["comparison"]["p_value"] < ALPHA
    assert report["practical_verdict"] == "harms"


def test_the_mirror_finds_harms_against_a_constant_comparator():
    report = report_of(runs(-0.05, constant="baseline"))
    assert report["practical_verdict"] == "harms"
    assert report_of(runs(0.05, constant="baseline"))["practical_verdict"] == "helps"


def test_the_report_validates_and_an_older_comparison_with_effective_grids_reads_back():
    from jsonschema import Draft202012Validator

    from benchkit.report import bench_report

    schema = json.loads(bench_report.SCHEMA_PATH.read_text(encoding="utf-8"))
    report = json.loads(json.dumps(report_of(runs(0.05)), default=float))
    comp_schema = schema["properties"]["comparison"]
    assert list(Draft202012Validator(comp_schema).iter_errors(report["comparison"])) == []
    older = {**report["comparison"], "effective_grids": {"idea_constant": ["lr"],
                                                         "comparator_constant": []}}
    assert Comparison.from_json(older).effective_grids is not None
