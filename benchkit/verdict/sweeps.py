"""The arms' whole sweeps, as :mod:`benchkit.stats.selection` tests them, from a session's runs
or a report's ``runs`` (records: :class:`benchkit.spec.run_record.RunRecord`), and the
comparison fields that test decides.

The deciding figures are the cross-fitted ones (each seed measured at the configs its arm
selects on the other seeds, :mod:`benchkit.stats.crossfit`); the p of the same test at the
configs selected on all seeds, held fixed, stays beside them as ``p_fixed_configs``. Pure Python
over run records (:class:`benchkit.spec.run_record.Measured`: a payload, or a report row's result).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from benchkit.codec import replaced
from benchkit.spec.idea import Config, cfg_id
from benchkit.spec.run_record import NO_RESULT, Measured, RunRecord, RunResult
from benchkit.stats import paired, selection, signtest
from benchkit.verdict.records import Comparison, Frontier, Report


def runs_of(rows: Iterable[RunRecord]) -> dict[tuple[str, str, int], RunResult]:
    """A report's passed runs (its ``runs``) keyed as the controller keys them, (arm, cfg id,
    seed): each one's result (a row that shows none: the empty result)."""
    return {(r.arm, cfg_id(r.cfg), r.seed): r.result if r.result is not None
            else NO_RESULT for r in rows if r.outcome == "passed"}


def groups_of(grid: Sequence[Config], frontier: Frontier | None) -> list[list[int]] | None:
    """One group of the whole grid, or one per frontier point (its configs, grid order)."""
    if frontier is None:
        return None
    return [[j for j, c in enumerate(grid) if c.get(frontier.axis) == v]
            for v in frontier.values]


def from_runs(runs: Mapping[tuple[str, str, int], Measured], comparator: str,
              grid: Sequence[Config], seeds: Sequence[int],
              groups: Sequence[Sequence[int]] | None = None,
              margin_reference: float | None = None) -> selection.Sweeps:
    """Comparator and idea sweeps over ``grid`` x ``seeds`` (NaN where a value is missing or
    not finite: such a config is not eligible, as in the report's selection); relative margins
    of ``margin_reference`` when declared."""
    tables = arm_tables(runs, (comparator, "idea"), grid, seeds)
    return of_tables(tables, [comparator], groups, margin_reference)[comparator]


Tables = Mapping[str, tuple[np.ndarray, np.ndarray]]  # arm -> (val, test), seeds x configs


def arm_tables(runs: Mapping[tuple[str, str, int], Measured], arms: Iterable[str],
               grid: Sequence[Config], seeds: Sequence[int]) -> dict[str, tuple[
                   np.ndarray, np.ndarray]]:
    """Each arm's (validation, test) tables over ``grid`` x ``seeds`` (rows: seeds), NaN where
    a value is missing or not finite, read-only: made once per arm and shared by every
    comparison it takes part in (each config's id made once)."""
    ids = [cfg_id(c) for c in grid]
    out = {}
    for arm in arms:
        cells = [[runs.get((arm, i, s)) for i in ids] for s in seeds]
        out[arm] = (_table(cells, _val), _table(cells, _test))
    return out


def _table(cells: list[list[Measured | None]], metric: Callable[[Measured], float | None]
           ) -> np.ndarray:
    """``metric`` of each run in ``cells`` as a read-only table, NaN where a run is missing or
    its value is not a finite number (:func:`_value`'s reading): in one numpy pass where every
    value is a float, an int or None (nearly always; the same floats), cell by cell by
    :func:`_value` otherwise."""
    values = [[None if r is None else metric(r) for r in row] for row in cells]
    if {type(v) for row in values for v in row} <= _NUMBERS:
        a = np.array(values, dtype=float, ndmin=2)
        a[~np.isfinite(a)] = math.nan
    else:
        a = np.array([[_value(r, metric) for r in row] for row in cells], dtype=float, ndmin=2)
    a.setflags(write=False)
    return a


_NUMBERS = {float, int, type(None)}


def of_tables(tables: Tables, comparators: Iterable[str],
              groups: Sequence[Sequence[int]] | None = None,
              margin_reference: float | None = None) -> dict[str, selection.Sweeps]:
    """Each comparator's sweeps against the idea's, from the arms' :func:`arm_tables`, by
    comparator; the idea's figures are shared by all of them
    (:func:`benchkit.stats.selection.against`), so that a control adds only its own."""
    out: dict[str, selection.Sweeps] = {}
    for arm in comparators:
        (base_val, base_test), (idea_val, idea_test) = tables[arm], tables["idea"]
        out[arm] = selection.sweeps(base_val, base_test, idea_val, idea_test, groups,
                                    margin_reference) if not out else \
            selection.against(next(iter(out.values())), base_val, base_test)
    return out


def of_record(report: Report, comparator: str = "baseline") -> selection.Sweeps:
    """The sweeps of a complete report (its protocol's grid and seeds, its runs' rows), built
    once per report and comparator: the build hands over the ones it compared with
    (:func:`remember`), the decision asks for each comparison's more than once (its interval,
    its verdict), and a report's stages share its rows, protocol and frontier
    (:func:`dataclasses.replace` keeps them), so the same objects give back the same
    :class:`benchkit.stats.selection.Sweeps`, whose cross-fits it computed are kept with it."""
    for held, sw in _BUILT:
        if held[0] is report.runs and held[1] is report.protocol \
                and held[2] is report.frontier and held[3] == comparator:
            return sw
    sw = of_runs(report, runs_of(report.runs), comparator)
    remember(report, comparator, sw)
    return sw


def remember(report: Report, comparator: str, sw: selection.Sweeps) -> None:
    """Keep ``sw`` as ``report``'s sweeps of ``comparator`` (the build's, made from the same
    runs as its rows, over its protocol's grid, seeds and frontier groups), for
    :func:`of_record`."""
    _BUILT.insert(0, ((report.runs, report.protocol, report.frontier, comparator), sw))
    del _BUILT[_KEPT:]


# the sweeps built last, by the very objects they were built from (held, so never reused ids)
_BUILT: list[tuple[tuple[Any, Any, Any, str], selection.Sweeps]] = []
_KEPT = 32


def of_runs(report: Report, runs: Mapping[tuple[str, str, int], Measured],
            comparator: str) -> selection.Sweeps:
    """The sweeps over a report's grid and seeds (its frontier's groups, its protocol's
    margin reference) of passed ``runs``: the comparator's against the idea's."""
    return from_runs(runs, comparator, report.grid, report.seeds,
                     groups_of(report.grid, report.frontier),
                     report.margin_reference)


def _val(run: Measured) -> float | None:
    return run.val


def _test(run: Measured) -> float | None:
    return run.test


def _value(run: Measured | None, metric: Callable[[Measured], float | None]) -> float:
    v = None if run is None else metric(run)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else math.nan


def decide_by_selection(comp: Comparison, sw: selection.Sweeps,
                        fixed: tuple[list[float], list[float]], direction: str,
                        p_fixed: float | None = None) -> Comparison:
    """``comp`` (its figures of the binding test's values,
    :func:`benchkit.stats.selection.binding`) deciding by the selection-aware test of its
    statistic (the mean test's p kept as ``p_mean`` under sign or wilcoxon), with
    ``p_fixed_configs``: the sign-flip p of the ``fixed`` test values (comparator, idea) at
    the configs selected on all seeds (``p_fixed``, where made already), shown beside it
    (anti-conservative: a seed's noise helps choose the config it is measured at)."""
    if p_fixed is None:
        p_fixed = paired.sign_flip_p_value([i - b for b, i in zip(*fixed)])
    p_mean = selection.p_value(sw, direction)
    ranked = comp.test if comp.test in ("sign", "wilcoxon") else None
    return replaced(   # one new record
        comp, p_fixed_configs=p_fixed, selection_aware=True,
        p_mean=p_mean if ranked else comp.p_mean,
        p_value=selection.p_value(sw, direction, statistic=ranked) if ranked else p_mean)


def favoured_arm(comp: Comparison, direction: str) -> str | None:
    """``"idea"`` or ``"comparator"``: the arm the comparison's result is better for (the side
    a significant result would take), None on a tie."""
    delta = signtest.verdict_delta(comp.test, comp.delta_mean, comp.per_seed_diffs)
    if delta == 0:
        return None
    idea_better = delta < 0 if direction == "lower" else delta > 0
    return "idea" if idea_better else "comparator"
