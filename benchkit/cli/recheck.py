"""What ``python -m benchkit verify`` recomputes: a report's selection, p-values, family-wise
adjustment and verdicts, from its run rows, with the functions that made them.

The rows themselves are checked against the store by :mod:`benchkit.cli.verify`; this module
checks that the report's figures follow from those rows, so that a report cannot say more than
its runs do. The Holm family spans the idea's tracks: the reports beside this one in the idea's
folder (``reports/<idea>/<track>/``) are its other members. Mechanism evidence (tests and
signatures) and the declared plan are taken from the report as written. The comparisons are
the pipeline's build's (:func:`rebuilt`: the rows as run records, the report's spec, one call
of :func:`benchkit.verdict.pipeline.build_finite`, a frontier's pooled ones included); the
selection each arm's rows make is checked against the report's first, with the build's
functions, to say where they differ. A budget check the rows cannot redo (they were written
before its seeds were drawn per bench) is named (:func:`unredone`), not failed.
"""
from __future__ import annotations

import dataclasses
import functools

from benchkit.spec.idea import IdeaSpec, cfg_id
from benchkit.spec.payloads import RunPayload
from benchkit.spec.run_record import NO_RESULT, JsonDict, RunRecord, RunResult
from benchkit.stats import signtest
from benchkit.verdict import build, frontier, pipeline, sweeps
from benchkit.verdict.frontier import pooled_over_points
from benchkit.verdict.records import Comparison, Report

Runs = dict[build.RunKey, RunResult]  # passed rows' results by (arm, cfg id, seed)


def _arms(report: Report) -> list[tuple[str, JsonDict | None]]:
    """(arm, its section's selected config) of every comparator and the idea."""
    arms = [("baseline", report.baseline.best_cfg), ("idea", report.idea_config)]
    return arms + [(c.arm, c.best_cfg) for c in report.controls.values()]


def _test(report: Report) -> str:
    named = report.protocol.get("test")
    return next((test for test, name in signtest.NAMES.items() if name == named), "mean")


def _selected(runs: Runs, arm: str, grid: list[JsonDict], seeds: list[int],
              direction: str) -> JsonDict | None:
    """The config ``arm`` selects on validation over ``grid``, as the plugin selects."""
    best = build.selected_index(build.arm_sweep(runs, arm, grid, seeds), direction)
    return None if best is None else grid[best]


def _selected_tests(report: Report, runs: Runs, arm: str, said: JsonDict | None,
                    direction: str, problems: list[str]) -> list[float] | None:
    """``arm``'s test metric per seed at the configs its rows select (over a frontier, each
    seed's mean over the points); None, with the reason in ``problems``, where the rows select
    otherwise than the report says."""
    frontier = report.frontier
    grid, seeds = report.grid, report.seeds
    points: list[tuple[object, list[JsonDict], JsonDict | str | None]] = (
        [(None, grid, said)] if not frontier else
        [(p.value, [c for c in grid if c.get(frontier.axis) == p.value],
          {"baseline": p.baseline_cfg, "idea": p.idea_cfg}.get(arm, "any"))
         for p in frontier.points])
    rows: list[list[float]] = []
    for value, sub, claimed in points:
        got = _selected(runs, arm, sub, seeds, direction)
        if got is None or claimed not in ("any", got):
            where = "" if value is None or not frontier else f" at {frontier.axis}={value}"
            problems.append(f"{arm}: the rows select {got}{where}, the report {claimed}")
            return None
        tests = [t for s in seeds if (t := runs[(arm, cfg_id(got), s)].test) is not None]
        if len(tests) != len(seeds):  # a selected config is eligible: each seed has its test
            problems.append(f"{arm}: a run of the selected {got} has no test metric")
            return None
        rows.append(tests)
    return rows[0] if not frontier else pooled_over_points(rows)


def comparisons(report: Report) -> tuple[list[Comparison] | None, list[str]]:
    """The report's comparisons (baseline first, then each control, as
    :meth:`benchkit.verdict.records.Report.comparisons` orders them) recomputed from its rows,
    and one line per figure that differs; None when the report is incomplete."""
    seeds, grid = report.seeds, report.grid
    runs = sweeps.runs_of(report.runs)
    if report.comparison is None:
        lacking = [arm for arm, _ in _arms(report) for cfg in grid for s in seeds
                   if (arm, cfg_id(cfg), s) not in runs]
        return None, [] if lacking or not report.complete else [
            "it says incomplete, but its rows hold every run"]
    direction, problems = report.direction, []
    per_arm: dict[str, list[float]] = {}
    for arm, said in _arms(report):
        if any((arm, cfg_id(cfg), s) not in runs for cfg in grid for s in seeds):
            problems.append(f"{arm}: its rows lack runs of the grid, yet the report compares")
            return None, problems
        tests = _selected_tests(report, runs, arm, said, direction, problems)
        if tests is None:
            return None, problems
        per_arm[arm] = tests
    built, _ = rebuilt(report)
    comps = built.comparisons()
    if not comps:
        reasons = built.incomplete.reasons if built.incomplete else ()
        return None, [f"rebuilt from its rows it is incomplete: {reasons[0] if reasons else ''}"]
    labels = [f"{arm} comparison" if arm != "baseline" else "comparison"
              for arm, _ in _arms(report) if arm != "idea"]
    for label, got, stated in zip(labels, comps, report.comparisons()):
        for field in ("per_seed_diffs", "delta_mean", "p_value"):
            if getattr(got, field) != getattr(stated, field):
                problems.append(f"{label} {field} is {_shown(getattr(stated, field))!r} in the "
                                f"report, {_shown(getattr(got, field))!r} from its rows")
    return comps, problems


def rebuilt(report: Report) -> tuple[Report, list[str]]:
    """``report`` built again from its rows by the pipeline's build (rows -> run records ->
    :func:`benchkit.verdict.pipeline.build_finite`), before the family's adjustment, and one
    line per budget check it cannot redo: rows written before a check's seeds were drawn per
    bench hold other seeds' check runs, which would leave the rebuilt report waiting for the
    check; then it is built without budget checks (they change no comparison) and says so."""
    spec = spec_of(report)
    payloads = run_payloads(report, spec)
    alpha = report.alpha

    def built(checks: bool) -> Report:
        make = frontier.build_frontier_report if spec.frontier else functools.partial(
            build.build_report, budget_checks=checks)
        return pipeline.build_finite(make, spec, report.track, payloads, [], alpha)
    first = built(True)
    waiting = [(arm, a.budget_check) for arm, a in first.convergence.arms.items()
               if a.budget_check is not None and a.budget_check.pending]
    if not waiting:
        return first, []
    return built(False), [
        f"the {arm}'s budget check ({check.epochs} epochs on {check.called_seeds} seeds) "
        "cannot be redone: the rows lack the runs today's draw of its seeds asks for (a "
        "report written before the check's seeds were drawn per bench); its comparisons are "
        "rechecked without it" for arm, check in waiting]


def unredone(report: Report) -> list[str]:
    """One line per budget check of ``report`` that its rows cannot redo (:func:`rebuilt`);
    none for an incomplete report, whose comparisons are not rechecked."""
    return [] if report.comparison is None else rebuilt(report)[1]


def spec_of(report: Report) -> IdeaSpec:
    """The idea's spec as its report states it, on its own track: the grid it ran (grid
    extensions included, none made again), its seeds, arms, test, margins and plan."""
    protocol, track, plan = report.protocol, report.track, report.sequential
    return IdeaSpec(
        name=report.name, module=report.module, tracks=(track,),
        grids={track: tuple(report.grid)}, seeds=tuple(report.seeds),
        epochs={track: protocol["epochs"]}, claim=report.claim,
        margin=protocol.get("margin"), margin_reference=report.margin_reference,
        looks=plan.looks, looks_declared=plan.declared, boundary=plan.boundary,
        test=_test(report), protocols={track: protocol}, arms=tuple(a for a, _ in _arms(report)),
        claim_type=report.claim_type, extend=0,
        frontier=None if report.frontier is None else {
            report.frontier.axis: report.frontier.values})


def run_payloads(report: Report, spec: IdeaSpec) -> list[RunPayload]:
    """The report's runs as the controller receives them: each row's record (on the report's
    track) with the figures the rules read of a passed one's result (its metrics, whether it
    diverged, its seconds and curve), a failed or skipped one's outcome alone."""
    return [RunPayload(
        outcome=row.outcome, message=None if row.outcome == "passed" else row.outcome,
        nodeid=f"{report.module}::test_{row.arm}[{k}]", spec=spec,
        record=RunRecord(point=row.point, result=_figures(row.result) if (
            row.outcome == "passed") else None, outcome=row.outcome, reused=row.reused,
            cpu=row.cpu)) for k, row in enumerate(report.runs)]


def _figures(result: RunResult | None) -> RunResult:
    """What the rules read of a row's result (none shown: the empty one)."""
    shown = result if result is not None else NO_RESULT
    return RunResult(val=shown.val, test=shown.test, diverged=shown.diverged,
                     seconds=shown.seconds, curve=shown.curve)


def _shown(value: object) -> object:
    """A figure as the report's JSON shows it (a list where the record holds a tuple)."""
    return list(value) if isinstance(value, tuple) else value


def verdicts(record: Report, family: list[Report]) -> list[str]:
    """One line per p-value or verdict of the report ``record`` that its rows (and those of
    the other reports of its idea, ``family``, for the family-wise adjustment) do not
    give."""
    mine_at = family.index(record) if record in family else -1
    comps, problems = comparisons(record)
    if comps is None or record.comparison is None:
        if not problems and (record.practical_verdict, record.system_verdict) != (
                "incomplete", "incomplete"):
            problems.append("an incomplete report with a verdict")
        return problems
    if problems:
        return problems
    family_size = record.comparison.family_size
    if family_size != len(family) or mine_at < 0:
        return [(f"its family has {family_size} track(s), but {len(family)} report(s) of the "
                 "idea are beside it: give the idea's folder, with every track's report")]
    members = [record if k == mine_at else member for k, member in enumerate(family)]
    redone = [_redone(member, comps if k == mine_at else comparisons(member)[0])
              for k, member in enumerate(members)]
    mine = pipeline.decide_family(redone)[mine_at]  # as the plugin decides
    assert mine.comparison is not None  # decided from comps: a complete report
    for field in ("p_adjusted", "p_adjusted_harms", "verdict"):
        got, was = getattr(mine.comparison, field), getattr(record.comparison, field)
        if got != was:
            problems.append(f"comparison {field} is {was!r} in the report, {got!r} from its "
                            "rows")
    for name, control in mine.controls.items():
        said = record.controls[name]
        for field, got, was in [
                ("p_adjusted", control.comparison.p_adjusted, said.comparison.p_adjusted),
                ("verdict", control.verdict, said.verdict)]:
            if got != was:
                problems.append(f"control {name} {field} is {was!r} in the report, {got!r} "
                                "from its rows")
    for field in ("practical_verdict", "system_verdict"):
        got, was = getattr(mine, field), getattr(record, field)
        if got != was:
            problems.append(f"{field} is {was!r} in the report, {got!r} from its rows")
    return problems


def _redone(report: Report, comps: list[Comparison] | None) -> Report:
    """``report`` with ``comps`` as its comparisons (None: an incomplete member, which enters
    the family at p = 1) and none of its warnings, ready for the family's adjustment and the
    decision."""
    redone = dataclasses.replace(report, warnings=())
    if comps is None:
        return dataclasses.replace(redone, comparison=None, controls={})
    return redone.with_comparisons(comps)
