"""The report as a typed record: built once by the verdict pipeline, then frozen.

:func:`benchkit.verdict.pipeline.idea_reports` builds each report (select, compare, adjust,
decide) and freezes it as a :class:`Report`; what is added after, from outside the runs (where
the module came from, how far the store was trusted, the time it was written), makes a new
record (:func:`dataclasses.replace`), never a changed one. :meth:`Report.to_json` is the JSON
edge: ``bench_report.json`` in its order of keys, validated by the shipped schema. Its
sections stay JSON (dicts), as the schema describes them.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

JsonDict = dict[str, Any]
# added by the session that writes the report, from outside the runs: absent until then
LATER = ("floors", "provenance", "store", "created")


@dataclass(frozen=True)
class Report:
    """One idea on one track: every field of ``bench_report.json`` (see
    ``benchkit/report/bench_report.schema.json`` for each one's meaning)."""

    bench_version: int
    name: str
    claim: str | None
    module: str
    track: str
    model: str
    metric: str
    metric_direction: str
    n_seeds: int
    complete: bool
    incomplete: JsonDict | None
    baseline: JsonDict
    idea: JsonDict | None
    idea_config: JsonDict | None
    idea_sweep: tuple[JsonDict, ...]
    comparison: JsonDict | None
    frontier: JsonDict | None
    controls: JsonDict
    budgets: JsonDict | None
    log_medians: JsonDict | None
    convergence: JsonDict
    mechanism_signature: JsonDict
    math_verification: JsonDict
    mechanism_ok: int | None
    grid_extensions: JsonDict
    protocol: JsonDict
    warnings: tuple[str, ...]
    runs: tuple[JsonDict, ...]
    environment: JsonDict
    sequential: JsonDict
    exploratory: JsonDict | None
    practical_verdict: str
    system_verdict: str
    decided_by: str | None = None
    floors: JsonDict | None = None
    provenance: JsonDict | None = None
    store: JsonDict | None = None
    created: str | None = None

    def to_json(self) -> JsonDict:
        """The report's JSON (a deep copy: changing it changes no record), keys in the order
        ``bench_report.json`` has always had; the fields added later only once given."""
        out = {}
        for name in ORDER:
            value = getattr(self, name)
            if name in LATER and value is None:
                continue
            out[name] = list(value) if isinstance(value, tuple) else value
        return copy.deepcopy(out)

    @classmethod
    def from_json(cls, data: JsonDict) -> Report:
        """The record of a report's JSON as :meth:`to_json` writes it; a key the record does
        not declare is refused (a new report field is declared here first)."""
        unknown = sorted(set(data) - set(ORDER))
        if unknown:
            raise ValueError(f"report field(s) {unknown} are not declared in "
                             f"benchkit.verdict.records.Report; declared: {list(ORDER)}")
        values = copy.deepcopy(data)
        for name in ("idea_sweep", "warnings", "runs"):
            values[name] = tuple(values[name])
        return cls(**values)


# bench_report.json's order of keys (the v1 reference order, then what benchkit added)
ORDER = ("bench_version", "name", "claim", "module", "track", "model", "metric",
         "metric_direction", "n_seeds", "complete", "incomplete", "baseline", "idea",
         "idea_config", "idea_sweep", "comparison", "frontier", "controls", "budgets",
         "log_medians", "convergence", "mechanism_signature", "math_verification",
         "mechanism_ok", "grid_extensions", "protocol", "warnings", "runs", "environment",
         "sequential", "exploratory", "floors", "practical_verdict", "system_verdict",
         "decided_by", "provenance", "store", "created")
