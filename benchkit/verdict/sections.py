"""The report's sections that verdict/ computes, as records: the budgets matched between the arms
(:func:`benchkit.verdict.budgets.budget_section`), whether training was over
(:func:`benchkit.verdict.convergence.section`), how far the grid was extended
(:func:`benchkit.verdict.extension.section`), the mechanism evidence
(:func:`benchkit.verdict.mechanism.mechanism_signature`,
:func:`benchkit.verdict.mechanism.math_verification`), why a report is incomplete, and each
arm's per-config sweep (:func:`benchkit.verdict.build.arm_sweep`) with the baseline's selection.

Each record is frozen; its ``to_json`` gives the section's JSON in ``bench_report.json``, keys
in the order reports have always had them, and its ``from_json`` reads that JSON back, refusing
a key the record does not declare. They live apart from their builders so that
:class:`benchkit.verdict.records.Report` can declare its fields with them (the builders import
the records; the records import nothing of verdict/ but records: these and the plan's,
:mod:`benchkit.verdict.plan`, which imports no builder).
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from benchkit.spec.idea import Config
from benchkit.stats.paired import Summary

Medians = dict[str, float | None]  # figure name -> its median over an arm's selected runs


def declared(record: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``data``, once every key in it is a field the dataclass ``record``
    declares (a new key of the report's JSON is declared on its record first)."""
    names = [f.name for f in fields(record)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ValueError(f"field(s) {unknown} are not declared in {record.__module__}."
                         f"{record.__qualname__}; declared: {names}")
    return copy.deepcopy(dict(data))


def summary_json(summary: Summary | None) -> dict[str, Any] | None:
    """A summary field's JSON: the record's, or null where the report has none."""
    return None if summary is None else summary.to_json()


def with_summaries(values: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """A record's JSON ``values`` with each of its summary fields ``names`` read as a
    :class:`~benchkit.stats.paired.Summary` (null stays None)."""
    return {**values, **{name: None if values[name] is None else Summary.from_json(values[name])
                         for name in names}}


@dataclass(frozen=True)
class BudgetMatch:
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
    point: Config | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "budget": self.budget, "arm": self.arm, "idea": self.idea, "other": self.other,
            "rel_diff": self.rel_diff, "tolerance": self.tolerance, "matched": self.matched,
            "waived": self.waived, "axis": self.axis}
        if self.point is not None:
            out["point"] = copy.deepcopy(self.point)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BudgetMatch:
        return cls(**declared(cls, data))


@dataclass(frozen=True)
class BudgetPoint:
    """A frontier point's own budgets section, at the axis ``value``."""

    value: Any
    budgets: Budgets

    def to_json(self) -> dict[str, Any]:
        return {"value": copy.deepcopy(self.value), **self.budgets.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BudgetPoint:
        rest = {k: v for k, v in data.items() if k != "value"}
        return cls(value=copy.deepcopy(data["value"]), budgets=Budgets.from_json(rest))


@dataclass(frozen=True)
class Budgets:
    """The report's ``budgets``: per arm the median of each budget over its selected-config
    runs, the idea's budgets checked against every comparator's, whether all matched (else
    the idea gets no verdict: ``unmatched`` says which did not), the declared waivers (budget
    -> reason), and on a frontier each point's own section (``points``)."""

    arms: dict[str, Medians]
    checks: tuple[BudgetMatch, ...]
    matched: bool
    unmatched: tuple[str, ...]
    waivers: dict[str, str]
    points: tuple[BudgetPoint, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "arms": copy.deepcopy(self.arms), "checks": [c.to_json() for c in self.checks],
            "matched": self.matched, "unmatched": list(self.unmatched),
            "waivers": dict(self.waivers)}
        if self.points is not None:
            out["points"] = [p.to_json() for p in self.points]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Budgets:
        values = declared(cls, data)
        values["checks"] = tuple(BudgetMatch.from_json(c) for c in values["checks"])
        values["unmatched"] = tuple(values["unmatched"])
        if values.get("points") is not None:
            values["points"] = tuple(BudgetPoint.from_json(p) for p in values["points"])
        return cls(**values)


@dataclass(frozen=True)
class BudgetCheck:
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
    decision: str | None = None
    lower: float | None = None
    upper: float | None = None
    level: float | None = None
    called_seeds: int | None = None
    per_seed: tuple[float | None, ...] = ()
    checked: tuple[int, ...] = ()
    allowance: float | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"cfg": copy.deepcopy(self.cfg), "epochs": self.epochs, "gain": self.gain,
               "seeds": self.seeds, "pending": self.pending}
        if self.decision is not None:
            out.update(decision=self.decision, lower=self.lower, upper=self.upper,
                       level=self.level, called_seeds=self.called_seeds,
                       per_seed=list(self.per_seed))
            if self.checked:
                out["checked"] = list(self.checked)
            if self.allowance is not None:
                out["allowance"] = self.allowance
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BudgetCheck:
        values = declared(cls, data)
        values["per_seed"] = tuple(values.get("per_seed", ()))
        values["checked"] = tuple(values.get("checked", ()))
        return cls(**values)


@dataclass(frozen=True)
class ArmConvergence:
    """One arm's convergence: its selected config (None without runs), the median relative
    validation gain over the last quarter of training and over how many seeds, whether it was
    still improving (None: its budget check is undetermined) and its budget check, if any."""

    cfg: Config | None
    last_quarter_gain: float | None
    seeds: int
    still_improving: bool | None
    budget_check: BudgetCheck | None

    def to_json(self) -> dict[str, Any]:
        return {"cfg": copy.deepcopy(self.cfg), "last_quarter_gain": self.last_quarter_gain,
                "seeds": self.seeds, "still_improving": self.still_improving,
                "budget_check": None if self.budget_check is None
                else self.budget_check.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArmConvergence:
        values = declared(cls, data)
        if values.get("budget_check") is not None:  # absent: before the budget check
            values["budget_check"] = BudgetCheck.from_json(values["budget_check"])
        return cls(**{"budget_check": None, **values})


@dataclass(frozen=True)
class Convergence:
    """The report's ``convergence``: the track's declared budget (``convergence``, ``fixed``,
    or None for a track unknown here) and its reason, the still-improving threshold, the budget
    check's factor of the epochs, and each arm's :class:`ArmConvergence`. A report written
    before the budget check (schema-valid, committed ones among them) has no factor and no
    arm's check: ``budget_factor`` None, and its JSON gives back neither."""

    budget: str | None
    budget_reason: str | None
    threshold: float
    budget_factor: float | None
    arms: dict[str, ArmConvergence]

    def to_json(self) -> dict[str, Any]:
        arms = {arm: a.to_json() for arm, a in self.arms.items()}
        if self.budget_factor is None:
            return {"budget": self.budget, "budget_reason": self.budget_reason,
                    "threshold": self.threshold,
                    "arms": {arm: {k: v for k, v in a.items() if k != "budget_check"}
                             for arm, a in arms.items()}}
        return {"budget": self.budget, "budget_reason": self.budget_reason,
                "threshold": self.threshold, "budget_factor": self.budget_factor, "arms": arms}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Convergence:
        values = declared(cls, data)
        values["arms"] = {arm: ArmConvergence.from_json(a) for arm, a in values["arms"].items()}
        return cls(**{"budget_factor": None, **values})


@dataclass(frozen=True)
class Extension:
    """One step of the edge-extension rule (:mod:`benchkit.verdict.extension`): ``axis`` grew
    on its ``side`` ("low" or "high") from its edge value ``edge`` to ``value``, because the
    selection of each arm in ``arms`` sat at that edge."""

    axis: str
    side: str
    edge: Any
    value: Any
    arms: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"axis": self.axis, "side": self.side, "from": self.edge, "value": self.value,
                "arms": list(self.arms)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Extension:
        values = declared(cls, {("edge" if k == "from" else k): v for k, v in data.items()})
        values["arms"] = tuple(values["arms"])
        return cls(**values)


@dataclass(frozen=True)
class AtEdge:
    """An arm whose selected config is still at the ``side`` edge of ``axis`` after the rule's
    last step (its limit reached, or no valid step beyond)."""

    arm: str
    axis: str
    side: str

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "axis": self.axis, "side": self.side}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AtEdge:
        return cls(**declared(cls, data))


@dataclass(frozen=True)
class GridExtensions:
    """The report's ``grid_extensions``: the declared limit of steps per side, the grid the
    rule started from, each step it took, and the arms still at an edge."""

    limit: int
    declared_grid: tuple[Config, ...]
    extensions: tuple[Extension, ...]
    at_edge: tuple[AtEdge, ...]

    def to_json(self) -> dict[str, Any]:
        return {"limit": self.limit, "declared_grid": copy.deepcopy(list(self.declared_grid)),
                "extensions": [e.to_json() for e in self.extensions],
                "at_edge": [e.to_json() for e in self.at_edge]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GridExtensions:
        values = declared(cls, data)
        values["declared_grid"] = tuple(values["declared_grid"])
        values["extensions"] = tuple(Extension.from_json(e) for e in values["extensions"])
        values["at_edge"] = tuple(AtEdge.from_json(e) for e in values["at_edge"])
        return cls(**values)


@dataclass(frozen=True)
class SignatureEvidence:
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

    def to_json(self) -> dict[str, Any]:
        return {"prediction": self.prediction, "predicted": self.predicted, "tol": self.tol,
                "observed": self.observed, "per_seed": list(self.per_seed),
                "confirmed": self.confirmed, "status": self.status,
                "discriminating": self.discriminating,
                "null_per_seed": list(self.null_per_seed)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SignatureEvidence:
        values = declared(cls, data)
        values["per_seed"] = tuple(values["per_seed"])
        values["null_per_seed"] = tuple(values["null_per_seed"])
        return cls(**values)


@dataclass(frozen=True)
class MechanismSignature:
    """The report's ``mechanism_signature``: each signature by name (sorted), and whether all
    are confirmed (None: the idea records none)."""

    signatures: dict[str, SignatureEvidence]
    confirmed: bool | None

    def to_json(self) -> dict[str, Any]:
        return {"signatures": {n: s.to_json() for n, s in self.signatures.items()},
                "confirmed": self.confirmed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MechanismSignature:
        values = declared(cls, data)
        values["signatures"] = {n: SignatureEvidence.from_json(s)
                                for n, s in values["signatures"].items()}
        return cls(**values)


@dataclass(frozen=True)
class MechanismTest:
    """One mechanism (claim) test: its node id, outcome and message."""

    test: str
    outcome: str
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "outcome": self.outcome, "message": self.message}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MechanismTest:
        return cls(**declared(cls, data))


@dataclass(frozen=True)
class MathVerification:
    """The report's ``math_verification``: every mechanism test in node id order, and whether
    each one that ran (a skipped claim is no evidence) passed (None: none ran)."""

    tests: tuple[MechanismTest, ...]
    passed: bool | None

    def outcomes(self) -> list[bool]:
        """Whether each test that ran passed, in order (the skipped ones left out)."""
        return [t.outcome == "passed" for t in self.tests if t.outcome != "skipped"]

    def to_json(self) -> dict[str, Any]:
        return {"tests": [t.to_json() for t in self.tests], "passed": self.passed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MathVerification:
        values = declared(cls, data)
        values["tests"] = tuple(MechanismTest.from_json(t) for t in values["tests"])
        return cls(**values)


@dataclass(frozen=True)
class FailedRun:
    """A run of the track that did not pass: ``arm[run id]`` and its message."""

    run: str
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "message": self.message}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FailedRun:
        return cls(**declared(cls, data))


@dataclass(frozen=True)
class Incomplete:
    """The report's ``incomplete``: why it has no comparison, the runs missing (``arm[run
    id]``), those that failed, and the grid extension's configs not trained yet (the ids a
    session trains next; None on a frontier's report, which lists its points' reasons)."""

    reasons: tuple[str, ...]
    missing: tuple[str, ...]
    failed: tuple[FailedRun, ...]
    pending: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reasons": list(self.reasons), "missing": list(self.missing),
                               "failed": [f.to_json() for f in self.failed]}
        if self.pending is not None:
            out["pending"] = list(self.pending)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Incomplete:
        values = declared(cls, data)
        values["reasons"] = tuple(values["reasons"])
        values["missing"] = tuple(values["missing"])
        values["failed"] = tuple(FailedRun.from_json(f) for f in values["failed"])
        if values.get("pending") is not None:
            values["pending"] = tuple(values["pending"])
        return cls(**values)


@dataclass(frozen=True)
class SweepRow:
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

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy({
            "cfg": self.cfg, "mean": self.mean, "val_mean": self.val_mean,
            "eligible": self.eligible, "diverged_seeds": list(self.diverged_seeds),
            "result": summary_json(self.result), "val_result": summary_json(self.val_result),
            "test_diverged_seeds": list(self.test_diverged_seeds)})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SweepRow:
        values = declared(cls, data)
        values["diverged_seeds"] = tuple(values["diverged_seeds"])
        values["test_diverged_seeds"] = tuple(values["test_diverged_seeds"])
        return cls(**with_summaries(values, "result", "val_result"))


@dataclass(frozen=True)
class Baseline:
    """The report's ``baseline``: its selected config (None while incomplete), its sweep, and
    the test summary of its selected config (None while incomplete)."""

    best_cfg: Config | None
    sweep: tuple[SweepRow, ...]
    full: Summary | None

    def to_json(self) -> dict[str, Any]:
        return {"best_cfg": copy.deepcopy(self.best_cfg),
                "sweep": [row.to_json() for row in self.sweep],
                "full": summary_json(self.full)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Baseline:
        values = declared(cls, data)
        values["sweep"] = tuple(SweepRow.from_json(row) for row in values["sweep"])
        return cls(**with_summaries(values, "full"))
