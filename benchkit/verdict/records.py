"""The typed records between the verdict pipeline's stages, and the report they make.

A :class:`Comparison` is the idea against one comparator: made by the compare stage
(:func:`benchkit.verdict.comparison.compare_arms`), given its family adjustment
(:func:`benchkit.verdict.controls.adjusted`) and its decided figures and verdict
(:func:`benchkit.verdict.decision.decision_of`), each stage a new record
(:func:`dataclasses.replace`). A :class:`ControlArm` is a control arm's section of the report,
with the idea's comparison with it.

:func:`benchkit.verdict.pipeline.idea_reports` builds each report as a :class:`Report`, then
adjusts and decides it on records (each stage a new record, :func:`dataclasses.replace`); what is
added after, from outside the runs (where the module came from, how far the store was trusted, the
time it was written), makes a new record too, never a changed one. :meth:`Report.to_json` is the
JSON edge: ``bench_report.json`` in its order of keys, validated by the shipped schema. Its
comparison is a :class:`Comparison`, its controls :class:`ControlArm` records and a frontier
bench's points :class:`FrontierPoint` records (they hold comparisons); its baseline and the idea's
sweep, budgets, convergence, grid extensions, mechanism evidence and what keeps it incomplete are
records of :mod:`benchkit.verdict.sections`; every arm's summary over its seeds is a
:class:`benchkit.stats.paired.Summary`; its other sections stay JSON (dicts), as the schema
describes them.
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from benchkit.spec.idea import Config
from benchkit.spec.payloads import JsonDict
from benchkit.stats import planning
from benchkit.stats.equivalence import EquivalenceTest
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.stats.paired import PairedComparison, Summary
from benchkit.stats.selection import EffectiveGrids
from benchkit.verdict.plan import Exploratory, Sequential
from benchkit.verdict.run_rows import RunRow
from benchkit.verdict.sections import (Baseline, Budgets, Convergence, GridExtensions,
                                       Incomplete, MathVerification, Medians, MechanismSignature,
                                       SweepRow, declared, summary_json, with_summaries)


@dataclass(frozen=True)
class Interval:
    """A confidence interval of the mean (or median) difference, idea - comparator; ``lo`` or
    ``hi`` is None where the test cannot reach the level with these seeds."""

    confidence: float
    lo: float | None
    hi: float | None

    def to_json(self) -> JsonDict:
        return {"confidence": self.confidence, "lo": self.lo, "hi": self.hi}

    @classmethod
    def from_json(cls, data: JsonDict) -> Interval:
        return cls(confidence=data["confidence"], lo=data["lo"], hi=data["hi"])


@dataclass(frozen=True)
class Comparison(PairedComparison):
    """The idea against one comparator, test metric seed by seed (``per_seed_diffs`` are idea -
    comparator). Stage by stage: the paired figures (the fields of
    :class:`benchkit.stats.paired.PairedComparison`, which it extends) and the declared test's
    p (``p_value``; the mean test's kept as ``p_mean`` under sign or wilcoxon), selection-aware
    when the arms' sweeps are known; then the family adjustment; then what the decision adds
    (the level, the deciding test's interval, the planning figures, the margin tests, the
    verdict in the reference format's words). A field left None (``False`` for
    ``selection_aware``) is a stage not reached and is absent from :meth:`to_json`, except the
    paired figures', which the report always has."""

    test: str | None = None
    p_mean: float | None = None
    median_delta: float | None = None
    selection_aware: bool = False         # with p_fixed_configs and effective_grids (null now)
    p_fixed_configs: float | None = None
    effective_grids: EffectiveGrids | None = None
    p_unexchangeable: float | None = None
    p_adjusted_harms: float | None = None
    family_size: int | None = None        # with p_adjusted
    p_adjusted: float | None = None
    level: float | None = None
    signflip_ci: Interval | None = None
    planning_figures: planning.PlanningFigures | None = None
    sign_ci: Interval | None = None
    equivalence: EquivalenceTest | None = None
    verdict: str | None = None            # with system_worked
    system_worked: bool | None = None

    def to_json(self) -> JsonDict:
        """The report's comparison: its keys in the order reports have always had them."""
        out: JsonDict = {
            "delta_mean": self.delta_mean, "idea_wins": self.idea_wins, "n_pairs": self.n_pairs,
            "per_seed_diffs": list(self.per_seed_diffs), "p_value": self.p_value,
            "mde": self.mde, "mde_rel_pct": self.mde_rel_pct, "direction": self.direction,
            "alpha": self.alpha, "ci95": list(self.ci95), "effect_size": self.effect_size,
            "noninferiority": None if self.noninferiority is None
            else self.noninferiority.to_json()}
        optional: JsonDict = {"test": self.test, "p_mean": self.p_mean,
                              "median_delta": self.median_delta}
        if self.selection_aware:
            optional.update(p_fixed_configs=self.p_fixed_configs, selection_aware=True,
                            effective_grids=None if self.effective_grids is None
                            else self.effective_grids.to_json())
        optional.update(p_unexchangeable=self.p_unexchangeable,
                        p_adjusted_harms=self.p_adjusted_harms)
        out.update({k: v for k, v in optional.items()
                    if v is not None or k in ("p_fixed_configs", "effective_grids")})
        if self.family_size is not None:
            out.update(p_adjusted=self.p_adjusted, family_size=self.family_size)
        figures = {} if self.planning_figures is None else self.planning_figures.to_json()
        decided: JsonDict = {"level": self.level, "signflip_ci": self.signflip_ci,
                             **figures, "sign_ci": self.sign_ci,
                             "equivalence": None if self.equivalence is None
                             else self.equivalence.to_json()}
        out.update({k: v.to_json() if isinstance(v, Interval) else v
                    for k, v in decided.items() if v is not None or k in figures})
        if self.verdict is not None:
            out.update(verdict=self.verdict, system_worked=self.system_worked)
        return copy.deepcopy(out)

    @classmethod
    def from_json(cls, data: JsonDict) -> Comparison:
        """The record of a report's comparison; a key it does not declare is refused."""
        names = {f.name for f in fields(cls)} - {"planning_figures"}
        figures = {k: v for k, v in data.items() if k in planning.KEYS}
        unknown = sorted(set(data) - names - set(planning.KEYS))
        if unknown:
            raise ValueError(f"comparison field(s) {unknown} are not declared in "
                             "benchkit.verdict.records.Comparison")
        values = {k: copy.deepcopy(v) for k, v in data.items() if k in names}
        values["per_seed_diffs"] = tuple(values["per_seed_diffs"])
        lo, hi = values["ci95"]
        values["ci95"] = (lo, hi)
        for name in ("signflip_ci", "sign_ci"):
            if values.get(name) is not None:
                values[name] = Interval.from_json(values[name])
        if values.get("equivalence") is not None:
            values["equivalence"] = EquivalenceTest.from_json(values["equivalence"])
        if values.get("effective_grids") is not None:
            values["effective_grids"] = EffectiveGrids.from_json(values["effective_grids"])
        if values.get("noninferiority") is not None:
            values["noninferiority"] = NonInferiorityTest.from_json(values["noninferiority"])
        return cls(**values, planning_figures=planning.PlanningFigures.from_json(figures)
                   if figures else None)


def better_side(metric_direction: str) -> str:
    """``"lower"`` or ``"higher"``, from a ``metric_direction`` ("lower is better", ...)."""
    return "lower" if metric_direction.startswith("lower") else "higher"


# added by the session that writes the report, from outside the runs: absent until then
LATER = ("floors", "provenance", "store", "created")


@dataclass(frozen=True)
class ControlArm:
    """One control arm as the baseline is reported (its selected config, its sweep, its
    selected config's test summary), the idea's comparison with it and, once decided, the
    idea's verdict against it (None before: absent from :meth:`to_json`)."""

    arm: str                       # "control:<name>"
    best_cfg: Config
    sweep: tuple[SweepRow, ...]
    full: Summary                  # its selected config's test metric
    comparison: Comparison
    verdict: str | None = None

    def to_json(self) -> JsonDict:
        """The report's ``controls`` entry, keys in the order reports have always had them."""
        out: JsonDict = {"arm": self.arm, "best_cfg": self.best_cfg,
                         "sweep": [row.to_json() for row in self.sweep],
                         "full": self.full.to_json(),
                         "comparison": self.comparison.to_json()}
        if self.verdict is not None:
            out["verdict"] = self.verdict
        return copy.deepcopy(out)

    @classmethod
    def from_json(cls, data: JsonDict) -> ControlArm:
        """The record of a report's ``controls`` entry; a key it does not declare is refused."""
        values = declared(cls, data)
        values["sweep"] = tuple(SweepRow.from_json(row) for row in values["sweep"])
        values["comparison"] = Comparison.from_json(values["comparison"])
        return cls(**with_summaries(values, "full"))


@dataclass(frozen=True)
class FrontierPoint:
    """One point of a frontier bench: its axis value, whether it is complete, the baseline's and
    the idea's selected configs and test summaries there, and the idea's comparisons there
    (unadjusted, each with the interval of its own test at alpha: the baseline's, each
    control's by name, None where incomplete), and its budgets section."""

    value: Any
    complete: bool
    baseline_cfg: JsonDict | None
    idea_cfg: JsonDict | None
    baseline: Summary | None       # the selected config's test metric there
    idea: Summary | None
    comparison: Comparison | None
    controls: dict[str, Comparison | None]
    budgets: Budgets | None

    def to_json(self) -> JsonDict:
        """The report's ``frontier.points`` entry, keys in the order reports have had them."""
        return copy.deepcopy({
            "value": self.value, "complete": self.complete, "baseline_cfg": self.baseline_cfg,
            "idea_cfg": self.idea_cfg, "baseline": summary_json(self.baseline),
            "idea": summary_json(self.idea),
            "comparison": None if self.comparison is None else self.comparison.to_json(),
            "controls": {name: None if comp is None else comp.to_json()
                         for name, comp in self.controls.items()},
            "budgets": None if self.budgets is None else self.budgets.to_json()})

    @classmethod
    def from_json(cls, data: JsonDict) -> FrontierPoint:
        values = declared(cls, data)
        if values["comparison"] is not None:
            values["comparison"] = Comparison.from_json(values["comparison"])
        values["controls"] = {name: None if comp is None else Comparison.from_json(comp)
                              for name, comp in values["controls"].items()}
        if values["budgets"] is not None:
            values["budgets"] = Budgets.from_json(values["budgets"])
        return cls(**with_summaries(values, "baseline", "idea"))


@dataclass(frozen=True)
class Frontier:
    """The report's ``frontier``: the axis, its values, and each value's
    :class:`FrontierPoint`."""

    axis: str
    values: tuple[Any, ...]
    points: tuple[FrontierPoint, ...]

    def to_json(self) -> JsonDict:
        return {"axis": self.axis, "values": copy.deepcopy(list(self.values)),
                "points": [p.to_json() for p in self.points]}

    @classmethod
    def from_json(cls, data: JsonDict) -> Frontier:
        values = declared(cls, data)
        values["values"] = tuple(values["values"])
        values["points"] = tuple(FrontierPoint.from_json(p) for p in values["points"])
        return cls(**values)


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
    incomplete: Incomplete | None
    baseline: Baseline
    idea: Summary | None             # the idea's selected config's test metric
    idea_config: JsonDict | None
    idea_sweep: tuple[SweepRow, ...]
    comparison: Comparison | None    # the idea against the baseline, decided
    frontier: Frontier | None
    controls: dict[str, ControlArm]  # by control name, in the arms' declared order
    budgets: Budgets | None
    log_medians: dict[str, Medians] | None   # arm -> the medians of its runs' run.log values
    convergence: Convergence
    mechanism_signature: MechanismSignature
    math_verification: MathVerification
    mechanism_ok: int | None
    grid_extensions: GridExtensions
    protocol: JsonDict
    warnings: tuple[str, ...]
    runs: tuple[RunRow, ...]
    environment: JsonDict
    sequential: Sequential
    exploratory: Exploratory | None
    practical_verdict: str | None   # None until decided (never written so)
    system_verdict: str | None
    decided_by: str | None = None
    floors: JsonDict | None = None
    provenance: JsonDict | None = None
    store: JsonDict | None = None
    created: str | None = None

    @property
    def direction(self) -> str:
        """``"lower"`` or ``"higher"``: the metric's better side (:func:`better_side`)."""
        return better_side(self.metric_direction)

    def to_json(self) -> JsonDict:
        """The report's JSON (a deep copy: changing it changes no record), keys in the order
        ``bench_report.json`` has always had; the fields added later only once given."""
        out = {}
        for name in ORDER:
            value = getattr(self, name)
            if name in LATER and value is None:
                continue
            out[name] = ([row.to_json() for row in value] if name in ("idea_sweep", "runs")
                         else list(value) if isinstance(value, tuple)
                         else value.to_json() if name in SECTIONS and value is not None
                         else value)
        out["controls"] = {name: arm.to_json() for name, arm in self.controls.items()}
        return copy.deepcopy(out)

    def comparisons(self) -> list[Comparison]:
        """Every comparison of the idea in this report, baseline first, then each control's
        in the report's order: the Holm family's members (none when incomplete)."""
        if self.comparison is None:
            return []
        return [self.comparison] + [arm.comparison for arm in self.controls.values()]

    def with_comparisons(self, comps: Sequence[Comparison]) -> Report:
        """This report with ``comps`` (as :meth:`comparisons` orders them) as its comparisons."""
        if not comps:
            return self
        arms = {name: dataclasses.replace(arm, comparison=comp)
                for (name, arm), comp in zip(self.controls.items(), comps[1:])}
        return dataclasses.replace(self, comparison=comps[0], controls={**self.controls, **arms})

    @classmethod
    def from_json(cls, data: JsonDict) -> Report:
        """The record of a report's JSON as :meth:`to_json` writes it; a key the record does
        not declare is refused (a new report field is declared here first)."""
        unknown = sorted(set(data) - set(ORDER))
        if unknown:
            raise ValueError(f"report field(s) {unknown} are not declared in "
                             f"benchkit.verdict.records.Report; declared: {list(ORDER)}")
        values = copy.deepcopy(data)
        values["warnings"] = tuple(values["warnings"])
        values["runs"] = tuple(RunRow.from_json(row) for row in values["runs"])
        values["idea_sweep"] = tuple(SweepRow.from_json(row) for row in values["idea_sweep"])
        for name, read in SECTIONS.items():
            if values[name] is not None:
                values[name] = read(values[name])
        values["controls"] = {name: ControlArm.from_json(arm)
                              for name, arm in values["controls"].items()}
        return cls(**values)


# the report's fields that are records (None where absent), each with its reader of the JSON
SECTIONS: dict[str, Callable[[JsonDict], Any]] = {
    "comparison": Comparison.from_json, "budgets": Budgets.from_json,
    "convergence": Convergence.from_json, "grid_extensions": GridExtensions.from_json,
    "mechanism_signature": MechanismSignature.from_json,
    "math_verification": MathVerification.from_json, "incomplete": Incomplete.from_json,
    "baseline": Baseline.from_json, "frontier": Frontier.from_json, "idea": Summary.from_json,
    "sequential": Sequential.from_json, "exploratory": Exploratory.from_json}
# bench_report.json's order of keys (the v1 reference order, then what benchkit added)
ORDER = ("bench_version", "name", "claim", "module", "track", "model", "metric",
         "metric_direction", "n_seeds", "complete", "incomplete", "baseline", "idea",
         "idea_config", "idea_sweep", "comparison", "frontier", "controls", "budgets",
         "log_medians", "convergence", "mechanism_signature", "math_verification",
         "mechanism_ok", "grid_extensions", "protocol", "warnings", "runs", "environment",
         "sequential", "exploratory", "floors", "practical_verdict", "system_verdict",
         "decided_by", "provenance", "store", "created")
