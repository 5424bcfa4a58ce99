"""The compare stage: the idea against one comparator, seed by seed, as every report compares.

One function makes every comparison of a report (the baseline's, each control's, a frontier's
pooled ones) and every comparison ``verify`` recomputes from a report's rows: the paired
figures (:func:`benchkit.stats.paired.compare`), the declared test's p
(:func:`benchkit.stats.signtest.apply`), then, given the arms' sweeps, the selection-aware p
that decides (:func:`benchkit.verdict.sweeps.decide_by_selection`). No verdict here: those are
decided once, at the planned level, after the family's adjustment.
"""
from __future__ import annotations

from benchkit.stats import paired, selection, signtest
from benchkit.verdict import sweeps as sweep_test


def compare_arms(comparator: list[float], idea: list[float], *, direction: str, alpha: float,
                 margin: float | None, test: str,
                 sweeps: selection.Sweeps | None) -> dict:
    """The comparison of ``idea`` with ``comparator`` (test metric per seed, same seed order)
    under the declared ``test``; selection-aware when the arms' ``sweeps`` are given."""
    comparison = signtest.apply(paired.compare(comparator, idea, direction=direction,
                                               alpha=alpha, margin=margin), test)
    if sweeps is not None:
        sweep_test.decide_by_selection(comparison, sweeps, direction)
    return comparison
