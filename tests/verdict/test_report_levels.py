"""The verdicts of the decision (benchkit.verdict.decision) at each look's level, pinned in process.

Each test builds a report from hand-made run payloads (no training, no pytester): the level of
each look and Holm family size, the margin and equivalence tests, the exact boundary, the
futility stop and the session's alpha.
"""
from __future__ import annotations

from builders import as_report

import math

import pytest

from benchkit.stats import paired
from benchkit.verdict.decision import decided_level
from benchkit.report.session import gate_failure
from benchkit.report.summary import render_summary_md
from builders import (ALPHA, BASE8, GRID, IDEA8, P8, TRACK, built, decided, make_run,
                      make_spec, one_config_runs, paired_report)

# ---------------------------------------------------------------------------- decide
LEVEL_8_OF_16 = paired.look_levels([8], 16, ALPHA)[0]    # 0.0310


@pytest.mark.slow
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
    report = decided(report, 1e-9, family)   # (a significant p: the warning does not read it)
    said = [w for w in report["warnings"] if w.startswith("this look is tested at level")]
    if not warned:
        assert said == []
        return
    level = report["comparison"]["level"]
    holm = f" ({family} x that after Holm)" if family > 1 else ""
    assert said == [f"this look is tested at level {level:.4g}, but with {n} seeds the smallest "
                    f"possible p is {paired.min_p_value(n):.4g}{holm}: it cannot be significant"]


@pytest.mark.parametrize("looks, said", [
    ((8, 16), f"look 1 of 2 declared (looks=(8, 16)): tested at level {LEVEL_8_OF_16:.4g}, "
              "not 0.05, so that all looks together stay within alpha"),
    ((8,), None), (None, None),
])
def test_a_look_of_several_says_its_level(looks, said):
    report = paired_report(BASE8, IDEA8, looks=looks)
    report = decided(report, report["comparison"]["p_value"], 1)
    looked = [w for w in report["warnings"] if w.startswith("look ")]
    assert looked == ([said] if said else [])


@pytest.mark.slow
@pytest.mark.parametrize("family, p_adjusted, significant", [
    (1, P8, True), (2, 2 * P8, True), (4, 4 * P8, False),
    (1, ALPHA, False),                      # p at the level: not significant
    (1, math.nextafter(ALPHA, 0.0), True),
])
def test_decide_records_the_family_and_plans_at_holms_first_step(family, p_adjusted,
                                                                 significant):
    report = paired_report(BASE8, IDEA8)
    report = decided(report, p_adjusted, family)
    comp = report["comparison"]
    assert (comp["p_adjusted"], comp["family_size"], comp["level"]) == (p_adjusted, family,
                                                                        ALPHA)
    step = ALPHA / family  # the planning figures' level; the interval is at the verdict's
    assert comp["signflip_ci"]["confidence"] == 1.0 - decided_level(ALPHA, P8, p_adjusted)
    assert comp["planning"]["level"] == step
    assert (comp["seeds_needed"] is None) == significant
    assert report["practical_verdict"] == ("helps" if significant else "inconclusive")
    assert comp["verdict"] == ("idea better (significant)" if significant
                               else "no significant win")
    assert comp["system_worked"] is significant


def test_decide_tests_a_look_at_its_own_level():
    report = paired_report(BASE8, IDEA8, looks=(8, 16))
    report = decided(report, 2 * P8, 2)
    comp = report["comparison"]
    assert comp["level"] == LEVEL_8_OF_16
    assert comp["planning"]["level"] == LEVEL_8_OF_16 / 2
    assert report["practical_verdict"] == "inconclusive"   # 2 * P8 = 0.03125 >= 0.0310
    assert comp["verdict"] == "no significant win" and comp["system_worked"] is False
    report = paired_report(BASE8, IDEA8, looks=(8, 16))
    report = decided(report, P8, 1)
    assert report["practical_verdict"] == "helps"          # 0.0156 < 0.0310


# ------------------------------------------------------------- margins and claim types
@pytest.mark.parametrize("family, practical", [
    (1, "helps"),            # two-sided p 0.0156 < 0.05
    (8, "non-inferior"),     # adjusted 0.125: not better; margin test p 1/256 < 0.05 / 8
    (16, "inconclusive"),    # 1/256 = 0.0039 >= 0.05 / 16 = 0.0031
])
def test_the_margin_test_runs_at_holms_first_step(family, practical):
    report = paired_report(BASE8, IDEA8, margin=0.05)
    report = decided(report, min(1.0, family * P8), family)
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
    report = decided(report, 1.0, 8)
    assert report["comparison"]["noninferiority"]["non_inferior"] is False
    assert report["practical_verdict"] == "inconclusive"


def equivalence_report(claim_type):
    idea = [b + (0.01 if s % 2 else -0.01) for s, b in enumerate(BASE8)]
    spec = make_spec(GRID[:1], 8, margin=0.05, claim_type=claim_type)
    runs = one_config_runs(BASE8, idea)
    return built(spec, TRACK, runs, [], alpha=ALPHA)


@pytest.mark.parametrize("claim_type, practical", [
    ("equivalence", "equivalent"), ("non-inferiority", "non-inferior"),
    ("superiority", "non-inferior"),
])
def test_an_equivalence_claim_is_judged_by_both_margin_tests(claim_type, practical):
    report = equivalence_report(claim_type)
    assert report["protocol"]["claim_type"] == claim_type
    report = decided(report, 1.0, 1)
    assert report["practical_verdict"] == practical
    assert ("equivalence" in report["comparison"]) is (claim_type == "equivalence")
    if claim_type == "equivalence":
        assert report["comparison"]["equivalence"]["p_value"] == 1 / 256
    assert report["comparison"]["verdict"] == "no significant win"
    assert report["comparison"]["system_worked"] is False


# ------------------------------------------------------------- the exact boundary
def exact_report(margin=None, n=8):
    """The second look of looks=(4, 8): the idea 0.04 worse on 3 seeds and 0.01 better on 5,
    inconclusive two-sided."""
    base = [round(1.0 + 0.1 * s, 2) for s in range(n)]
    idea = [round(b + (0.04 if s < 3 else -0.01), 2) for s, b in enumerate(base)]
    spec = make_spec(GRID[:1], n, margin=margin, looks=(4, 8), boundary="exact")
    runs = one_config_runs(base, idea)
    return built(spec, TRACK, runs, [], alpha=ALPHA)


UNION_LAST = paired.look_levels([4, 8], 8, ALPHA)[1]   # 0.0190, as for any two looks


def test_the_exact_boundary_sets_the_two_sided_level_and_the_union_one_the_margins():
    """At the second look the exact level is 0.05 (calibrated on these differences), the
    union-bound level 0.0190; the margin test (p 0.03125) runs at the union level."""
    report = exact_report(margin=0.025)
    report = decided(report, report["comparison"]["p_value"], 1)
    comp = report["comparison"]
    assert comp["level"] == 0.05 and comp["p_value"] == pytest.approx(0.390625)
    assert comp["noninferiority"]["p_value"] == pytest.approx(0.03125)
    assert comp["noninferiority"]["non_inferior"] is False     # 0.03125 >= 0.0190
    assert report["practical_verdict"] == "inconclusive"


@pytest.mark.slow
def test_the_exact_boundary_applies_to_a_single_comparison_only():
    report = exact_report()
    report = decided(report, 1e-9, 2)   # (a significant p: the level does not read it)
    assert report["comparison"]["level"] == UNION_LAST


def test_a_control_makes_the_exact_boundary_a_union_one():
    """One track, one control: two comparisons decide (the intersection-union test over the
    baseline and the control), and the exact boundary is calibrated for one, so the look is
    tested at the union-bound level, as for a family of two tracks; the exact level (0.05
    here) would make the control's comparison err above its share."""
    n = 8
    base = [round(1.0 + 0.1 * s, 2) for s in range(n)]
    idea = [round(b + (0.04 if s < 3 else -0.01), 2) for s, b in enumerate(base)]
    spec = make_spec(GRID[:1], n, looks=(4, 8), boundary="exact",
                     arms=["baseline", "idea", "control:c"])
    runs = one_config_runs(base, idea) + [make_run("control:c", GRID[0], s, b, b)
                                          for s, b in enumerate(base)]
    report = built(spec, TRACK, runs, [], alpha=ALPHA)
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["comparison"]["level"] == UNION_LAST


def test_the_seeds_needed_follow_the_adjusted_decision():
    """p 0.016 alone, 0.06 after the family's adjustment: inconclusive, so the report gives
    the seeds that would detect the effect; the same p adjusted to 0.03 helps, and a decided
    result needs none."""
    report = paired_report(BASE8, IDEA8)
    unsettled = decided(report, 0.06, 4)
    assert unsettled["practical_verdict"] == "inconclusive"
    assert unsettled["comparison"]["p_value"] == P8
    assert unsettled["comparison"]["seeds_needed"] is not None
    settled = decided(report, 0.03, 2)
    assert settled["practical_verdict"] == "helps"
    assert settled["comparison"]["seeds_needed"] is None


# ---------------------------------------------------------------------------- futility
def test_the_futility_stop_uses_the_last_looks_level_over_the_family():
    base = BASE8
    idea = [b + (0.05 if s % 2 else -0.04) for s, b in enumerate(base)]
    spec = make_spec(GRID[:1], 8, looks=(8, 16), futility=0.1)
    runs = one_config_runs(base, idea)
    report = built(spec, TRACK, runs, [], alpha=ALPHA)
    report = decided(report, 1.0, 2)
    assert report["practical_verdict"] == "inconclusive"
    fut = report["sequential"]["futility"]
    assert fut["last_level"] == UNION_LAST / 2
    assert fut["threshold"] == 0.1 and fut["stop"] is True and fut["conditional_power"] < 0.1
    assert any(w.startswith("futility: ") for w in report["warnings"])


# ------------------------------------------------------------------------------- alpha
@pytest.mark.parametrize("alpha", [0.1, 0.01])
def test_the_comparison_is_made_at_the_sessions_alpha(alpha):
    report = paired_report(BASE8, IDEA8, alpha=alpha)
    assert report["comparison"]["alpha"] == alpha == report["protocol"]["alpha"]
    assert report["comparison"]["mde"] == pytest.approx(
        paired.mde(report["comparison"]["per_seed_diffs"], alpha))


# ------------------------------------- decide at the level, and the reference-format fields
def test_the_fixture_p_value_is_what_the_tables_assume():
    report = paired_report(BASE8, IDEA8)
    assert report["comparison"]["p_value"] == pytest.approx(P8)


@pytest.mark.slow
@pytest.mark.parametrize("alpha, expected", [
    (math.nextafter(P8, 1.0), "helps"),   # level just above p: significant
    (P8, "inconclusive"),                # at the level: not (strict <)
    (math.nextafter(P8, 0.0), "inconclusive"),
])
def test_decide_at_the_level(alpha, expected):
    report = paired_report(BASE8, IDEA8, alpha=alpha)
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == expected


@pytest.mark.slow
def test_decide_uses_the_holm_adjusted_p_not_the_raw_one():
    report = paired_report(BASE8, IDEA8)
    p = report["comparison"]["p_value"]
    assert p < ALPHA
    adjusted = paired.holm([p, 0.9, 0.9])[0]   # 3 tracks: 3 * p = 0.047 < alpha still
    report = decided(report, adjusted, 3)
    assert report["practical_verdict"] == "helps"
    report = paired_report(BASE8, IDEA8)
    adjusted = paired.holm([p, p, p, p])[0]    # 4 tracks: 4 * p = 0.0625
    assert adjusted >= ALPHA
    report = decided(report, adjusted, 4)
    assert report["practical_verdict"] == "inconclusive"
    assert report["comparison"]["p_adjusted"] == adjusted


def test_reference_format_fields_follow_the_practical_verdict():
    report = paired_report(BASE8, IDEA8)
    report = decided(report, paired.holm([P8] * 4)[0], 4)
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
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == practical
    assert report["comparison"]["verdict"] == verdict
    assert report["comparison"]["system_worked"] is (practical == "helps")


def test_direction_higher_flips_helps_and_harms():
    report = paired_report(BASE8, IDEA8, direction="higher is better")
    report = decided(report, report["comparison"]["p_value"], 1)
    assert report["practical_verdict"] == "harms"
    assert report["comparison"]["idea_wins"] == 1


# ---------------------------- D7 (statistics audit): report warnings follow the session's alpha
@pytest.mark.parametrize("alpha, seeds, warned", [
    (0.01, 7, True),     # 2^-6 = 0.0156 >= 0.01: unreachable (before: no warning, as 7 >= 6)
    (0.01, 8, False),    # 2^-7 = 0.0078 < 0.01
    (0.05, 5, True), (0.05, 6, False),
    (0.3, 3, False),     # 2^-2 = 0.25 < 0.3 (before: warned, as 3 < 6)
    (0.2, 3, True),
])
def test_d7_the_unreachable_warning_follows_alpha(alpha, seeds, warned):
    assert (paired.min_p_value(seeds) >= alpha) == warned  # the table is the rule
    report = paired_report(BASE8[:seeds], IDEA8[:seeds], alpha=alpha)
    said = [w for w in report["warnings"] if "cannot reach" in w]
    assert bool(said) == warned, report["warnings"]
    if said:
        assert f"p < {alpha:g}" in said[0]


# ------------------------- D9 (statistics audit): reference fields follow the Holm verdict
@pytest.mark.parametrize("family, practical, verdict", [
    (4, "inconclusive", "no significant win"),       # 4 * 0.0156 >= 0.05
    (3, "helps", "idea better (significant)"),       # 3 * 0.0156 < 0.05
])
def test_d9_reference_fields_follow_the_holm_verdict(family, practical, verdict):
    report = paired_report(BASE8, IDEA8)
    report = decided(report, paired.holm([P8] * family)[0], family)
    assert report["practical_verdict"] == practical
    assert report["comparison"]["verdict"] == verdict
    assert report["comparison"]["system_worked"] is (practical == "helps")


# ------------------------------------------------------------------------ levels in words
def test_every_verdict_sentence_names_the_level():
    for family in (1, 4):
        report = paired_report(BASE8, IDEA8)
        report = decided(report, paired.holm([P8] * family)[0], family)
        md = render_summary_md(as_report(report))
        verdict_line = next(ln for ln in md.splitlines() if ln.startswith("- **practical"))
        assert "level 0.05" in verdict_line, verdict_line
        assert "symmetric about 0" in md
    why = gate_failure(as_report(report), "helps")
    assert "at level 0.05" in why
