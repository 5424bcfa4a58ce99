"""The worker's result as typed records: what an arm or mechanism test sends to the controller
(:class:`RunPayload`, :class:`MechanismPayload`) and the run result a stored record keeps
(:class:`RunResult`).

Each is frozen and has ``to_json``/``from_json`` (generated from its fields by
:mod:`benchkit.codec`, but for the payloads' flat wire format, written here): plain dicts exist
only where JSON is written or read (a test report's ``user_properties`` across xdist, a record's
file): the verdict pipeline takes the records. ``to_json`` gives the same JSON the dicts had, so
stored records, reports and their digests are unchanged. Pure Python: no torch, no numpy.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from benchkit.codec import JsonRecord, as_json
from benchkit.spec.idea import IdeaSpec

JsonDict = dict[str, Any]
RUN_POINT = ("arm", "track", "cfg", "seed")    # what places a run payload in its comparison
RESULT_FIELDS = ("val", "test", "diverged")    # a payload without them carries no result


@dataclass(frozen=True)
class Signature(JsonRecord):
    """One piece of mechanism evidence a run recorded (``run.signature``)."""

    # has_null and null are absent from a signature written without a null measurement
    has_null: bool = field(metadata=as_json(absent=False))
    null: float | None = field(metadata=as_json(absent=None))
    observed: float | None
    predicted: float
    tol: float
    prediction: str | None
    confirmed: bool


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
class RunPayload:  # the worker's flat wire format: its JSON is written here
    """What an arm test sends to the controller: its outcome and, when its Run existed, which
    run it is and its result, the CPU and environment it trained on, and where the result
    came from. ``point`` is None only for a payload the controller cannot place (it is
    dropped: its run stays missing from its report)."""

    outcome: str
    message: str | None
    nodeid: str
    spec: IdeaSpec                           # the idea's spec, as the worker benched it
    point: RunPoint | None = None
    result: RunResult | None = None
    reused: bool = False
    cpu: str | None = None
    env: JsonDict | None = None
    provenance: Provenance | None = None
    not_stored: bool = False                 # trained here, and the store could not keep it
    store_problems: tuple[str, ...] = ()     # the worker's store lines, shown by the controller
    kind = "run"

    @property
    def arm(self) -> str | None:
        return None if self.point is None else self.point.arm

    @property
    def track(self) -> str | None:
        return None if self.point is None else self.point.track

    @property
    def cfg(self) -> Mapping[str, Any] | None:
        return None if self.point is None else self.point.cfg

    @property
    def seed(self) -> int | None:
        return None if self.point is None else self.point.seed

    @property
    def val(self) -> float | None:
        """The validation metric; None without a result or when it is not finite."""
        return None if self.result is None else self.result.val

    @property
    def test(self) -> float | None:
        """The test metric; None without a result or when it is not finite."""
        return None if self.result is None else self.result.test

    @property
    def diverged(self) -> bool:
        return self.result is not None and self.result.diverged

    @property
    def origin(self) -> str | None:
        return None if self.provenance is None else self.provenance.origin

    @property
    def audit(self) -> Audit | None:
        return None if self.provenance is None else self.provenance.audit

    def to_json(self) -> JsonDict:
        """The flat JSON object a payload has always been (its keys as ``Run.payload`` and the
        fixture wrote them)."""
        plain: JsonDict = {"kind": self.kind, "outcome": self.outcome, "message": self.message,
                           "nodeid": self.nodeid}
        if self.point is not None:
            plain.update(self.point.to_json())
        if self.result is not None:
            result = self.result.to_json()
            plain.update({k: result[k] for k in ("val", "test", "diverged", "seconds")})
            plain.update(reused=self.reused, signatures=result["signatures"],
                         logs=result["logs"], budgets=result["budgets"],
                         curve=result.get("curve"), cpu=self.cpu)
            if self.provenance is not None:
                plain.update(self.provenance.to_json())
            if self.not_stored:
                plain["not_stored"] = True
            plain["env"] = self.env
        if self.store_problems:
            plain["store_problems"] = list(self.store_problems)
        plain["spec"] = self.spec.to_plain()
        return plain

    @classmethod
    def from_json(cls, plain: Mapping[str, Any]) -> RunPayload | None:
        """The payload in ``plain`` as a report can take it: one that does not say which run it
        is (no arm, track, config or seed) is None; a passed one that lacks its result's
        fields is a failed run of its comparison, with that message."""
        if any(f not in plain for f in RUN_POINT) or "spec" not in plain:
            return None
        outcome, message = plain["outcome"], plain.get("message")
        has_result = all(f in plain for f in RESULT_FIELDS)
        if outcome == "passed" and not has_result:
            outcome = "failed"
            message = "benchkit: its result lacks " + ", ".join(
                f for f in RESULT_FIELDS if f not in plain)
        return cls(outcome=outcome, message=message, nodeid=plain["nodeid"],
                   spec=IdeaSpec.from_plain(plain["spec"]),
                   point=RunPoint.from_json({k: plain[k] for k in RUN_POINT}),
                   result=_result(plain) if has_result else None,
                   reused=bool(plain.get("reused", False)), cpu=plain.get("cpu"),
                   env=plain.get("env"), provenance=Provenance.from_json(plain),
                   not_stored=bool(plain.get("not_stored", False)),
                   store_problems=tuple(plain.get("store_problems") or ()))


def _result(plain: Mapping[str, Any]) -> RunResult:
    """The result a payload carries in its flat object; a collection it gives as null (a
    hand-made or older payload) is empty."""
    return RunResult.from_json({k: v for k, v in plain.items() if k in RESULT_FIELDS + (
        "seconds",) or (k in ("signatures", "logs", "budgets", "curve") and v is not None)})


@dataclass(frozen=True)
class MechanismPayload:  # the payloads' wire format (kind, spec): its JSON is written here
    """What a mechanism (claim) test sends to the controller: its outcome."""

    outcome: str
    message: str | None
    nodeid: str
    spec: IdeaSpec
    kind = "mechanism"

    def to_json(self) -> JsonDict:
        return {"kind": self.kind, "outcome": self.outcome, "message": self.message,
                "nodeid": self.nodeid, "spec": self.spec.to_plain()}

    @classmethod
    def from_json(cls, plain: Mapping[str, Any]) -> MechanismPayload:
        return cls(outcome=plain["outcome"], message=plain.get("message"),
                   nodeid=plain["nodeid"], spec=IdeaSpec.from_plain(plain["spec"]))


Payload = Union[RunPayload, MechanismPayload]


def payload_from_json(plain: Mapping[str, Any]) -> Payload | None:
    """The payload a test report carried (``json.loads`` of it), or None when the controller
    cannot use it (no spec, a run that does not say which run it is, an unknown kind)."""
    kind = plain.get("kind")
    if kind == "run":
        return RunPayload.from_json(plain)
    if kind == "mechanism" and "spec" in plain:
        return MechanismPayload.from_json(plain)
    return None
