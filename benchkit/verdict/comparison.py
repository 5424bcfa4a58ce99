"""The compare stage: the idea against one comparator, seed by seed, as every report compares.

One function makes every comparison of a report (the baseline's, each control's, a frontier's
pooled ones) and every comparison ``verify`` recomputes from a report's rows: the paired
figures (:func:`benchkit.stats.paired.compare`), the declared test's p
(:func:`decide_by_test`), of the cross-fitted per-seed differences when the arms' sweeps are
given (:func:`benchkit.verdict.sweeps.decide_by_selection`), as a
:class:`benchkit.verdict.records.Comparison`. No verdict here: those are decided once, at the
planned level, after the family's adjustment.

A report's build runs two stages here: the select stage (:func:`select`: each arm at its
config selected on validation, what the convergence section reads) and then the compare stage
(:func:`tested` for a bench; a frontier compares per point and pooled over them instead, on
the one whole-grid selection: :class:`Compare`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from benchkit.codec import replaced
from benchkit.spec.idea import ARMS, Config, IdeaSpec, cfg_id
from benchkit.spec.run_record import Measured, RunRecord, RunResult
from benchkit.stats import paired, pairtest, selection, signtest
from benchkit.verdict import budgets, controls, sweeps
from benchkit.verdict.records import Comparison, ControlArm
from benchkit.verdict.sections import Baseline, Budgets, Medians, SweepRow
from benchkit.verdict.sweeps import decide_by_selection


def compare_arms(comparator: list[float], idea: list[float], *, direction: str, alpha: float,
                 margin: float | None, test: str,
                 sweeps: selection.Sweeps | None) -> Comparison:
    """The comparison of ``idea`` with ``comparator`` (test metric per seed at the configs
    selected on all seeds, same seed order) under the declared ``test``; when the arms'
    ``sweeps`` are given, the figures are of the binding test's values instead and the p is
    the selection-aware test's (:mod:`benchkit.verdict.sweeps`)."""
    return compared([comparator], idea, direction=direction, alpha=alpha, margin=margin,
                    test=test, sweeps=[sweeps])[0]


def compare_all(values: Mapping[str, list[float]], compared_on: Mapping[str, selection.Sweeps],
                spec: IdeaSpec, *, direction: str, alpha: float) -> dict[str, Comparison]:
    """The idea (``values["idea"]``) against each comparator of ``compared_on`` (its sweeps, by
    arm), as :func:`compare_arms` makes each: every comparator's selection-aware tests made
    together first (:func:`benchkit.stats.selection.sides`: the same floats, in one pass)."""
    for statistic in dict.fromkeys(("mean", spec.test)):
        selection.sides(list(compared_on.values()), direction, statistic=statistic)
    return dict(zip(compared_on, compared(
        [values[arm] for arm in compared_on], values["idea"], direction=direction,
        alpha=alpha, margin=spec.margin, test=spec.test, sweeps=list(compared_on.values()))))


def compared(comparators: Sequence[list[float]], idea: list[float], *, direction: str,
             alpha: float, margin: float | None, test: str,
             sweeps: Sequence[selection.Sweeps | None]) -> list[Comparison]:
    """:func:`compare_arms` of ``idea`` with each of ``comparators`` (one seed count), on
    its ``sweeps`` (None: none), their paired figures made in one pass
    (:func:`benchkit.stats.paired.compare_rows`: each row's own floats)."""
    rows: list[tuple[np.ndarray, np.ndarray, float | None]] = []
    for comparator, sw in zip(comparators, sweeps):
        if sw is None:
            rows.append((np.asarray(comparator, dtype=float), np.asarray(idea, dtype=float),
                         None))
        else:   # the binding test's values, and its p (kept with its pair)
            pair = selection.binding(sw, direction, test)
            rows.append((pair.base, pair.idea, pairtest.p_value(pair)))
    figures = paired.compare_rows([r[0] for r in rows], [r[1] for r in rows],
                                  direction=direction, alpha=alpha, margin=margin,
                                  p_values=[r[2] for r in rows])
    swept = [k for k, sw in enumerate(sweeps) if sw is not None]   # their fixed configs' p
    fixed = dict(zip(swept, paired.sign_flip_p_rows([
        np.asarray([i - b for b, i in zip(comparators[k], idea)], dtype=float) for k in swept])
        if swept else []))
    out = []
    for k, (fig, comparator, sw) in enumerate(zip(figures, comparators, sweeps)):
        comp = decide_by_test(of_figures(fig), test)
        out.append(comp if sw is None else decide_by_selection(
            comp, sw, (comparator, idea), direction, p_fixed=fixed[k]))
    return out


def of_figures(figures: paired.PairedComparison) -> Comparison:
    """The compare stage's first record: the paired figures, p_value the mean test's."""
    return Comparison(**{f.name: getattr(figures, f.name)
                         for f in dataclasses.fields(paired.PairedComparison)})


def decide_by_test(comp: Comparison, test: str) -> Comparison:
    """``comp`` deciding by the declared ``test``: under "sign" or "wilcoxon", ``p_value``
    becomes that test's and the mean test's p is kept as ``p_mean``, beside the median
    difference."""
    d = comp.per_seed_diffs
    if test == "sign":
        p_value = signtest.sign_test_p(d)
    elif test == "wilcoxon":
        p_value = pairtest.p_value(pairtest.Pair(np.zeros(len(d)), np.asarray(d, float)),
                                   "wilcoxon")
    else:
        return replaced(comp, test=test)
    return replaced(comp, test=test, p_mean=comp.p_value, p_value=p_value,
                               median_delta=float(np.median(d)))


@dataclass(frozen=True)
class Selected:
    """The select stage of a report whose every arm has its selected config: each arm's
    ``configs`` (of the whole grid), its ``runs`` there and their ``results``, seed order.
    What the convergence section reads, and what the compare stage compares."""

    configs: dict[str, Config]
    runs: dict[str, tuple[RunRecord, ...]]      # by arm, seed order
    results: dict[str, tuple[RunResult, ...]]   # by arm, seed order


def select(runs: Mapping[tuple[str, str, int], RunRecord], grid: Sequence[Config],
           seeds: Sequence[int], picked: Mapping[str, int]) -> Selected:
    """Each arm at its ``picked`` config of ``grid`` (an index: its selection on validation)."""
    configs = {arm: grid[index] for arm, index in picked.items()}
    selected = {arm: tuple(runs[(arm, cfg_id(cfg), s)] for s in seeds)
                for arm, cfg in configs.items()}
    return Selected(configs=configs, runs=selected,
                     results={arm: results_of(rs) for arm, rs in selected.items()})


@dataclass(frozen=True)
class Tested:
    """The compare stage of a report: the baseline's section and the idea's summary and
    config, the idea's runs its mechanism signature reads, each comparison with the sweeps it
    was made on (handed to the decision: :func:`benchkit.verdict.sweeps.remember`), the
    controls' sections, budgets and log medians. Every field is required: a report that does
    not reach this stage has none (None), not a stage of Nones."""

    baseline: Baseline
    idea: paired.Summary
    idea_config: Config
    idea_runs: tuple[RunRecord, ...]
    comparison: Comparison                      # the baseline's
    sweeps: dict[str, selection.Sweeps]         # each comparison's, by comparator arm
    controls: dict[str, ControlArm]             # by control name
    budgets: Budgets
    log_medians: dict[str, Medians]


class Compare(Protocol):
    """A report's compare stage, given its select stage (``chosen``) and each arm's sweep of
    ``grid`` and its (val, test) ``tables`` (the build's, read once from the runs):
    :func:`tested` for a bench, the frontier's pooled stage for a frontier
    (:mod:`benchkit.verdict.frontier`), or None where the report is to have no comparison."""

    def __call__(self, spec: IdeaSpec, runs: Mapping[tuple[str, str, int], RunRecord],
                 grid: Sequence[Config], seeds: Sequence[int], chosen: Selected,
                 arm_sweeps: Mapping[str, Sequence[SweepRow]], tables: sweeps.Tables, *,
                 direction: str, alpha: float) -> Tested | None: ...


def tested(spec: IdeaSpec, runs: Mapping[tuple[str, str, int], RunRecord],
           grid: Sequence[Config], seeds: Sequence[int], chosen: Selected,
           arm_sweeps: Mapping[str, Sequence[SweepRow]], tables: sweeps.Tables, *,
           direction: str, alpha: float) -> Tested:
    """The compare stage (:class:`Tested`) of a bench, each arm at its ``chosen`` config:
    the idea against each comparator (:func:`compare_arms`, on each arm's sweeps of ``grid``,
    built once per arm from its ``tables``), the controls' sections, the budgets and log
    medians."""
    configs, results = chosen.configs, chosen.results
    values = {arm: test_values(rs) for arm, rs in chosen.runs.items()}
    compared_on = sweeps.of_tables(tables, [arm for arm in spec.arms if arm != "idea"], None,
                                   spec.margin_reference)
    compared = compare_all(values, compared_on, spec, direction=direction, alpha=alpha)
    full = {arm: selected_summary(arm_sweeps[arm], configs[arm], values[arm]) for arm in values}
    return Tested(
        baseline=Baseline(configs["baseline"], tuple(arm_sweeps["baseline"]), full["baseline"]),
        idea=full["idea"], idea_config=configs["idea"],
        idea_runs=chosen.runs["idea"], comparison=compared["baseline"], sweeps=compared_on,
        controls={arm.removeprefix("control:"): controls.control_section(
            arm, arm_sweeps[arm], configs[arm], full[arm], compared[arm])
            for arm in spec.arms if arm not in ARMS},
        budgets=budgets.budget_section(results, spec),
        log_medians={arm: budgets.median_figures([r.logs for r in rs])
                     for arm, rs in results.items()})


def selected_summary(sweep: Sequence[SweepRow], cfg: Config, values: list[float]
                     ) -> paired.Summary:
    """The summary of an arm's test ``values`` at its selected ``cfg``: its sweep row's where
    that row holds these very values (summarized once, the same floats), else made here."""
    row = next((r.result for r in sweep if r.cfg == cfg and r.result is not None), None)
    return row if row is not None and row.per_seed == tuple(values) else paired.summarize(values)


def untested(spec: IdeaSpec, runs: Mapping[tuple[str, str, int], RunRecord],
             grid: Sequence[Config], seeds: Sequence[int], chosen: Selected,
             arm_sweeps: Mapping[str, Sequence[SweepRow]], tables: sweeps.Tables, *,
             direction: str, alpha: float) -> None:
    """No compare stage: a frontier whose points are not all complete has no comparison, so
    its whole grid is selected (for the convergence section) and never compared."""
    return None


def test_values(runs: Sequence[Measured]) -> list[float]:
    """The runs' test metrics, each finite: the selection found them so (a selected config
    with a non-finite test value leaves the report incomplete before any comparison)."""
    values = [r.test for r in runs]
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if len(finite) != len(values):
        raise ValueError("a selected run's test metric is missing or not finite")
    return finite


def results_of(runs: Sequence[RunRecord]) -> tuple[RunResult, ...]:
    """The results of runs that have one (passed runs: ``build.passed_runs``)."""
    results = tuple(r.result for r in runs if r.result is not None)
    if len(results) != len(runs):
        raise ValueError("a run without a result has no figures to read")
    return results
