"""The terminal table and the warnings as people read them: the deciding comparison first, the
baseline's beside it, 120 columns at most, 3 significant digits, a next step in every warning."""
from __future__ import annotations

from builders import as_report

from pathlib import Path

from benchkit.report import advice, fmt, terminal


def comparison(delta, wins, p, mde, *, adjusted=None, harms=None, level=None):
    return {"delta_mean": delta, "idea_wins": wins, "n_pairs": 8, "p_value": p,
            "p_adjusted": adjusted, "p_adjusted_harms": harms, "alpha": 0.05, "level": level,
            "mde": mde}


def report(**kw):
    r = {"name": "task_visible_pruning_with_a_long_name", "track": "tabular",
         "practical_verdict": "harms", "system_verdict": "failed", "mechanism_ok": 0,
         "decided_by": "control:magnitude_shortcut", "exploratory": None, "warnings": [],
         "incomplete": None, "frontier": {"axis": "keep", "values": [0.125, 0.25, 0.5],
                                          "points": []},
         "comparison": comparison(-0.0712, 7, 0.0156, 0.0559, adjusted=0.03125, harms=0.0625),
         "controls": {"magnitude_shortcut": {"verdict": "harms", "comparison": comparison(
             0.014575, 2, 0.015625, 0.012694, adjusted=0.09375, harms=0.046875)}},
         "convergence": {"budget": "convergence", "threshold": 0.01}}
    return {**r, **kw}


def test_the_row_leads_with_the_control_that_decided_and_the_baseline_beside_it():
    row = dict(zip(terminal.COLUMNS, terminal.row(as_report(report()))))
    assert row["verdict"] == "harms/failed" and row["decided by"] == "magnitude_shortcut"
    assert (row["delta"], row["wins"], row["p"], row["MDE"]) == ("+0.0146", "2/8", "0.0469",
                                                                 "0.0127")
    # harms rests on Holm over every comparison (0.0469), not on the track's helps p (0.0938)
    assert row["vs baseline"] == "-0.0712, p 0.0312"   # no harm against the baseline: helps' p
    base = dict(zip(terminal.COLUMNS, terminal.row(as_report(report(decided_by="baseline")))))
    assert base["decided by"] == "baseline" and base["vs baseline"] == "-"
    assert base["delta"] == "-0.0712" and base["p"] == "0.0625"  # harms: p_adjusted_harms
    helps = dict(zip(terminal.COLUMNS, terminal.row(as_report(report(decided_by="baseline",
                                                           practical_verdict="helps")))))
    assert helps["p"] == "0.0312"
    sequential = report(decided_by="baseline", comparison=comparison(
        -0.07, 7, 0.0156, 0.05, level=0.0294))
    assert terminal.row(as_report(sequential))[6] == "0.0156 (level 0.0294)"


def test_the_table_fits_120_columns_and_says_where_the_reports_are():
    written = [(Path("/r/reports") / r["name"] / r["track"] / "bench_report.json", as_report(r))
               for r in (report(), report(name="x", exploratory={"reasons": ["r"]}),
                         report(name="gone", comparison=None, controls={}))]
    lines = terminal.render_summary(written, Path("/r"))
    table = lines[:5]
    assert max(map(len, table)) <= terminal.WIDTH
    assert table[2].startswith("task_vis") and table[2].split()[0].endswith("~")
    assert "harms/failed (exploratory)" in table[3] and "incomplete" in table[4]
    assert lines[5] == ("benchkit: reports in reports/<idea>/<track>/ (bench_report.json; "
                        "summary.md with every figure and the per-seed table; paired.png, "
                        "sweep.png)")
    assert any("a frontier over keep (0.125, 0.25, 0.5)" in ln and "mean over the points" in ln
               for ln in lines)


def test_numbers_for_people_have_three_significant_digits():
    assert fmt.readable("extends to lr=0.000333333333333 for both arms, lr=0.01") == \
        "extends to lr=3.33e-4 for both arms, lr=0.01"
    assert [fmt.sig(x) for x in (0.000333333333333, 0.0146, 1.0, 123456.0, 0.0, None)] == [
        "3.33e-4", "0.0146", "1", "1.23e+5", "0", "n/a"]
    assert fmt.sig(0.01458, sign=True) == "+0.0146" and fmt.sig(-4e-4) == "-4e-4"
    assert fmt.cfg_text({"lr": 1 / 3000, "keep": 0.25, "opt": "adam"}) == \
        "lr=3.33e-4, keep=0.25, opt='adam'"


IMPROVING = ("still improving: the {arm}'s selected config lr=0.01 gained {g}% on validation "
             "over the last quarter of training (median of 8 seeds; threshold 1%); the track's "
             "epochs are {kind}")


def test_still_improving_flags_become_one_warning_with_its_meaning_and_next_step():
    flags = [IMPROVING.format(arm=a, g=g, kind="meant to converge")
             for a, g in (("baseline", "5.9"), ("idea", "8.7"), ("control:m", "1.8"),
                          ("baseline", "1.0"))]
    lines = advice.warnings_for_people(as_report(report(warnings=flags + ["other"])))
    assert len(lines) == 2 and lines[1] == "other"
    assert "baseline 5.9%, idea 8.7%, m 1.8%" in lines[0]
    assert "a longer training could change the verdict" in lines[0]
    assert "run.fit(model, epochs=N)" in lines[0]
    fixed = advice.warnings_for_people(as_report(report(
        warnings=[IMPROVING.format(arm="idea", g="35.8", kind="a fixed budget")],
        convergence={"budget": "fixed", "threshold": 0.01})))
    assert "the verdict holds at that budget" in fixed[0]


def test_a_still_improving_flag_says_what_its_budget_check_found_or_that_it_is_pending():
    flag = [IMPROVING.format(arm="baseline", g="3.5", kind="meant to converge")]

    def conv(**check):
        return {"budget": "convergence", "threshold": 0.01, "arms": {"baseline": {
            "cfg": {"lr": 0.01}, "last_quarter_gain": 0.035, "seeds": 8, "still_improving": True,
            "budget_check": {"cfg": {"lr": 0.01}, "epochs": 36, "gain": None, "seeds": 0,
                             "pending": False, **check}}}}
    (pending,) = advice.warnings_for_people(as_report(report(warnings=flag,
                                                             convergence=conv(pending=True))))
    assert ("the budget check (each flagged arm's config at 36 epochs) settles it. Run the "
            "bench again") in pending and "run.fit(model, epochs=N)" not in pending
    (found,) = advice.warnings_for_people(as_report(report(
        warnings=flag, convergence=conv(gain=0.042, seeds=8))))
    assert "Trained longer (the budget check), it still gains: 4.2% at 36 epochs." in found
    assert "run.fit(model, epochs=N)" in found


def test_known_warnings_say_what_to_do():
    edge = advice.explain("the idea's selected config lr=0.01 is at the high edge of lr after "
                          "2 extension(s) (extend=2): a wider grid may tune it better")
    assert edge.endswith("widen grid= on that side or raise extend= in the bench mark.")
    seeds = advice.explain("only 4 seeds cannot reach p < 0.05 (the smallest possible "
                           "two-sided p is 0.125 with the sign-flip test); 6 seeds or more can")
    assert "can only be inconclusive" in seeds
    assert advice.explain("something new") == "something new"


EDGE = ("the {arm}'s selected config keep={k}-lr=0.005 is at the high edge of lr after 0 "
        "extension(s) (extend=0): a wider grid may tune it better")


def test_edge_warnings_become_one_and_a_smoke_run_is_told_they_are_expected():
    texts = [EDGE.format(arm=a, k=k) for k in (0.25, 0.5) for a in ("baseline", "control:m")]
    (line,) = advice.warnings_for_people(as_report(report(warnings=texts)))
    assert line.startswith("selected at the high edge of lr after 0 extension(s) (extend=0): "
                           "baseline, m (at keep=0.25-lr=0.005, keep=0.5-lr=0.005)")
    assert line.endswith("raise extend= in the bench mark.")
    smoke = report(warnings=texts + ["only 2 seeds cannot reach p < 0.05"],
                   exploratory={"reasons": ["--bench-epochs 1 overrides the module's plan"]})
    edge, seeds = advice.warnings_for_people(as_report(smoke))
    assert "expected in a smoke run" in edge and "Expected in a smoke run" in seeds
