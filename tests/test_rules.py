"""The report builder's rules, pinned by tables at and around every threshold, and the builders
the rule tests share.

Reports are built from hand-made runs (no training) with values chosen to sit on, just below and
just above each threshold, so that a flipped comparison, a swapped direction, a wrong level or a
selection on the wrong split fails a named test here. Other test modules import the builders
(make_spec, make_run, paired_report, parse, RECORDED, ...) from here; the gate's rules are in
test_gate_rules.py, the verdict functions' in test_verdict_rules.py, the marker's ranges in
test_marker_ranges.py.
"""
from __future__ import annotations

import math

import pytest

from benchkit.stats import paired as stats
from benchkit.plugin.aggregate import gate_failure
from benchkit.verdict.build import build_report, decide, mechanism_signature, math_verification
from benchkit.spec import parse_bench_marker

GATES = ("off", "not-harms", "non-inferior", "equivalent", "helps", "worked")
PRACTICAL = ("helps", "harms", "non-inferior", "inconclusive", "equivalent")
ALPHA = 0.05


# -------------------------------------------------------------- reports built from runs
TRACK = "tabular"
PROTOCOL = {"track": TRACK, "model": "mlp_tiny", "metric": "mse",
            "metric_direction": "lower is better", "epochs": 30}


def make_spec(grid, seeds, *, direction="lower is better", margin=None, looks=None,
              mechanism_tests=(), overrides=None):
    return {"name": "rules", "module": "ideas/test_rules.py", "tracks": [TRACK],
            "grids": {TRACK: [dict(c) for c in grid]}, "seeds": list(range(seeds)),
            "epochs": {TRACK: 30}, "claim": None, "margin": margin,
            "looks": list(looks or [seeds]), "looks_declared": looks is not None,
            "overrides": dict(overrides or {}),
            "protocols": {TRACK: {**PROTOCOL, "metric_direction": direction}},
            "mechanism_tests": list(mechanism_tests)}


def make_run(arm, cfg, seed, val, test, *, signatures=None, outcome="passed"):
    return {"kind": "run", "outcome": outcome, "message": None,
            "nodeid": f"m.py::test_{arm}[{cfg}-{seed}]", "arm": arm, "track": TRACK,
            "cfg": dict(cfg), "seed": seed, "val": val, "test": test,
            "diverged": not (math.isfinite(val) and math.isfinite(test)),
            "seconds": 0.0, "reused": False, "signatures": signatures or {}, "logs": {}}


def runs_from(table: dict, grid) -> list[dict]:
    """table: (arm, cfg index) -> list of (val, test) per seed."""
    return [make_run(arm, grid[k], seed, val, test)
            for (arm, k), rows in table.items() for seed, (val, test) in enumerate(rows)]


GRID = [{"lr": 0.001}, {"lr": 0.003}, {"lr": 0.01}]


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


def paired_report(base, idea, *, alpha=ALPHA, direction="lower is better", margin=None,
                  signatures=None, looks=None, overrides=None):
    """A one-config report whose test values are given per seed (validation equal to test)."""
    grid = GRID[:1]
    runs = [make_run("baseline", grid[0], s, b, b) for s, b in enumerate(base)]
    runs += [make_run("idea", grid[0], s, i, i, signatures=(signatures or [None] * len(idea))[s])
             for s, i in enumerate(idea)]
    spec = make_spec(grid, len(base), direction=direction, margin=margin, looks=looks,
                     overrides=overrides)
    return build_report(spec, TRACK, runs, [], alpha=alpha)


# 8 seeds, the idea better on 7: the exact sign-flip p is 4/256 = 0.015625
BASE8 = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]
IDEA8 = [b - 0.5 for b in BASE8[:7]] + [BASE8[7] + 0.05]
P8 = 4 / 256


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


# ----------------------------------------------------------------- the marker, parsed
class Mark:
    def __init__(self, **kwargs):
        self.args, self.kwargs = (), kwargs


def parse(**kwargs):
    kwargs.setdefault("track", TRACK)
    return parse_bench_marker(Mark(**kwargs), "ideas/test_x.py", seeds_override=None,
                              epochs_override=None)


# ----------------------------------------- a module of hand-recorded results, benched end to end
RECORDED = '''\
import pytest

pytestmark = pytest.mark.bench(name={name!r}, track="tabular", grid={{"lr": [1e-2]}}, seeds=8)
BASE = {base!r}
IDEA = {idea!r}

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.record(val=BASE[run.seed], test=BASE[run.seed])

@pytest.mark.arm("idea")
def test_idea(run):
    run.record(val=IDEA[run.seed], test=IDEA[run.seed])
    run.signature("claim", observed=0.0, predicted=0.0, tol=1e-3)

@pytest.mark.mechanism
def test_claim():
    assert {claim_holds}
'''

