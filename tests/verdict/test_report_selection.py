"""The report's sweep, selection and completeness rules (benchkit.verdict.build), pinned in process.

Each test builds a report from hand-made run payloads (no training, no pytester), so every
field it asserts is known exactly: the sweep of each config, the selection on validation,
missing, failed and diverged runs, the header and protocol, convergence, exploratory sessions
and the schema's fields.
"""
from __future__ import annotations

from builders import as_report

import dataclasses
import math

import pytest

from benchkit.spec.payloads import RunPayload
from benchkit.spec.run_record import RunResult
from benchkit.stats import paired
from benchkit.verdict.build import SELECTION_RULE, TEST_NAME, arm_sweep, selected_index
from benchkit.spec import cfg_id
from benchkit.report.session import gate_failure
from builders import (ALPHA, BASE8, GATES, GRID, IDEA8, TRACK, built, decided, make_run, make_spec,
                      one_config_runs, paired_report, runs_from)

# ------------------------------------------------------------------------------ arm_sweep
def measured(val, test):
    """A run's result as the selection reads it: its metrics."""
    return RunResult(val=val, test=test, diverged=False, seconds=None)


def test_arm_sweep_judges_eligibility_on_validation_and_tests_on_test():
    """cfg 0 is clean; cfg 1 diverged on validation at seed 1; cfg 2 has a non-finite test
    value at seed 2; cfg 3 misses seed 0; cfg 4's values are ints and a None val."""
    grid = [{"lr": v} for v in (0.001, 0.002, 0.003, 0.004, 0.005)]
    seeds = [0, 1, 2]
    runs = {}

    def put(k, s, val=None, test=None):
        runs[("idea", cfg_id(grid[k]), s)] = measured(val, test)
        runs[("baseline", cfg_id(grid[k]), s)] = measured(-1.0, -1.0)

    for s in seeds:
        put(0, s, val=1.0 + s, test=4.0 + s)
        put(1, s, val=math.nan if s == 1 else 1.0, test=2.0)
        put(2, s, val=0.5, test=math.inf if s == 2 else 3.0)
        if s:
            put(3, s, val=0.1, test=0.1)
        if s < 2:
            put(4, s, val=s, test=7)
        else:
            put(4, s, test=7.0)   # no validation value: diverged
    sweep = arm_sweep(runs, "idea", grid, seeds)
    assert [s.cfg for s in sweep] == grid
    assert sweep[0].to_json() == {"cfg": grid[0], "mean": 5.0, "val_mean": 2.0, "eligible": True,
                        "diverged_seeds": [], "result": paired.summarize([4.0, 5.0, 6.0]).to_json(),
                        "val_result": paired.summarize([1.0, 2.0, 3.0]).to_json(),
                        "test_diverged_seeds": []}
    assert sweep[1].to_json() == {"cfg": grid[1], "mean": None, "val_mean": None, "eligible": False,
                        "diverged_seeds": [1], "result": None, "val_result": None,
                        "test_diverged_seeds": []}
    assert sweep[2].to_json() == {"cfg": grid[2], "mean": None, "val_mean": 0.5, "eligible": True,
                        "diverged_seeds": [], "result": None,
                        "val_result": paired.summarize([0.5] * 3).to_json(),
                        "test_diverged_seeds": [2]}
    # a missing run is neither diverged nor eligible
    assert sweep[3].to_json() == {"cfg": grid[3], "mean": None, "val_mean": None, "eligible": False,
                        "diverged_seeds": [], "result": None, "val_result": None,
                        "test_diverged_seeds": []}
    assert sweep[4].diverged_seeds == (2,) and not sweep[4].eligible
    assert sweep[4].test_diverged_seeds == ()
    baseline = arm_sweep(runs, "baseline", grid, seeds)
    assert [s.val_mean for s in baseline] == [-1.0, -1.0, -1.0, None, -1.0]
    assert selected_index(sweep, "lower") == 2 and selected_index(sweep, "higher") == 0
    assert selected_index(sweep[3:4], "lower") is None   # nothing eligible


def test_arm_sweep_turns_int_values_into_floats():
    runs = {("idea", cfg_id(GRID[0]), s): measured(s + 1, 2 * s) for s in range(2)}
    (sweep,) = arm_sweep(runs, "idea", GRID[:1], [0, 1])
    assert sweep.val_result is not None and sweep.val_result.per_seed == (1.0, 2.0)
    assert sweep.result is not None and sweep.result.per_seed == (0.0, 2.0)
    assert sweep.mean == 1.0


# ------------------------------------------------------------------- build_report
def test_a_complete_report_selects_on_validation_with_the_test_split_disagreeing():
    """Validation prefers cfg 1 for the baseline and cfg 0 for the idea; the test split
    prefers the other config for each arm. Runs of another track and a failed run there are
    left out."""
    n = 6
    table = {("baseline", 0): [(2.0, 0.1)] * n, ("baseline", 1): [(1.0, 3.0 + 0.01 * s)
                                                                  for s in range(n)],
             ("idea", 0): [(1.0, 2.0 + 0.02 * s) for s in range(n)], ("idea", 1): [(2.0, 0.1)] * n}
    runs = runs_from(table, GRID[:2])
    runs.append(make_run("idea", GRID[0], 0, 0.0, 0.0, track="other"))
    runs.append(make_run("idea", GRID[0], 1, 0.0, 0.0, outcome="failed", track="other"))
    report = built(make_spec(GRID[:2], n), TRACK, runs, [], alpha=ALPHA)
    assert report["complete"] is True and report["incomplete"] is None
    assert report["baseline"]["best_cfg"] == GRID[1] and report["idea_config"] == GRID[0]
    base = [3.0 + 0.01 * s for s in range(n)]
    idea = [2.0 + 0.02 * s for s in range(n)]
    assert report["baseline"]["full"] == paired.summarize(base).to_json()
    assert report["idea"] == paired.summarize(idea).to_json()
    # the binding test: the idea against the baseline's config 0, better on test
    assert report["comparison"]["per_seed_diffs"] == pytest.approx([i - 0.1 for i in idea])
    assert report["comparison"]["direction"] == "lower"
    assert report["comparison"]["alpha"] == ALPHA
    assert report["baseline"]["sweep"][1]["val_mean"] == 1.0
    assert [s["val_mean"] for s in report["idea_sweep"]] == [1.0, 2.0]
    assert report["n_seeds"] == n and report["track"] == TRACK
    assert [r["arm"] for r in report["runs"]] == ["baseline"] * 2 * n + ["idea"] * 2 * n
    assert [(r["cfg"], r["seed"]) for r in report["runs"][:n + 1]] == (
        [(GRID[0], s) for s in range(n)] + [(GRID[1], 0)])
    assert report["warnings"] == [] and report["exploratory"] is None
    assert report["protocol"]["grid"] == GRID[:2] and report["protocol"]["seeds"] == list(
        range(n))
    assert report["protocol"]["alpha"] == ALPHA and report["protocol"]["margin"] is None
    assert report["protocol"]["claim_type"] == "superiority"
    report = decided(report, report["comparison"]["p_value"], 1)
    # 2.0.. < 3.0.. on every seed at the selected configs, but the baseline's config 0 gives
    # 0.1: the idea does not beat the baseline's every config (the declared estimand)
    assert report["practical_verdict"] == "inconclusive"


def test_selection_on_validation_follows_a_higher_is_better_metric():
    n = 6
    table = {(arm, k): [(float(k), 5.0 - k + (arm == "idea"))] * n
             for arm in ("baseline", "idea") for k in range(3)}
    spec = make_spec(GRID, n, direction="higher is better")
    report = built(spec, TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[2] and report["idea_config"] == GRID[2]
    assert report["comparison"]["direction"] == "higher"
    assert report["baseline"]["full"]["mean"] == 3.0 and report["idea"]["mean"] == 4.0


def test_an_incomplete_report_lists_the_missing_and_the_failed_runs():
    n = 3
    table = {(arm, k): [(1.0, 1.0)] * n for arm in ("baseline", "idea") for k in range(2)}
    runs = [r for r in runs_from(table, GRID[:2])
            if not (r.arm == "idea" and r.seed == 2) and not (
                r.arm == "baseline" and r.cfg == GRID[0] and r.seed == 1)]
    runs += [make_run("idea", GRID[1], 2, 1.0, 1.0, outcome="failed", message="boom"),
             make_run("idea", GRID[0], 2, 1.0, 1.0, outcome="error", message="oops")]
    runs.append(make_run("idea", GRID[0], 2, 1.0, 1.0, outcome="failed", track="other"))
    runs.append(RunPayload(outcome="failed", message="no cfg", nodeid="m.py::test_idea",
                           spec=runs[0].spec))     # not a run of the grid: it has no point
    report = built(make_spec(GRID[:2], n), TRACK, runs, [], alpha=ALPHA)
    assert report["complete"] is False
    assert report["incomplete"] == {
        "reasons": ["3 of 12 runs missing or failed"],
        "missing": [f"baseline[{TRACK}-lr=0.001-seed1]", f"idea[{TRACK}-lr=0.001-seed2]",
                    f"idea[{TRACK}-lr=0.003-seed2]"],
        "failed": [{"run": f"idea[{TRACK}-lr=0.001-seed2]", "message": "oops"},
                   {"run": f"idea[{TRACK}-lr=0.003-seed2]", "message": "boom"}],
        "pending": []}
    assert report["baseline"] == {"best_cfg": None, "sweep": report["baseline"]["sweep"],
                                  "full": None}
    assert report["idea"] is None and report["comparison"] is None
    assert report["controls"] == {} and report["budgets"] is None
    assert report["log_medians"] is None and report["decided_by"] is None
    assert report["mechanism_signature"] == {"signatures": {}, "confirmed": None}
    # 3 seeds cannot reach p < 0.05: said even when incomplete
    assert report["warnings"] == [
        "only 3 seeds cannot reach p < 0.05 (the smallest possible two-sided p is 0.25 with "
        "the sign-flip test); 6 seeds or more can"]
    report = decided(report, None, 1)
    assert report["practical_verdict"] == report["system_verdict"] == "incomplete"


def test_a_run_without_a_validation_value_is_missing():
    n = 6
    runs = runs_from({(arm, 0): [(1.0, 1.0)] * n for arm in ("baseline", "idea")}, GRID[:1])
    runs[-1] = dataclasses.replace(runs[-1], record=dataclasses.replace(runs[-1].record,
                                                                         result=None))
    report = built(make_spec(GRID[:1], n), TRACK, runs, [], alpha=ALPHA)
    assert report["incomplete"]["missing"] == [f"idea[{TRACK}-lr=0.001-seed5]"]
    assert report["incomplete"]["failed"] == []


def test_diverged_runs_are_counted_in_a_warning():
    n = 6
    table = {(arm, k): [(1.0 + k, 1.0)] * n for arm in ("baseline", "idea") for k in range(2)}
    table[("baseline", 1)] = [(math.nan, 1.0)] * 2 + [(2.0, 1.0)] * (n - 2)
    report = built(make_spec(GRID[:2], n), TRACK, runs_from(table, GRID[:2]), [],
                          alpha=ALPHA)
    assert report["complete"]
    assert report["warnings"] == ["2 run(s) diverged (non-finite loss or metric); their configs "
                                  "were not eligible"]


# ----------------------------------------------------------------------- exploratory
def test_an_override_makes_the_report_exploratory_and_says_so_last():
    report = paired_report(BASE8, IDEA8, overrides={"seeds": 8})
    assert report["exploratory"] == {"reasons": ["--bench-seeds 8 overrides the module's plan"]}
    assert report["warnings"][-1] == (
        "exploratory: --bench-seeds 8 overrides the module's plan. Not a look of the plan: no "
        "verdict of this session counts and every gate fails")
    assert report["sequential"]["look"] == 1 and report["sequential"]["looks"] == [8]


# ------------------------------------------------------------------- report header
def test_the_report_header_comes_from_the_spec_and_the_protocol():
    spec = make_spec(GRID[:1], 6, name="hdr", claim="it helps", module="ideas/test_hdr.py",
                     tracks=[TRACK, "other"])
    runs = one_config_runs(BASE8[:6], IDEA8[:6])
    report = built(spec, TRACK, runs, [], alpha=ALPHA)
    assert {k: report[k] for k in ("bench_version", "name", "claim", "module", "track", "model",
                                   "metric", "metric_direction", "n_seeds")} == {
        "bench_version": 1, "name": "hdr", "claim": "it helps", "module": "ideas/test_hdr.py",
        "track": TRACK, "model": "mlp_tiny", "metric": "mse",
        "metric_direction": "lower is better", "n_seeds": 6}
    assert report["protocol"]["test"] == TEST_NAME and report["comparison"]["test"] == "mean"
    assert report["protocol"]["selection"] == SELECTION_RULE
    # two tracks: 6 seeds cannot pass Holm's first step (2 * 2^-5 = 0.0625)
    assert report["warnings"] == [
        "only 6 seeds cannot reach p < 0.05 after Holm over 2 track(s) (the smallest possible "
        "two-sided p is 0.03125 with the sign-flip test); 7 seeds or more can"]


def test_an_incomplete_report_still_describes_convergence_and_the_protocol():
    n = 6
    runs = runs_from({("baseline", 0): [(1.0, 1.0)] * n}, GRID[:1])
    report = built(make_spec(GRID[:1], n), TRACK, runs, [], alpha=ALPHA)
    assert not report["complete"]
    assert report["convergence"]["arms"] == {}
    assert report["convergence"]["threshold"] == 0.01
    assert report["protocol"]["grid"] == GRID[:1] and report["protocol"]["alpha"] == ALPHA
    assert report["runs"][0]["arm"] == "baseline" and len(report["runs"]) == n


# ------------------------------------------------------------------------- convergence
def test_convergence_is_judged_on_the_selected_runs_in_the_metrics_direction():
    from benchkit import tracks
    curve = [{"epoch": 22, "val": 1.1}, {"epoch": 30, "val": 1.0}]   # 9.1% better at the end
    runs = [make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(BASE8)]
    runs += [make_run("idea", GRID[0], s, i, i, curve=curve) for s, i in enumerate(IDEA8)]
    report = built(make_spec(GRID[:1], 8), TRACK, runs, [], alpha=ALPHA)
    conv = report["convergence"]
    assert (conv["budget"], conv["budget_reason"]) == (tracks.get(TRACK).budget,
                                                       tracks.get(TRACK).budget_reason)
    assert conv["arms"]["idea"]["last_quarter_gain"] == pytest.approx(0.1 / 1.1)
    assert conv["arms"]["idea"]["still_improving"] is True
    assert conv["arms"]["baseline"]["still_improving"] is False
    assert [w[:61] for w in report["warnings"]] == [
        "still improving: the idea's selected config lr=0.001 gained 9"]
    incomplete = built(make_spec(GRID[:1], 8), TRACK, runs[:-1], [], alpha=ALPHA)
    assert incomplete["convergence"] == {**conv, "arms": {}}


def test_stored_runs_judged_under_another_plan_make_the_session_exploratory():
    from benchkit.verdict.plan import declared_plan

    spec = make_spec(GRID[:1], 8)
    runs = one_config_runs(BASE8, IDEA8)
    runs[0] = make_run("baseline", GRID[0], 0, BASE8[0], BASE8[0], origin="reused",
                       planned={**declared_plan(spec), "looks": [8, 16]})
    report = built(spec, TRACK, runs, [], alpha=ALPHA)
    (reason,) = report["exploratory"]["reasons"]
    assert reason.startswith("the plan changed after a look: stored runs were judged under "
                             "another plan (looks [8, 16] -> [8])")


def test_every_field_of_a_decided_report_is_a_schema_field():
    import json
    from benchkit.report.bench_report import SCHEMA_PATH
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    added_later = {"created", "provenance"}   # stamped by benchkit.report.session
    for report in (paired_report(BASE8, IDEA8), paired_report(BASE8, IDEA8[:-1])):
        report = decided(report, report["comparison"] and report["comparison"]["p_value"], 1)
        assert set(report) <= set(schema["properties"]), set(report) - set(schema["properties"])
        assert set(schema["required"]) - added_later <= set(report)
    assert report["complete"] is False and report["idea_config"] is None
    assert report["frontier"] is None


# ------------------------------------------------ selection on validation, and completeness
def test_selection_uses_validation_not_test():
    """cfg 0 is best on validation, cfg 2 on test: the report picks cfg 0 for both arms."""
    n = 6
    table = {}
    for arm in ("baseline", "idea"):
        table[(arm, 0)] = [(1.0 + 0.01 * s, 5.0 + 0.01 * s) for s in range(n)]
        table[(arm, 1)] = [(2.0, 3.0)] * n
        table[(arm, 2)] = [(3.0, 1.0 + 0.01 * s) for s in range(n)]
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[0]
    assert report["idea_config"] == GRID[0]
    assert report["baseline"]["full"]["mean"] == pytest.approx(5.0 + 0.01 * 2.5)


def test_selection_follows_the_direction():
    n = 6
    table = {(arm, k): [(float(k), 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    spec = make_spec(GRID, n, direction="higher is better")
    report = built(spec, TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[2]


def test_selection_ties_go_to_the_first_in_grid_order():
    n = 6
    table = {(arm, k): [(1.0, 1.0 + k)] * n for arm in ("baseline", "idea") for k in range(3)}
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[0] and report["idea_config"] == GRID[0]


def test_a_config_with_a_diverged_seed_is_not_eligible():
    n = 6
    table = {(arm, k): [(1.0 + k, 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 0)] = [(1.0, 1.0)] * (n - 1) + [(math.nan, math.nan)]
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
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
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    report = decided(report, None, 1)
    assert not report["complete"]
    assert report["practical_verdict"] == report["system_verdict"] == "incomplete"
    assert any("every config of the idea arm diverged" in r
               for r in report["incomplete"]["reasons"])
    for gate in GATES[1:]:
        assert gate_failure(as_report(report), gate) is not None


def test_a_missing_run_gives_no_verdict_and_names_it():
    n = 6
    table = {("baseline", 0): [(1.0, 1.0)] * n, ("idea", 0): [(1.0, 0.5)] * (n - 1)}
    report = built(make_spec(GRID[:1], n), TRACK, runs_from(table, GRID[:1]), [],
                          alpha=ALPHA)
    report = decided(report, None, 1)
    assert report["practical_verdict"] == "incomplete"
    assert report["incomplete"]["missing"] == [f"idea[{TRACK}-lr=0.001-seed{n - 1}]"]


# ------------------------------ D6 (statistics audit): a non-finite test value never selects
def test_d6_a_non_finite_test_value_never_changes_the_selection():
    """cfg 0 is best on validation; one of its test values is NaN. Before: cfg 0 became
    ineligible and cfg 1 was selected (the test split chose). Now: cfg 0 stays selected and,
    since a paired test on NaN is impossible, the report is incomplete and says why."""
    n = 6
    table = {(arm, k): [(1.0 + k, 2.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 0)] = [(1.0, 2.0)] * (n - 1) + [(1.0, math.nan)]
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    sweep = report["baseline"]["sweep"]
    assert [s["eligible"] for s in sweep] == [True, True, True]
    assert sweep[0]["test_diverged_seeds"] == [n - 1] and sweep[0]["mean"] is None
    assert sweep[0]["val_mean"] == 1.0
    assert not report["complete"]
    assert any("selected on validation" in r and "seed(s) 5" in r
               for r in report["incomplete"]["reasons"])
    report = decided(report, None, 1)
    assert report["practical_verdict"] == "incomplete"


def test_d6_a_non_finite_test_value_off_the_selected_config_changes_nothing():
    n = 6
    table = {(arm, k): [(1.0 + k, 2.0 - 0.1 * (arm == "idea"))] * n
             for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 2)] = [(3.0, math.inf)] * n
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["complete"] and report["baseline"]["best_cfg"] == GRID[0]


def test_d6_a_non_finite_validation_value_still_makes_the_config_ineligible():
    n = 6
    table = {(arm, k): [(1.0 + k, 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 0)] = [(1.0, 1.0)] * (n - 1) + [(math.nan, 1.0)]
    report = built(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[1]
    assert report["baseline"]["sweep"][0]["diverged_seeds"] == [n - 1]
