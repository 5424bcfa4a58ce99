"""The compare stage: the idea against one comparator, seed by seed, as every report compares.

One function makes every comparison of a report (the baseline's, each control's, a frontier's
pooled ones) and every comparison ``verify`` recomputes from a report's rows: the paired
figures (:func:`benchkit.stats.paired.compare`), the declared test's p
(:func:`decide_by_test`), then, given the arms' sweeps, the selection-aware p
that decides (:func:`benchkit.verdict.sweeps.decide_by_selection`). No verdict here: those are
decided once, at the planned level, after the family's adjustment.
"""
from __future__ import annotations

import numpy as np

from benchkit.stats import paired, selection, signtest
from benchkit.verdict.sweeps import decide_by_selection
from benchkit.verdict.records import JsonDict


def compare_arms(comparator: list[float], idea: list[float], *, direction: str, alpha: float,
                 margin: float | None, test: str,
                 sweeps: selection.Sweeps | None) -> JsonDict:
    """The comparison of ``idea`` with ``comparator`` (test metric per seed, same seed order)
    under the declared ``test``; selection-aware when the arms' ``sweeps`` are given."""
    figures = paired.compare(comparator, idea, direction=direction, alpha=alpha, margin=margin)
    comparison = decide_by_test(figures.to_json(), test)  # the report's JSON from here on
    if sweeps is not None:
        decide_by_selection(comparison, sweeps, direction)
    return comparison


def decide_by_test(comp: JsonDict, test: str) -> JsonDict:
    """Make ``comp`` (a :func:`benchkit.stats.paired.compare` result) decide by the declared
    ``test``: under "sign" or "wilcoxon", ``p_value`` becomes that test's and the mean test's
    p is kept as ``p_mean``, beside the median difference. Returns comp."""
    comp["test"] = test
    d = comp["per_seed_diffs"]
    if test == "sign":
        comp["p_mean"] = comp["p_value"]
        comp["p_value"] = signtest.sign_test_p(d)
        comp["median_delta"] = float(np.median(d))
    elif test == "wilcoxon":
        one = selection.sweeps(np.zeros((len(d), 1)), np.zeros((len(d), 1)),
                               np.asarray(d, float)[:, None], np.asarray(d, float)[:, None])
        comp["p_mean"] = comp["p_value"]
        comp["p_value"] = selection.p_value(one, "lower", statistic="wilcoxon")
        comp["median_delta"] = float(np.median(d))
    return comp
