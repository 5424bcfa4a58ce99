"""The report's mechanism evidence (benchkit.verdict.build), pinned in process.

Each test builds signatures and claim outcomes by hand (no training, no pytester): the
aggregation of signatures over seeds, skipped vs failed claims, mechanism tests that did not
run, and the system verdict they lead to.
"""
from __future__ import annotations

import pytest

from benchkit.verdict.mechanism import math_verification, mechanism_signature
from benchkit.verdict import decision
from builders import (ALPHA, BASE8, GRID, IDEA8, P8, TRACK, built, decided, make_mechanism,
                      make_spec, one_config_runs, paired_report, signed)


# -------------------------------------------------------------------- mechanism_signature
def sig(observed, confirmed, predicted=1.0, tol=0.5, null=None, prediction="p"):
    out = {"observed": observed, "predicted": predicted, "tol": tol, "prediction": prediction,
           "confirmed": confirmed}
    if null is not None:
        out.update(null=null, has_null=True)
    return out


def test_signatures_aggregate_over_seeds_with_missing_and_unobserved_seeds():
    out = mechanism_signature(signed(
        {"b": sig(0.2, True, tol=0.9), "a": sig(None, False, 2.0, 0.1)},
        {"b": sig(1.5, True, tol=0.6)}, {"b": sig(None, True, tol=0.5)}))
    assert list(out.signatures) == ["a", "b"]
    assert out.signatures["b"].to_json() == {
        "prediction": "p", "predicted": 1.0, "tol": 0.9,
        "observed": 0.2,                       # |0.2 - 1| > |1.5 - 1|: farthest from 1.0
        "per_seed": [0.2, 1.5, None], "confirmed": True,
        "status": "confirmed (discrimination unchecked)", "discriminating": None,
        "null_per_seed": []}
    assert out.signatures["a"].to_json() == {
        "prediction": "p", "predicted": 2.0, "tol": 0.1, "observed": None,
        "per_seed": [None, None, None], "confirmed": False, "status": "not confirmed",
        "discriminating": None, "null_per_seed": []}
    assert out.confirmed is False


@pytest.mark.parametrize("observed, farthest", [
    ([0.2, 1.5], 0.2), ([1.9, 0.5], 1.9), ([1.0, 1.0], 1.0), ([-3.0, 6.0], 6.0),
])
def test_the_observed_value_is_the_one_farthest_from_the_prediction(observed, farthest):
    runs = signed(*({"m": sig(v, True, predicted=1.0)} for v in observed))
    assert mechanism_signature(runs).signatures["m"].observed == farthest


def test_every_signature_confirmed_on_every_seed_is_confirmed():
    out = mechanism_signature(signed(*[{"a": sig(1.0, True), "b": sig(1.1, True)}] * 3))
    assert out.confirmed is True
    assert [s.confirmed for s in out.signatures.values()] == [True, True]


@pytest.mark.parametrize("nulls, tols, status, discriminating", [
    ([3.0, 3.0], [0.5, 0.5], "confirmed", True),
    ([3.0, 1.2], [0.5, 0.5], "non_discriminating", False),   # seed 1's null passes too
    ([3.0, 3.0], [0.5, 2.5], "non_discriminating", False),   # the widest tol counts
    ([3.0, 3.0], [2.5, 0.5], "non_discriminating", False),
    ([3.0, 3.0], [1.9, 0.5], "confirmed", True),
])
def test_a_null_within_the_widest_tol_is_not_discriminating(nulls, tols, status, discriminating):
    runs = signed(*({"m": sig(1.0, True, predicted=1.0, tol=t, null=n)}
                    for n, t in zip(nulls, tols)))
    m = mechanism_signature(runs).signatures["m"]
    assert m.tol == max(tols)
    assert (m.status, m.discriminating, list(m.null_per_seed)) == (status, discriminating,
                                                                    nulls)


# ---------------------------------------------------------------------- math_verification
def test_math_verification_lists_every_claim_in_nodeid_order():
    payloads = [make_mechanism("m.py::test_c", "skipped", "no gpu"),
                make_mechanism("m.py::test_b", "failed", "boom"),
                make_mechanism("m.py::test_a", "passed")]
    assert math_verification(payloads).to_json() == {
        "tests": [{"test": "m.py::test_a", "outcome": "passed", "message": None},
                  {"test": "m.py::test_b", "outcome": "failed", "message": "boom"},
                  {"test": "m.py::test_c", "outcome": "skipped", "message": "no gpu"}],
        "passed": False}


@pytest.mark.parametrize("outcomes, passed, mechanism_ok", [  # tests alone: mechanism_ok null
    (["passed", "passed"], True, None),
    (["skipped", "skipped"], None, None),      # skipped claims are no evidence either way
    (["skipped", "failed"], False, None),
    (["skipped", "passed"], True, None),
    (["failed", "passed"], False, None),
])
def test_skipped_claims_are_left_out_and_failed_ones_count(outcomes, passed, mechanism_ok):
    mechs = [make_mechanism(f"m.py::test_c{k}", o) for k, o in enumerate(outcomes)]
    assert math_verification(mechs).passed is passed
    runs = one_config_runs(BASE8, IDEA8)
    report = built(make_spec(GRID[:1], 8), TRACK, runs, mechs, alpha=ALPHA)
    assert report["mechanism_ok"] == mechanism_ok
    report = decided(report, P8, 1)
    assert report["system_verdict"] == decision.system_verdict("helps", mechanism_ok)


@pytest.mark.parametrize("signatures, system", [
    ([sig(1.0, True, null=3.0)] * 8, "worked"), ([sig(3.0, False)] * 8, "partial"),
    ([sig(1.0, True)] * 8, "partial"),         # no null: discrimination unchecked, no evidence
    ([sig(1.0, True, null=1.2)] * 8, "partial"),   # a null that passes too: no evidence
])
def test_the_system_verdict_follows_the_mechanism_evidence(signatures, system):
    report = paired_report(BASE8, IDEA8, signatures=[{"m": s} for s in signatures])
    report = decided(report, P8, 1)
    assert report["practical_verdict"] == "helps" and report["system_verdict"] == system
    assert report["decided_by"] == "baseline"


# ------------------------------------------------------ mechanism tests of the module
def test_mechanism_tests_that_did_not_run_are_named():
    spec = make_spec(GRID[:1], 8, mechanism_tests=("test_a", "test_b", "test_c", "test_d",
                                                   "test_e"))
    runs = one_config_runs(BASE8, IDEA8)
    mechs = [make_mechanism("ideas/test_rules.py::test_a", "passed"),
             make_mechanism("ideas/test_rules.py::test_c[1]", "skipped"),
             make_mechanism("ideas/test_rules.py::test_d[x[1]]", "passed"),
             make_mechanism("ideas/test_rules.py::TestK::test_e", "passed")]
    report = built(spec, TRACK, runs, mechs, alpha=ALPHA)
    assert report["warnings"] == [
        "mechanism test(s) test_b did not run in this session (-k/-m?): mechanism_ok and the "
        "system verdict leave them out"]
    assert [t["test"] for t in report["math_verification"]["tests"]] == [
        "ideas/test_rules.py::TestK::test_e", "ideas/test_rules.py::test_a",
        "ideas/test_rules.py::test_c[1]", "ideas/test_rules.py::test_d[x[1]]"]
    assert report["math_verification"]["passed"] is True and report["mechanism_ok"] is None
