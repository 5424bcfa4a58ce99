"""Frontier benches: ``pytest.mark.bench(..., frontier={"keep": [1/32, 1/16, 1/8]})``.

A size or speed trade-off is not one comparison but a curve. Every arm is benched at every
point of the axis (the value reaches the arm as ``run.cfg[axis]`` and ``run.frontier``), and
each point is a bench of its own: each arm selects its config there on validation, and the idea
is compared with the baseline and every control there. The report's top-level comparison, the
one the verdict rests on, pairs seed by seed each arm's mean test metric over the points (one
paired test over the whole frontier, so no multiplicity across points); the points' own
comparisons are listed, unadjusted, under ``frontier.points``, each with the interval that
inverts its own test at alpha (as a report's ``ci95``, so it excludes 0 exactly when that
point's p is below alpha). Budgets are checked point by
point; ``params`` varies along the axis, so it is reported and not matched. A point whose
selection sits at the edge of another axis (lr) extends that axis there, as any bench does
(:mod:`benchkit.verdict.extension`); the frontier's own axis is never extended.
"""
from __future__ import annotations

import dataclasses
import functools
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.spec.idea import ARMS, CONTROL, Config, IdeaSpec, cfg_id
from benchkit.spec.payloads import MechanismPayload, RunPayload
from benchkit.spec.run_record import RunRecord
from benchkit.stats import paired
from benchkit.verdict import comparison, controls, decision, mechanism
from benchkit.verdict import sweeps
from benchkit.verdict.budgets import frontier_section, median_figures
from benchkit.verdict.records import Comparison, Frontier, FrontierPoint, Report
from benchkit.verdict.sections import Baseline, FailedRun, Incomplete, SweepRow
from benchkit.verdict import build


def build_frontier_report(spec: IdeaSpec, track: str, run_payloads: Sequence[RunPayload],
                          mechanism_payloads: Sequence[MechanismPayload], *,
                          alpha: float) -> Report:
    """One report over the frontier (see the module docstring); verdicts come later, from
    :func:`benchkit.verdict.decision.decision_of`, as for any report. Each point is built as
    a report of its own; then the whole grid's report is built once, its arms selected over
    the whole grid (what its convergence section reads) and compared by the frontier's pooled
    stage (:func:`_pooled`), never by a whole-grid comparison."""
    if not spec.frontier:
        raise ValueError(f"{spec.name}: a frontier report needs the idea's frontier= axis")
    (axis, values), = spec.frontier.items()
    grid = spec.grids[track]
    points: list[tuple[Any, Report]] = []
    declared = spec.declared_grids.get(track, grid)
    for value in values:   # each point extends its own grid (benchkit.verdict.extension)
        sub = dataclasses.replace(spec, grids={**spec.grids, track: tuple(
            c for c in grid if c[axis] == value)}, declared_grids={
            **spec.declared_grids, track: tuple(c for c in declared if c[axis] == value)})
        points.append((value, build.build_report(sub, track, run_payloads, mechanism_payloads,
                                               alpha=alpha)))
    warnings = tuple(dict.fromkeys(w for _, p in points for w in p.warnings))
    frontier = Frontier(axis=axis, values=tuple(values),
                        points=tuple(_point(value, p, alpha) for value, p in points))
    done = all(p.complete for _, p in points)
    compare = functools.partial(_pooled, points, frontier) if done else comparison.untested
    top = build.build_report(spec, track, run_payloads, mechanism_payloads, alpha=alpha,
                             compare=compare, frontier=frontier)
    top = dataclasses.replace(top, warnings=warnings)
    return top if done else _incomplete(top, points)


def _pooled(points: Sequence[tuple[Any, Report]], frontier: Frontier, spec: IdeaSpec,
            runs: Mapping[tuple[str, str, int], RunRecord], grid: Sequence[Config],
            seeds: Sequence[int], chosen: comparison.Selected,
            arm_sweeps: Mapping[str, Sequence[SweepRow]], tables: sweeps.Tables, *,
            direction: str, alpha: float) -> comparison.Tested:
    """The frontier's compare stage (:class:`benchkit.verdict.comparison.Compare`), its
    points all complete: each arm's mean test metric over the points at its configs selected
    per point, seed by seed, compared on the sweeps of the whole ``grid`` grouped by point;
    budgets checked point by point. ``chosen`` (the whole grid's selection) is not compared."""
    arms, axis, n = spec.arms, frontier.axis, len(seeds)
    selected = {arm: [runs[(arm, cfg_id(_selected_cfg(p, arm)), s)] for _, p in points
                      for s in seeds] for arm in arms}
    pooled = {arm: pooled_over_points([comparison.test_values(rows[k:k + n])
                                       for k in range(0, len(rows), n)])
              for arm, rows in selected.items()}
    marker = {axis: "selected per point (see frontier.points)"}
    groups = sweeps.groups_of(list(grid), frontier)  # each point's selection cross-fitted
    compared_on = sweeps.of_tables(tables, [arm for arm in arms if arm != "idea"], groups,
                                   spec.margin_reference)
    compared = comparison.compare_all(pooled, compared_on, spec, direction=direction,
                                      alpha=alpha)
    results = {arm: comparison.results_of(rows) for arm, rows in selected.items()}
    point_budgets = [(value, p.budgets) for value, p in points if p.budgets is not None]
    return comparison.Tested(
        baseline=Baseline(marker, tuple(arm_sweeps["baseline"]),
                          paired.summarize(pooled["baseline"])),
        idea=paired.summarize(pooled["idea"]), idea_config=marker,
        idea_runs=tuple(selected["idea"]), comparison=compared["baseline"],
        sweeps=compared_on,
        controls={arm.removeprefix(CONTROL): controls.control_section(
            arm, arm_sweeps[arm], marker, paired.summarize(pooled[arm]), compared[arm])
            for arm in arms if arm not in ARMS},
        budgets=frontier_section(results, spec, axis, point_budgets),
        log_medians={arm: median_figures([r.logs for r in rs]) for arm, rs in results.items()})


def pooled_over_points(per_point: Sequence[Sequence[float]]) -> list[float]:
    """Each seed's mean over the frontier's points (``per_point``: each point's values at its
    selected config, seed by seed, in the points' order): what a frontier compares, and what
    ``verify``'s recheck recomputes."""
    return [statistics.fmean(seed) for seed in zip(*per_point)]


def _selected_cfg(point: Report, arm: str) -> Config:
    """The config ``arm`` selected at a complete point."""
    if arm == "baseline":
        if point.baseline.best_cfg is None:
            raise ValueError("a complete point has the baseline's selected config")
        return point.baseline.best_cfg
    if arm == "idea":
        if point.idea_config is None:
            raise ValueError("a complete point has the idea's selected config")
        return point.idea_config
    return point.controls[arm.removeprefix("control:")].best_cfg


def _point(value: Any, p: Report, alpha: float) -> FrontierPoint:
    """One point's entry: its configs, summaries, budgets and comparisons, unadjusted, each
    with the interval of its own test at ``alpha``."""
    def with_interval(arm: str, comp: Comparison | None) -> Comparison | None:
        if comp is None:
            return None
        sw = sweeps.of_record(p, arm) if comp.selection_aware else None
        return decision.own_interval(comp, alpha, sw, p.direction)
    return FrontierPoint(
        value=value, complete=p.complete, baseline_cfg=p.baseline.best_cfg,
        idea_cfg=p.idea_config, baseline=p.baseline.full, idea=p.idea,
        comparison=with_interval("baseline", p.comparison),
        controls={name: with_interval(c.arm, c.comparison) for name, c in p.controls.items()},
        budgets=p.budgets)


def _incomplete(top: Report, points: list[tuple[Any, Report]]) -> Report:
    """A frontier lacking a point's comparison has none: every point's reasons, no verdict."""
    axis = top.frontier.axis if top.frontier else None
    reasons: list[str] = []
    missing: list[str] = []
    failed: list[FailedRun] = []
    pending: list[str] = []   # a point's grid extension not trained yet
    for value, p in points:
        if p.incomplete is None:
            continue
        reasons += [f"at {axis}={value}: {r}" for r in p.incomplete.reasons]
        missing += p.incomplete.missing
        failed += p.incomplete.failed
        pending += p.incomplete.pending or ()
    return dataclasses.replace(
        top, complete=False, comparison=None, idea=None, idea_config=None, controls={},
        budgets=None, log_medians=None,
        incomplete=Incomplete(reasons=tuple(reasons), missing=tuple(missing),
                              failed=tuple(failed), pending=tuple(pending)),
        mechanism_signature=mechanism.mechanism_signature([]),
        baseline=dataclasses.replace(top.baseline, best_cfg=None, full=None),
        mechanism_ok=mechanism.mechanism_ok({}, top.math_verification.outcomes()))
