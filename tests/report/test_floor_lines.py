"""summary.md's Floors section: the floors, and how far the baseline is from the best one in
the metric's direction."""
from __future__ import annotations

from pathlib import Path

from benchkit.report.summary import floor_lines
from benchkit.report.terminal import render_summary
from builders import make_report, as_report


def report(direction: str, base: float, floors: dict) -> dict:
    return {"metric_direction": f"{direction} is better", "floors": floors,
            "baseline": {"full": {"mean": base}}}


def test_higher_is_better_names_the_best_floor_and_the_gap():
    lines = floor_lines(as_report(report("higher", 0.66, {"logistic_regression": 0.32,
                                                          "chance": 0.1})))
    assert lines[0] == "## Floors"
    assert "logistic_regression 0.32, chance 0.1" in lines[2]
    assert lines[3] == ("- the baseline (0.66) is 106% better than the best floor, "
                        "logistic_regression (0.32)")


def test_lower_is_better_and_a_baseline_worse_than_its_floor():
    lines = floor_lines(as_report(report("lower", 3.53, {"unigram": 4.67, "trigram": 2.70})))
    assert lines[3] == "- the baseline (3.53) is 30.7% worse than the best floor, trigram (2.7)"


def test_no_floors_no_section():
    assert floor_lines(as_report(report("lower", 1.0, {}))) == []
    assert floor_lines(as_report({"metric_direction": "lower is better"})) == []


def test_a_limit_is_listed_but_is_not_the_best_floor():
    """A floor named "limit: ..." (a model no learner has, e.g. a filter that knows the true
    equations) is reported but the baseline is measured against the best real floor."""
    lines = floor_lines(as_report(report("lower", 0.07, {"window MLP": 0.08,
                                               "limit: ensemble Kalman filter": 0.035})))
    assert "limit: ensemble Kalman filter 0.035" in lines[2]
    assert lines[3] == ("- the baseline (0.07) is 12.5% better than the best floor, "
                        "window MLP (0.08)")


def test_a_baseline_no_better_than_its_best_floor_gets_a_terminal_line():
    """Issue 50: said only in summary.md, so an own track whose trained baseline loses to a
    mean predictor went unnoticed in the terminal; a baseline that beats it gets no line."""
    below = make_report(effect=-0.3)
    base = below["baseline"]["full"]["mean"]
    below["floors"] = {"mean_predictor": round(base / 2, 3), "limit: oracle": 0.0}
    lines = render_summary([(Path("r/fake_idea/tabular/bench_report.json"), as_report(below))],
                           Path("."))
    warned = [line for line in lines if "best floor" in line]
    assert warned == [f"benchkit: WARNING fake_idea tabular: the baseline's test mean 1.09 is no "
                      f"better than the track's best floor, mean_predictor ({round(base / 2, 3)})"
                      ": a trained baseline should beat it; tune the baseline or the track "
                      "(summary.md, Floors)"]
    above = {**below, "floors": {"mean_predictor": base * 2}}
    lines = render_summary([(Path("r/fake_idea/tabular/bench_report.json"), as_report(above))],
                           Path("."))
    assert not any("best floor" in line for line in lines)


def test_a_frontier_leaves_its_floors_out_of_the_summary_and_the_terminal():
    """A frontier's figures are means over points at other budgets (a pruned model, a smaller
    one), not one model trained at the track's protocol: no gap to the floors, and no terminal
    line calling its baseline weaker than a floor."""
    from benchkit.report.terminal import notes

    framed = {**report("lower", 3.0, {"kernel ridge": 0.5}), "name": "p", "track": "tabular",
              "frontier": {"axis": "macs", "values": [0.9, 0.8], "points": []},
              "comparison": None}
    lines = floor_lines(as_report(framed))
    assert lines[0] == "## Floors" and "left out" in lines[2] and "`macs`" in lines[2]
    assert not any("kernel ridge" in line for line in lines)
    assert not any("best floor" in line for line in notes(as_report(framed)))
    assert any("best floor" in line for line in notes(as_report({**framed, "frontier": None})))
