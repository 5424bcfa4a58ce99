"""A stored run's record: what it holds, its digests, and the checks every record read passes.

A record is one JSON object::

    {"record_version": 2, "key": lookup key, "run": {arm, track, cfg, seed},
     "result": {val, test, diverged, seconds, signatures, logs, budgets[, curve]},
     "cpu": CPU model,
     "deps": {"REF|KIND|NAME": hash, ...}, "origin": {"module": ..., "nodeid": ...},
     "run_digest": ..., "digest": ...[, "mac": ...]}

``run_digest`` names the run's result in bits (key and result, not the seconds): a run
retrained under the same key must give the same one, which is what ``--bench-audit`` and
``python -m benchkit verify`` check. ``digest`` covers the whole record, so an edited or
damaged file is caught on read. ``curve`` (``run.fit``'s validation curve, see
:mod:`benchkit.verdict.convergence`) is optional, so records written before it stay readable, and
outside ``run_digest``, so such a record and its retrained run still audit equal. A record
that fails any check is not used: the reason is one line, and the run is trained again.

Digests catch damage, not forgery: anyone who can write the store can recompute them. With a
secret (``BENCHKIT_STORE_KEY``, :func:`store_secret`), ``mac`` is an HMAC-SHA256 under it of
everything else in the record; a session that has the secret uses only records whose ``mac``
verifies (:func:`check_mac`), so writing the store is not enough to plant a run.

A record read back (or built) is a :class:`StoredRun`; its ``to_json`` is the record's JSON
exactly, so dicts exist only where a record is written or read and where digests are taken.
Pure Python: no torch, no numpy.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchkit.codec import JsonRecord, as_json
from benchkit.store import bounded
from benchkit.spec.run_record import (CurvePoint, JsonDict, Provenance, RunPoint, RunRecord,
                                      RunResult, Signature)

RECORD_VERSION = 2
RESULT_KEYS = ("val", "test", "diverged", "seconds", "signatures", "logs", "budgets")
OPTIONAL_RESULT_KEYS = ("curve",)
SIGNATURE_KEYS = {"observed", "predicted", "tol", "prediction", "confirmed", "has_null", "null"}
KEY_VARIABLE = "BENCHKIT_STORE_KEY"
MAX_RECORD_BYTES = 16 * 1024 * 1024   # a record is kilobytes: its deps, logs and curve
FIELDS = frozenset({"record_version", "key", "run", "result", "deps", "origin", "cpu",
                    "run_digest", "digest"})
ORIGIN_FIELDS = frozenset({"module", "nodeid", "plan"})   # plan: absent in older records


class InvalidRecord(ValueError):
    """A stored record that cannot be trusted; the message says why in one line."""


class UnsignedRecord(InvalidRecord):
    """A well-formed record that does not carry a MAC verifying under the session's key."""


@dataclass(frozen=True)
class StoredOrigin(JsonRecord):
    """Which arm test trained a stored run (its module and node id), and the declared plan it
    was trained under (None in records written before plans were recorded)."""

    module: str
    nodeid: str
    plan: JsonDict | None = field(default=None, metadata=as_json(omit=True))


@dataclass(frozen=True)
class StoredRun(JsonRecord):
    """One stored record: the run (``point``) under its lookup ``key``, its result, the CPU it
    trained on, the dependencies it executed (``deps``: entry -> hash, see
    :mod:`benchkit.store.trace`), its origin, its digests and, when signed, its ``mac``.
    ``to_json`` gives the record's JSON exactly (key order included), so its bytes and
    digests are the ones written."""

    record_version: int = field(default=RECORD_VERSION, kw_only=True)   # checked on read
    key: str
    point: RunPoint = field(metadata=as_json(name="run"))
    result: RunResult
    deps: Mapping[str, str]
    origin: StoredOrigin
    cpu: str
    run_digest: str
    digest: str
    mac: str | None = field(default=None, metadata=as_json(omit=True))

    def record(self, module: str, point: RunPoint | None = None) -> RunRecord:
        """The stored run as ``module``'s run record at ``point`` (the record's own place when
        not given): its result, reused (``reused`` when ``module`` trained it, ``shared`` when
        another module did) and the plan it was trained under; the one way a stored record
        becomes a run's, for an arm test and for the controller alike."""
        trained_in = self.origin.module
        return RunRecord(
            point=self.point if point is None else point,
            result=dataclasses.replace(self.result, seconds=float(self.result.seconds or 0.0)),
            origin=Provenance(key=self.key, digest=self.run_digest,
                              origin="reused" if trained_in == module else "shared",
                              trained_in=trained_in, planned=self.origin.plan),
            reused=True, cpu=self.cpu)


def canonical(obj: object) -> bytes:
    """Deterministic JSON (sorted keys, no spaces, no NaN): what digests are taken of."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _sha(obj: object) -> str:
    return hashlib.sha256(canonical(obj)).hexdigest()


def run_digest(key: str, result: Mapping[str, Any]) -> str:
    """The digest of a run's result in bits, under its key (the seconds left out)."""
    return _sha({"key": key, **{k: result[k] for k in RESULT_KEYS if k != "seconds"}})


def store_secret() -> bytes | None:
    """The store key from ``BENCHKIT_STORE_KEY`` (None when unset or empty): a CI secret."""
    value = os.environ.get(KEY_VARIABLE, "")
    return value.encode("utf-8", "surrogateescape") if value else None


def mac(record: Mapping[str, Any], secret: bytes) -> str:
    """HMAC-SHA256 under ``secret`` of the record's canonical content, its ``mac`` left out."""
    body = {k: v for k, v in record.items() if k != "mac"}
    return hmac.new(secret, canonical(body), hashlib.sha256).hexdigest()


def check_mac(record: Mapping[str, Any], secret: bytes) -> None:
    """InvalidRecord unless ``record`` carries a MAC that verifies under ``secret``."""
    given = record.get("mac")
    if not isinstance(given, str):
        raise UnsignedRecord(f"not signed, and {KEY_VARIABLE} is set")
    if not hmac.compare_digest(given, mac(record, secret)):
        raise UnsignedRecord(f"its mac does not verify under {KEY_VARIABLE} (forged, or "
                             "signed with another key)")


def trust(keyed: bool | None) -> JsonDict:
    """A report's ``store`` section (its ``audited`` runs aside): whether stored runs were
    reused only when signed under the session's key, in a field and a sentence; ``keyed``
    None: the session had no run store."""
    if keyed is None:
        return {"keyed": False, "trust": "no run store: every run was trained in this session"}
    return {"keyed": keyed, "trust": (
        f"stored runs were reused only when their record's MAC verified under {KEY_VARIABLE}"
        if keyed else f"stored runs were trusted unsigned ({KEY_VARIABLE} not set): anyone "
        "who can write the store could have written them; set it (a CI secret) to sign "
        "and check them")}


def build(key: str, point: RunPoint, result: RunResult, deps: Mapping[str, str],
          origin: StoredOrigin, cpu: str, secret: bytes | None = None) -> StoredRun:
    """The record of a freshly trained run (which run, ``point``, and its ``result``), signed
    when a ``secret`` is given. Its digests are taken of its JSON; the record is made from the
    records given, not read back from that JSON."""
    unsigned = StoredRun(key=key, point=point, result=result, deps=dict(deps), origin=origin,
                         cpu=cpu, run_digest=run_digest(key, result.to_json()), digest="")
    body = unsigned.to_json()
    del body["digest"]
    signed = dataclasses.replace(unsigned, digest=_sha(body))
    if secret is None:
        return signed
    return dataclasses.replace(signed, mac=mac(signed.to_json(), secret))


def dumps(record: StoredRun) -> bytes:
    """The bytes a record is stored as (canonical JSON: what its digest was taken of)."""
    return canonical(record.to_json())


def load(data: bytes, key: str, secret: bytes | None = None) -> StoredRun:
    """The record in ``data``, checked (and its MAC, given a ``secret``); :class:`InvalidRecord`
    says why it cannot be used."""
    if len(data) > MAX_RECORD_BYTES:
        raise InvalidRecord(f"{len(data)} bytes; valid: at most {MAX_RECORD_BYTES}")
    try:
        record = bounded.loads(data)
    except bounded.Refused as exc:
        raise InvalidRecord(str(exc)) from None
    check(record, key)
    if secret is not None:
        check_mac(record, secret)
    return StoredRun.from_json(record)


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise InvalidRecord(what)


def _number(x: Any, what: str, *, nullable: bool = False, minimum: float | None = None) -> None:
    if x is None and nullable:
        return
    _need(isinstance(x, (int, float)) and not isinstance(x, bool),
          f"{what} is {type(x).__name__} {x!r}, not a number")
    _need(math.isfinite(x), f"{what} is {x!r}, not finite")
    _need(minimum is None or x >= minimum, f"{what} is {x!r} < {minimum}")


def check(record: Any, key: str) -> None:
    """Every rule a record must meet to be used: types, finiteness, the key and digests. Its
    JSON's shape is checked first (objects, their keys), then the values on the records it
    decodes to (:class:`StoredRun`'s parts), then the digests of the JSON itself."""
    _need(isinstance(record, dict), "not an object")
    version = record.get("record_version")
    _need(version == RECORD_VERSION, f"record_version {version!r}, not {RECORD_VERSION}")
    _need(record.get("key") == key, "its key is not the one it is stored under")
    fields = set(record) - {"mac"}
    _need(fields == FIELDS, f"fields {sorted(fields ^ FIELDS)} wrong")
    _need(isinstance(record.get("mac", ""), str), "mac is not text")
    run, result, deps, origin = (record[part] for part in ("run", "result", "deps", "origin"))
    _need(isinstance(run, dict) and set(run) == {"arm", "track", "cfg", "seed"}, "bad run")
    _need(isinstance(run["cfg"], dict), "bad run fields")   # before it is decoded
    point = RunPoint.from_json(run)
    _need(isinstance(point.arm, str) and isinstance(point.track, str) and _integer(point.seed),
          "bad run fields")
    check_result(result)
    _need(isinstance(record["cpu"], str), "cpu is not text")
    _need(isinstance(deps, dict) and all(isinstance(k, str) and isinstance(v, str)
                                         for k, v in deps.items()), "bad deps")
    _need(isinstance(origin, dict) and {"module", "nodeid"} <= set(origin), "bad origin")
    _need(set(origin) <= ORIGIN_FIELDS, f"origin fields {sorted(set(origin) - ORIGIN_FIELDS)} "
          f"unknown (valid: {', '.join(sorted(ORIGIN_FIELDS))})")
    _need(isinstance(origin.get("plan", {}), dict), "origin plan is not an object")
    trained_by = StoredOrigin.from_json(origin)
    _need(isinstance(trained_by.module, str) and isinstance(trained_by.nodeid, str),
          "bad origin")
    body = {k: v for k, v in record.items() if k not in ("digest", "mac")}
    try:
        digests = run_digest(key, result), _sha(body)
    except (TypeError, ValueError) as exc:  # e.g. a NaN in cfg: JSON has none
        raise InvalidRecord(f"cannot be digested ({exc})") from None
    _need(record["run_digest"] == digests[0], "run_digest does not match its result")
    _need(record["digest"] == digests[1], "digest does not match its content")


def _integer(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_result(result: Any) -> RunResult:
    """A run's result (its JSON object), as its record: finite metrics unless it diverged, and
    then at least one is null."""
    _need(isinstance(result, dict) and set(RESULT_KEYS) <= set(result)
          <= set(RESULT_KEYS + OPTIONAL_RESULT_KEYS), "result fields wrong")
    if "curve" in result:
        check_curve(result["curve"])
    for what in ("logs", "budgets", "signatures"):
        _need(isinstance(result[what], dict), f"{what} is not an object")
    for name, sig in result["signatures"].items():
        _need(isinstance(sig, dict) and set(sig) == SIGNATURE_KEYS,
              f"signature {name!r} fields wrong")
    run = RunResult.from_json(result)
    _need(isinstance(run.diverged, bool), f"diverged is {run.diverged!r}, not true or false")
    _number(run.val, "val", nullable=True)
    _number(run.test, "test", nullable=True)
    _need((run.val is None or run.test is None) == run.diverged,
          "diverged must be true exactly when val or test is null (non-finite)")
    _number(run.seconds, "seconds", minimum=0)
    for what, values in (("logs", run.logs), ("budgets", run.budgets)):
        for name, value in values.items():
            _number(value, f"{what} {name!r}", nullable=True)
    for name, sig in run.signatures.items():
        _check_signature(name, sig)
    return run


def _check_signature(name: str, sig: Signature) -> None:
    """A stored signature: finite numbers, a null value only with ``has_null``, and
    ``confirmed`` exactly when its observation is within ``tol`` of the prediction."""
    what = f"signature {name!r}"
    _number(sig.observed, f"{what} observed", nullable=True)
    _number(sig.predicted, f"{what} predicted")
    _need(isinstance(sig.has_null, bool), f"{what} has_null is not true or false")
    _number(sig.null, f"{what} null", nullable=True)
    _need(sig.has_null or sig.null is None, f"{what} has a null value but has_null is false")
    _number(sig.tol, f"{what} tol", minimum=0)
    _need(sig.prediction is None or isinstance(sig.prediction, str),
          f"{what} prediction is not text")
    predicted, tol = sig.predicted, sig.tol
    assert predicted is not None and tol is not None   # numbers: checked above
    confirmed = sig.observed is not None and abs(sig.observed - predicted) <= tol
    _need(sig.confirmed is confirmed, f"{what} confirmed is not |observed - predicted| <= tol")


def check_curve(curve: Any) -> None:
    """A validation curve: a non-empty list of {epoch, val}, epochs integers >= 1 increasing,
    val a finite number or null."""
    _need(isinstance(curve, list) and bool(curve), "curve is not a non-empty list")
    last = 0
    for point in curve:
        _need(isinstance(point, dict) and set(point) == {"epoch", "val"},
              "curve point fields wrong (valid: epoch, val)")
        at = CurvePoint.from_json(point)
        _need(_integer(at.epoch) and at.epoch > last,
              f"curve epoch {at.epoch!r} is not an integer above the previous {last}")
        _number(at.val, f"curve val at epoch {at.epoch}", nullable=True)
        last = at.epoch
