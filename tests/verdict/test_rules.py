"""The report builder's rules, pinned by tables at and around every threshold: selection on
validation, the level, the reference-format fields, mechanism evidence. The builders are in
tests/builders.py.
"""
from __future__ import annotations

import math

import pytest

from benchkit.stats import paired as stats
from benchkit.plugin.aggregate import gate_failure
from benchkit.verdict.build import build_report, decide, mechanism_signature, math_verification
from builders import (ALPHA, BASE8, GATES, GRID, IDEA8, P8, TRACK, make_run, make_spec,
                      paired_report, runs_from)


def test_selection_uses_validation_not_test():
    """cfg 0 is best on validation, cfg 2 on test: the report picks cfg 0 for both arms."""
    n = 6
    table = {}
    for arm in ("baseline", "idea"):
        table[(arm, 0)] = [(1.0 + 0.01 * s, 5.0 + 0.01 * s) for s in range(n)]
        table[(arm, 1)] = [(2.0, 3.0)] * n
        table[(arm, 2)] = [(3.0, 1.0 + 0.01 * s) for s in range(n)]
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[0]
    assert report["idea_config"] == GRID[0]
    assert report["baseline"]["full"]["mean"] == pytest.approx(5.0 + 0.01 * 2.5)


def test_selection_follows_the_direction():
    n = 6
    table = {(arm, k): [(float(k), 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    spec = make_spec(GRID, n, direction="higher is better")
    report = build_report(spec, TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[2]


def test_selection_ties_go_to_the_first_in_grid_order():
    n = 6
    table = {(arm, k): [(1.0, 1.0 + k)] * n for arm in ("baseline", "idea") for k in range(3)}
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[0] and report["idea_config"] == GRID[0]


def test_a_config_with_a_diverged_seed_is_not_eligible():
    n = 6
    table = {(arm, k): [(1.0 + k, 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 0)] = [(1.0, 1.0)] * (n - 1) + [(math.nan, math.nan)]
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[1]
    assert report["idea_config"] == GRID[0]
    sweep = report["baseline"]["sweep"]
    assert [s["eligible"] for s in sweep] == [False, True, True]
    assert sweep[0]["diverged_seeds"] == [n - 1]


def test_every_config_diverged_is_incomplete_with_no_verdict():
    n = 6
    table = {(arm, k): [(1.0, 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    for k in range(3):
        table[("idea", k)] = [(math.inf, 1.0)] * n
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    decide(report, None, 1)
    assert not report["complete"]
    assert report["practical_verdict"] == report["system_verdict"] == "incomplete"
    assert any("every config of the idea arm diverged" in r
               for r in report["incomplete"]["reasons"])
    for gate in GATES[1:]:
        assert gate_failure(report, gate) is not None


def test_a_missing_run_gives_no_verdict_and_names_it():
    n = 6
    table = {("baseline", 0): [(1.0, 1.0)] * n, ("idea", 0): [(1.0, 0.5)] * (n - 1)}
    report = build_report(make_spec(GRID[:1], n), TRACK, runs_from(table, GRID[:1]), [],
                          alpha=ALPHA)
    decide(report, None, 1)
    assert report["practical_verdict"] == "incomplete"
    assert report["incomplete"]["missing"] == [f"idea[{TRACK}-lr=0.001-seed{n - 1}]"]


def test_the_fixture_p_value_is_what_the_tables_assume():
    report = paired_report(BASE8, IDEA8)
    assert report["comparison"]["p_value"] == pytest.approx(P8)


@pytest.mark.parametrize("alpha, expected", [
    (math.nextafter(P8, 1.0), "helps"),   # level just above p: significant
    (P8, "inconclusive"),                # at the level: not (strict <)
    (math.nextafter(P8, 0.0), "inconclusive"),
])
def test_decide_at_the_level(alpha, expected):
    report = paired_report(BASE8, IDEA8, alpha=alpha)
    decide(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == expected


def test_decide_uses_the_holm_adjusted_p_not_the_raw_one():
    report = paired_report(BASE8, IDEA8)
    p = report["comparison"]["p_value"]
    assert p < ALPHA
    adjusted = stats.holm([p, 0.9, 0.9])[0]   # 3 tracks: 3 * p = 0.047 < alpha still
    decide(report, adjusted, 3)
    assert report["practical_verdict"] == "helps"
    report = paired_report(BASE8, IDEA8)
    adjusted = stats.holm([p, p, p, p])[0]    # 4 tracks: 4 * p = 0.0625
    assert adjusted >= ALPHA
    decide(report, adjusted, 4)
    assert report["practical_verdict"] == "inconclusive"
    assert report["comparison"]["p_adjusted"] == adjusted


def test_reference_format_fields_follow_the_practical_verdict():
    report = paired_report(BASE8, IDEA8)
    decide(report, stats.holm([P8] * 4)[0], 4)
    assert report["practical_verdict"] == "inconclusive"
    assert report["comparison"]["verdict"] == "no significant win"
    assert report["comparison"]["system_worked"] is False


@pytest.mark.parametrize("flip, practical, verdict", [
    (False, "helps", "idea better (significant)"),
    (True, "harms", "idea worse (significant)"),
])
def test_reference_format_fields_at_full_alpha(flip, practical, verdict):
    base, idea = (IDEA8, BASE8) if flip else (BASE8, IDEA8)
    report = paired_report(base, idea)
    decide(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == practical
    assert report["comparison"]["verdict"] == verdict
    assert report["comparison"]["system_worked"] is (practical == "helps")


def test_direction_higher_flips_helps_and_harms():
    report = paired_report(BASE8, IDEA8, direction="higher is better")
    decide(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == "harms"
    assert report["comparison"]["idea_wins"] == 1


def test_idea_wins_counts_strictly_better_seeds():
    assert stats.idea_wins([1, 1, 1], [0.5, 1, 2], "lower") == 1
    assert stats.idea_wins([1, 1, 1], [0.5, 1, 2], "higher") == 1


# ----------------------------------------------------------- mechanism evidence rules
def sig(observed, confirmed, predicted=0.0, tol=0.1):
    return {"observed": observed, "predicted": predicted, "tol": tol, "prediction": None,
            "confirmed": confirmed}


def test_signature_missing_on_a_seed_is_not_confirmed():
    runs = [{"signatures": {"m": sig(0.0, True)}}, {"signatures": {}}]
    out = mechanism_signature(runs)
    assert out["signatures"]["m"]["confirmed"] is False
    assert out["signatures"]["m"]["per_seed"] == [0.0, None]
    assert out["confirmed"] is False


def test_signature_confirmed_only_when_every_seed_is():
    runs = [{"signatures": {"m": sig(0.05, True)}}, {"signatures": {"m": sig(0.2, False)}}]
    out = mechanism_signature(runs)
    assert out["signatures"]["m"]["observed"] == 0.2   # the one farthest from the prediction
    assert out["confirmed"] is False
    runs[1]["signatures"]["m"] = sig(-0.08, True)
    out = mechanism_signature(runs)
    assert out["confirmed"] is True and out["signatures"]["m"]["observed"] == -0.08


def test_no_signature_is_no_evidence():
    assert mechanism_signature([{"signatures": {}}])["confirmed"] is None


@pytest.mark.parametrize("outcomes, passed", [
    (["passed"], True), (["passed", "failed"], False), (["skipped"], None),
    (["skipped", "passed"], True), (["skipped", "failed"], False), ([], None),
])
def test_a_skipped_claim_is_no_evidence(outcomes, passed):
    payloads = [{"nodeid": f"m.py::test_c{k}", "outcome": o, "message": None}
                for k, o in enumerate(outcomes)]
    assert math_verification(payloads)["passed"] is passed


def test_mechanism_ok_in_a_report_with_a_skipped_and_a_passed_claim():
    report = paired_report(BASE8, IDEA8)
    mechs = [{"nodeid": "m.py::test_a", "outcome": "skipped", "message": None},
             {"nodeid": "m.py::test_b", "outcome": "passed", "message": None}]
    spec = make_spec(GRID[:1], 8)
    runs = [make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(BASE8)]
    runs += [make_run("idea", GRID[0], s, i, i) for s, i in enumerate(IDEA8)]
    report = build_report(spec, TRACK, runs, mechs, alpha=ALPHA)
    decide(report, report["comparison"]["p_value"], 1)
    assert report["mechanism_ok"] == 1 and report["system_verdict"] == "worked"
