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
