"""The verdict is a function of the runs and the plan declared in the module, nothing else.

A plan is ``looks=(8, 16)`` in ``pytest.mark.bench`` (or the shorthand ``max_seeds=16``: looks
at the declared seeds and at 16). Each look's level follows from that declaration alone; no
earlier report is read. A session with ``--bench-seeds``/``--bench-epochs``, or at a seed count
that is no declared look, is exploratory: its report and terminal say so and every gate fails.
"""
from __future__ import annotations

from builders import as_report

import dataclasses

import pytest

from benchkit.stats import paired
from benchkit.report.session import gate_failure
from benchkit.spec import SpecError
from builders import (decided, BASE8, GRID, IDEA8, P8, recorded, make_run, make_spec, paired_report,
                      parse)

LEVEL_8_OF_16 = paired.look_levels([8], 16, 0.05)[0]   # 0.0310
LEVEL_16_OF_16 = paired.look_levels([8, 16], 16, 0.05)[1]


# ------------------------------------------------------------------------------ the marker
@pytest.mark.parametrize("kwargs, looks, seeds", [
    ({}, (64,), 64),                               # the track's default seeds (tabular's)
    ({"seeds": 6}, (6,), 6),
    ({"looks": (8, 16)}, (8, 16), 8),              # seeds default to the first look
    ({"looks": [8, 16], "seeds": 16}, (8, 16), 16),  # the second look
    ({"max_seeds": 16, "seeds": 8}, (8, 16), 8),   # shorthand: looks at seeds and max_seeds
    ({"max_seeds": 16, "seeds": 6}, (6, 16), 6),
    ({"max_seeds": 64}, (64,), 64),                # max_seeds == seeds: one look
])
def test_the_plan_is_read_from_the_marker(kwargs, looks, seeds):
    spec = parse(**kwargs)
    assert spec.looks == looks and len(spec.seeds) == seeds
    assert spec.looks_declared == ("looks" in kwargs or "max_seeds" in kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"looks": (8, 16), "max_seeds": 16}, "both given"),
    ({"looks": (16, 8)}, "strictly increasing"), ({"looks": (8, 8)}, "strictly increasing"),
    ({"looks": ()}, "looks=()"), ({"looks": (1, 8)}, r"integers in \[2, 1000\]"),
    ({"looks": (8.0, 16)}, "looks="), ({"looks": "8,16"}, "looks="),
    ({"looks": 16}, "looks="), ({"max_seeds": 1}, "max_seeds=1"),
])
def test_a_malformed_plan_is_a_clear_collection_error(kwargs, match):
    with pytest.raises(SpecError, match=match) as err:
        parse(**kwargs)
    assert "valid: looks=(8, 16)" in str(err.value)


# ------------------------------------------------------------------------------ the levels
@pytest.mark.slow
@pytest.mark.parametrize("looks, n, level", [
    (None, 8, 0.05),
    ((8, 16), 8, LEVEL_8_OF_16),
    ((4, 8), 8, paired.look_levels([4, 8], 8, 0.05)[1]),
])
def test_each_look_is_tested_at_its_declared_level(looks, n, level):
    report = paired_report(BASE8[:n], IDEA8[:n], looks=looks)
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["comparison"]["level"] == level
    assert report["exploratory"] is None
    assert report["sequential"]["look"] == (looks or (n,)).index(n) + 1
    assert report["practical_verdict"] == ("helps" if P8 < level else "inconclusive")


def test_a_seed_count_that_is_no_look_is_exploratory_and_fails_every_gate():
    report = paired_report(BASE8, IDEA8, looks=(6, 16))
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["sequential"]["look"] is None
    assert "8 seeds is not a declared look" in report["exploratory"]["reasons"][0]
    assert report["comparison"]["level"] == 0.05       # descriptive only
    assert report["practical_verdict"] == "helps"
    for gate in ("not-harms", "non-inferior", "helps", "worked"):
        why = gate_failure(as_report(report), gate)
        assert "exploratory (8 seeds is not a declared look" in why, why
    assert gate_failure(as_report(report), "off") is None


@pytest.mark.parametrize("overrides, said", [
    ({"seeds": 8}, "--bench-seeds 8 overrides"), ({"epochs": 1}, "--bench-epochs 1 overrides"),
])
def test_an_override_session_is_exploratory_even_at_a_declared_look(overrides, said):
    report = paired_report(BASE8, IDEA8, overrides=overrides)
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["exploratory"]["reasons"] == [f"{said} the module's plan"]
    assert any(w.startswith("exploratory:") for w in report["warnings"])
    assert gate_failure(as_report(report), "not-harms").startswith("exploratory (")
    report["practical_verdict"] = "harms"   # a gate missed anyway says both
    why = gate_failure(as_report(report), "not-harms")
    assert why.startswith("gate 'not-harms' not met, and exploratory (")


# ------------------------------------------------------------------------------ end to end
LOOKED = recorded("rec", 2 * BASE8, 2 * IDEA8, seeds=None, looks=(8, 16))


def test_a_quick_look_in_the_report_folder_does_not_change_the_later_verdict(
        pytester, read_report):
    """Issue 16's reproduction: a --bench-seeds 2 quick look written to the default report
    folder made the 8-seed bench an 'unplanned extension at level 0'. Now the 8-seed verdict
    is the one a fresh folder gives, and the quick look fails the gate as exploratory."""
    pytester.makepyfile(test_rec=LOOKED)
    quick = pytester.runpytest("--bench-seeds", "2", "--bench-gate=helps",
                                          "-p", "no:cacheprovider")
    assert quick.ret == 1
    quick.stdout.fnmatch_lines(["*inconclusive/partial (exploratory)*",
                                "benchkit: FAIL rec tabular: *exploratory (--bench-seeds 2*"])
    assert read_report(pytester.path, "rec")["exploratory"] is not None
    full = pytester.runpytest("--bench-gate=helps", "-p", "no:cacheprovider")
    report = read_report(pytester.path, "rec")
    assert full.ret == 0, full.stdout.str()[-2000:]
    assert report["exploratory"] is None and report["sequential"]["look"] == 1
    assert report["comparison"]["level"] == LEVEL_8_OF_16
    assert report["practical_verdict"] == "helps"
    full.stdout.no_fnmatch_line("benchkit: FAIL*")


def test_a_plan_changed_after_a_look_is_exploratory(pytester, read_report):
    """Issue 16: max_seeds added after a look. The first look's runs are stored under looks=(8,);
    the module then declares looks at 8 and 16 and reuses them: the new plan was chosen after
    seeing results, so the session is exploratory and fails every gate."""
    module = recorded("replan", BASE8, IDEA8)
    pytester.makepyfile(test_replan=module)
    first = pytester.runpytest("--bench-gate=helps")
    assert first.ret == 0, first.stdout.str()[-2000:]
    pytester.makepyfile(test_replan=recorded("replan", BASE8, IDEA8, max_seeds=16))
    second = pytester.runpytest("--bench-gate=helps")
    # beside the first look's complete report, which an exploratory one never replaces
    assert read_report(pytester.path, "replan")["exploratory"] is None
    report = read_report(pytester.path, "replan", "tabular/exploratory")
    assert {r["origin"] for r in report["runs"]} == {"reused"}
    assert report["practical_verdict"] == "helps"        # at the look's level, but it is no look
    assert report["exploratory"]["reasons"] == [
        "the plan changed after a look: stored runs were judged under another plan (looks [8] "
        "-> [8, 16]); declare it before the first look, or --bench-fresh retrains under the "
        "new one"]
    assert second.ret == 1
    second.stdout.fnmatch_lines(["benchkit: FAIL replan tabular: exploratory (the plan changed*"])


@pytest.mark.parametrize("key, before, said", [
    ("looks", [8], "looks [8] -> [8, 16]"),
    ("boundary", "exact", "boundary 'exact' -> 'union'"),
    ("test", "sign", "test 'sign' -> 'mean'"),
    ("margin", 0.1, "margin 0.1 -> None"),
    ("claim_type", "non-inferiority", "claim_type 'non-inferiority' -> 'superiority'"),
])
def test_any_change_to_how_runs_are_judged_is_a_changed_plan(key, before, said):
    from benchkit.verdict.plan import declared_plan, plan_changes

    spec = make_spec(GRID[:1], 2, looks=(8, 16), boundary="union", test="mean",
                     claim_type="superiority")
    plan = declared_plan(spec)

    def stored(origin, planned):
        return make_run("idea", GRID[0], 0, 1.0, 1.0, origin=origin, planned=planned)
    assert plan_changes(plan, [stored("reused", declared_plan(spec))]) == []
    old = declared_plan(dataclasses.replace(spec, **{key: before}))
    [reason] = plan_changes(plan, [stored("reused", old)])
    assert f"judged under another plan ({said})" in reason
    # another module's shared baseline, and records without a plan, are not judged
    assert plan_changes(plan, [stored("shared", old), stored("reused", None)]) == []
