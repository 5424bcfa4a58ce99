"""The compare stage: the idea against one comparator, seed by seed, as every report compares.

One function makes every comparison of a report (the baseline's, each control's, a frontier's
pooled ones) and every comparison ``verify`` recomputes from a report's rows: the paired
figures (:func:`benchkit.stats.paired.compare`), the declared test's p
(:func:`decide_by_test`), of the cross-fitted per-seed differences when the arms' sweeps are
given (:func:`benchkit.verdict.sweeps.decide_by_selection`), as a
:class:`benchkit.verdict.records.Comparison`. No verdict here: those are decided once, at the
planned level, after the family's adjustment.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from benchkit.stats import paired, pairtest, selection, signtest
from benchkit.verdict.records import Comparison
from benchkit.verdict.sweeps import binding_values, decide_by_selection


def compare_arms(comparator: list[float], idea: list[float], *, direction: str, alpha: float,
                 margin: float | None, test: str,
                 sweeps: selection.Sweeps | None) -> Comparison:
    """The comparison of ``idea`` with ``comparator`` (test metric per seed at the configs
    selected on all seeds, same seed order) under the declared ``test``; when the arms'
    ``sweeps`` are given, the figures are of the binding test's values instead and the p is
    the selection-aware test's (:mod:`benchkit.verdict.sweeps`)."""
    fixed = (comparator, idea)
    if sweeps is not None:
        comparator, idea = binding_values(sweeps, direction, test)
    figures = paired.compare(comparator, idea, direction=direction, alpha=alpha, margin=margin)
    compared = decide_by_test(of_figures(figures), test)
    return compared if sweeps is None else decide_by_selection(compared, sweeps, fixed, direction)


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
        return dataclasses.replace(comp, test=test)
    return dataclasses.replace(comp, test=test, p_mean=comp.p_value, p_value=p_value,
                               median_delta=float(np.median(d)))
