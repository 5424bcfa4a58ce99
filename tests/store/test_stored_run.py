"""A stored record read back is a StoredRun whose JSON is the stored record's, byte for byte:
what the store hands on is exactly what it checked."""
from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest
from hypothesis import given, settings, strategies as st

from benchkit.spec.run_record import CurvePoint, Provenance, RunPoint, RunResult, Signature
from benchkit.store import records
from benchkit.store.backends import DirectoryStorage
from benchkit.store.runs import RunStore, load_stored, record_name

KEY = "a1" * 32
POINT = RunPoint(arm="idea", track="tabular", cfg={"wd": 0.0, "lr": 0.01}, seed=3)
SIGNATURE = Signature(has_null=True, null=2.0, observed=1.0, predicted=1.0, tol=0.1,
                      prediction="rank one", confirmed=True)
RESULT = RunResult(val=0.5, test=0.25, diverged=False, seconds=1.5,
                   signatures={"rank": SIGNATURE}, logs={"flops": 10.0, "gone": None},
                   budgets={"params": 100.0},
                   curve=(CurvePoint(epoch=1, val=0.75), CurvePoint(epoch=2, val=None)))
DIVERGED = RunResult(val=None, test=None, diverged=True, seconds=0.0)


@pytest.mark.parametrize("result", [RESULT, DIVERGED], ids=["full", "diverged"])
@pytest.mark.parametrize("plan", [{"looks": [8], "boundary": "union"}, None],
                         ids=["plan", "no-plan"])
@pytest.mark.parametrize("secret", [b"s", None], ids=["signed", "unsigned"])
def test_a_record_read_back_gives_the_bytes_it_was_read_from(result, plan, secret):
    built = records.build(KEY, POINT, result, {"a|file|x": "h"},
                          records.StoredOrigin(module="m.py", nodeid="m.py::t", plan=plan),
                          "cpu", secret=secret)
    data = records.dumps(built)
    loaded = records.load(data, KEY, secret)
    assert loaded == built
    assert records.canonical(loaded.to_json()) == data
    assert loaded.to_json() == json.loads(data)
    assert list(loaded.to_json()) == [   # the order the dict-building code wrote
        "record_version", "key", "run", "result", "deps", "origin", "cpu", "run_digest",
        "digest"] + (["mac"] if secret else [])
    assert ("plan" in loaded.to_json()["origin"]) == (plan is not None)
    assert loaded.origin.plan == plan and loaded.result == result and loaded.point == POINT


def test_the_store_hands_back_records_not_dicts(tmp_path):
    store = RunStore(DirectoryStorage(tmp_path), tmp_path, threads=1, any_cpu=True)
    record = records.build(KEY, POINT, RESULT, {}, records.StoredOrigin(module="m.py",
                                                                        nodeid="m.py::t"), "cpu")
    assert store.put(record)
    assert store.records(KEY) == [record]
    assert store.lookup(KEY, tmp_path / "m.py") == record
    assert load_stored(store.storage, record_name(record), KEY) == record
    assert load_stored(store.storage, record_name(record).replace(KEY, "b" * 64), KEY) is None


@pytest.mark.parametrize("origin, why", [
    ({"module": "m.py", "nodeid": "n", "by": "someone"},
     r"origin fields \['by'\] unknown \(valid: module, nodeid, plan\)"),
    ({"module": "m.py", "nodeid": "n", "plan": [8]}, "origin plan is not an object"),
    ({"module": "m.py", "nodeid": "n", "plan": None}, "origin plan is not an object"),
])
def test_an_origin_a_stored_run_cannot_give_back_exactly_is_invalid(origin, why):
    """Every field of a valid record reaches its StoredRun: a field it would drop (or a null
    plan it would write as absent) makes the record invalid instead, with the reason."""
    body = records.build(KEY, POINT, RESULT, {}, records.StoredOrigin(module="m.py",
                                                                      nodeid="n"), "cpu").to_json()
    body["origin"] = origin
    del body["digest"]   # digests recomputed: only the origin is wrong
    body["digest"] = hashlib.sha256(records.canonical(body)).hexdigest()
    with pytest.raises(records.InvalidRecord, match=why):
        records.load(records.canonical(body), KEY)


finite = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**6, 10**6)
names = st.text(min_size=1, max_size=8)


@st.composite
def results(draw) -> RunResult:
    """Any result a stored record may hold: finite metrics or a divergence, any signatures,
    logs, budgets and curve (or none)."""
    diverged = draw(st.booleans())
    val, test = (None, draw(finite | st.none())) if diverged else (draw(finite), draw(finite))
    signatures = {}
    for name in draw(st.lists(names, max_size=3, unique=True)):
        observed, predicted, tol = draw(finite | st.none()), draw(finite), abs(draw(finite))
        has_null = draw(st.booleans())
        signatures[name] = Signature(
            has_null=has_null, null=draw(finite | st.none()) if has_null else None,
            observed=observed, predicted=predicted, tol=tol,
            prediction=draw(st.none() | names),
            confirmed=observed is not None and abs(observed - predicted) <= tol)
    epochs = draw(st.lists(st.integers(1, 10**4), max_size=4, unique=True))
    curve = tuple(CurvePoint(epoch=e, val=draw(finite | st.none())) for e in sorted(epochs))
    return RunResult(val=val, test=test, diverged=diverged, seconds=abs(draw(finite)),
                     signatures=signatures,
                     logs=draw(st.dictionaries(names, finite | st.none(), max_size=3)),
                     budgets=draw(st.dictionaries(names, finite, max_size=3)),
                     curve=curve or None)


@settings(max_examples=40, deadline=None)
@given(results(), st.dictionaries(names, names, max_size=3),
       st.none() | st.dictionaries(names, finite, max_size=3), st.none() | st.binary(min_size=1))
def test_any_stored_record_reads_back_as_its_own_bytes(result, deps, plan, secret):
    built = records.build(KEY, POINT, result, deps,
                          records.StoredOrigin(module="m.py", nodeid="n", plan=plan), "cpu",
                          secret=secret)
    data = records.dumps(built)
    loaded = records.load(data, KEY, secret)
    assert records.canonical(loaded.to_json()) == data and loaded == built


def _spoiled(where: str, value) -> bytes:
    """A valid record's bytes with the JSON value at ``where`` (``result.logs``) replaced."""
    body = records.build(KEY, POINT, RESULT, {}, records.StoredOrigin(module="m.py",
                                                                      nodeid="n"), "cpu").to_json()
    *path, last = where.split(".")
    target = body
    for part in path:
        target = target[part]
    target[last] = value
    return records.canonical(body)


@pytest.mark.parametrize("where, value, why", [
    ("run.cfg", [1], "bad run fields"),
    ("run.seed", True, "bad run fields"),
    ("run.arm", 3, "bad run fields"),
    ("result.logs", [["flops", 1.0]], "logs is not an object"),
    ("result.budgets", None, "budgets is not an object"),
    ("result.signatures", {"rank": 1.0}, "signature 'rank' fields wrong"),
    ("result.signatures.rank.tol", -1.0, "signature 'rank' tol is -1.0 < 0"),
    ("result.signatures.rank.confirmed", False, "signature 'rank' confirmed is not"),
    ("result.signatures.rank.has_null", "yes", "signature 'rank' has_null is not true or false"),
    ("result.logs.flops", "10", "logs 'flops' is str '10', not a number"),
    ("result.val", None, "diverged must be true exactly when val or test is null"),
    ("result.seconds", -1.0, "seconds is -1.0 < 0"),
    ("result.curve", [{"epoch": 1.5, "val": 1.0}], "curve epoch 1.5 is not an integer"),
    ("origin.module", None, "bad origin"),
    ("cpu", 7, "cpu is not text"),
])
def test_a_record_of_the_wrong_shape_or_values_is_invalid_in_one_line(where, value, why):
    """Each part is checked as JSON first (objects and their keys), then as the record it
    decodes to: a wrong type anywhere is an InvalidRecord saying what, never a traceback."""
    with pytest.raises(records.InvalidRecord, match=why):
        records.load(_spoiled(where, value), KEY)


def test_a_stored_record_is_the_run_record_of_the_module_that_reads_it():
    plan = {"looks": [8]}
    stored = records.build(KEY, POINT, RESULT, {}, records.StoredOrigin(
        module="m.py", nodeid="m.py::t", plan=plan), "cpu")
    own, other = stored.record("m.py"), stored.record("o.py", dataclasses.replace(POINT, seed=4))
    assert (own.point, own.result, own.cpu, own.reused, own.outcome) == (
        POINT, RESULT, "cpu", True, "passed")
    assert own.origin == Provenance(key=KEY, digest=stored.run_digest, origin="reused",
                                    trained_in="m.py", planned=plan)
    assert other.origin is not None and other.origin.origin == "shared"
    assert other.point.seed == 4
