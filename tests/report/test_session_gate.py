"""The gate's rules: a truth table over every gate, verdict and completeness, the line a failed
gate prints, and gates end to end on sessions that bench hand-recorded results (no training),
so the verdict of each session is known exactly."""
from __future__ import annotations

import itertools
import json

import pytest

from benchkit.report.session import gate_failure
from builders import BASE8, GATES, IDEA8, PRACTICAL, as_report, recorded

SYSTEM = ("worked", "partial", "failed")


# ------------------------------------------------------------------------------- the gate
def gate_report(practical: str, system: str, complete: bool = True) -> dict:
    """The fields of a report the gate reads."""
    return {
        "practical_verdict": practical if complete else "incomplete",
        "system_verdict": system if complete else "incomplete",
        "complete": complete,
        "incomplete": None if complete else {"reasons": ["1 of 4 runs missing or failed"]},
        "comparison": {"delta_mean": -0.1, "p_adjusted": 0.01, "level": 0.031} if complete
        else None,
        "mechanism_ok": 1,
    }


def gate_passes(gate: str, practical: str, system: str, complete: bool) -> bool:
    """The gate rules as a table (the README's wording)."""
    if gate == "off":
        return True
    if not complete:
        return False
    return {"not-harms": practical != "harms",
            "non-inferior": practical in ("helps", "non-inferior", "equivalent"),
            "equivalent": practical == "equivalent",
            "helps": practical == "helps",
            "worked": system == "worked"}[gate]


@pytest.mark.parametrize("gate, practical, system, complete", [
    pytest.param(g, p, s, c, id=f"{g}-{p}-{s}-{'complete' if c else 'incomplete'}")
    for g, p, s, c in itertools.product(GATES, PRACTICAL, SYSTEM, (True, False))])
def test_gate_truth_table(gate, practical, system, complete):
    why = gate_failure(as_report(gate_report(practical, system, complete)), gate)
    assert (why is None) == gate_passes(gate, practical, system, complete), why
    if why is not None and not complete:
        assert "incomplete" in why
    elif why is not None:
        assert f"gate {gate!r} not met" in why and practical in why


@pytest.mark.parametrize("mechanism_ok, word", [(1, "1"), (0, "0"), (None, "null")])
def test_the_gate_failure_line_states_verdicts_numbers_and_level(mechanism_ok, word):
    report = gate_report("inconclusive", "failed")
    report["mechanism_ok"] = mechanism_ok
    assert gate_failure(as_report(report), "helps") == (
        "gate 'helps' not met: inconclusive/failed, delta -0.1, p 0.01 at level 0.031, "
        f"mechanism_ok {word}")


def test_an_incomplete_report_names_every_reason():
    report = gate_report("helps", "worked", complete=False)
    report["incomplete"]["reasons"].append("interrupted")
    assert gate_failure(as_report(report), "not-harms") == (
        "incomplete (1 of 4 runs missing or failed; interrupted): no verdict")


@pytest.mark.parametrize("gate", GATES)
def test_an_unmatched_report_fails_every_gate_with_its_budgets(gate):
    report = gate_report("unmatched", "unmatched")
    report["budgets"] = {"unmatched": ["params idea 1,250 vs baseline 1,000", "steps x"]}
    expected = None if gate == "off" else (
        "unmatched (params idea 1,250 vs baseline 1,000; steps x): no verdict")
    assert gate_failure(as_report(report), gate) == expected


@pytest.mark.parametrize("gate, practical, system", [
    pytest.param(g, p, s, id=f"{g}-{p}-{s}")
    for g, p, s in itertools.product(GATES, PRACTICAL, SYSTEM)])
def test_an_exploratory_session_fails_every_gate(gate, practical, system):
    report = gate_report(practical, system)
    report["exploratory"] = {"reasons": ["--bench-seeds 2 overrides the module's plan", "b"]}
    why = gate_failure(as_report(report), gate)
    facts = (f"{practical}/{system}, delta -0.1, p 0.01 at level 0.031, mechanism_ok 1")
    plan = "exploratory (--bench-seeds 2 overrides the module's plan; b)"
    if gate == "off":
        assert why is None
    elif gate_passes(gate, practical, system, True):
        assert why == f"{plan}: not a look of the declared plan, so no gate passes; {facts}"
    else:
        assert why == f"gate {gate!r} not met, and {plan}: {facts}"


# ------------------------------------------------------------- gates, end to end
@pytest.mark.parametrize("claim_holds, gate, system, gate_fails", [
    (True, "worked", "worked", False),
    (False, "worked", "partial", True),
    (False, "helps", "partial", False),
    (False, "not-harms", "partial", False),
])
def test_gates_end_to_end_on_recorded_results(pytester, read_report, claim_holds, gate, system,
                                              gate_fails):
    """A helping idea whose mechanism test passes or fails: `worked` is the only gate that
    tells them apart (a FAIL line for `partial`; a failed claim fails the session anyway)."""
    pytester.makepyfile(test_rec=recorded("rec", BASE8, IDEA8, claim_holds))
    result = pytester.runpytest(f"--bench-gate={gate}", "-p", "no:cacheprovider")
    report = read_report(pytester.path, "rec")
    assert report["practical_verdict"] == "helps"
    assert report["system_verdict"] == system
    assert result.ret == (0 if claim_holds else 1)
    failed = [ln for ln in result.outlines if ln.startswith("benchkit: FAIL")]
    assert bool(failed) == gate_fails
    if failed:
        assert "rec tabular" in failed[0] and "partial" in failed[0]


def test_non_inferior_gate_refuses_an_inconclusive_idea(pytester, read_report):
    """A small, noisy difference with no margin: inconclusive, which the non-inferior gate
    must not pass."""
    idea = [b + (0.01 if s % 2 else -0.01) for s, b in enumerate(BASE8)]
    pytester.makepyfile(test_rec=recorded("rec", BASE8, idea))
    result = pytester.runpytest("--bench-gate=non-inferior", "-p", "no:cacheprovider")
    report = read_report(pytester.path, "rec")
    assert report["practical_verdict"] == "inconclusive"
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: FAIL rec tabular: gate 'non-inferior' not met*"])


def test_recorded_module_report_is_valid_json(pytester):
    pytester.makepyfile(test_rec=recorded("rec", BASE8, BASE8))
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == 0
    data = json.loads((pytester.path / "reports/rec/tabular/bench_report.json").read_text())
    assert data["comparison"]["p_value"] == 1.0
    assert data["practical_verdict"] == "inconclusive"
