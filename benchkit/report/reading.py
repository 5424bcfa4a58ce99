"""Readers of a written report's JSON, the report layer's edge: the figures the summary, plots,
sentences and gate messages take from a report dict (or one of its comparisons). The pipeline
in :mod:`benchkit.verdict` reads records (:class:`benchkit.verdict.records.Report`) instead."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchkit.report.bench_report import is_finite
from benchkit.spec.payloads import JsonDict
from benchkit.tracks.base import strongest_floor
from benchkit.verdict.build import direction_of


def tested_level(comp: Mapping[str, Any]) -> float | None:
    """The level a comparison's verdict was tested at (the look's level; alpha for a bench
    planned as one look)."""
    level: float | None = comp.get("level")
    alpha: float | None = comp.get("alpha")
    return alpha if level is None else level


def paired_values(report: JsonDict) -> tuple[list[Any], list[float], list[float], list[float]]:
    """(seeds, baseline, idea, diffs) of a complete report, seed by seed."""
    base = report["baseline"]["full"]["per_seed"]
    seeds = (report.get("protocol") or {}).get("seeds") or list(range(len(base)))
    return seeds, base, report["idea"]["per_seed"], report["comparison"]["per_seed_diffs"]


def unmatched_reason(report: JsonDict) -> str:
    """Why a report whose budgets do not match has no verdict: each unmatched budget."""
    return "unmatched (" + "; ".join(report["budgets"]["unmatched"]) + ")"


def non_discriminating(report: JsonDict) -> list[str]:
    """Names of the report's signatures that pass, but whose null passes too."""
    sigs = (report.get("mechanism_signature") or {}).get("signatures") or {}
    return [name for name, s in sigs.items() if s.get("status") == "non_discriminating"]


def floor_gap(report: JsonDict) -> tuple[str, float, float, float] | None:
    """(the best floor's name, its value, the baseline's test mean, how much better the baseline
    is: positive when it beats the floor, in the metric's direction); None without a finite
    baseline mean or a floor (limits, which no learner reaches, are not floors), and on a
    frontier, whose figures are means over points at other budgets: unlike the floors, no one
    model trained at the track's protocol."""
    if report.get("frontier"):
        return None
    floors = {k: v for k, v in (report.get("floors") or {}).items() if is_finite(v)}
    strongest = strongest_floor(floors, direction_of(report)) if floors else None
    base = ((report.get("baseline") or {}).get("full") or {}).get("mean")
    if strongest is None or base is None or not is_finite(base):
        return None
    best, value = strongest
    return best, value, base, (value - base) if direction_of(report) == "lower" else (base - value)
