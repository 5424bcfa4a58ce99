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
point; ``params`` varies along the axis, so it is reported and not matched.
"""
from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from typing import Any

from benchkit.spec.idea import Config, IdeaSpec, cfg_id
from benchkit.spec.payloads import JsonDict, MechanismPayload, RunPayload
from benchkit.stats import paired
from benchkit.verdict import comparison, controls, decision, mechanism
from benchkit.verdict import sweeps
from benchkit.verdict.budgets import frontier_section, median_figures
from benchkit.verdict.records import Comparison
from benchkit.verdict.sections import Budgets, MathVerification, SweepRow
from benchkit.verdict import build


def build_frontier_report(spec: IdeaSpec, track: str, run_payloads: Sequence[RunPayload],
                          mechanism_payloads: Sequence[MechanismPayload], *,
                          alpha: float) -> JsonDict:
    """One report over the frontier (see the module docstring); verdicts come later, from
    :func:`benchkit.verdict.decision.decision_of`, as for any report."""
    if not spec.frontier:
        raise ValueError(f"{spec.name}: a frontier report needs the idea's frontier= axis")
    (axis, values), = spec.frontier.items()
    grid = spec.grids[track]
    points: list[tuple[Any, JsonDict]] = []
    for value in values:
        sub = dataclasses.replace(spec, grids={**spec.grids, track: tuple(
            c for c in grid if c[axis] == value)})
        points.append((value, build.build_report(sub, track, run_payloads, mechanism_payloads,
                                               alpha=alpha)))
    top = build.build_report(spec, track, run_payloads, mechanism_payloads, alpha=alpha)
    top["warnings"] = list(dict.fromkeys(w for _, p in points for w in p["warnings"]))
    top["frontier"] = {"axis": axis, "values": list(values),
                       "points": [_point(value, p, alpha) for value, p in points]}
    if not all(p["complete"] for _, p in points):
        return _incomplete(top, points)
    runs = build.passed_runs(run_payloads, track)
    seeds, arms = list(spec.seeds), spec.arms
    selected = {arm: [runs[(arm, cfg_id(_selected_cfg(p, arm)), s)] for _, p in points
                      for s in seeds] for arm in arms}
    pooled = {arm: [statistics.fmean(build.test_values(rows[i::len(seeds)]))
                    for i in range(len(seeds))] for arm, rows in selected.items()}
    direction, margin = build.direction_of(top), spec.margin
    marker = {axis: "selected per point (see frontier.points)"}
    top["baseline"] = {"best_cfg": marker, "sweep": top["baseline"]["sweep"],
                       "full": paired.summarize(pooled["baseline"])}
    top["idea"], top["idea_config"] = paired.summarize(pooled["idea"]), marker
    full_grid = top["protocol"]["grid"]  # each point's selection redone under every flip
    groups = sweeps.groups_of(full_grid, top["frontier"])
    compared = {arm: comparison.compare_arms(
        pooled[arm], pooled["idea"], direction=direction, alpha=alpha, margin=margin,
        test=spec.test, sweeps=sweeps.from_runs(runs, arm, full_grid, seeds, groups))
        for arm in arms if arm != "idea"}
    top["comparison"] = compared["baseline"].to_json()
    top["controls"] = {name: controls.control_section(
        c["arm"], [SweepRow.from_json(row) for row in c["sweep"]], marker, pooled[c["arm"]],
        compared[c["arm"]]).to_json()
        for name, c in top["controls"].items()}
    for arm, comp in compared.items():
        top["warnings"] += [w for w in sweeps.grid_warnings(comp, arm)
                            if w not in top["warnings"]]
    # the budget section reads the runs as the report's rows hold them
    selected_rows = {arm: [build.run_row(r) for r in rows] for arm, rows in selected.items()}
    top["budgets"] = frontier_section(selected_rows, spec, axis, [
        (value, Budgets.from_json(p["budgets"])) for value, p in points]).to_json()
    top["log_medians"] = {arm: median_figures(rows, "logs")
                          for arm, rows in selected_rows.items()}
    signature = mechanism.mechanism_signature(selected["idea"])
    top["mechanism_signature"] = signature.to_json()
    top["mechanism_ok"] = mechanism.mechanism_ok(
        signature.signatures, MathVerification.from_json(top["math_verification"]).outcomes())
    return top


def _selected_cfg(point: JsonDict, arm: str) -> Config:
    """The config ``arm`` selected at a complete point."""
    section = (point["baseline"] if arm == "baseline" else
               point["controls"][arm.removeprefix("control:")] if arm != "idea" else None)
    cfg: Config = point["idea_config"] if section is None else section["best_cfg"]
    return cfg


def _point(value: Any, p: JsonDict, alpha: float) -> JsonDict:
    """One point's entry: its configs, summaries, budgets and comparisons, unadjusted, each
    with the interval of its own test at ``alpha``."""
    direction = build.direction_of(p)

    def with_interval(arm: str, comp: JsonDict | None) -> JsonDict | None:
        if comp is None:
            return None
        record = Comparison.from_json(comp)
        sw = sweeps.of_report(p, arm) if record.selection_aware else None
        return decision.own_interval(record, alpha, sw, direction).to_json()
    return {"value": value, "complete": p["complete"],
            "baseline_cfg": p["baseline"]["best_cfg"], "idea_cfg": p["idea_config"],
            "baseline": p["baseline"]["full"], "idea": p["idea"],
            "comparison": with_interval("baseline", p["comparison"]),
            "controls": {name: with_interval(c["arm"], c["comparison"])
                         for name, c in (p["controls"] or {}).items()},
            "budgets": p["budgets"]}


def _incomplete(top: JsonDict, points: list[tuple[Any, JsonDict]]) -> JsonDict:
    """A frontier lacking a point's comparison has none: every point's reasons, no verdict."""
    reasons, missing, failed = [], [], []
    for value, p in points:
        inc = p["incomplete"] or {"reasons": [], "missing": [], "failed": []}
        reasons += [f"at {top['frontier']['axis']}={value}: {r}" for r in inc["reasons"]]
        missing += inc["missing"]
        failed += inc["failed"]
    top.update({"complete": False, "comparison": None, "idea": None, "idea_config": None,
                "controls": {}, "budgets": None, "log_medians": None,
                "incomplete": {"reasons": reasons, "missing": missing, "failed": failed},
                "mechanism_signature": mechanism.mechanism_signature([]).to_json()})
    top["baseline"] = {**top["baseline"], "best_cfg": None, "full": None}
    top["mechanism_ok"] = mechanism.mechanism_ok(
        {}, MathVerification.from_json(top["math_verification"]).outcomes())
    return top
