"""The typed records between the verdict pipeline's stages, and the report they make.

A :class:`Comparison` is the idea against one comparator: made by the compare stage
(:func:`benchkit.verdict.comparison.compare_arms`), given its family adjustment
(:func:`benchkit.verdict.controls.adjusted`) and its decided figures and verdict
(:func:`benchkit.verdict.decision.decision_of`), each stage a new record
(:func:`benchkit.codec.replaced`). A :class:`ControlArm` is a control arm's section of the report,
with the idea's comparison with it.

:func:`benchkit.verdict.pipeline.idea_reports` builds each report as a :class:`Report`, then
adjusts and decides it on records (each stage a new record, :func:`dataclasses.replace`); what is
added after, from outside the runs (where the module came from, how far the store was trusted, the
time it was written), makes a new record too, never a changed one. :meth:`Report.to_json` is the
JSON edge: ``bench_report.json`` in its order of keys, validated by the shipped schema; every
record's ``to_json``/``from_json`` is generated from its fields by :mod:`benchkit.codec`. Its
comparison is a :class:`Comparison`, its controls :class:`ControlArm` records and a frontier
bench's points :class:`FrontierPoint` records (they hold comparisons); its baseline and the idea's
sweep, budgets, convergence, grid extensions, mechanism evidence and what keeps it incomplete are
records of :mod:`benchkit.verdict.sections`; every arm's summary over its seeds is a
:class:`benchkit.stats.paired.Summary`; its other sections stay JSON (dicts), as the schema
describes them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from benchkit.codec import JsonRecord, as_json, replaced
from benchkit.spec.idea import Config
from benchkit.spec.run_record import JsonDict, RunRecord
from benchkit.stats import planning
from benchkit.stats.equivalence import EquivalenceTest
from benchkit.stats.paired import PairedComparison, Summary
from benchkit.stats.selection import EffectiveGrids
from benchkit.verdict.plan import Exploratory, Sequential
from benchkit.verdict.sections import (Baseline, Budgets, Convergence, GridExtensions,
                                       Incomplete, MathVerification, Medians, MechanismSignature,
                                       SweepRow)


@dataclass(frozen=True)
class Interval(JsonRecord):
    """A confidence interval of the mean (or median) difference, idea - comparator; ``lo`` or
    ``hi`` is None where the test cannot reach the level with these seeds."""

    confidence: float
    lo: float | None
    hi: float | None


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
    paired figures', which the report always has; the planning figures' keys sit inline."""

    test: str | None = field(default=None, metadata=as_json(omit=True))
    p_mean: float | None = field(default=None, metadata=as_json(omit=True))
    median_delta: float | None = field(default=None, metadata=as_json(omit=True))
    p_fixed_configs: float | None = field(default=None, metadata=as_json(after="selection_aware"))
    selection_aware: bool = field(default=False, metadata=as_json(omit=True))
    effective_grids: EffectiveGrids | None = field(  # null now
        default=None, metadata=as_json(after="selection_aware"))
    p_unexchangeable: float | None = field(default=None, metadata=as_json(omit=True))
    p_adjusted_harms: float | None = field(default=None, metadata=as_json(omit=True))
    p_adjusted: float | None = field(default=None, metadata=as_json(after="family_size"))
    family_size: int | None = field(default=None, metadata=as_json(omit=True))
    level: float | None = field(default=None, metadata=as_json(omit=True))
    signflip_ci: Interval | None = field(default=None, metadata=as_json(omit=True))
    planning_figures: planning.PlanningFigures | None = field(
        default=None, metadata=as_json(flatten=True))
    sign_ci: Interval | None = field(default=None, metadata=as_json(omit=True))
    equivalence: EquivalenceTest | None = field(default=None, metadata=as_json(omit=True))
    verdict: str | None = field(default=None, metadata=as_json(omit=True))
    system_worked: bool | None = field(default=None, metadata=as_json(after="verdict"))


def better_side(metric_direction: str) -> str:
    """``"lower"`` or ``"higher"``, from a ``metric_direction`` ("lower is better", ...)."""
    return "lower" if metric_direction.startswith("lower") else "higher"


# added by the session that writes the report, from outside the runs: absent until then
LATER = ("floors", "provenance", "store", "created")


@dataclass(frozen=True)
class ControlArm(JsonRecord):
    """One control arm as the baseline is reported (its selected config, its sweep, its
    selected config's test summary), the idea's comparison with it and, once decided, the
    idea's verdict against it (None before: absent from :meth:`to_json`)."""

    arm: str                       # "control:<name>"
    best_cfg: Config
    sweep: tuple[SweepRow, ...]
    full: Summary                  # its selected config's test metric
    comparison: Comparison
    verdict: str | None = field(default=None, metadata=as_json(omit=True))


@dataclass(frozen=True)
class FrontierPoint(JsonRecord):
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


@dataclass(frozen=True)
class Frontier(JsonRecord):
    """The report's ``frontier``: the axis, its values, and each value's
    :class:`FrontierPoint`."""

    axis: str
    values: tuple[Any, ...]
    points: tuple[FrontierPoint, ...]


@dataclass(frozen=True)
class Report(JsonRecord):
    """One idea on one track: every field of ``bench_report.json`` (see
    ``benchkit/report/bench_report.schema.json``, generated from these types and
    ``schema_notes.json`` by :mod:`benchkit.report.schema_gen`, for each one's meaning)."""

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
    runs: tuple[RunRecord, ...]      # its rows: the runs' records (their track is the report's)
    environment: JsonDict
    sequential: Sequential
    exploratory: Exploratory | None
    # LATER's fields (floors, provenance, store, created) are absent from the JSON until given
    floors: JsonDict | None = field(default=None, kw_only=True, metadata=as_json(omit=True))
    practical_verdict: str | None   # None until decided (never written so)
    system_verdict: str | None
    decided_by: str | None = None
    provenance: JsonDict | None = field(default=None, metadata=as_json(omit=True))
    store: JsonDict | None = field(default=None, metadata=as_json(omit=True))
    created: str | None = field(default=None, metadata=as_json(omit=True))

    def decoded(self) -> Report:
        """The report read from its JSON, its run records on its track (a row names none)."""
        if all(run.point.track == self.track for run in self.runs):
            return self
        return replaced(self, runs=tuple(run.on_track(self.track)
                                                     for run in self.runs))

    @property
    def direction(self) -> str:
        """``"lower"`` or ``"higher"``: the metric's better side (:func:`better_side`)."""
        return better_side(self.metric_direction)

    # the protocol's facts the pipeline reads, each read here only (the protocol stays the
    # report's JSON object: the track's own keys lead it)
    @property
    def grid(self) -> list[JsonDict]:
        """The grid every arm ran (grid extensions included), in grid order."""
        grid: list[JsonDict] = self.protocol["grid"]
        return grid

    @property
    def seeds(self) -> list[int]:
        """The bench's seeds, in order."""
        seeds: list[int] = self.protocol["seeds"]
        return seeds

    @property
    def alpha(self) -> float:
        """The session's alpha (the level of the plan's last look)."""
        return float(self.protocol["alpha"])

    @property
    def margin_reference(self) -> float | None:
        """The value relative margins are of, fixed before the bench (None: each seed's
        comparator value)."""
        reference: float | None = self.protocol.get("margin_reference")
        return reference

    @property
    def claim_type(self) -> str:
        """``superiority`` (the default, and in reports written before claims had types) or
        ``equivalence``."""
        return str(self.protocol.get("claim_type", "superiority"))

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
        arms = {name: replaced(arm, comparison=comp)
                for (name, arm), comp in zip(self.controls.items(), comps[1:])}
        return replaced(self, comparison=comps[0], controls={**self.controls, **arms})


# bench_report.json's order of keys (the v1 reference order, then what benchkit added): the
# fields' order, which :mod:`benchkit.codec` writes them in
ORDER = tuple(f.name for f in fields(Report))
