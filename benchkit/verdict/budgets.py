"""Budgets: every run records what it spent and kept (``run.fit``: trainable ``params`` of the
last model and optimizer ``steps``; ``run.budget``: anything declared). The report compares the
median per arm; an idea whose budget differs from a comparator's by more than the tolerance gets
no verdict (``unmatched``) and fails every gate, unless the budget is waived with a stated reason
or is the bench's frontier axis (``params`` on a frontier). Pure Python over run results.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from benchkit.spec.idea import IdeaSpec
from benchkit.spec.run_record import RunResult
from benchkit.verdict.controls import arm_name
from benchkit.verdict.sections import BudgetMatch, BudgetPoint, Budgets, Medians

DEFAULT_TOLERANCE = 0.05          # relative, for every budget unless declared otherwise


FRONTIER_BUDGET = "params"        # the budget a frontier trades against: reported, not matched


def tolerance_of(spec: IdeaSpec, budget: str) -> float:
    declared = spec.budget_tolerance
    return float(declared.get(budget, declared.get("*", DEFAULT_TOLERANCE)))


def median_figures(figures: Sequence[Mapping[str, float | None]]) -> Medians:
    """name -> median over the runs' ``figures`` (each run's budgets or logs) of its value
    there (runs lacking it are left out)."""
    names = sorted({n for f in figures for n in f})
    out: Medians = {}
    for name in names:
        values = [v for f in figures if (v := f.get(name)) is not None]
        out[name] = float(statistics.median(values)) if values else None
    return out


def budget_section(selected: Mapping[str, Sequence[RunResult]], spec: IdeaSpec) -> Budgets:
    """Per arm the median of each budget over its selected-config runs' results, and the
    idea's budget checked against the baseline's and every control's."""
    axis_exempt = FRONTIER_BUDGET if spec.frontier else None
    medians = {arm: median_figures([r.budgets for r in results])
               for arm, results in selected.items()}
    waiver = spec.budget_waiver
    checks: list[BudgetMatch] = []
    idea = medians.get("idea", {})
    for arm, figures in medians.items():
        if arm == "idea":
            continue
        for name in sorted(set(idea) | set(figures)):
            mine, theirs = idea.get(name), figures.get(name)
            tol = tolerance_of(spec, name)
            rel = (None if mine is None or theirs is None else
                   abs(mine - theirs) / abs(theirs) if theirs else
                   (0.0 if mine == theirs else math.inf))
            checks.append(BudgetMatch(
                budget=name, arm=arm, idea=mine, other=theirs,
                rel_diff=None if rel is None or math.isinf(rel) else rel, tolerance=tol,
                matched=rel is not None and rel <= tol, waived=waiver.get(name),
                axis=name == axis_exempt))
    unmatched = tuple(f"{c.budget} idea {_fig(c.idea)} vs {arm_name(c.arm)} {_fig(c.other)}"
                      for c in checks if not (c.matched or c.waived or c.axis))
    return Budgets(arms=medians, checks=tuple(checks), matched=not unmatched,
                   unmatched=unmatched, waivers=dict(waiver))


def frontier_section(selected: Mapping[str, Sequence[RunResult]], spec: IdeaSpec, axis: str,
                     points: Sequence[tuple[Any, Budgets]]) -> Budgets:
    """A frontier's budgets: the medians over every point's selected runs (``selected``), and
    the checks of each point (``(value, its section)`` each, checked point by point, each
    check marked with its point): the frontier matches when every point does."""
    pooled = budget_section(selected, spec)
    unmatched = tuple(f"at {axis}={value}: {text}" for value, p in points
                      for text in p.unmatched)
    return Budgets(
        arms=pooled.arms, matched=not unmatched, unmatched=unmatched, waivers=pooled.waivers,
        checks=tuple(dataclasses.replace(c, point={axis: value})
                     for value, p in points for c in p.checks),
        points=tuple(BudgetPoint(value, p) for value, p in points))


def _fig(x: float | None) -> str:
    return "none" if x is None else f"{x:.6g}"

