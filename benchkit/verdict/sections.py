"""The report's sections that verdict/ computes, as records: the budgets matched between the arms
(:func:`benchkit.verdict.budgets.budget_section`), whether training was over
(:func:`benchkit.verdict.convergence.section`), how far the grid was extended
(:func:`benchkit.verdict.extension.section`), the mechanism evidence
(:func:`benchkit.verdict.mechanism.mechanism_signature`,
:func:`benchkit.verdict.mechanism.math_verification`), why a report is incomplete, and each
arm's per-config sweep (:func:`benchkit.verdict.build.arm_sweep`) with the baseline's selection.

Each record is frozen; its ``to_json`` (generated from its fields by :mod:`benchkit.codec`) gives
the section's JSON in ``bench_report.json``, keys in the order reports have always had them (the
fields' order), and its ``from_json`` reads that JSON back, refusing a key the record does not
declare. They live apart from their builders so that
:class:`benchkit.verdict.records.Report` can declare its fields with them (the builders import
the records; the records import nothing of verdict/ but records: these and the plan's,
:mod:`benchkit.verdict.plan`, which imports no builder).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchkit.codec import JsonRecord, as_json
from benchkit.spec.idea import Config
from benchkit.stats.paired import Summary

Medians = dict[str, float | None]  # figure name -> its median over an arm's selected runs


@dataclass(frozen=True)
class BudgetMatch(JsonRecord):
    """One budget of the idea against one comparator's (``arm``): both medians, their relative
    difference (None when either is missing, or the comparator's is 0 and the idea's is not),
    the tolerance, whether it matched, the stated reason it is waived (None: not waived),
    whether it is the frontier's axis (reported, not matched), and on a frontier's top-level
    section the ``point`` it was checked at."""

    budget: str
    arm: str
    idea: float | None
    other: float | None
    rel_diff: float | None
    tolerance: float
    matched: bool
    waived: str | None
    axis: bool
    point: Config | None = field(default=None, metadata=as_json(omit=True))


@dataclass(frozen=True)
class BudgetPoint(JsonRecord):
    """A frontier point's own budgets section, at the axis ``value``."""

    value: Any
    budgets: Budgets = field(metadata=as_json(flatten=True))   # its keys beside ``value``


@dataclass(frozen=True)
class Budgets(JsonRecord):
    """The report's ``budgets``: per arm the median of each budget over its selected-config
    runs, the idea's budgets checked against every comparator's, whether all matched (else
    the idea gets no verdict: ``unmatched`` says which did not), the declared waivers (budget
    -> reason), and on a frontier each point's own section (``points``)."""

    arms: dict[str, Medians]
    checks: tuple[BudgetMatch, ...]
    matched: bool
    unmatched: tuple[str, ...]
    waivers: dict[str, str]
    points: tuple[BudgetPoint, ...] | None = field(default=None, metadata=as_json(omit=True))


@dataclass(frozen=True)
class BudgetCheck(JsonRecord):
    """An arm's budget check (:mod:`benchkit.verdict.convergence`): its config trained longer
    (``epochs``), the sequential decision ("still improving", "trained out", "undetermined",
    "not measurable" or "pending", then ``pending`` is True), the mean gain over the seeds of
    the look that decided and its one-sided bounds at ``level``, how many seeds the current
    look calls for, and the per-seed gains so far (None: not in yet or not measurable) of the
    seeds ``checked`` (in the check's order; empty in reports from before it drew them), and
    the ``allowance`` "trained out" makes for the selection's luck (None in older reports). A
    report written before the sequential check (schema-valid, committed ones among them) has
    the first five fields only: ``decision`` None, and its JSON gives back just those."""

    cfg: Config
    epochs: int
    gain: float | None
    seeds: int
    pending: bool
    # the fields after decision are written only with one
    decision: str | None = field(default=None, metadata=as_json(omit=True))
    lower: float | None = field(default=None, metadata=as_json(after="decision"))
    upper: float | None = field(default=None, metadata=as_json(after="decision"))
    level: float | None = field(default=None, metadata=as_json(after="decision"))
    called_seeds: int | None = field(default=None, metadata=as_json(after="decision"))
    per_seed: tuple[float | None, ...] = field(default=(), metadata=as_json(after="decision"))
    checked: tuple[int, ...] = field(default=(), metadata=as_json(omit=True, after="decision"))
    allowance: float | None = field(default=None, metadata=as_json(omit=True, after="decision"))


@dataclass(frozen=True)
class ArmConvergence(JsonRecord):
    """One arm's convergence: its selected config (None without runs), the median relative
    validation gain over the last quarter of training and over how many seeds, whether it was
    still improving (None: its budget check is undetermined) and its budget check, if any."""

    cfg: Config | None
    last_quarter_gain: float | None
    seeds: int
    still_improving: bool | None
    # absent from reports written before the budget check
    budget_check: BudgetCheck | None = field(metadata=as_json(absent=None))


@dataclass(frozen=True)
class Convergence(JsonRecord):
    """The report's ``convergence``: the track's declared budget (``convergence``, ``fixed``,
    or None for a track unknown here) and its reason, the still-improving threshold, the budget
    check's factor of the epochs, and each arm's :class:`ArmConvergence`. A report written
    before the budget check (schema-valid, committed ones among them) has no factor and no
    arm's check: ``budget_factor`` None, and its JSON gives back neither."""

    budget: str | None
    budget_reason: str | None
    threshold: float
    budget_factor: float | None = field(metadata=as_json(omit=True, absent=None))
    arms: dict[str, ArmConvergence]

    def to_json(self) -> dict[str, Any]:
        """The section's JSON; a report from before the budget check (``budget_factor`` None)
        gives back its arms without their check, as it was written (hand-written: the rule
        spans two records)."""
        out = super().to_json()
        if self.budget_factor is None:
            for arm in out["arms"].values():
                del arm["budget_check"]
        return out


@dataclass(frozen=True)
class Extension(JsonRecord):
    """One step of the edge-extension rule (:mod:`benchkit.verdict.extension`): ``axis`` grew
    on its ``side`` ("low" or "high") from its edge value ``edge`` to ``value``, because the
    selection of each arm in ``arms`` sat at that edge."""

    axis: str
    side: str
    edge: Any = field(metadata=as_json(name="from"))
    value: Any
    arms: tuple[str, ...]


@dataclass(frozen=True)
class AtEdge(JsonRecord):
    """An arm whose selected config is still at the ``side`` edge of ``axis`` after the rule's
    last step (its limit reached, or no valid step beyond)."""

    arm: str
    axis: str
    side: str


@dataclass(frozen=True)
class GridExtensions(JsonRecord):
    """The report's ``grid_extensions``: the declared limit of steps per side, the grid the
    rule started from, each step it took, and the arms still at an edge."""

    limit: int
    declared_grid: tuple[Config, ...]
    extensions: tuple[Extension, ...]
    at_edge: tuple[AtEdge, ...]


@dataclass(frozen=True)
class SignatureEvidence(JsonRecord):
    """One ``run.signature`` over the idea's selected runs (seed by seed: ``per_seed``, None
    where a run did not record it): its prediction, the widest tolerance, the observed value
    farthest from the prediction, whether every run confirmed it, its status and whether its
    null discriminates (:func:`benchkit.verdict.mechanism.signature_status`), and the nulls
    seed by seed (empty without a null)."""

    prediction: str | None
    predicted: float
    tol: float
    observed: float | None
    per_seed: tuple[float | None, ...]
    confirmed: bool
    status: str
    discriminating: bool | None
    null_per_seed: tuple[float | None, ...]


@dataclass(frozen=True)
class MechanismSignature(JsonRecord):
    """The report's ``mechanism_signature``: each signature by name (sorted), and whether all
    are confirmed (None: the idea records none)."""

    signatures: dict[str, SignatureEvidence]
    confirmed: bool | None


@dataclass(frozen=True)
class MechanismTest(JsonRecord):
    """One mechanism (claim) test: its node id, outcome and message."""

    test: str
    outcome: str
    message: str | None


@dataclass(frozen=True)
class MathVerification(JsonRecord):
    """The report's ``math_verification``: every mechanism test in node id order, and whether
    each one that ran (a skipped claim is no evidence) passed (None: none ran)."""

    tests: tuple[MechanismTest, ...]
    passed: bool | None

    def outcomes(self) -> list[bool]:
        """Whether each test that ran passed, in order (the skipped ones left out)."""
        return [t.outcome == "passed" for t in self.tests if t.outcome != "skipped"]


@dataclass(frozen=True)
class FailedRun(JsonRecord):
    """A run of the track that did not pass: ``arm[run id]`` and its message."""

    run: str
    message: str | None


@dataclass(frozen=True)
class Incomplete(JsonRecord):
    """The report's ``incomplete``: why it has no comparison, the runs missing (``arm[run
    id]``), those that failed, and the grid extension's configs not trained yet (the ids a
    session trains next; None on a frontier's report, which lists its points' reasons)."""

    reasons: tuple[str, ...]
    missing: tuple[str, ...]
    failed: tuple[FailedRun, ...]
    pending: tuple[str, ...] | None = field(default=None, metadata=as_json(omit=True))


@dataclass(frozen=True)
class SweepRow(JsonRecord):
    """One grid config of an arm's sweep: its test and validation summaries over the seeds
    (None unless every seed has a finite value), whether it may be selected (every seed's
    validation finite: the test split never takes part), and the seeds whose validation or
    test value is not finite."""

    cfg: Config
    mean: float | None
    val_mean: float | None
    eligible: bool
    diverged_seeds: tuple[int, ...]
    result: Summary | None
    val_result: Summary | None
    test_diverged_seeds: tuple[int, ...]


@dataclass(frozen=True)
class Baseline(JsonRecord):
    """The report's ``baseline``: its selected config (None while incomplete), its sweep, and
    the test summary of its selected config (None while incomplete)."""

    best_cfg: Config | None
    sweep: tuple[SweepRow, ...]
    full: Summary | None
