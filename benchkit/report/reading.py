"""The figures every reader of a report takes from it (summary.md, plots, the terminal, the
gate): typed :class:`benchkit.verdict.records.Report` records in, plain values out, so that a
reader names a field once and a field's meaning lives on its record. A report on disk becomes
a record at the edge (:func:`benchkit.report.bench_report.read_report`, one ``migrate`` for
reports older than the record)."""
from __future__ import annotations

from typing import Any

from benchkit.report.bench_report import is_finite
from benchkit.tracks.base import strongest_floor
from benchkit.verdict.records import Comparison, Report


def tested_level(comp: Comparison) -> float:
    """The level a comparison's verdict was tested at (the look's level; alpha for a bench
    planned as one look)."""
    return comp.alpha if comp.level is None else comp.level


def paired_values(report: Report) -> tuple[list[Any], list[float], list[float], list[float]]:
    """(seeds, baseline, idea, diffs) of a complete report, seed by seed."""
    assert report.baseline.full is not None and report.idea is not None \
        and report.comparison is not None   # complete: the callers ask only then
    base = list(report.baseline.full.per_seed)
    seeds = report.protocol.get("seeds") or list(range(len(base)))
    return seeds, base, list(report.idea.per_seed), list(report.comparison.per_seed_diffs)


def unmatched_reason(report: Report) -> str:
    """Why a report whose budgets do not match has no verdict: each unmatched budget."""
    return "unmatched (" + "; ".join(report.budgets.unmatched if report.budgets else ()) + ")"


def non_discriminating(report: Report) -> list[str]:
    """Names of the report's signatures that pass, but whose null passes too."""
    return [name for name, s in report.mechanism_signature.signatures.items()
            if s.status == "non_discriminating"]


def floor_gap(report: Report) -> tuple[str, float, float, float] | None:
    """(the best floor's name, its value, the baseline's test mean, how much better the baseline
    is: positive when it beats the floor, in the metric's direction); None without a finite
    baseline mean or a floor (limits, which no learner reaches, are not floors), and on a
    frontier, whose figures are means over points at other budgets: unlike the floors, no one
    model trained at the track's protocol."""
    if report.frontier:
        return None
    floors = {k: v for k, v in (report.floors or {}).items() if is_finite(v)}
    strongest = strongest_floor(floors, report.direction) if floors else None
    base = report.baseline.full.mean if report.baseline.full is not None else None
    if strongest is None or base is None or not is_finite(base):
        return None
    best, value = strongest
    return best, value, base, (value - base) if report.direction == "lower" else (base - value)
