"""The worker's result as typed records (benchkit.spec.payloads): what crosses xdist and what the
store keeps is the JSON the dicts were, bit for bit, and the JSON round trip gives the record
back."""
from __future__ import annotations

import dataclasses
import hashlib
import json

from benchkit import tracks
from benchkit.plugin.fixture import run_payload
from benchkit.spec import IdeaSpec
from benchkit.store import records
from benchkit.spec.payloads import MechanismPayload, RunPayload, payload_from_json
from benchkit.spec.run_record import (Audit, CurvePoint, Provenance, RunPoint, RunRecord, RunResult,
                                      Signature)
from benchkit.training.run import Run

# a spec as the controller reads it (its plain form fills declared_grids in)
SPEC = IdeaSpec.from_plain(IdeaSpec.from_plain({
    "name": "typed", "module": "m.py", "tracks": ["tabular"], "grids": {"tabular": [{"lr": 0.01}]},
    "seeds": [3], "epochs": {"tabular": 2}}).to_plain())
RESULT = RunResult(
    val=0.5, test=0.25, diverged=False, seconds=1.5,
    signatures={"rank": Signature(has_null=True, null=2.0, observed=1.0, predicted=1.0, tol=0.1,
                                  prediction="rank one", confirmed=True)},
    logs={"flops": 10.0, "nan": None}, budgets={"params": 100.0},
    curve=(CurvePoint(epoch=1, val=0.7), CurvePoint(epoch=2, val=None)))
POINT = RunPoint(arm="idea", track="tabular", cfg={"lr": 0.01}, seed=3)


def recorded_run() -> Run:
    the_run = Run(arm="idea", track=tracks.get("tabular"), cfg={"lr": 0.01}, seed=3, epochs=2)
    the_run.record(val=0.5, test=0.25)
    the_run.signature("rank", 1.0, 1.0, 0.1, prediction="rank one", null=2.0)
    the_run.log("flops", 10.0)
    the_run.budget("params", 100.0)
    the_run.provenance = Provenance(key="k", digest="d", origin="fresh", trained_in="m.py")
    return the_run


def test_a_stored_record_is_the_same_bytes_as_before_the_typed_result():
    # sha256 of records.dumps of these records, built from dicts at main 6e6ce8b
    signed = records.build("k" * 64, POINT, RESULT, {"a|file|x": "h"},
                           records.StoredOrigin(module="m.py", nodeid="m.py::t",
                                                plan={"looks": [8]}), "cpu", secret=b"s")
    assert hashlib.sha256(records.dumps(signed)).hexdigest() == \
        "1f2f4f5f76e4349b6243b73072a0d60c54b4a8ba6ebfebcb34b6c0c4cd710be2"
    plain = records.build("k" * 64, POINT, RunResult(**{**RESULT.__dict__, "curve": None}), {},
                          records.StoredOrigin(module="m.py", nodeid="n"), "cpu")
    assert "curve" not in plain.to_json()["result"]   # records without a curve stay as they were
    assert hashlib.sha256(records.dumps(plain)).hexdigest() == \
        "cef5851e85deb864084ee8392167719656c1d8b53f5e44d751e9c6c02f7760ec"


def test_a_stored_result_reads_back_as_the_same_record():
    record = records.build("k" * 64, POINT, RESULT, {}, records.StoredOrigin(module="m",
                                                                           nodeid="n"), "cpu")
    loaded = records.load(records.dumps(record), "k" * 64)
    assert loaded == record and loaded.result == RESULT and loaded.point == POINT
    plain = json.loads(records.dumps(record))
    assert RunResult.from_json(plain["result"]).to_json() == plain["result"]


def test_a_run_payload_is_the_json_the_worker_always_sent():
    payload = run_payload("m.py::t", "passed", None, SPEC, recorded_run(), 1)
    plain = payload.to_json()
    assert list(plain) == [
        "kind", "outcome", "message", "nodeid", "arm", "track", "cfg", "seed", "val", "test",
        "diverged", "seconds", "reused", "signatures", "logs", "budgets", "curve", "cpu", "key",
        "digest", "origin", "trained_in", "env", "spec", "spec_digest"]
    assert plain["signatures"] == {"rank": {
        "has_null": True, "null": 2.0, "observed": 1.0, "predicted": 1.0, "tol": 0.1,
        "prediction": "rank one", "confirmed": True}}
    assert (plain["kind"], plain["cfg"], plain["curve"], plain["spec"]) == (
        "run", {"lr": 0.01}, None, SPEC.to_plain())


def test_payloads_come_back_from_their_json_equal():
    fresh = run_payload("m.py::t", "passed", None, SPEC, recorded_run(), 1)
    audited = RunPayload(outcome="passed", message=None, nodeid="m.py::a", spec=SPEC,
                         record=RunRecord(point=POINT, result=RESULT, cpu="cpu", origin=(
                             Provenance(key="k", digest="d", origin="fresh", trained_in="m.py",
                                        audit=Audit("d0", False)))),
                         env={"threads": 1}, not_stored=True,
                         store_problems=("benchkit: store: full",))
    reused = RunPayload(outcome="passed", message=None, nodeid="m.py::r", spec=SPEC,
                        record=RunRecord(point=POINT, result=RESULT, reused=True, cpu="cpu",
                                         origin=Provenance(key="k", digest="d", origin="shared",
                                                           trained_in="o.py",
                                                           planned={"looks": [3]})))
    errored = RunPayload(outcome="error", message="E boom", nodeid="m.py::e", spec=SPEC,
                         record=RunRecord(point=POINT, result=None, outcome="error"))
    claim = MechanismPayload(outcome="failed", message="no", nodeid="m.py::c", spec=SPEC)
    for payload in (fresh, audited, reused, errored, claim):
        text = json.dumps(payload.to_json(), sort_keys=True)   # as it crosses xdist
        assert payload_from_json(json.loads(text)) == payload


def test_a_payload_the_controller_cannot_place_is_dropped_and_a_partial_one_failed():
    plain = run_payload("m.py::t", "passed", None, SPEC, recorded_run(), 1).to_json()
    assert payload_from_json({k: v for k, v in plain.items() if k != "seed"}) is None
    assert payload_from_json({k: v for k, v in plain.items() if k != "spec"}) is None
    partial = payload_from_json({k: v for k, v in plain.items() if k != "test"})
    assert isinstance(partial, RunPayload) and partial.result is None
    assert (partial.outcome, partial.message) == ("failed", "benchkit: its result lacks test")


def test_a_spec_travels_once_per_sender_and_later_payloads_name_its_digest():
    first = run_payload("m.py::a", "passed", None, SPEC, recorded_run(), 1)
    sent = json.loads(json.dumps(first.to_json()))
    digest = sent["spec_digest"]
    later = json.loads(json.dumps(dataclasses.replace(first, nodeid="m.py::b").to_json(digest)))
    claim = MechanismPayload(outcome="passed", message=None, nodeid="m.py::c", spec=SPEC)
    assert "spec" not in later and later["spec_digest"] == digest
    received: dict = {}
    assert payload_from_json(sent, received) == first
    assert payload_from_json(later, received) == dataclasses.replace(first, nodeid="m.py::b")
    assert payload_from_json(claim.to_json(digest), received) == claim
    assert payload_from_json(later, {}) is None          # a digest the receiver never got
    assert payload_from_json(later) is None
