"""One vocabulary across outputs (issue 44 item 2): mechanism_ok as the JSON writes it, a
system verdict of `failed` that only means missing evidence shown as "not shown" (and
explained where the reference format fixes the word), a budget check's loss called worse, and
the reference format's comparison words explained beside the verdict."""
from __future__ import annotations

from benchkit.report import terminal
from benchkit.report.summary import render_summary_md
from builders import decided, BASE8, paired_report, as_report

MIXED = [b + d for b, d in zip(BASE8, [0.01, -0.02, 0.015, -0.01, 0.02, -0.015, 0.005, -0.004])]


def inconclusive_report() -> dict:
    report = paired_report(BASE8, MIXED)
    report = decided(report, report["comparison"]["p_value"], 1)
    assert (report["practical_verdict"], report["system_verdict"], report["mechanism_ok"]) == (
        "inconclusive", "failed", None)
    return report


def test_missing_evidence_reads_not_shown_and_mechanism_ok_null_everywhere():
    report = inconclusive_report()
    row = dict(zip(terminal.COLUMNS, terminal.row(as_report(report))))
    assert row["verdict"] == "inconclusive/not shown" and row["mech"] == "null"
    md = render_summary_md(as_report(report))
    assert "**system: failed**" in md and "here it means not shown" in md
    assert "**mechanism_ok: null**" in md and "none" not in md.split("## Protocol")[0]


def test_a_failed_system_verdict_on_evidence_keeps_its_word():
    report = inconclusive_report()
    report["mechanism_ok"] = 0  # a signature measured and not confirmed: evidence against
    row = dict(zip(terminal.COLUMNS, terminal.row(as_report(report))))
    assert row["verdict"] == "inconclusive/failed"
    assert "here it means not shown" not in render_summary_md(as_report(report))


def test_the_reference_words_are_explained_beside_the_verdict():
    md = render_summary_md(as_report(inconclusive_report()))
    assert ('`comparison.verdict` "no significant win" is the reference format\'s words for the '
            "verdict against the baseline") in md


def test_a_budget_check_that_ends_worse_says_worse():
    report = inconclusive_report()
    report["convergence"] = {"budget": "convergence", "budget_reason": "", "threshold": 0.01,
                             "arms": {"idea": {
                                 "cfg": {"lr": 0.01}, "last_quarter_gain": 0.0, "seeds": 8,
                                 "still_improving": False, "budget_check": {
                                     "cfg": {"lr": 0.01}, "epochs": 180, "gain": -0.0695,
                                     "seeds": 8, "pending": False}}}}
    md = render_summary_md(as_report(report))
    assert "idea at 180 epochs 6.95% worse (median of 8 seeds): trained out" in md
    assert "-6.95% better" not in md
