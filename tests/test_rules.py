"""The verdict and gate rules, pinned by tables at and around every threshold.

Each rule is checked where it is computed (stats, the report builder, the gate) with values
chosen to sit on, just below and just above its threshold, so that a flipped comparison, a
swapped direction, a wrong level or a selection on the wrong split fails a named test here.
The end-to-end gate tests at the bottom bench hand-recorded results (no training), so the
verdict of each session is known exactly.
"""
from __future__ import annotations

import itertools
import json
import math

import pytest

from benchkit import stats
from benchkit.aggregate import gate_failure
from benchkit.report import build_report, decide, mechanism_signature, math_verification
from benchkit.spec import SpecError, parse_bench_marker

GATES = ("off", "not-harms", "non-inferior", "equivalent", "helps", "worked")
PRACTICAL = ("helps", "harms", "non-inferior", "inconclusive", "equivalent")
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
    why = gate_failure(gate_report(practical, system, complete), gate)
    assert (why is None) == gate_passes(gate, practical, system, complete), why
    if why is not None and not complete:
        assert "incomplete" in why
    elif why is not None:
        assert f"gate {gate!r} not met" in why and practical in why


@pytest.mark.parametrize("mechanism_ok, word", [(1, "yes"), (0, "no"), (None, "none")])
def test_the_gate_failure_line_states_verdicts_numbers_and_level(mechanism_ok, word):
    report = gate_report("inconclusive", "failed")
    report["mechanism_ok"] = mechanism_ok
    assert gate_failure(report, "helps") == (
        "gate 'helps' not met: inconclusive/failed, delta -0.1, p 0.01 at level 0.031, "
        f"mechanism_ok {word}")


def test_an_incomplete_report_names_every_reason():
    report = gate_report("helps", "worked", complete=False)
    report["incomplete"]["reasons"].append("interrupted")
    assert gate_failure(report, "not-harms") == (
        "incomplete (1 of 4 runs missing or failed; interrupted): no verdict")


@pytest.mark.parametrize("gate", GATES)
def test_an_unmatched_report_fails_every_gate_with_its_budgets(gate):
    report = gate_report("unmatched", "unmatched")
    report["budgets"] = {"unmatched": ["params idea 1,250 vs baseline 1,000", "steps x"]}
    expected = None if gate == "off" else (
        "unmatched (params idea 1,250 vs baseline 1,000; steps x): no verdict")
    assert gate_failure(report, gate) == expected


@pytest.mark.parametrize("gate, practical, system", [
    pytest.param(g, p, s, id=f"{g}-{p}-{s}")
    for g, p, s in itertools.product(GATES, PRACTICAL, SYSTEM)])
def test_an_exploratory_session_fails_every_gate(gate, practical, system):
    report = gate_report(practical, system)
    report["exploratory"] = {"reasons": ["--bench-seeds 2 overrides the module's plan", "b"]}
    why = gate_failure(report, gate)
    facts = (f"{practical}/{system}, delta -0.1, p 0.01 at level 0.031, mechanism_ok yes")
    plan = "exploratory (--bench-seeds 2 overrides the module's plan; b)"
    if gate == "off":
        assert why is None
    elif gate_passes(gate, practical, system, True):
        assert why == f"{plan}: not a look of the declared plan, so no gate passes; {facts}"
    else:
        assert why == f"gate {gate!r} not met, and {plan}: {facts}"


# ------------------------------------------------------------------------- verdict rules
ALPHA = 0.05
BELOW = math.nextafter(ALPHA, 0.0)
ABOVE = math.nextafter(ALPHA, 1.0)


@pytest.mark.parametrize("p, delta, direction, expected", [
    (BELOW, -1.0, "lower", "helps"),
    (ALPHA, -1.0, "lower", "inconclusive"),     # p must be strictly below the level
    (ABOVE, -1.0, "lower", "inconclusive"),
    (BELOW, +1.0, "lower", "harms"),
    (ALPHA, +1.0, "lower", "inconclusive"),
    (BELOW, +1.0, "higher", "helps"),
    (BELOW, -1.0, "higher", "harms"),
    (ALPHA, +1.0, "higher", "inconclusive"),
    (0.0, 0.0, "lower", "inconclusive"),         # no difference is neither better nor worse
])
def test_practical_verdict_at_the_level(p, delta, direction, expected):
    assert stats.practical_verdict(p, delta, direction, ALPHA) == expected


@pytest.mark.parametrize("p, delta, non_inferior, expected", [
    (ABOVE, -1.0, True, "non-inferior"),
    (ABOVE, -1.0, False, "inconclusive"),
    (ABOVE, -1.0, None, "inconclusive"),
    (BELOW, -1.0, True, "helps"),               # significantly better beats non-inferior
])
def test_practical_verdict_non_inferior(p, delta, non_inferior, expected):
    assert stats.practical_verdict(p, delta, "lower", ALPHA, non_inferior=non_inferior) == expected


def system_expected(practical: str, mech: int | None) -> str:
    if practical == "helps" and mech == 1:
        return "worked"
    if practical == "harms" or (practical != "helps" and mech != 1):
        return "failed"
    return "partial"


@pytest.mark.parametrize("practical, mech", list(itertools.product(PRACTICAL, (1, 0, None))))
def test_system_verdict_table(practical, mech):
    assert stats.system_verdict(practical, mech) == system_expected(practical, mech)


def test_system_verdict_reference_reports():
    assert stats.system_verdict("harms", 0) == "failed"        # the pruning reference report
    assert stats.system_verdict("inconclusive", 1) == "partial"  # the compression one


@pytest.mark.parametrize("signatures, tests, expected", [
    ([], [], None),
    ([True], [], 1), ([], [True], 1), ([True], [True], 1),
    ([False], [True], 0), ([True], [False], 0), ([None], [], 0), ([True, False], [], 0),
])
def test_mechanism_ok_table(signatures, tests, expected):
    assert stats.mechanism_ok(signatures, tests) == expected


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


# ------------------------------------------------------------------- marker validation
class Mark:
    def __init__(self, **kwargs):
        self.args, self.kwargs = (), kwargs


def parse(**kwargs):
    kwargs.setdefault("track", TRACK)
    return parse_bench_marker(Mark(**kwargs), "ideas/test_x.py", seeds_override=None,
                              epochs_override=None)


@pytest.mark.parametrize("kwargs, ok", [
    ({"seeds": 2}, True), ({"seeds": 1}, False), ({"seeds": 0}, False), ({"seeds": -3}, False),
    ({"seeds": True}, False), ({"seeds": 2.0}, False), ({"seeds": "8"}, False),
    ({"margin": 0.05}, True), ({"margin": 0.999}, True), ({"margin": 0}, False),
    ({"margin": 1}, False), ({"margin": 5}, False), ({"margin": -0.1}, False),
    ({"margin": True}, False), ({"margin": math.nan}, False), ({"margin": "0.05"}, False),
    ({"max_seeds": 8}, True), ({"max_seeds": 16}, True), ({"max_seeds": 1}, False),
    ({"max_seeds": 2}, False), ({"looks": (8, 16)}, True), ({"looks": (8, 4)}, False),
    ({"max_seeds": 16.0}, False), ({"max_seeds": False}, False),
    ({"grid": {"lr": [1e-3]}}, True), ({"grid": {"lr": [0]}}, False),
    ({"grid": {"lr": [-1e-3]}}, False), ({"grid": {"lr": [math.nan]}}, False),
    ({"grid": {"lr": [math.inf]}}, False), ({"grid": {"lr": [True]}}, False),
    ({"grid": {"lr": ["1e-3"]}}, False), ({"grid": {"lr": []}}, False), ({"grid": {}}, False),
    ({"grid": {"lr": [1e-3], "epochs": [0]}}, False),
    ({"grid": {"lr": [1e-3], "epochs": [1.5]}}, False),
    ({"grid": {"lr": [1e-3], "epochs": [2]}}, True),
    ({"grid": {"lr": [1e-3], "batch_size": [0]}}, False),
    ({"grid": {"lr": [1e-3, 1e-3]}}, False),
])
def test_bench_marker_numeric_ranges(kwargs, ok):
    if ok:
        parse(**kwargs)
    else:
        with pytest.raises(SpecError, match="valid|must|need|duplicate|empty"):
            parse(**kwargs)


def test_margin_keeps_its_relative_meaning():
    assert parse(margin=0.05).margin == 0.05


# ------------------------------------------------------------- gates, end to end
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
    pytester.makepyfile(test_rec=RECORDED.format(name="rec", base=BASE8, idea=IDEA8,
                                                 claim_holds=claim_holds))
    result = pytester.runpytest_subprocess(f"--bench-gate={gate}", "-p", "no:cacheprovider")
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
    pytester.makepyfile(test_rec=RECORDED.format(name="rec", base=BASE8, idea=idea,
                                                 claim_holds=True))
    result = pytester.runpytest_subprocess("--bench-gate=non-inferior", "-p", "no:cacheprovider")
    report = read_report(pytester.path, "rec")
    assert report["practical_verdict"] == "inconclusive"
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: FAIL rec tabular: gate 'non-inferior' not met*"])


def test_recorded_module_report_is_valid_json(pytester):
    pytester.makepyfile(test_rec=RECORDED.format(name="rec", base=BASE8, idea=BASE8,
                                                 claim_holds=True))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 0
    data = json.loads((pytester.path / "reports/rec/tabular/bench_report.json").read_text())
    assert data["comparison"]["p_value"] == 1.0
    assert data["practical_verdict"] == "inconclusive"
