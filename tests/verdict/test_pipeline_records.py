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
    run = report.runs[0]
    assert run.result is not None
    row = dataclasses.replace(run, result=dataclasses.replace(run.result,
                                                              logs={"loss": math.inf}))
    assert pipeline.has_non_finite(dataclasses.replace(report, runs=(row,)))
    assert pipeline.non_finite(dataclasses.replace(report, runs=(row,))) == ["runs[0].logs.loss"]
    comp = dataclasses.replace(report.comparison, delta_mean=math.nan)
    assert pipeline.has_non_finite(dataclasses.replace(report, comparison=comp))


def test_the_fast_finite_check_walks_run_records_without_writing_their_rows(monkeypatch):
    """A run record's row is written from its fields, so the fast check walks those (the
    report's rows are most of its floats: writing each row to check it cost a control's
    share of the aggregation)."""
    from benchkit.spec.run_record import RunRecord

    report = as_report({})
    run = report.runs[0]
    assert run.result is not None
    inf_row = dataclasses.replace(run, result=dataclasses.replace(run.result, val=math.inf))

    def refused(self):
        raise AssertionError("the fast check wrote a row")

    monkeypatch.setattr(RunRecord, "to_json", refused)
    assert not pipeline.has_non_finite(report)
    assert pipeline.has_non_finite(dataclasses.replace(report, runs=(inf_row,)))


def test_the_compare_stage_is_one_record_with_every_field():
    """build_report's select stage (comparison.select: each arm's config, runs and results)
    and its compare stage (comparison.tested): a report either reaches it, with every arm's
    config, summary, comparison and sweeps, or has none (issue 52 item 4)."""
    import builders as b

    from benchkit.spec.idea import cfg_id
    from benchkit.verdict import build, comparison, sweeps

    grid = [{"lr": lr} for lr in (0.001, 0.01)]
    arms = ["baseline", "idea", "control:a"]
    spec = b.make_spec(grid, 6, arms=arms)
    payloads = [b.make_run(arm, cfg, s, 1.0 + 0.1 * s + 0.2 * k, 2.0 + 0.1 * s - 0.03 * a)
                for a, arm in enumerate(arms) for k, cfg in enumerate(grid) for s in range(6)]
    runs = build.passed_runs(payloads, b.TRACK)   # the payloads' run records, by place
    assert list(runs.values()) == [p.record for p in payloads]
    sweeps_of = {arm: build.arm_sweep(runs, arm, grid, list(range(6))) for arm in arms}
    chosen = comparison.select(runs, grid, list(range(6)), {arm: 0 for arm in arms})
    assert chosen.configs == {arm: grid[0] for arm in arms}
    assert [r.val for r in chosen.results["baseline"]] == [
        runs[("baseline", cfg_id(grid[0]), s)].val for s in range(6)]
    tables = sweeps.arm_tables(runs, arms, grid, list(range(6)))
    stage = comparison.tested(spec, runs, grid, list(range(6)), chosen, sweeps_of, tables,
                              direction="lower", alpha=0.05)
    assert set(stage.sweeps) == {"baseline", "control:a"} and set(stage.controls) == {"a"}
    assert stage.idea_config == grid[0] and stage.baseline.best_cfg == grid[0]
    assert [r.test for r in stage.idea_runs] == [runs[("idea", cfg_id(grid[0]), s)].test
                                                  for s in range(6)]
    report = build.build_report(spec, b.TRACK, payloads, [], alpha=0.05)
    assert report.comparison == stage.comparison and report.idea == stage.idea


def test_the_fast_finite_check_reads_a_runs_floats_where_the_walk_of_its_fields_would():
    """has_non_finite reads a run record's floats in one step (a report's rows are most of
    its floats): every field of the run that may hold a float, and a non-finite one anywhere
    in it is still found, as non_finite finds it."""
    import typing

    from benchkit.spec.run_record import CurvePoint, Provenance, RunPoint, RunRecord, RunResult

    def floats(cls):
        hints = typing.get_type_hints(cls)
        return {f.name for f in dataclasses.fields(cls) if not pipeline._holds_text(hints[f.name])}

    assert floats(RunResult) == set(pipeline.RUN_RESULT_FIELDS)
    assert floats(RunRecord) == {"point", "result", "origin"} and floats(RunPoint) == {"cfg"}
    report = as_report({})
    run = report.runs[0]
    assert run.result is not None and not pipeline.has_non_finite(report)
    result = run.result
    bad = [dataclasses.replace(run, point=dataclasses.replace(run.point, cfg={"lr": math.inf})),
           dataclasses.replace(run, result=dataclasses.replace(result, seconds=math.nan)),
           dataclasses.replace(run, result=dataclasses.replace(result, test=-math.inf)),
           dataclasses.replace(run, result=dataclasses.replace(result, budgets={"x": math.inf})),
           dataclasses.replace(run, result=dataclasses.replace(
               result, curve=(CurvePoint(epoch=1, val=math.nan),))),
           dataclasses.replace(run, origin=Provenance("k", "d", "reused", None,
                                                      planned={"lr": [math.inf]}))]
    for k, row in enumerate(bad):
        assert pipeline.has_non_finite(dataclasses.replace(report, runs=(row,))), row
        # a row's JSON leaves its origin's plan out: the fast check may say yes where none is
        assert k == 5 or pipeline.non_finite(dataclasses.replace(report, runs=(row,))), row
    assert not pipeline.has_non_finite(dataclasses.replace(
        report, runs=(dataclasses.replace(run, result=None),)))


def test_the_fast_finite_check_reads_a_tuple_of_numbers_in_one_step():
    """A tuple or list of numbers (an arm's per-seed values) is checked by its sum in one
    step: a NaN or an infinity among them is found (opposite infinities too: their sum is
    NaN); finite values whose sum overflows are read one by one and pass; items that are not
    all numbers (None, an int past float range) are read one by one."""
    report = as_report({})
    idea = report.idea
    assert idea is not None and not pipeline.has_non_finite(report)
    for per_seed, bad in [((1.0, math.nan), True), ((math.inf, -math.inf), True),
                          ([2.0, -math.inf], True), ((None, math.inf), True),
                          ((1e308, 1e308, -1e308), False), ((10 ** 400, 1.0), False),
                          ((None, 1.0, 3), False)]:
        changed = dataclasses.replace(report, idea=dataclasses.replace(idea, per_seed=per_seed))
        assert pipeline.has_non_finite(changed) is bad, per_seed
        assert bool(pipeline.non_finite(changed)) is bad, per_seed
