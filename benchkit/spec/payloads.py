"""What an arm or mechanism test sends to the controller (:class:`RunPayload`, which carries its
run's :class:`benchkit.spec.run_record.RunRecord`, and :class:`MechanismPayload`).

Each is frozen and has ``to_json``/``from_json`` (the payloads' flat wire format, written
here): plain dicts exist only where JSON is written or read (a test report's
``user_properties`` across xdist): the verdict pipeline takes the records. Pure Python: no
torch, no numpy.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Union

from benchkit.spec.idea import IdeaSpec
from benchkit.spec.run_record import (Audit, JsonDict, Provenance, RunPoint, RunRecord,
                                      RunResult)

RUN_POINT = ("arm", "track", "cfg", "seed")    # what places a run payload in its comparison
RESULT_FIELDS = ("val", "test", "diverged")    # a payload without them carries no result


@dataclass(frozen=True)
class RunPayload:  # the worker's flat wire format: its JSON is written here
    """What an arm test sends to the controller: its outcome and, when its Run existed, its
    run's :class:`RunRecord` (``record``: which run it is, its result and where that came
    from), the environment it trained in and whether the store kept it. ``record`` is None
    only for a payload the controller cannot place (it is dropped: its run stays missing from
    its report); its outcome is the payload's."""

    outcome: str
    message: str | None
    nodeid: str
    spec: IdeaSpec                           # the idea's spec, as the worker benched it
    record: RunRecord | None = None
    env: JsonDict | None = None
    not_stored: bool = False                 # trained here, and the store could not keep it
    store_problems: tuple[str, ...] = ()     # the worker's store lines, shown by the controller
    kind = "run"

    def __post_init__(self) -> None:
        if self.record is not None and self.record.outcome != self.outcome:
            raise ValueError(f"{self.nodeid}: its outcome {self.outcome!r} is not its run "
                             f"record's {self.record.outcome!r}")

    def failed(self, message: str) -> RunPayload:
        """The payload as a failed run's, with ``message``."""
        return replace(self, outcome="failed", message=message, record=None if (
            self.record is None) else replace(self.record, outcome="failed"))

    @property
    def point(self) -> RunPoint | None:
        return None if self.record is None else self.record.point

    @property
    def result(self) -> RunResult | None:
        return None if self.record is None else self.record.result

    @property
    def provenance(self) -> Provenance | None:
        return None if self.record is None else self.record.origin

    @property
    def reused(self) -> bool:
        return self.record is not None and self.record.reused

    @property
    def cpu(self) -> str | None:
        return None if self.record is None else self.record.cpu

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

    def to_json(self, spec_sent: str | None = None) -> JsonDict:
        """The flat JSON object a payload has always been (its keys as ``Run.payload`` and the
        fixture wrote them), with its spec (:func:`spec_wire`: only its digest once
        ``spec_sent``, the digest the sender sent it under)."""
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
        plain.update(spec_wire(self.spec, spec_sent))
        return plain

    @classmethod
    def from_json(cls, plain: Mapping[str, Any], spec: IdeaSpec | None = None
                  ) -> RunPayload | None:
        """The payload in ``plain`` as a report can take it, of the idea ``spec`` (given: the
        one its digest names; else the spec it carries): one that does not say which run it
        is (no arm, track, config or seed) is None; a passed one that lacks its result's
        fields is a failed run of its comparison, with that message."""
        if any(f not in plain for f in RUN_POINT) or (spec is None and "spec" not in plain):
            return None
        outcome, message = plain["outcome"], plain.get("message")
        has_result = all(f in plain for f in RESULT_FIELDS)
        if outcome == "passed" and not has_result:
            outcome = "failed"
            message = "benchkit: its result lacks " + ", ".join(
                f for f in RESULT_FIELDS if f not in plain)
        record = RunRecord(point=RunPoint.from_json({k: plain[k] for k in RUN_POINT}),
                           result=_result(plain) if has_result else None,
                           origin=Provenance.from_json(plain), outcome=outcome,
                           reused=bool(plain.get("reused", False)), cpu=plain.get("cpu"))
        return cls(outcome=outcome, message=message, nodeid=plain["nodeid"],
                   spec=spec or IdeaSpec.from_plain(plain["spec"]), record=record,
                   env=plain.get("env"), not_stored=bool(plain.get("not_stored", False)),
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

    def to_json(self, spec_sent: str | None = None) -> JsonDict:
        return {"kind": self.kind, "outcome": self.outcome, "message": self.message,
                "nodeid": self.nodeid, **spec_wire(self.spec, spec_sent)}

    @classmethod
    def from_json(cls, plain: Mapping[str, Any], spec: IdeaSpec | None = None
                  ) -> MechanismPayload:
        return cls(outcome=plain["outcome"], message=plain.get("message"),
                   nodeid=plain["nodeid"], spec=spec or IdeaSpec.from_plain(plain["spec"]))


Payload = Union[RunPayload, MechanismPayload]


def spec_wire(spec: IdeaSpec, sent: str | None) -> JsonDict:
    """A payload's spec on the wire: the spec and its digest the first time a sender sends it,
    its digest alone once ``sent`` (the spec travels once per module and sender, not per
    run)."""
    if sent is not None:
        return {"spec_digest": sent}
    plain = spec.to_plain()
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"))
    return {"spec": plain, "spec_digest": hashlib.sha256(text.encode()).hexdigest()[:32]}


def payload_from_json(plain: Mapping[str, Any], specs: dict[str, IdeaSpec] | None = None
                      ) -> Payload | None:
    """The payload a test report carried (``json.loads`` of it), or None when the controller
    cannot use it (no spec, a run that does not say which run it is, an unknown kind).
    ``specs`` (digest -> spec) is the receiver's: a spec sent with its digest is kept there,
    and a payload that names only a digest takes the spec kept under it."""
    kind, digest = plain.get("kind"), plain.get("spec_digest")
    spec = None if specs is None or digest is None else specs.get(digest)
    if spec is None and "spec" in plain:
        spec = IdeaSpec.from_plain(plain["spec"])
        if specs is not None and digest is not None:
            specs[digest] = spec
    if spec is None:
        return None
    if kind == "run":
        return RunPayload.from_json(plain, spec)
    if kind == "mechanism":
        return MechanismPayload.from_json(plain, spec)
    return None
