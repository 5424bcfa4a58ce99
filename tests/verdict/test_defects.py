"""D6-D9 of the statistics audit, each reproduced on the smallest input that showed it.

D6: a non-finite *test* value made a config ineligible and so could change the selection.
D7: report warnings assumed alpha = 0.05.
D8: an incomplete track was dropped from the Holm family, making the others easier to pass.
D9: the reference-format ``comparison.verdict`` contradicted ``practical_verdict`` under Holm.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from benchkit.stats import paired as stats
from benchkit.plugin.aggregate import aggregate_session, gate_failure
from benchkit.verdict.build import build_report, decide
from benchkit.report.summary import render_summary_md
from builders import (ALPHA, BASE8, GRID, IDEA8, P8, TRACK, make_run, make_spec,
                        paired_report, runs_from)


# ------------------------------------------------------------------------------------ D6
def test_d6_a_non_finite_test_value_never_changes_the_selection():
    """cfg 0 is best on validation; one of its test values is NaN. Before: cfg 0 became
    ineligible and cfg 1 was selected (the test split chose). Now: cfg 0 stays selected and,
    since a paired test on NaN is impossible, the report is incomplete and says why."""
    n = 6
    table = {(arm, k): [(1.0 + k, 2.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 0)] = [(1.0, 2.0)] * (n - 1) + [(1.0, math.nan)]
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    sweep = report["baseline"]["sweep"]
    assert [s["eligible"] for s in sweep] == [True, True, True]
    assert sweep[0]["test_diverged_seeds"] == [n - 1] and sweep[0]["mean"] is None
    assert sweep[0]["val_mean"] == 1.0
    assert not report["complete"]
    assert any("selected on validation" in r and "seed(s) 5" in r
               for r in report["incomplete"]["reasons"])
    decide(report, None, 1)
    assert report["practical_verdict"] == "incomplete"


def test_d6_a_non_finite_test_value_off_the_selected_config_changes_nothing():
    n = 6
    table = {(arm, k): [(1.0 + k, 2.0 - 0.1 * (arm == "idea"))] * n
             for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 2)] = [(3.0, math.inf)] * n
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["complete"] and report["baseline"]["best_cfg"] == GRID[0]


def test_d6_a_non_finite_validation_value_still_makes_the_config_ineligible():
    n = 6
    table = {(arm, k): [(1.0 + k, 1.0)] * n for arm in ("baseline", "idea") for k in range(3)}
    table[("baseline", 0)] = [(1.0, 1.0)] * (n - 1) + [(math.nan, 1.0)]
    report = build_report(make_spec(GRID, n), TRACK, runs_from(table, GRID), [], alpha=ALPHA)
    assert report["baseline"]["best_cfg"] == GRID[1]
    assert report["baseline"]["sweep"][0]["diverged_seeds"] == [n - 1]


# ------------------------------------------------------------------------------------ D7
@pytest.mark.parametrize("alpha, seeds, warned", [
    (0.01, 7, True),     # 2^-6 = 0.0156 >= 0.01: unreachable (before: no warning, as 7 >= 6)
    (0.01, 8, False),    # 2^-7 = 0.0078 < 0.01
    (0.05, 5, True), (0.05, 6, False),
    (0.3, 3, False),     # 2^-2 = 0.25 < 0.3 (before: warned, as 3 < 6)
    (0.2, 3, True),
])
def test_d7_the_unreachable_warning_follows_alpha(alpha, seeds, warned):
    assert (stats.min_p_value(seeds) >= alpha) == warned  # the table is the rule
    report = paired_report(BASE8[:seeds], IDEA8[:seeds], alpha=alpha)
    said = [w for w in report["warnings"] if "cannot reach" in w]
    assert bool(said) == warned, report["warnings"]
    if said:
        assert f"p < {alpha:g}" in said[0]


# ------------------------------------------------------------------------------------ D8
def _payloads(spec, base, idea, tracks, missing_track=None):
    out = []
    for track in tracks:
        for arm, values in (("baseline", base), ("idea", idea)):
            for s, v in enumerate(values):
                if track == missing_track and arm == "idea" and s == 0:
                    continue
                r = make_run(arm, GRID[0], s, v, v)
                out.append({**r, "track": track, "spec": spec})
    return out


def test_d8_an_incomplete_track_stays_in_the_holm_family(tmp_path):
    """Two tracks, both with p = 4/256; one loses a run. Before: the complete track was
    adjusted over a family of 1 (p 0.0156 < 0.05, helps). Now: over 2, with the missing
    track at p = 1: 2 * 0.0156 = 0.03125 < 0.05 still helps, and with 4 tracks (3 missing)
    4 * 0.0156 = 0.0625: inconclusive."""
    tracks = ["tabular", "t2", "t3", "t4"]
    spec = make_spec(GRID[:1], 8)
    spec["tracks"] = tracks
    spec["grids"] = {t: [dict(GRID[0])] for t in tracks}
    spec["protocols"] = {t: {**spec["protocols"][TRACK], "track": t} for t in tracks}
    payloads = []
    for t in tracks:
        payloads += _payloads(spec, BASE8, IDEA8, [t], missing_track=None if t == TRACK else t)
    settings = SimpleNamespace(alpha=ALPHA, report_dir=tmp_path, gate="helps")
    written, failures = aggregate_session(payloads, settings)
    by_track = {r["track"]: r for _, r in written}
    comp = by_track[TRACK]["comparison"]
    assert comp["family_size"] == 4
    assert comp["p_adjusted"] == pytest.approx(4 * P8)
    assert by_track[TRACK]["practical_verdict"] == "inconclusive"
    assert len(failures) == 4


# ------------------------------------------------------------------------------------ D9
@pytest.mark.parametrize("family, practical, verdict", [
    (4, "inconclusive", "no significant win"),       # 4 * 0.0156 >= 0.05
    (3, "helps", "idea better (significant)"),       # 3 * 0.0156 < 0.05
])
def test_d9_reference_fields_follow_the_holm_verdict(family, practical, verdict):
    report = paired_report(BASE8, IDEA8)
    decide(report, stats.holm([P8] * family)[0], family)
    assert report["practical_verdict"] == practical
    assert report["comparison"]["verdict"] == verdict
    assert report["comparison"]["system_worked"] is (practical == "helps")


# ------------------------------------------------------------------------ levels in words
def test_every_verdict_sentence_names_the_level():
    for family in (1, 4):
        report = paired_report(BASE8, IDEA8)
        decide(report, stats.holm([P8] * family)[0], family)
        md = render_summary_md(report)
        verdict_line = next(ln for ln in md.splitlines() if ln.startswith("- **practical"))
        assert "level 0.05" in verdict_line, verdict_line
        assert "symmetric about 0" in md
    why = gate_failure(report, "helps")
    assert "at level 0.05" in why
