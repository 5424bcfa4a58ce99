"""Fair and falsifiable benches: budgets recorded and matched, control arms, signatures with a
null, claim types and frontiers — through the plugin as users meet them, and the rules
in-process."""
from __future__ import annotations

import math
import textwrap

import pytest

from benchkit.tracks import tabular
from benchkit.verdict import mechanism
from benchkit.verdict import budgets
from benchkit.spec.run_record import RunResult, Signature
from builders import GRID, make_spec
from idea_modules import arm, idea_module

MLP = '''
def mlp(width):
    return nn.Sequential(nn.Linear(10, width), nn.ReLU(), nn.Linear(width, 64), nn.ReLU(),
                         nn.Linear(64, 1))
'''


def bench(pytester, *args, name="fair", seeds=2, width=64, base="", idea="", body="",
          controls="", **options):
    """A session of an idea whose arms train an MLP of ``width`` (the baseline's 64), ``base``
    and ``idea`` added to their ``run.fit`` arguments, ``body`` after the idea's, ``controls``
    (arms) after the module's, ``options`` on its bench mark."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(**{f"test_{name}": idea_module(
        name, MLP, arm("baseline", f"run.fit(mlp(64){base})"),
        arm("idea", f"model = run.fit(mlp({width}){idea})\n" + textwrap.dedent(body)), controls,
        imports="import pytest\nfrom torch import nn", seeds=seeds, **options)})
    return pytester.runpytest("--bench-epochs", "1", "-p", "no:cacheprovider", *args)


# -- budgets ------------------------------------------------------------------------------------
def test_an_idea_with_a_quarter_more_parameters_is_unmatched_and_fails_every_gate(
        pytester, read_report):
    result = bench(pytester, "--bench-gate", "not-harms", width=81)  # 6204 vs 4929 params
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: FAIL fair tabular: unmatched (params idea 6204 vs "
                                 "baseline 4929): no verdict"])
    report = read_report(pytester.path, "fair")
    assert report["practical_verdict"] == report["system_verdict"] == "unmatched"
    budgets = report["budgets"]
    steps = math.ceil(tabular.N_TRAIN / tabular.TRACK.batch_size)  # one epoch
    assert budgets["arms"]["idea"] == {"params": 6204, "steps": steps}
    assert budgets["arms"]["baseline"] == {"params": 4929, "steps": steps}
    params = next(c for c in budgets["checks"] if c["budget"] == "params")
    assert params["matched"] is False and params["rel_diff"] == pytest.approx(1275 / 4929)
    assert all(r["budgets"]["params"] in (4929, 6204) for r in report["runs"])
    summary = (pytester.path / "reports/fair/tabular/summary.md").read_text()
    assert "**unmatched: params idea 6204 vs baseline 4929** (tolerance 5%)" in summary
    assert "practical: unmatched" in summary


@pytest.mark.parametrize("gate", ["helps", "off"])
def test_a_stated_waiver_lifts_unmatched_and_is_recorded(pytester, read_report, gate):
    result = bench(pytester, "--bench-gate", gate, width=81,
                   budget_waiver={"params": "the claim is about width"})
    assert result.ret == (1 if gate == "helps" else 0)
    assert "FAIL fair tabular: unmatched" not in result.stdout.str()
    report = read_report(pytester.path, "fair")
    assert report["practical_verdict"] in ("inconclusive", "helps", "harms")
    assert report["budgets"]["waivers"] == {"params": "the claim is about width"}
    assert "waived: the claim is about width" in (
        pytester.path / "reports/fair/tabular/summary.md").read_text()


def test_declared_budgets_and_tolerance(pytester, read_report):
    body = '''    run.budget("stored_numbers", 38)
    run.log("norm", 2.0)'''
    controls = '''
@pytest.mark.arm("control", name="rank2")
def test_rank2(run):
    run.fit(mlp(64))
    run.budget("stored_numbers", 32)
'''
    bench(pytester, body=body, controls=controls, width=70,  # 5319 params: 7.9% more
          budget_tolerance={"params": 0.1, "stored_numbers": 0.2})
    report = read_report(pytester.path, "fair")
    checks = {(c["budget"], c["arm"]): c for c in report["budgets"]["checks"]}
    assert checks[("params", "baseline")]["matched"] and checks[("params", "baseline")][
        "tolerance"] == 0.1
    assert checks[("stored_numbers", "control:rank2")]["matched"]  # 38 vs 32: 18.75%
    assert checks[("stored_numbers", "baseline")]["matched"] is False  # the baseline has none
    assert report["practical_verdict"] == "unmatched"
    assert report["log_medians"]["idea"] == {"norm": 2.0}
    summary = (pytester.path / "reports/fair/tabular/summary.md").read_text()
    assert "| `norm` | n/a | 2 | n/a |" in summary


# -- control arms -------------------------------------------------------------------------------
CONTROL = '''
@pytest.mark.arm("control", name="better")
def test_better_control(run):
    run.fit(mlp(64), lr=3e-2)
'''


def test_a_control_that_beats_the_idea_makes_it_not_help(pytester, read_report):
    result = bench(pytester, "--bench-gate", "helps", seeds=8, base=", lr=1e-5",
                   idea=", lr=3e-3", controls=CONTROL)
    report = read_report(pytester.path, "fair")
    comp, control = report["comparison"], report["controls"]["better"]
    assert comp["delta_mean"] < 0 and comp["p_value"] < 0.05  # beats the baseline ...
    assert control["comparison"]["delta_mean"] > 0             # ... not the control
    assert control["verdict"] != "helps" and report["practical_verdict"] != "helps"
    # helps must beat both: one track's intersection-union p, the largest of the two
    assert comp["family_size"] == 1
    assert comp["p_adjusted"] == control["comparison"]["p_adjusted"] == max(
        comp["p_value"], control["comparison"]["p_value"])
    assert control["comparison"]["p_adjusted_harms"] >= control["comparison"]["p_value"]
    assert {r["arm"] for r in report["runs"]} == {"baseline", "idea", "control:better"}
    assert result.ret == 1
    result.stdout.fnmatch_lines(["benchkit: FAIL fair tabular: gate 'helps' not met*"])
    summary = (pytester.path / "reports/fair/tabular/summary.md").read_text()
    assert "## Control arms" in summary
    # the verdict's sentence gives the control's numbers, which decided it, not the baseline's
    assert report["decided_by"] == "control:better"
    verdict_line = next(ln for ln in summary.splitlines() if ln.startswith("- **practical:"))
    assert "than the control better" in verdict_line, verdict_line
    assert f"against the baseline: better by {abs(comp['delta_mean']):.4g}" in verdict_line


@pytest.mark.parametrize("marks, message", [
    ('@pytest.mark.arm("control")', "a control arm needs name="),
    ('@pytest.mark.arm("control", name="a b")', "a control arm needs name="),
    ('@pytest.mark.arm("idea", name="x")', "takes no keyword arguments"),
    ('@pytest.mark.arm("contrl", name="x")', "unknown arm"),
])
def test_malformed_control_arms_are_collection_errors(pytester, marks, message):
    result = bench(pytester, controls=f"\n{marks}\ndef test_c(run):\n    run.fit(mlp(64))\n")
    assert result.ret == 2
    result.stdout.fnmatch_lines([f"*{message}*"])


# -- signatures with a null ---------------------------------------------------------------------
SIGNATURE = '''    run.signature("effect", observed=0.0, predicted=0.0, tol=1e-3{null})'''


@pytest.mark.parametrize("null, status, ok", [
    (", null=5e-4", "non_discriminating", None),
    (", null=1.0", "confirmed", 1),
    ("", "confirmed (discrimination unchecked)", None),   # no null: no evidence for 1
])
def test_a_null_within_tolerance_is_non_discriminating(pytester, read_report, null, status, ok):
    result = bench(pytester, body=SIGNATURE.format(null=null))
    # seen in the source at collection: the observed value is a constant
    result.stdout.fnmatch_lines(["*run.signature('effect'): observed is the constant 0.0, so "
                                 "the check cannot fail*"])
    report = read_report(pytester.path, "fair")
    sig = report["mechanism_signature"]["signatures"]["effect"]
    assert sig["status"] == status and sig["confirmed"] is True
    assert report["mechanism_ok"] == ok
    summary = (pytester.path / "reports/fair/tabular/summary.md").read_text()
    assert status in summary
    if status == "non_discriminating":
        assert "pass, but so does their null (non-discriminating)" in summary


def test_signature_status_rules():
    def entry(null, has=True):
        return Signature(has_null=has, null=null, observed=0.0, predicted=0.0, tol=1.0,
                         prediction=None, confirmed=True)
    assert mechanism.signature_status(True, [entry(2.0), entry(None)], 0.0, 1.0)[:2] == (
        "confirmed", True)  # a non-finite null is outside any tolerance
    assert mechanism.signature_status(True, [entry(2.0), entry(0.5)], 0.0, 1.0)[:2] == (
        "non_discriminating", False)
    assert mechanism.signature_status(True, [entry(2.0), entry(None, False)], 0.0, 1.0)[:2] == (
        "non_discriminating", False)  # a seed without its null cannot show discrimination
    assert mechanism.signature_status(False, [entry(0.5)], 0.0, 1.0)[0] == "not confirmed"
    assert mechanism.signature_status(True, [None], 0.0, 1.0) == (
        "confirmed (discrimination unchecked)", None, [])


# -- the rules in-process -----------------------------------------------------------------------
def runs(**budgets):
    return [RunResult(val=1.0, test=1.0, diverged=False, seconds=None, budgets=budgets)] * 3


@pytest.mark.parametrize("idea, other, spec, matched", [
    (105, 100, {}, True),                          # 5% is within the default
    (106, 100, {}, False),
    (106, 100, {"budget_tolerance": {"*": 0.1}}, True),
    (106, 100, {"budget_waiver": {"params": "why"}}, True),
    (106, 100, {"frontier": {"keep": [1, 2]}}, True),   # params is exempt on a frontier
    (0, 0, {}, True),
    (1, 0, {}, False),
])
def test_budget_rule(idea, other, spec, matched):
    section = budgets.budget_section({"baseline": runs(params=other),
                                       "idea": runs(params=idea)}, make_spec(GRID[:1], 2, **spec))
    assert section.matched is matched
    assert bool(section.unmatched) is not matched


def test_steps_are_not_lifted_by_a_frontier():
    section = budgets.budget_section({"baseline": runs(steps=100), "idea": runs(steps=200)},
                                      make_spec(GRID[:1], 2, frontier={"keep": [1, 2]}))
    assert section.unmatched == ("steps idea 200 vs baseline 100",)


@pytest.mark.parametrize("extra, message", [
    ({"claim_type": "better"}, "claim_type='better'; valid: 'superiority', 'non-inferiority'"),
    ({"claim_type": "non-inferiority"}, "needs margin="),
    ({"budget_tolerance": -1}, "budget_tolerance=-1 must be a number >= 0"),
    ({"budget_waiver": {"params": ""}}, "budget_waiver={'params': ''} must be a dict"),
    ({"frontier": {"keep": [0.5]}}, "two or more distinct"),
    ({"frontier": {"lr": [1, 2]}}, "frontier axis 'lr' is also a grid key"),
    ({"frontier": [1, 2]}, "valid: one axis and at least two values"),
], ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else None)
def test_bad_fairness_arguments_are_collection_errors(pytester, extra, message):
    result = bench(pytester, "--collect-only", **extra)
    assert result.ret == 2
    result.stdout.fnmatch_lines([f"*{message}*"])


def test_claim_type_is_reported(pytester, read_report):
    bench(pytester, margin=0.2, claim_type="non-inferiority")
    report = read_report(pytester.path, "fair")
    assert report["protocol"]["claim_type"] == "non-inferiority"
    assert "non-inferiority: the idea may be worse" in (
        pytester.path / "reports/fair/tabular/summary.md").read_text()


# -- frontiers ----------------------------------------------------------------------------------
FRONTIER = idea_module("front", """
    def mlp(width, hidden=64):
        return nn.Sequential(nn.Linear(10, width), nn.ReLU(), nn.Linear(width, 1))
    """, arm("baseline", 'run.fit(mlp(run.cfg["width"]))'), arm("idea", """
    run.fit(mlp(run.frontier + 1))   # one unit more at every point: params varies on the axis
    run.log("width", run.frontier)"""),
    arm("control", "run.fit(mlp(run.frontier + 1))", name="same"),
    imports="import pytest\nfrom torch import nn", grid={"lr": [3e-3, 1e-2]},
    frontier={"width": [8, 16, 32]})


def test_a_frontier_bench_reports_every_point(pytester, read_report):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_front=FRONTIER)
    result = pytester.runpytest("--bench-epochs", "1", "-p", "no:cacheprovider",
                                "--bench-gate", "not-harms")
    result.assert_outcomes(passed=36)  # 3 arms x 3 points x 2 lrs x 2 seeds
    report = read_report(pytester.path, "front")  # valid: a control arm may be named anywhere
    # the budget axis is benched point by point: never "at the edge", for no arm
    assert all(e["axis"] != "width" for e in report["grid_extensions"]["at_edge"])
    frontier = report["frontier"]
    assert frontier["axis"] == "width" and frontier["values"] == [8, 16, 32]
    assert [p["value"] for p in frontier["points"]] == [8, 16, 32]
    for point in frontier["points"]:
        assert point["complete"] and point["idea_cfg"]["width"] == point["value"]
        assert point["baseline_cfg"]["width"] == point["value"]
        assert len(point["comparison"]["per_seed_diffs"]) == 2
    # the verdict's comparison pairs each arm's mean over the points, seed by seed
    means = [sum(p["idea"]["per_seed"][s] - p["baseline"]["per_seed"][s]
                 for p in frontier["points"]) / 3 for s in range(2)]
    assert report["comparison"]["per_seed_diffs"] == pytest.approx(means)
    assert report["practical_verdict"] != "unmatched"  # params varies along the axis
    assert report["budgets"]["matched"] and len(report["budgets"]["points"]) == 3
    assert report["log_medians"]["idea"] == {"width": 16}
    assert len(report["protocol"]["grid"]) == 6
    summary = (pytester.path / "reports/front/tabular/summary.md").read_text()
    assert "## Frontier over `width`" in summary and "| idea - same (wins, p) |" in summary
    # params is exempt because it varies along the frontier's declared axis, which it is not
    assert ("- `params` vs baseline at width=16: exempt on the frontier over `width`"
            in summary) and "frontier's axis" not in summary
    for value in (8, 16, 32):
        assert f"\n| {value} | " in summary


def test_controls_do_not_enlarge_the_family_the_seed_warning_counts():
    """helps against the baseline and every control is an intersection-union test: each
    comparison at the track's level, so 6 seeds reach p < 0.05 with any number of controls."""
    from benchkit.spec import unreachable_family
    assert unreachable_family(6, 1, 0.05) is None
    assert "after Holm over 2 track(s)" in unreachable_family(6, 2, 0.05)


# issue 50: a frontier's lr axis extends like any bench's, point by point (it never did)
FRONTIER_AT_THE_EDGE = idea_module("front_edge", """
    BEST = {8: 3e-4, 16: 3e-3}   # width 8 tunes below the declared grid

    def val(run, shift):
        return abs(math.log10(run.cfg["lr"] / BEST[run.frontier])) + 0.01 * run.seed + shift
    """, arm("baseline", "run.record(val=val(run, 0.0), test=val(run, 0.0))"),
    arm("idea", "run.record(val=val(run, -0.001), test=val(run, -0.001))"),
    imports="import math\nimport pytest", extend=1, grid={"lr": [1e-3, 3e-3, 1e-2]},
    frontier={"width": [8, 16]})


def test_a_frontier_point_at_the_edge_of_lr_extends_its_own_grid(pytester, read_report):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_front_edge=FRONTIER_AT_THE_EDGE)
    first = pytester.runpytest_inprocess("-p", "no:randomly")
    first.assert_outcomes(passed=24)   # 2 arms x 2 points x 3 lrs x 2 seeds
    report = read_report(pytester.path, "front_edge")
    assert report["complete"] is False
    extension, = report["grid_extensions"]["extensions"]
    assert (extension["axis"], extension["side"], extension["from"]) == ("lr", "low", 1e-3)
    assert report["incomplete"]["pending"] == ["lr=0.000333333333333-width=8"]
    second = pytester.runpytest_inprocess("-p", "no:randomly")
    second.assert_outcomes(passed=28)   # the 24 stored, and the extension's 4 trained
    report = read_report(pytester.path, "front_edge")
    assert report["complete"] is True
    point8, point16 = report["frontier"]["points"]
    assert point8["idea_cfg"] == point8["baseline_cfg"] == {"lr": 0.000333333333333, "width": 8}
    assert point16["idea_cfg"] == {"lr": 0.003, "width": 16}
    assert len(report["protocol"]["grid"]) == 7
