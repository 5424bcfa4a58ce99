"""The rules that finish a report's verdicts with control arms, budgets and mechanism evidence, in
process: the worst comparison decides (and is named), each control is judged at the look's level
on its Holm-adjusted p in the metric's direction and under the report's claim (its margin tests at
the family's level), unmatched budgets withhold every verdict, the system verdict follows;
signatures over seeds, their nulls, and skipped claims.
"""
from __future__ import annotations

from builders import as_report

import dataclasses

import pytest

from benchkit.stats import paired
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.verdict import comparison
from benchkit.verdict import mechanism
from benchkit.report import reading
from benchkit.verdict import budgets
from benchkit.spec.run_record import Signature

from benchkit.verdict.mechanism import mechanism_signature, math_verification
from benchkit.verdict.sections import SignatureEvidence
from benchkit.verdict import decision
from benchkit.verdict.records import Comparison, ControlArm, Report
from benchkit.verdict.sections import Budgets
from builders import (ALPHA, BASE8, GRID, IDEA8, P8, TRACK, built, decided, make_mechanism,
                      make_run, make_spec, paired_report, signed)

LEVEL = 0.05
BELOW, ABOVE = 0.049, 0.051
BUILT = Report.from_json(decided(paired_report(BASE8, IDEA8), P8, 1))  # what the rest is from


def comparison_record(**fields) -> Comparison:
    """A comparison as the compare stage makes it (four seeds), with ``fields`` in place."""
    compared = comparison.compare_arms([1.0, 1.1, 1.2, 1.3], [0.9, 1.0, 1.1, 1.2],
                                       direction="lower", alpha=ALPHA, margin=None, test="mean",
                                       sweeps=None)
    return dataclasses.replace(compared, **fields)


def control(name: str, p_adjusted: float, delta: float) -> ControlArm:
    return ControlArm(arm=f"control:{name}", best_cfg={}, sweep=(),
                      full=paired.summarize([1.0] * 4),
                      comparison=comparison_record(p_adjusted=p_adjusted, p_value=p_adjusted / 2,
                                                   delta_mean=delta, family_size=2))


def report(practical: str, *control_arms: ControlArm, direction: str = "lower is better",
           mechanism_ok=1, matched: bool = True) -> Report:
    """A decided report's record with these verdicts, controls and budgets in place."""
    return dataclasses.replace(
        BUILT, practical_verdict=practical,
        system_verdict=decision.system_verdict(practical, mechanism_ok),
        metric_direction=direction, mechanism_ok=mechanism_ok,
        controls={c.arm[8:]: c for c in control_arms}, idea=paired.summarize([0.5] * 4),
        protocol={"claim_type": "superiority"},
        budgets=Budgets(arms={}, checks=(), matched=matched,
                        unmatched=() if matched else ("params x",), waivers={}))


def decided_against_all(rep: Report, level: float) -> dict:
    """``rep`` decided against every comparator at ``level`` (its baseline verdict as it is):
    the decided report's JSON."""
    return decision.decide_against_all(rep, rep.practical_verdict, level).applied(rep).to_json()


@pytest.mark.parametrize("baseline, control_arms, practical, decided_by", [
    ("helps", [], "helps", "baseline"),
    ("helps", [("a", BELOW, -0.1)], "helps", "baseline"),            # beats the control too
    ("helps", [("a", ABOVE, -0.1)], "inconclusive", "control:a"),    # not the control
    ("helps", [("a", BELOW, +0.1)], "harms", "control:a"),           # loses to it
    ("helps", [("a", BELOW, -0.1), ("b", ABOVE, +0.2)], "inconclusive", "control:b"),
    ("helps", [("a", ABOVE, +0.1), ("b", BELOW, +0.2)], "harms", "control:b"),  # worst wins
    ("inconclusive", [("a", ABOVE, +0.1)], "inconclusive", "baseline"),  # tie: the baseline
    ("harms", [("a", BELOW, -0.1)], "harms", "baseline"),
    ("inconclusive", [("a", BELOW, +0.1)], "harms", "control:a"),
])
def test_the_worst_comparison_decides_and_is_named(baseline, control_arms, practical,
                                                   decided_by):
    rep = decided_against_all(report(baseline, *(control(*c) for c in control_arms)), LEVEL)
    assert (rep["practical_verdict"], rep["decided_by"]) == (practical, decided_by)
    assert rep["system_verdict"] == decision.system_verdict(practical, 1)


@pytest.mark.parametrize("direction, delta, verdict", [
    ("lower is better", -0.1, "helps"), ("lower is better", +0.1, "harms"),
    ("higher is better", +0.1, "helps"), ("higher is better", -0.1, "harms"),
])
def test_a_control_is_judged_in_the_metric_direction(direction, delta, verdict):
    rep = decided_against_all(report("helps", control("a", BELOW, delta), direction=direction),
                              LEVEL)
    assert rep["controls"]["a"]["verdict"] == verdict


@pytest.mark.parametrize("p, level, verdict", [
    (0.03, 0.05, "helps"), (0.03, 0.031, "helps"), (0.031, 0.031, "inconclusive"),
    (0.03, 0.029, "inconclusive"),
])
def test_a_control_is_judged_on_its_adjusted_p_at_the_looks_level(p, level, verdict):
    arm = control("a", p, -0.1)
    raw = dataclasses.replace(arm, comparison=dataclasses.replace(
        arm.comparison, p_value=0.0))   # the raw p never decides
    rep = decided_against_all(report("helps", raw), level)
    assert rep["controls"]["a"]["verdict"] == verdict


def test_unmatched_budgets_withhold_both_verdicts_after_the_controls_are_judged():
    rep = decided_against_all(report("helps", control("a", BELOW, -0.1), matched=False), LEVEL)
    assert rep["practical_verdict"] == rep["system_verdict"] == "unmatched"
    assert rep["controls"]["a"]["verdict"] == "helps" and rep["decided_by"] == "baseline"
    assert reading.unmatched_reason(as_report(rep)) == "unmatched (params x)"


@pytest.mark.parametrize("mechanism_ok, system", [(1, "partial"), (0, "failed"),
                                                  (None, "failed")])
def test_the_system_verdict_follows_the_decided_practical_one(mechanism_ok, system):
    before = report("helps", control("a", ABOVE, -0.1), mechanism_ok=mechanism_ok)
    assert before.system_verdict == decision.system_verdict("helps", mechanism_ok)
    rep = decided_against_all(before, LEVEL)
    assert (rep["practical_verdict"], rep["system_verdict"]) == ("inconclusive", system)


def test_without_a_comparison_nothing_is_decided():
    before = dataclasses.replace(report("inconclusive"), practical_verdict="incomplete",
                                 system_verdict="incomplete", comparison=None)
    rep = decided_against_all(before, LEVEL)
    assert rep["decided_by"] is None and rep["practical_verdict"] == "incomplete"
    assert rep["system_verdict"] == "incomplete"
    assert before.comparisons() == []


def test_the_holm_family_is_the_baseline_then_every_control():
    rep = report("helps", control("a", BELOW, -0.1), control("b", ABOVE, 0.1))
    assert rep.comparisons() == [rep.comparison, rep.controls["a"].comparison,
                                 rep.controls["b"].comparison]
    assert dataclasses.replace(rep, controls={}).comparisons() == [rep.comparison]


@pytest.mark.parametrize("declared, budget, tolerance", [
    (None, "params", budgets.DEFAULT_TOLERANCE), ({"params": 0.1}, "params", 0.1),
    ({"params": 0.1}, "steps", budgets.DEFAULT_TOLERANCE), ({"*": 0.2}, "steps", 0.2),
    ({"*": 0.2, "steps": 0.0}, "steps", 0.0),
])
def test_tolerance_of_a_budget(declared, budget, tolerance):
    spec = make_spec(GRID[:1], 2, budget_tolerance=declared or {})
    assert budgets.tolerance_of(spec, budget) == tolerance


def test_signatures_that_cannot_fail_are_seen_in_the_source():
    def arm(run):
        run.signature("gap", run.cfg["x"], 0.0, 1e-3, null=5e-4)  # null within tol
        run.signature("const", observed=0.0, predicted=0.0, tol=1e-3)  # a constant observed
        run.signature(name="ok", observed=run.cfg["x"], predicted=0.0, tol=1e-3, null=1.0)
        run.signature("measured", run.cfg["x"], 0.0, 1e-3, null=run.cfg["y"])  # unknown: fine

    assert mechanism.signatures_that_cannot_fail(arm) == [
        "run.signature('gap'): its null 0.0005 is within tol 0.001 of the prediction 0.0, so "
        "the check cannot tell the mechanism from its absence",
        "run.signature('const'): observed is the constant 0.0, so the check cannot fail; pass "
        "the statistic measured on the trained model"]
    assert mechanism.signatures_that_cannot_fail(len) == []   # no Python source


# -- signatures and their nulls --------------------------------------------------------------
def entry(null, has=True):
    return Signature(has_null=has, null=null, observed=2.0, predicted=2.0, tol=1.0,
                     prediction=None, confirmed=True)


@pytest.mark.parametrize("null, discriminating", [
    (3.5, True), (0.5, True),                # outside tol 1 of the prediction 2
    (3.0, False), (1.0, False), (2.5, False),  # |null - 2| <= 1: that check could not fail
    (-2.0, True),                            # far on the other side (|null + 2| would be 0)
])
def test_a_null_discriminates_only_outside_tol_of_the_prediction(null, discriminating):
    status, found, nulls = mechanism.signature_status(True, [entry(null)], 2.0, 1.0)
    assert found is discriminating and nulls == [null]
    assert status == ("confirmed" if discriminating else "non_discriminating")


def signature(status: str, confirmed: bool = True) -> dict:
    return evidence(status, confirmed).to_json()


def evidence(status: str, confirmed: bool = True) -> SignatureEvidence:
    return SignatureEvidence(prediction=None, predicted=0.0, tol=0.1, observed=0.0,
                             per_seed=(0.0,), confirmed=confirmed, status=status,
                             discriminating=None, null_per_seed=())


@pytest.mark.parametrize("statuses, tests, ok", [
    ({"a": evidence("confirmed")}, [True], 1),
    ({"a": evidence("confirmed"), "b": evidence("non_discriminating")}, [True], None),
    ({"a": evidence("non_discriminating")}, [], None),
    ({"a": evidence("non_discriminating")}, [False], 0),     # a failed test still fails
    ({"a": evidence("not confirmed", False)}, [True], 0),
    ({"a": evidence("confirmed (discrimination unchecked)")}, [True], None),  # unchecked
    ({"a": evidence("confirmed"), "b": evidence("confirmed (discrimination unchecked)")},
     [True], 1),
    ({"a": evidence("confirmed")}, [True, False], 0),
    ({}, [True], None),                    # mechanism tests alone: math_verification says
    ({}, [False], None),                   # what they say, mechanism_ok stays null
    ({}, [], None),
])
def test_a_non_discriminating_signature_is_no_evidence(statuses, tests, ok):
    assert mechanism.mechanism_ok(statuses, tests) == ok


def test_non_discriminating_names_the_signatures_whose_null_passes_too():
    report = {"mechanism_signature": {"signatures": {
        "a": signature("confirmed"), "b": signature("non_discriminating"),
        "c": signature("non_discriminating")}}}
    assert reading.non_discriminating(as_report(report)) == ["b", "c"]
    assert reading.non_discriminating(as_report({"mechanism_signature": {"signatures": {}}})) == []


# -- mechanism evidence in the report (benchkit.verdict.build) ------------------------------------
def sig(observed, confirmed, predicted=0.0, tol=0.1):
    return {"observed": observed, "predicted": predicted, "tol": tol, "prediction": None,
            "confirmed": confirmed}


def test_signature_missing_on_a_seed_is_not_confirmed():
    out = mechanism_signature(signed({"m": sig(0.0, True)}, {}))
    assert out.signatures["m"].confirmed is False
    assert out.signatures["m"].per_seed == (0.0, None)
    assert out.confirmed is False


def test_signature_confirmed_only_when_every_seed_is():
    out = mechanism_signature(signed({"m": sig(0.05, True)}, {"m": sig(0.2, False)}))
    assert out.signatures["m"].observed == 0.2   # the one farthest from the prediction
    assert out.confirmed is False
    out = mechanism_signature(signed({"m": sig(0.05, True)}, {"m": sig(-0.08, True)}))
    assert out.confirmed is True and out.signatures["m"].observed == -0.08


def test_no_signature_is_no_evidence():
    assert mechanism_signature(signed({})).confirmed is None


@pytest.mark.parametrize("outcomes, passed", [
    (["passed"], True), (["passed", "failed"], False), (["skipped"], None),
    (["skipped", "passed"], True), (["skipped", "failed"], False), ([], None),
])
def test_a_skipped_claim_is_no_evidence(outcomes, passed):
    payloads = [make_mechanism(f"m.py::test_c{k}", o) for k, o in enumerate(outcomes)]
    assert math_verification(payloads).passed is passed


def test_mechanism_ok_in_a_report_with_a_skipped_and_a_passed_claim():
    report = paired_report(BASE8, IDEA8)
    mechs = [make_mechanism("m.py::test_a", "skipped"), make_mechanism("m.py::test_b", "passed")]
    spec = make_spec(GRID[:1], 8)
    runs = [make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(BASE8)]
    runs += [make_run("idea", GRID[0], s, i, i) for s, i in enumerate(IDEA8)]
    report = built(spec, TRACK, runs, mechs, alpha=ALPHA)
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["math_verification"]["passed"] is True
    assert report["mechanism_ok"] is None and report["system_verdict"] == "partial"


# -- a control arm under a margin claim ---------------------------------------------------------


def margin_report(n: int, *, claim: str | None, family_size: int | None) -> Report:
    """An idea within 0.1% of its control on every one of ``n`` seeds, the control compared
    with a 10% non-inferiority margin and a p (0.6) far from significant."""
    control_values = [1.0 + 0.1 * k for k in range(n)]
    idea_values = [v + 0.001 * (-1) ** k for k, v in enumerate(control_values)]
    comp = comparison_record(p_adjusted=0.6, p_value=0.3, delta_mean=0.0,
                             noninferiority=NonInferiorityTest(
                                 margin_rel=0.1, margin_abs=None, bound=None,
                                 non_inferior=False, p_value=None),  # the margin: redone
                             family_size=family_size)
    protocol = {} if claim is None else {"claim_type": claim}
    return dataclasses.replace(
        BUILT, practical_verdict="helps", system_verdict="partial", mechanism_ok=None,
        metric_direction="lower is better", protocol=protocol, budgets=None,
        idea=paired.summarize(idea_values),
        controls={"c": ControlArm(arm="control:c", best_cfg={}, sweep=(),
                                  full=paired.summarize(control_values),
                                  comparison=comp)})


@pytest.mark.parametrize("claim, verdict", [
    ("equivalence", "equivalent"),     # TOST p = 1/256 each side < 0.05 / 2
    ("superiority", "non-inferior"),   # no TOST: the margin test alone
    (None, "non-inferior"),            # a protocol without a claim is a superiority claim
])
def test_a_control_is_judged_under_the_reports_claim(claim, verdict):
    rep_ = decided_against_all(margin_report(8, claim=claim, family_size=2), 0.05)
    comp = rep_["controls"]["c"]["comparison"]
    assert rep_["controls"]["c"]["verdict"] == verdict
    # the margin test is redone on the control's and the idea's seeds, at level / family size
    assert comp["noninferiority"]["p_value"] == pytest.approx(1 / 256)
    assert comp["noninferiority"]["non_inferior"] is True
    assert ("equivalence" in comp) == (claim == "equivalence")


@pytest.mark.parametrize("family_size, verdict", [
    (2, "inconclusive"),   # one-sided p 1/32 = 0.03125 is not below 0.05 / 2
    (1, "non-inferior"),   # ... and is below 0.05
    (None, "non-inferior"),  # a comparison without a family is a family of one
])
def test_a_controls_margin_test_is_at_the_level_over_its_family_size(family_size, verdict):
    rep_ = decided_against_all(margin_report(5, claim="superiority", family_size=family_size),
                               0.05)
    assert rep_["controls"]["c"]["verdict"] == verdict
    assert rep_["controls"]["c"]["comparison"]["noninferiority"]["p_value"] == 1 / 32
