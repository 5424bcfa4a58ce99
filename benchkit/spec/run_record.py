"""One run's records, the same from the worker to the store to the report: its place
(:class:`RunPoint`), its result (:class:`RunResult`, with its signatures and validation curve:
:class:`Signature`, :class:`CurvePoint`), where the result came from (:class:`Provenance`)
and the run itself (:class:`RunRecord`: the payload's run, a stored record's run and the
report's row).

Each is frozen; its ``to_json``/``from_json`` is generated from its fields by
:mod:`benchkit.codec` (``Provenance``'s flat keys and ``RunRecord``'s report row are written
here). Pure Python: no torch, no numpy.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from benchkit.codec import JsonRecord, as_json
from benchkit.spec.idea import Config

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class Signature(JsonRecord):
    """One piece of mechanism evidence a run recorded (``run.signature``). A report's row keeps
    its observed value only: read from a row (:meth:`observation`), its prediction, tolerance
    and confirmation are unknown (None); a run and a stored record have them all."""

    # has_null and null are absent from a signature written without a null measurement
    has_null: bool = field(metadata=as_json(absent=False))
    null: float | None = field(metadata=as_json(absent=None))
    observed: float | None
    predicted: float | None
    tol: float | None
    prediction: str | None
    confirmed: bool | None

    @classmethod
    def observation(cls, observed: float | None) -> Signature:
        """The signature as a report's row keeps it: its observed value alone."""
        return cls(has_null=False, null=None, observed=observed, predicted=None, tol=None,
                   prediction=None, confirmed=None)


@dataclass(frozen=True)
class CurvePoint(JsonRecord):
    """``run.fit``'s validation value after one epoch (None when not finite)."""

    epoch: int
    val: float | None

    @classmethod
    def curve(cls, points: Sequence[Mapping[str, Any]] | None) -> tuple[CurvePoint, ...] | None:
        """A validation curve's JSON points as records; None where there is no curve (records
        from before curves)."""
        return None if points is None else tuple(cls.from_json(p) for p in points)


@dataclass(frozen=True)
class RunResult(JsonRecord):
    """What one run gave, as a stored record's ``result`` holds it (benchkit.store.records):
    metrics (None when not finite, and then ``diverged``), its seconds, and its evidence."""

    val: float | None
    test: float | None
    diverged: bool
    # seconds: None only where a hand-made payload gives none
    seconds: float | None = field(metadata=as_json(absent=None))
    signatures: Mapping[str, Signature] = field(default_factory=dict)
    logs: Mapping[str, float | None] = field(default_factory=dict)
    budgets: Mapping[str, float] = field(default_factory=dict)
    # records from before curves have none
    curve: tuple[CurvePoint, ...] | None = field(default=None, metadata=as_json(omit=True))


class Measured(Protocol):
    """What a config's selection reads of one run: its metrics (None where not finite).
    A :class:`RunPayload` and a :class:`RunResult` are both measured."""

    @property
    def val(self) -> float | None: ...

    @property
    def test(self) -> float | None: ...


@dataclass(frozen=True)
class RunPoint(JsonRecord):
    """Which run of its idea a payload is: arm, track, grid config and seed."""

    arm: str
    track: str
    cfg: Mapping[str, Any]
    seed: int


@dataclass(frozen=True)
class Audit(JsonRecord):
    """An audited run: the digest its record holds, and whether the retrained run gave it."""

    stored: str
    same: bool


@dataclass(frozen=True)
class Provenance:  # flat in the payload, ``planned`` by origin: its JSON is written here
    """Where a run's result came from: its store key and run digest, ``fresh`` (trained
    here), ``reused`` (stored by its own module) or ``shared`` (stored by ``trained_in``); the
    plan a reused run was trained under, and the audit of a retrained one."""

    key: str | None
    digest: str | None
    origin: str | None
    trained_in: str | None
    planned: JsonDict | None = None
    audit: Audit | None = None

    def to_json(self) -> JsonDict:
        plain: JsonDict = {"key": self.key, "digest": self.digest, "origin": self.origin,
                           "trained_in": self.trained_in}
        if self.origin in ("reused", "shared"):
            plain["planned"] = self.planned
        if self.audit is not None:
            plain["audit"] = self.audit.to_json()
        return plain

    @classmethod
    def from_json(cls, plain: Mapping[str, Any]) -> Provenance | None:
        """The provenance a payload carries, None when it carries none."""
        if not any(k in plain for k in ("key", "digest", "origin", "trained_in")):
            return None
        audit = plain.get("audit")
        return cls(key=plain.get("key"), digest=plain.get("digest"),
                   origin=plain.get("origin"), trained_in=plain.get("trained_in"),
                   planned=plain.get("planned"),
                   audit=None if audit is None else Audit.from_json(audit))


@dataclass(frozen=True)
class _Row(JsonRecord):
    """The JSON layout of a run's report row (``report["runs"]``, the report format): the run's
    place but its track, its result's figures, its signatures' observed values, its test's
    outcome and where the result came from. Only :class:`RunRecord`'s codec uses it."""

    arm: str
    seed: int
    cfg: Config
    val: float | None
    test: float | None
    seconds: float | None
    diverged: bool
    outcome: str
    reused: bool
    logs: Mapping[str, float | None]
    signatures: Mapping[str, float | None]   # name -> observed
    budgets: Mapping[str, float]
    cpu: str | None
    curve: tuple[CurvePoint, ...] | None
    digest: str | None
    key: str | None
    origin: str | None
    trained_in: str | None


NO_RESULT = RunResult(val=None, test=None, diverged=False, seconds=None)


@dataclass(frozen=True)
class RunRecord:  # its JSON is the report's row, laid out by _Row: written here
    """One run, the same record from the worker to the report: which run it is (``point``),
    what it gave (``result``; None: its test ended before it gave one), where that came from
    (``origin``), its test's ``outcome``, whether a stored run was ``reused`` and the ``cpu`` it
    trained on. The worker's payload carries it, a stored record gives it
    (:meth:`benchkit.store.records.StoredRun.record`) and the report's ``runs`` are these.

    Its JSON is the report's row (:class:`_Row`'s layout, the report format): the row names no
    track (its report's: :meth:`on_track` gives it back), keeps each signature's observed value
    only (read back, a signature's prediction is unknown: :meth:`Signature.observation`) and
    shows a run without a result as an empty one with no origin."""

    point: RunPoint
    result: RunResult | None
    origin: Provenance | None = None
    outcome: str = "passed"
    reused: bool = False
    cpu: str | None = None
    JSON_LAYOUT: ClassVar[type] = _Row   # the schema of its JSON (benchkit.report.schema_gen)

    @property
    def arm(self) -> str:
        return self.point.arm

    @property
    def cfg(self) -> Mapping[str, Any]:
        return self.point.cfg

    @property
    def seed(self) -> int:
        return self.point.seed

    @property
    def val(self) -> float | None:
        return None if self.result is None else self.result.val

    @property
    def test(self) -> float | None:
        return None if self.result is None else self.result.test

    @property
    def diverged(self) -> bool:
        return self.result is not None and self.result.diverged

    @property
    def seconds(self) -> float | None:
        return None if self.result is None else self.result.seconds

    def on_track(self, track: str) -> RunRecord:
        """The record placed on ``track`` (a row read back names none)."""
        if self.point.track == track:
            return self
        return replace(self, point=replace(self.point, track=track))

    def to_json(self) -> JsonDict:
        """The run's report row."""
        given = self.result is not None
        result = self.result if self.result is not None else NO_RESULT
        source = self.origin if given else None
        return _Row(
            arm=self.point.arm, seed=self.point.seed, cfg=dict(self.point.cfg),
            val=result.val, test=result.test, seconds=result.seconds,
            diverged=bool(result.diverged), outcome=self.outcome,
            reused=bool(given and self.reused), logs=dict(result.logs),
            signatures={k: v.observed for k, v in result.signatures.items()},
            budgets=dict(result.budgets), cpu=self.cpu if given else None, curve=result.curve,
            digest=None if source is None else source.digest,
            key=None if source is None else source.key,
            origin=None if source is None else source.origin,
            trained_in=None if source is None else source.trained_in).to_json()

    @classmethod
    def from_json(cls, plain: Mapping[str, Any]) -> RunRecord:
        """The record of a report's row, on no track until its report gives it one; a row
        that shows no result (as :meth:`to_json` writes a record without one) has none."""
        row = _Row.from_json(plain)
        result = RunResult(val=row.val, test=row.test, diverged=row.diverged,
                           seconds=row.seconds, logs=row.logs, budgets=row.budgets,
                           signatures={k: Signature.observation(v)
                                       for k, v in row.signatures.items()},
                           curve=row.curve)
        origin = None if (row.key, row.digest, row.origin, row.trained_in) == (
            None, None, None, None) else Provenance(key=row.key, digest=row.digest,
                                                    origin=row.origin,
                                                    trained_in=row.trained_in)
        given = result != NO_RESULT or row.cpu is not None or origin is not None or row.reused
        return cls(point=RunPoint(arm=row.arm, track="", cfg=row.cfg, seed=row.seed),
                   result=result if given else None, origin=origin, outcome=row.outcome,
                   reused=row.reused, cpu=row.cpu)
