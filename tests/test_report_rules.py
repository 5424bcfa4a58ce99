"""The report's verdict rules (benchkit.report), pinned in process at and around each threshold.

Each test builds a report from hand-made run payloads (no training, no pytester), so every
field it asserts is known exactly: the sweep of each config, the selection on validation, the
aggregation of signatures over seeds, skipped vs failed claims, and the verdicts of
``decide`` at each look's level and Holm family size.
"""
from __future__ import annotations

import math

import pytest

from benchkit import fairness, robust, stats
from benchkit.report import (SELECTION_RULE, TEST_NAME, arm_sweep, build_report, decide,
                             math_verification, mechanism_signature)
from benchkit.spec import cfg_id
from test_rules import (ALPHA, BASE8, GRID, IDEA8, P8, TRACK, make_run, make_spec,
                        paired_report, runs_from)


def one_config_runs(base, idea):
    """Passed runs of both arms on GRID[0], validation equal to test, one per seed."""
    return ([make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(base)]
            + [make_run("idea", GRID[0], s, i, i) for s, i in enumerate(idea)])


# ------------------------------------------------------------------------------ arm_sweep
def test_arm_sweep_judges_eligibility_on_validation_and_tests_on_test():
    """cfg 0 is clean; cfg 1 diverged on validation at seed 1; cfg 2 has a non-finite test
    value at seed 2; cfg 3 misses seed 0; cfg 4's values are ints and a missing val key."""
    grid = [{"lr": v} for v in (0.001, 0.002, 0.003, 0.004, 0.005)]
    seeds = [0, 1, 2]
    runs = {}

    def put(k, s, **values):
        runs[("idea", cfg_id(grid[k]), s)] = values
        runs[("baseline", cfg_id(grid[k]), s)] = {"val": -1.0, "test": -1.0}

    for s in seeds:
        put(0, s, val=1.0 + s, test=4.0 + s)
        put(1, s, val=math.nan if s == 1 else 1.0, test=2.0)
        put(2, s, val=0.5, test=math.inf if s == 2 else 3.0)
        if s:
            put(3, s, val=0.1, test=0.1)
        if s < 2:
            put(4, s, val=s, test=7)
        else:
            put(4, s, test=7.0)   # no validation value recorded: diverged
    sweep = arm_sweep(runs, "idea", grid, seeds)
    assert [s["cfg"] for s in sweep] == grid
    assert sweep[0] == {"cfg": grid[0], "mean": 5.0, "val_mean": 2.0, "eligible": True,
                        "diverged_seeds": [], "result": stats.summarize([4.0, 5.0, 6.0]),
                        "val_result": stats.summarize([1.0, 2.0, 3.0]),
                        "test_diverged_seeds": []}
    assert sweep[1] == {"cfg": grid[1], "mean": None, "val_mean": None, "eligible": False,
                        "diverged_seeds": [1], "result": None, "val_result": None,
                        "test_diverged_seeds": []}
    assert sweep[2] == {"cfg": grid[2], "mean": None, "val_mean": 0.5, "eligible": True,
                        "diverged_seeds": [], "result": None,
                        "val_result": stats.summarize([0.5] * 3), "test_diverged_seeds": [2]}
    # a missing run is neither diverged nor eligible
    assert sweep[3] == {"cfg": grid[3], "mean": None, "val_mean": None, "eligible": False,
                        "diverged_seeds": [], "result": None, "val_result": None,
                        "test_diverged_seeds": []}
    assert sweep[4]["diverged_seeds"] == [2] and not sweep[4]["eligible"]
    assert sweep[4]["test_diverged_seeds"] == []
    baseline = arm_sweep(runs, "baseline", grid, seeds)
    assert [s["val_mean"] for s in baseline] == [-1.0, -1.0, -1.0, None, -1.0]


def test_arm_sweep_turns_int_values_into_floats():
    runs = {("idea", cfg_id(GRID[0]), s): {"val": s + 1, "test": 2 * s} for s in range(2)}
    (sweep,) = arm_sweep(runs, "idea", GRID[:1], [0, 1])
    assert sweep["val_result"]["per_seed"] == [1.0, 2.0]
    assert sweep["result"]["per_seed"] == [0.0, 2.0] and sweep["mean"] == 1.0


# -------------------------------------------------------------------- mechanism_signature
def sig(observed, confirmed, predicted=1.0, tol=0.5, null=None, prediction="p"):
    out = {"observed": observed, "predicted": predicted, "tol": tol, "prediction": prediction,
           "confirmed": confirmed}
    if null is not None:
        out.update(null=null, has_null=True)
    return out


def test_signatures_aggregate_over_seeds_with_missing_and_unobserved_seeds():
    runs = [{"signatures": {"b": sig(0.2, True, tol=0.9), "a": sig(None, False, 2.0, 0.1)}},
            {"signatures": {"b": sig(1.5, True, tol=0.6)}},
            {"signatures": {"b": sig(None, True, tol=0.5)}}]
    out = mechanism_signature(runs)
    assert list(out["signatures"]) == ["a", "b"]
    assert out["signatures"]["b"] == {
        "prediction": "p", "predicted": 1.0, "tol": 0.9,
        "observed": 0.2,                       # |0.2 - 1| > |1.5 - 1|: farthest from 1.0
        "per_seed": [0.2, 1.5, None], "confirmed": True,
        "status": "confirmed (discrimination unchecked)", "discriminating": None,
        "null_per_seed": []}
    assert out["signatures"]["a"] == {
        "prediction": "p", "predicted": 2.0, "tol": 0.1, "observed": None,
        "per_seed": [None, None, None], "confirmed": False, "status": "not confirmed",
        "discriminating": None, "null_per_seed": []}
    assert out["confirmed"] is False


@pytest.mark.parametrize("observed, farthest", [
    ([0.2, 1.5], 0.2), ([1.9, 0.5], 1.9), ([1.0, 1.0], 1.0), ([-3.0, 6.0], 6.0),
])
def test_the_observed_value_is_the_one_farthest_from_the_prediction(observed, farthest):
    runs = [{"signatures": {"m": sig(v, True, predicted=1.0)}} for v in observed]
    assert mechanism_signature(runs)["signatures"]["m"]["observed"] == farthest


def test_every_signature_confirmed_on_every_seed_is_confirmed():
    runs = [{"signatures": {"a": sig(1.0, True), "b": sig(1.1, True)}} for _ in range(3)]
    out = mechanism_signature(runs)
    assert out["confirmed"] is True
    assert [s["confirmed"] for s in out["signatures"].values()] == [True, True]


@pytest.mark.parametrize("nulls, tols, status, discriminating", [
    ([3.0, 3.0], [0.5, 0.5], "confirmed", True),
    ([3.0, 1.2], [0.5, 0.5], "non_discriminating", False),   # seed 1's null passes too
    ([3.0, 3.0], [0.5, 2.5], "non_discriminating", False),   # the widest tol counts
    ([3.0, 3.0], [2.5, 0.5], "non_discriminating", False),
    ([3.0, 3.0], [1.9, 0.5], "confirmed", True),
])
def test_a_null_within_the_widest_tol_is_not_discriminating(nulls, tols, status, discriminating):
    runs = [{"signatures": {"m": sig(1.0, True, predicted=1.0, tol=t, null=n)}}
            for n, t in zip(nulls, tols)]
    m = mechanism_signature(runs)["signatures"]["m"]
    assert m["tol"] == max(tols)
    assert (m["status"], m["discriminating"], m["null_per_seed"]) == (status, discriminating,
                                                                       nulls)


# ---------------------------------------------------------------------- math_verification
def test_math_verification_lists_every_claim_in_nodeid_order():
    payloads = [{"nodeid": "m.py::test_c", "outcome": "skipped", "message": "no gpu"},
                {"nodeid": "m.py::test_b", "outcome": "failed", "message": "boom"},
                {"nodeid": "m.py::test_a", "outcome": "passed", "message": None}]
    assert math_verification(payloads) == {
        "tests": [{"test": "m.py::test_a", "outcome": "passed", "message": None},
                  {"test": "m.py::test_b", "outcome": "failed", "message": "boom"},
                  {"test": "m.py::test_c", "outcome": "skipped", "message": "no gpu"}],
        "passed": False}


@pytest.mark.parametrize("outcomes, passed, mechanism_ok", [
    (["passed", "passed"], True, 1),
    (["skipped", "skipped"], None, None),      # skipped claims are no evidence either way
    (["skipped", "failed"], False, 0),
    (["skipped", "passed"], True, 1),
    (["failed", "passed"], False, 0),
])
def test_skipped_claims_are_left_out_and_failed_ones_count(outcomes, passed, mechanism_ok):
    mechs = [{"nodeid": f"m.py::test_c{k}", "outcome": o, "message": None}
             for k, o in enumerate(outcomes)]
    assert math_verification(mechs)["passed"] is passed
    runs = one_config_runs(BASE8, IDEA8)
    report = build_report(make_spec(GRID[:1], 8), TRACK, runs, mechs, alpha=ALPHA)
    assert report["mechanism_ok"] == mechanism_ok
    decide(report, P8, 1)
    assert report["system_verdict"] == stats.system_verdict("helps", mechanism_ok)


# ---------------------------------------------------------------------------- decide
LEVEL_8_OF_16 = stats.look_levels([8], 16, ALPHA)[0]    # 0.0310


@pytest.mark.parametrize("looks, n, family, warned", [
    ((8, 16), 8, 4, True),    # 4 * 2^-7 = 0.03125 >= 0.0310
    ((8, 16), 8, 2, False),   # 2 * 2^-7 = 0.0156 < 0.0310
    ((8, 16), 8, 1, False),
    (None, 8, 8, False),      # at the full alpha: build_report's warning, not this one
    ((6, 12), 6, 1, True),    # 2^-5 = 0.03125 >= 0.0310
    ((6, 12), 6, 2, True),
])
def test_a_look_whose_level_the_seeds_cannot_reach_is_warned(looks, n, family, warned):
    report = paired_report(BASE8[:n], IDEA8[:n], looks=looks)
    decide(report, 1e-9, family)   # (a significant p: the warning does not read it)
    said = [w for w in report["warnings"] if w.startswith("this look is tested at level")]
    if not warned:
        assert said == []
        return
    level = report["comparison"]["level"]
    holm = f" ({family} x that after Holm)" if family > 1 else ""
    assert said == [f"this look is tested at level {level:.4g}, but with {n} seeds the smallest "
                    f"possible p is {stats.min_p_value(n):.4g}{holm}: it cannot be significant"]


@pytest.mark.parametrize("looks, said", [
    ((8, 16), f"look 1 of 2 declared (looks=(8, 16)): tested at level {LEVEL_8_OF_16:.4g}, "
              "not 0.05, so that all looks together stay within alpha"),
    ((8,), None), (None, None),
])
def test_a_look_of_several_says_its_level(looks, said):
    report = paired_report(BASE8, IDEA8, looks=looks)
    decide(report, report["comparison"]["p_value"], 1)
    looked = [w for w in report["warnings"] if w.startswith("look ")]
    assert looked == ([said] if said else [])


@pytest.mark.parametrize("family, p_adjusted, significant", [
    (1, P8, True), (2, 2 * P8, True), (4, 4 * P8, False),
    (1, ALPHA, False),                      # p at the level: not significant
    (1, math.nextafter(ALPHA, 0.0), True),
])
def test_decide_records_the_family_and_plans_at_holms_first_step(family, p_adjusted,
                                                                 significant):
    report = paired_report(BASE8, IDEA8)
    decide(report, p_adjusted, family)
    comp = report["comparison"]
    assert (comp["p_adjusted"], comp["family_size"], comp["level"]) == (p_adjusted, family,
                                                                        ALPHA)
    step = ALPHA / family
    assert comp["signflip_ci"]["confidence"] == 1.0 - step
    assert comp["planning"]["level"] == step
    assert (comp["seeds_needed"] is None) == significant
    assert report["practical_verdict"] == ("helps" if significant else "inconclusive")
    assert comp["verdict"] == ("idea better (significant)" if significant
                               else "no significant win")
    assert comp["system_worked"] is significant


def test_decide_tests_a_look_at_its_own_level():
    report = paired_report(BASE8, IDEA8, looks=(8, 16))
    decide(report, 2 * P8, 2)
    comp = report["comparison"]
    assert comp["level"] == LEVEL_8_OF_16
    assert comp["planning"]["level"] == LEVEL_8_OF_16 / 2
    assert report["practical_verdict"] == "inconclusive"   # 2 * P8 = 0.03125 >= 0.0310
    assert comp["verdict"] == "no significant win" and comp["system_worked"] is False
    report = paired_report(BASE8, IDEA8, looks=(8, 16))
    decide(report, P8, 1)
    assert report["practical_verdict"] == "helps"          # 0.0156 < 0.0310


@pytest.mark.parametrize("signatures, system", [
    ([sig(1.0, True)] * 8, "worked"), ([sig(3.0, False)] * 8, "partial"),
])
def test_the_system_verdict_follows_the_mechanism_evidence(signatures, system):
    report = paired_report(BASE8, IDEA8, signatures=[{"m": s} for s in signatures])
    decide(report, P8, 1)
    assert report["practical_verdict"] == "helps" and report["system_verdict"] == system
    assert report["decided_by"] == "baseline"


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
    runs.append({**make_run("idea", GRID[0], 0, 0.0, 0.0), "track": "other"})
    runs.append({**make_run("idea", GRID[0], 1, 0.0, 0.0, outcome="failed"), "track": "other"})
    report = build_report(make_spec(GRID[:2], n), TRACK, runs, [], alpha=ALPHA)
    assert report["complete"] is True and report["incomplete"] is None
    assert report["baseline"]["best_cfg"] == GRID[1] and report["idea_config"] == GRID[0]
    base = [3.0 + 0.01 * s for s in range(n)]
    idea = [2.0 + 0.02 * s for s in range(n)]
    assert report["baseline"]["full"] == stats.summarize(base)
    assert report["idea"] == stats.summarize(idea)
    assert report["comparison"]["per_seed_diffs"] == pytest.approx(
        [i - b for b, i in zip(base, idea)])
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
    decide(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == "helps"          # 2.0.. < 3.0.. on every seed


def test_selection_on_validation_follows_a_higher_is_better_metric():
    n = 6
    table = {(arm, k): [(float(k), 5.0 - k + (arm == "idea"))] * n
             for arm in ("baseline", "idea") for k in range(3)}
    spec = make_spec(GRID, n, direction="higher is better")
    report = build_report(spec, TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[2] and report["idea_config"] == GRID[2]
    assert report["comparison"]["direction"] == "higher"
    assert report["baseline"]["full"]["mean"] == 3.0 and report["idea"]["mean"] == 4.0


def test_an_incomplete_report_lists_the_missing_and_the_failed_runs():
    n = 3
    table = {(arm, k): [(1.0, 1.0)] * n for arm in ("baseline", "idea") for k in range(2)}
    runs = [r for r in runs_from(table, GRID[:2])
            if not (r["arm"] == "idea" and r["seed"] == 2) and not (
                r["arm"] == "baseline" and r["cfg"] == GRID[0] and r["seed"] == 1)]
    runs += [make_run("idea", GRID[1], 2, 1.0, 1.0, outcome="failed"),
             make_run("idea", GRID[0], 2, 1.0, 1.0, outcome="error")]
    runs[-2]["message"], runs[-1]["message"] = "boom", "oops"
    runs.append({**make_run("idea", GRID[0], 2, 1.0, 1.0, outcome="failed"), "track": "other"})
    runs.append({"kind": "run", "track": TRACK, "outcome": "failed", "arm": "idea",
                 "message": "no cfg", "nodeid": "m.py::test_idea"})     # not a run of the grid
    report = build_report(make_spec(GRID[:2], n), TRACK, runs, [], alpha=ALPHA)
    assert report["complete"] is False
    assert report["incomplete"] == {
        "reasons": ["3 of 12 runs missing or failed"],
        "missing": [f"baseline[{TRACK}-lr=0.001-seed1]", f"idea[{TRACK}-lr=0.001-seed2]",
                    f"idea[{TRACK}-lr=0.003-seed2]"],
        "failed": [{"run": f"idea[{TRACK}-lr=0.001-seed2]", "message": "oops"},
                   {"run": f"idea[{TRACK}-lr=0.003-seed2]", "message": "boom"}]}
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
    decide(report, None, 1)
    assert report["practical_verdict"] == report["system_verdict"] == "incomplete"


def test_a_run_without_a_validation_value_is_missing():
    n = 6
    runs = runs_from({(arm, 0): [(1.0, 1.0)] * n for arm in ("baseline", "idea")}, GRID[:1])
    del runs[-1]["val"]
    report = build_report(make_spec(GRID[:1], n), TRACK, runs, [], alpha=ALPHA)
    assert report["incomplete"]["missing"] == [f"idea[{TRACK}-lr=0.001-seed5]"]
    assert report["incomplete"]["failed"] == []


def test_diverged_runs_are_counted_in_a_warning():
    n = 6
    table = {(arm, k): [(1.0 + k, 1.0)] * n for arm in ("baseline", "idea") for k in range(2)}
    table[("baseline", 1)] = [(math.nan, 1.0)] * 2 + [(2.0, 1.0)] * (n - 2)
    report = build_report(make_spec(GRID[:2], n), TRACK, runs_from(table, GRID[:2]), [],
                          alpha=ALPHA)
    assert report["complete"]
    assert report["warnings"] == ["2 run(s) diverged (non-finite loss or metric); their configs "
                                  "were not eligible"]


def test_mechanism_tests_that_did_not_run_are_named():
    spec = make_spec(GRID[:1], 8, mechanism_tests=("test_a", "test_b", "test_c", "test_d",
                                                   "test_e"))
    runs = one_config_runs(BASE8, IDEA8)
    mechs = [{"nodeid": "ideas/test_rules.py::test_a", "outcome": "passed", "message": None},
             {"nodeid": "ideas/test_rules.py::test_c[1]", "outcome": "skipped", "message": None},
             {"nodeid": "ideas/test_rules.py::test_d[x[1]]", "outcome": "passed",
              "message": None},
             {"nodeid": "ideas/test_rules.py::TestK::test_e", "outcome": "passed",
              "message": None}]
    report = build_report(spec, TRACK, runs, mechs, alpha=ALPHA)
    assert report["warnings"] == [
        "mechanism test(s) test_b did not run in this session (-k/-m?): mechanism_ok and the "
        "system verdict leave them out"]
    assert [t["test"] for t in report["math_verification"]["tests"]] == [
        "ideas/test_rules.py::TestK::test_e", "ideas/test_rules.py::test_a",
        "ideas/test_rules.py::test_c[1]", "ideas/test_rules.py::test_d[x[1]]"]
    assert report["mechanism_ok"] == 1


# ------------------------------------------------- controls, budgets, logs, the sign test
CONTROL = "control:c"


def rich_runs(n=6, cpu_split=True):
    """Three arms on two configs: validation selects cfg 0 for the baseline and cfg 1 for the
    idea and the control; the test split would choose otherwise."""
    rows = {("baseline", 0): (1.0, 1.0), ("baseline", 1): (2.0, 0.2),
            ("idea", 0): (1.0, 0.1), ("idea", 1): (0.5, 0.6),
            (CONTROL, 0): (3.0, 0.1), (CONTROL, 1): (2.5, 0.9)}
    params = {"baseline": 100, "idea": 104, CONTROL: 150}
    runs = []
    for (arm, k), (val, test) in rows.items():
        for s in range(n):
            r = make_run(arm, GRID[k], s, val, test + 0.1 * s)
            r.update(logs={"loss": float(10 * s + k)}, budgets={"params": params[arm]},
                     cpu="cpu-a", env={"python": arm} if s == 0 else None)
            if cpu_split and arm == "idea" and s in (0, 3):
                r["cpu"] = "cpu-b"
            runs.append(r)
    return runs


def decide_with_holm(report):
    """decide() after Holm over the report's comparisons, as benchkit.aggregate does."""
    family = fairness.comparisons(report)
    for comp, p in zip(family, stats.holm([c["p_value"] for c in family])):
        comp["p_adjusted"], comp["family_size"] = p, len(family)
    return decide(report, report["comparison"]["p_adjusted"], len(family))


def rich_spec(n=6):
    """The baseline, the idea and one control, a 5% margin, decided by the sign test."""
    return {**make_spec(GRID[:2], n, margin=0.05), "arms": ["baseline", "idea", CONTROL],
            "test": "sign"}


def test_a_control_arm_is_selected_and_compared_like_the_baseline():
    n = 6
    report = build_report(rich_spec(n), TRACK, rich_runs(n), [], alpha=ALPHA)
    assert report["complete"]
    base = [1.0 + 0.1 * s for s in range(n)]
    idea = [0.6 + 0.1 * s for s in range(n)]
    control = [0.9 + 0.1 * s for s in range(n)]
    assert report["baseline"]["best_cfg"] == GRID[0] and report["idea_config"] == GRID[1]
    assert report["baseline"]["full"] == stats.summarize(base)
    assert report["idea"] == stats.summarize(idea)
    c = report["controls"]["c"]
    assert list(report["controls"]) == ["c"]
    assert c["arm"] == CONTROL and c["best_cfg"] == GRID[1]
    assert c["full"] == stats.summarize(control)
    assert [s["val_mean"] for s in c["sweep"]] == [3.0, 2.5]
    assert c["comparison"]["per_seed_diffs"] == pytest.approx([-0.3] * n)
    assert report["comparison"]["per_seed_diffs"] == pytest.approx([-0.4] * n)
    for comp in (report["comparison"], c["comparison"]):
        assert comp["test"] == "sign" and comp["alpha"] == ALPHA
        assert comp["noninferiority"]["margin_rel"] == 0.05
        assert comp["direction"] == "lower"
    assert report["protocol"]["test"] == robust.SIGN_TEST_NAME
    assert report["protocol"]["margin"] == 0.05
    assert report["log_medians"] == {
        "baseline": {"loss": 25.0}, "idea": {"loss": 26.0}, CONTROL: {"loss": 26.0}}
    assert report["budgets"]["arms"] == {"baseline": {"params": 100.0}, "idea": {"params": 104.0},
                                         CONTROL: {"params": 150.0}}
    assert report["budgets"]["matched"] is False
    assert report["environment"] == {"python": "baseline"}
    assert report["convergence"]["arms"]["idea"]["cfg"] == GRID[1]
    assert report["convergence"]["arms"][CONTROL]["cfg"] == GRID[1]
    assert report["warnings"] == [
        "only 6 seeds cannot reach p < 0.05 after Holm over 2 comparisons (1 track(s) x the "
        "baseline and 1 control(s)) (the smallest possible two-sided p is 0.03125 with the "
        "sign-flip test); 7 seeds or more can",
        "the paired runs of seed(s) 0, 3 trained on different CPU types (cpu-a; cpu-b): their "
        "differences mix the CPUs' rounding; train every shard on one CPU type "
        "(docs/scale-out.md)"]
    assert [r["arm"] for r in report["runs"]] == (["baseline"] * 2 * n + ["idea"] * 2 * n
                                                  + [CONTROL] * 2 * n)
    decide_with_holm(report)
    assert report["practical_verdict"] == report["system_verdict"] == "unmatched"


def test_a_matched_control_decides_when_it_is_the_worse_comparison():
    n = 8
    runs = rich_runs(n, cpu_split=False)
    for r in runs:
        r["budgets"] = {"params": 100}
        if r["arm"] == CONTROL and r["cfg"] == GRID[1]:   # the idea's values, +-0.1 by seed
            r["test"] = 0.6 + 0.1 * r["seed"] + (0.1 if r["seed"] % 2 else -0.1)
    report = build_report(rich_spec(n), TRACK, runs, [], alpha=ALPHA)
    assert report["warnings"] == [] and report["budgets"]["matched"] is True
    decide_with_holm(report)
    assert report["comparison"]["p_adjusted"] == 2 * 2 ** -8 * 2   # sign test, Holm of 2
    assert report["controls"]["c"]["verdict"] == "inconclusive"
    assert report["practical_verdict"] == "inconclusive" and report["decided_by"] == CONTROL
    assert report["system_verdict"] == "failed"


# --------------------------------------------------------------- the grid's extension
EXT = {"lr": 0.000333333333333}   # one log step below 0.001 on (0.001, 0.003, 0.01)


def edge_table(n):
    """Both arms select lr=0.001, the low edge of the declared grid, on validation."""
    return {(arm, k): [(1.0 + k, 1.0 - 0.1 * (arm == "idea"))] * n
            for arm in ("baseline", "idea") for k in range(3)}


def test_a_selection_at_the_edge_extends_the_grid_and_waits_for_its_runs():
    n = 6
    spec = {**make_spec(GRID, n), "extend": 1, "declared_grids": {TRACK: GRID}}
    report = build_report(spec, TRACK, runs_from(edge_table(n), GRID), [], alpha=ALPHA)
    assert report["complete"] is False
    assert report["incomplete"]["reasons"] == [
        "the selection sat at the edge of the grid, which extends to lr=0.000333333333333 for "
        "both arms: run the same command again to train the extension (stored runs are reused)",
        "12 of 48 runs missing or failed"]
    assert report["protocol"]["grid"] == GRID + [EXT] and report["protocol"]["extend"] == 1
    assert report["grid_extensions"] == {
        "limit": 1, "declared_grid": GRID, "at_edge": [],
        "extensions": [{"axis": "lr", "side": "low", "from": 0.001, "value": EXT["lr"],
                        "arms": ["baseline", "idea"]}]}
    # the next session trained the extension, which both arms select: at the edge again
    spec["grids"] = {TRACK: GRID + [EXT]}
    runs = runs_from(edge_table(n), GRID) + [
        make_run(arm, EXT, s, 0.5, 1.0 - 0.1 * (arm == "idea"))
        for arm in ("baseline", "idea") for s in range(n)]
    report = build_report(spec, TRACK, runs, [], alpha=ALPHA)
    assert report["complete"] and report["baseline"]["best_cfg"] == EXT
    assert report["grid_extensions"]["at_edge"] == [
        {"arm": "baseline", "axis": "lr", "side": "low"},
        {"arm": "idea", "axis": "lr", "side": "low"}]
    assert report["warnings"] == [
        f"the {arm}'s selected config lr=0.000333333333333 is at the low edge of lr after 1 "
        "extension(s) (extend=1): a wider grid may tune it better" for arm in ("baseline", "idea")]


def test_without_extension_the_grid_is_the_one_the_runs_ran_on():
    n = 6
    spec = {**make_spec(GRID, n), "declared_grids": {TRACK: GRID[:1]}}   # extend: 0 by default
    report = build_report(spec, TRACK, runs_from(edge_table(n), GRID), [], alpha=ALPHA)
    assert report["complete"] and report["grid_extensions"] == {
        "limit": 0, "declared_grid": GRID, "extensions": [],
        "at_edge": [{"arm": "baseline", "axis": "lr", "side": "low"},
                    {"arm": "idea", "axis": "lr", "side": "low"}]}
    assert report["protocol"]["extend"] == 0 and report["protocol"]["grid"] == GRID
    assert report["warnings"][0] == ("the baseline's selected config lr=0.001 is at the low edge "
                                     "of lr after 0 extension(s) (extend=0): a wider grid may "
                                     "tune it better")


# ----------------------------------------------------------------------- exploratory
def test_an_override_makes_the_report_exploratory_and_says_so_last():
    report = paired_report(BASE8, IDEA8, overrides={"seeds": 8})
    assert report["exploratory"] == {"reasons": ["--bench-seeds 8 overrides the module's plan"]}
    assert report["warnings"][-1] == (
        "exploratory: --bench-seeds 8 overrides the module's plan. Not a look of the plan: no "
        "verdict of this session counts and every gate fails")
    assert report["sequential"]["look"] == 1 and report["sequential"]["looks"] == [8]


# ------------------------------------------------------------- margins and claim types
@pytest.mark.parametrize("family, practical", [
    (1, "helps"),            # two-sided p 0.0156 < 0.05
    (8, "non-inferior"),     # adjusted 0.125: not better; margin test p 1/256 < 0.05 / 8
    (16, "inconclusive"),    # 1/256 = 0.0039 >= 0.05 / 16 = 0.0031
])
def test_the_margin_test_runs_at_holms_first_step(family, practical):
    report = paired_report(BASE8, IDEA8, margin=0.05)
    decide(report, min(1.0, family * P8), family)
    ni = report["comparison"]["noninferiority"]
    assert ni["p_value"] == 1 / 256 and ni["margin_rel"] == 0.05
    assert ni["non_inferior"] is (family < 16)
    assert report["practical_verdict"] == practical
    assert report["comparison"]["verdict"] == ("idea better (significant)" if family == 1
                                               else "no significant win")


def test_a_worse_idea_within_no_margin_is_not_non_inferior():
    """The idea 0.5 worse on 7 seeds of 8: the margin (5% of the baseline) does not cover it,
    whichever way the seeds are read."""
    report = paired_report(IDEA8, BASE8, margin=0.05)
    decide(report, 1.0, 8)
    assert report["comparison"]["noninferiority"]["non_inferior"] is False
    assert report["practical_verdict"] == "inconclusive"


def equivalence_report(claim_type):
    idea = [b + (0.01 if s % 2 else -0.01) for s, b in enumerate(BASE8)]
    spec = {**make_spec(GRID[:1], 8, margin=0.05), "claim_type": claim_type}
    runs = one_config_runs(BASE8, idea)
    return build_report(spec, TRACK, runs, [], alpha=ALPHA)


@pytest.mark.parametrize("claim_type, practical", [
    ("equivalence", "equivalent"), ("non-inferiority", "non-inferior"),
    ("superiority", "non-inferior"),
])
def test_an_equivalence_claim_is_judged_by_both_margin_tests(claim_type, practical):
    report = equivalence_report(claim_type)
    assert report["protocol"]["claim_type"] == claim_type
    decide(report, 1.0, 1)
    assert report["practical_verdict"] == practical
    assert ("equivalence" in report["comparison"]) is (claim_type == "equivalence")
    if claim_type == "equivalence":
        assert report["comparison"]["equivalence"]["p_value"] == 1 / 256
    assert report["comparison"]["verdict"] == "no significant win"
    assert report["comparison"]["system_worked"] is False


# ------------------------------------------------------------------- report header
def test_the_report_header_comes_from_the_spec_and_the_protocol():
    spec = make_spec(GRID[:1], 6)
    spec.update(name="hdr", claim="it helps", module="ideas/test_hdr.py",
                tracks=[TRACK, "other"])
    runs = one_config_runs(BASE8[:6], IDEA8[:6])
    report = build_report(spec, TRACK, runs, [], alpha=ALPHA)
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
    report = build_report(make_spec(GRID[:1], n), TRACK, runs, [], alpha=ALPHA)
    assert not report["complete"]
    assert report["convergence"]["arms"] == {}
    assert report["convergence"]["threshold"] == 0.01
    assert report["protocol"]["grid"] == GRID[:1] and report["protocol"]["alpha"] == ALPHA
    assert report["runs"][0]["arm"] == "baseline" and len(report["runs"]) == n


def test_a_control_at_the_edge_extends_the_grid_for_every_arm():
    n = 6
    rows = {("baseline", 1): 1.0, ("idea", 1): 1.0, (CONTROL, 0): 1.0}
    runs = [make_run(arm, GRID[k], s, rows.get((arm, k), 2.0), 1.0)
            for arm in ("baseline", "idea", CONTROL) for k in range(3) for s in range(n)]
    spec = {**make_spec(GRID, n), "extend": 1, "declared_grids": {TRACK: GRID},
            "arms": ["baseline", "idea", CONTROL]}
    report = build_report(spec, TRACK, runs, [], alpha=ALPHA)
    assert report["grid_extensions"]["extensions"] == [
        {"axis": "lr", "side": "low", "from": 0.001, "value": EXT["lr"], "arms": [CONTROL]}]
    assert report["complete"] is False
    assert report["incomplete"]["reasons"][-1] == "18 of 72 runs missing or failed"


# ------------------------------------------------------------- the exact boundary
def exact_report(margin=None, n=8):
    """The second look of looks=(4, 8): the idea 0.04 worse on 3 seeds and 0.01 better on 5,
    inconclusive two-sided."""
    base = [round(1.0 + 0.1 * s, 2) for s in range(n)]
    idea = [round(b + (0.04 if s < 3 else -0.01), 2) for s, b in enumerate(base)]
    spec = {**make_spec(GRID[:1], n, margin=margin, looks=(4, 8)), "boundary": "exact"}
    runs = one_config_runs(base, idea)
    return build_report(spec, TRACK, runs, [], alpha=ALPHA)


UNION_LAST = stats.look_levels([4, 8], 8, ALPHA)[1]   # 0.0190, as for any two looks


def test_the_exact_boundary_sets_the_two_sided_level_and_the_union_one_the_margins():
    """At the second look the exact level is 0.05 (calibrated on these differences), the
    union-bound level 0.0190; the margin test (p 0.03125) runs at the union level."""
    report = exact_report(margin=0.025)
    decide(report, report["comparison"]["p_value"], 1)
    comp = report["comparison"]
    assert comp["level"] == 0.05 and comp["p_value"] == pytest.approx(0.390625)
    assert comp["noninferiority"]["p_value"] == pytest.approx(0.03125)
    assert comp["noninferiority"]["non_inferior"] is False     # 0.03125 >= 0.0190
    assert report["practical_verdict"] == "inconclusive"


def test_the_exact_boundary_applies_to_a_single_comparison_only():
    report = exact_report()
    decide(report, 1e-9, 2)   # (a significant p: the level does not read it)
    assert report["comparison"]["level"] == UNION_LAST


# --------------------------------------------------------------- futility, sign interval
def test_the_futility_stop_uses_the_last_looks_level_over_the_family():
    base = BASE8
    idea = [b + (0.05 if s % 2 else -0.04) for s, b in enumerate(base)]
    spec = {**make_spec(GRID[:1], 8, looks=(8, 16)), "futility": 0.1}
    runs = one_config_runs(base, idea)
    report = build_report(spec, TRACK, runs, [], alpha=ALPHA)
    decide(report, 1.0, 2)
    assert report["practical_verdict"] == "inconclusive"
    fut = report["sequential"]["futility"]
    assert fut["last_level"] == UNION_LAST / 2
    assert fut["threshold"] == 0.1 and fut["stop"] is True and fut["conditional_power"] < 0.1
    assert any(w.startswith("futility: ") for w in report["warnings"])


def test_the_sign_interval_is_at_holms_first_step():
    n = 8
    runs = rich_runs(n, cpu_split=False)
    report = build_report(rich_spec(n), TRACK, runs, [], alpha=ALPHA)
    decide_with_holm(report)
    assert report["comparison"]["sign_ci"]["confidence"] == 1.0 - ALPHA / 2
    assert report["comparison"]["signflip_ci"]["confidence"] == 1.0 - ALPHA / 2


def test_a_frontier_axis_is_never_extended():
    n = 6
    grid = [{"lr": 0.001, "width": w} for w in (8, 16, 32)]
    runs = [make_run(arm, grid[k], s, 1.0 + k, 1.0) for arm in ("baseline", "idea")
            for k in range(3) for s in range(n)]
    spec = {**make_spec(grid, n), "extend": 2, "declared_grids": {TRACK: grid},
            "frontier": {"width": [8, 16, 32]}}
    report = build_report(spec, TRACK, runs, [], alpha=ALPHA)
    assert report["complete"] and report["baseline"]["best_cfg"] == grid[0]
    assert report["grid_extensions"]["extensions"] == []
    assert report["grid_extensions"]["at_edge"] == []


# ------------------------------------------------------------------- convergence, alpha
def test_convergence_is_judged_on_the_selected_runs_in_the_metrics_direction():
    from benchkit import tracks
    curve = [{"epoch": 22, "val": 1.1}, {"epoch": 30, "val": 1.0}]   # 9.1% better at the end
    runs = [make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(BASE8)]
    runs += [{**make_run("idea", GRID[0], s, i, i), "curve": curve} for s, i in enumerate(IDEA8)]
    report = build_report(make_spec(GRID[:1], 8), TRACK, runs, [], alpha=ALPHA)
    conv = report["convergence"]
    assert (conv["budget"], conv["budget_reason"]) == (tracks.get(TRACK).budget,
                                                       tracks.get(TRACK).budget_reason)
    assert conv["arms"]["idea"]["last_quarter_gain"] == pytest.approx(0.1 / 1.1)
    assert conv["arms"]["idea"]["still_improving"] is True
    assert conv["arms"]["baseline"]["still_improving"] is False
    assert [w[:61] for w in report["warnings"]] == [
        "still improving: the idea's selected config lr=0.001 gained 9"]
    incomplete = build_report(make_spec(GRID[:1], 8), TRACK, runs[:-1], [], alpha=ALPHA)
    assert incomplete["convergence"] == {**conv, "arms": {}}


@pytest.mark.parametrize("alpha", [0.1, 0.01])
def test_the_comparison_is_made_at_the_sessions_alpha(alpha):
    report = paired_report(BASE8, IDEA8, alpha=alpha)
    assert report["comparison"]["alpha"] == alpha == report["protocol"]["alpha"]
    assert report["comparison"]["mde"] == pytest.approx(
        stats.mde(report["comparison"]["per_seed_diffs"], alpha))


def test_stored_runs_judged_under_another_plan_make_the_session_exploratory():
    runs = one_config_runs(BASE8, IDEA8)
    runs[0].update(origin="reused", planned={"looks": [8, 16]})
    report = build_report(make_spec(GRID[:1], 8), TRACK, runs, [], alpha=ALPHA)
    (reason,) = report["exploratory"]["reasons"]
    assert reason.startswith("the plan changed after a look: stored runs were judged under "
                             "another plan (looks [8, 16] -> [8])")


def test_every_field_of_a_decided_report_is_a_schema_field():
    import json
    from benchkit.report import SCHEMA_PATH
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    added_later = {"created", "provenance"}   # stamped by benchkit.aggregate
    for report in (paired_report(BASE8, IDEA8), paired_report(BASE8, IDEA8[:-1])):
        decide(report, report["comparison"] and report["comparison"]["p_value"], 1)
        assert set(report) <= set(schema["properties"]), set(report) - set(schema["properties"])
        assert set(schema["required"]) - added_later <= set(report)
    assert report["complete"] is False and report["idea_config"] is None
    assert report["frontier"] is None
