"""The pipeline looks at its records as they are: no report is written out inside the
process to be read again (issue 52)."""
from __future__ import annotations

import dataclasses
import math

from builders import as_report

from benchkit.verdict import pipeline


def test_non_finite_walks_the_record_and_names_places_by_their_json_keys():
    report = as_report({})
    assert report.comparison is not None and report.comparison.planning_figures is not None
    planning = dataclasses.replace(report.comparison.planning_figures, mde_power80=math.inf)
    comp = dataclasses.replace(report.comparison, delta_mean=math.nan,
                               planning_figures=planning)
    bad = dataclasses.replace(report, comparison=comp)
    # a flattened record's keys sit in its parent's object, as the report's JSON has them
    assert pipeline.non_finite(bad) == ["comparison.delta_mean", "comparison.mde_power80"]
    assert pipeline.non_finite(report) == []


def test_a_reports_sweeps_are_built_once_per_comparator():
    """The decision asks for a comparison's sweeps more than once (its interval, its verdict):
    the same report's rows give back the same Sweeps, its cross-fits kept; other rows do not."""
    from benchkit.verdict import sweeps

    report = as_report({})
    first = sweeps.of_record(report)
    assert sweeps.of_record(dataclasses.replace(report, warnings=())) is first  # a later stage
    assert sweeps.of_record(report, "idea") is not first
    other = dataclasses.replace(report, runs=tuple(list(report.runs)))  # equal, not the same
    assert sweeps.of_record(other) is not first


def test_the_decision_takes_each_comparisons_sweeps_from_the_build(monkeypatch):
    """The build compares on each comparator's sweeps and hands them to the decision, so a
    bench with controls builds none again from its rows (issue 52: each comparison's sweeps
    built once)."""
    import builders as b

    from benchkit.verdict import sweeps

    grid = [{"lr": lr} for lr in (0.001, 0.01)]
    arms = ["baseline", "idea", "control:a"]
    runs = [b.make_run(arm, cfg, s, 1.0 + 0.1 * s + 0.2 * k + 0.05 * a, 2.0 + 0.1 * s - 0.03 * a)
            for a, arm in enumerate(arms) for k, cfg in enumerate(grid) for s in range(6)]
    rebuilt = []
    monkeypatch.setattr(sweeps, "of_runs", lambda *args: rebuilt.append(args))
    report, = pipeline.idea_reports(b.make_spec(grid, 6, margin=0.05, arms=arms), runs, [],
                                    alpha=0.05)
    assert report.comparison is not None and report.comparison.selection_aware
    assert report.controls["a"].comparison.selection_aware
    assert rebuilt == []


def test_the_fast_finite_check_finds_what_non_finite_names():
    report = as_report({})
    assert not pipeline.has_non_finite(report)
    row = dataclasses.replace(report.runs[0], logs={"loss": math.inf})
    assert pipeline.has_non_finite(dataclasses.replace(report, runs=(row,)))
    assert pipeline.non_finite(dataclasses.replace(report, runs=(row,))) == ["runs[0].logs.loss"]
    comp = dataclasses.replace(report.comparison, delta_mean=math.nan)
    assert pipeline.has_non_finite(dataclasses.replace(report, comparison=comp))
