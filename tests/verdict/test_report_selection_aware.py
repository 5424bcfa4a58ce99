"""Reports decide by the selection-aware test (benchkit.stats.selection through
benchkit.verdict.build): a tuning accident is not a verdict, the per-seed numbers stay those of
the selected configs, every control is tested the same way, and the margin tests hold on a
negative, higher-is-better metric. In process, hand-made runs, no training.
"""
from __future__ import annotations

import re

import numpy as np

from benchkit.stats import selection
from benchkit.verdict import sweeps
from benchkit.verdict.records import Report
from builders import ALPHA, GRID, TRACK, built, decided, make_run, make_spec, paired_report

N = 8


def accident_runs(arms=("baseline", "idea")):
    """The same method in every arm (test 1.0 at lr 0.001, 1.1 at 0.003); validation, noisy,
    sends the baseline to the worse config on every seed and the others to the better one."""
    runs = []
    for arm in arms:
        for s in range(N):
            for k, test in enumerate((1.0, 1.1)):
                val = (1.0, 0.99)[k] if arm == "baseline" else (1.0, 1.01)[k]
                runs.append(make_run(arm, GRID[k], s, val, test + 0.01 * s
                                     + (0.001 * s if arm != "baseline" else 0.0)))
    return runs




def test_a_tuning_accident_is_no_verdict():
    report = decided(built(make_spec(GRID[:2], N), TRACK, accident_runs(), [],
                                  alpha=ALPHA), holm=True)
    comp = report["comparison"]
    assert report["baseline"]["best_cfg"] == GRID[1] and report["idea_config"] == GRID[0]
    # the binding test: the idea (config 0 on every seed, chosen on the other seeds) against
    # the baseline's config 0, the one its validation missed; no better there
    assert comp["per_seed_diffs"] == [(1.0 + 0.011 * s) - (1.0 + 0.01 * s) for s in range(N)]
    assert comp["p_fixed_configs"] == 2 / 256 and comp["selection_aware"] is True
    assert comp["p_value"] == 1.0 and report["practical_verdict"] == "inconclusive"
    lo, hi = comp["signflip_ci"]["lo"], comp["signflip_ci"]["hi"]
    assert lo <= 0 <= hi  # the interval agrees with the test that decides, not the fixed one


def test_every_control_is_tested_with_its_selection():
    spec = make_spec(GRID[:2], N, arms=["baseline", "idea", "control:c"])
    report = decided(built(spec, TRACK, accident_runs(("baseline", "idea", "control:c")),
                                  [], alpha=ALPHA), holm=True)
    control = report["controls"]["c"]["comparison"]
    sw = sweeps.of_record(Report.from_json(report), "control:c")
    assert control["selection_aware"] is True
    assert control["p_value"] == selection.p_value(sw, "lower")
    assert report["comparison"]["p_value"] == selection.p_value(
        sweeps.of_record(Report.from_json(report)), "lower")


def test_with_one_config_the_report_decides_as_before():
    base = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]
    idea = [b - 0.5 for b in base[:7]] + [base[7] + 0.05]
    comp = decided(paired_report(base, idea), holm=True)["comparison"]
    assert comp["p_value"] == comp["p_fixed_configs"] == 4 / 256


def test_margins_on_a_negative_higher_is_better_metric():
    """A log-likelihood around -2: an idea 1% worse against a 5% margin is non-inferior (not
    'harms', as `margin * b` in place of `margin * |b|` would make it), one 10% worse is not."""
    rng = np.random.default_rng(4)
    base = list(-2.0 + rng.normal(0, 0.01, N))
    for worse, verdict in ((0.01, "non-inferior"), (0.10, "harms")):
        idea = [b - worse * abs(b) + float(rng.normal(0, 0.002)) for b in base]
        report = decided(paired_report(base, idea, direction="higher is better", margin=0.05),
                         holm=True)
        ni = report["comparison"]["noninferiority"]
        assert report["practical_verdict"] == verdict
        assert ni["non_inferior"] is (verdict == "non-inferior")
        assert ni["non_inferior"] is (ni["margin_rel"] > ni["bound_rel"])
        if verdict == "non-inferior":  # a lower bound on idea - baseline: within the margin
            assert ni["bound"] > -ni["margin_abs"]
        else:
            assert ni["bound"] is None or ni["bound"] <= -ni["margin_abs"]


def test_a_margin_below_what_the_seeds_resolve_is_warned():
    """Noisy differences (sd about 40% of the metric): a 10% margin would be shown for an
    identical arm well under 80% of the time at 8 seeds; a 2% margin on quiet differences is
    resolved, with no warning."""
    rng = np.random.default_rng(6)
    base = list(1.0 + rng.normal(0, 0.05, N))
    noisy = [b + float(rng.normal(0, 0.4)) for b in base]
    report = decided(paired_report(base, noisy, margin=0.1), holm=True)
    warned = [w for w in report["warnings"] if "below what 8 seeds resolve" in w]
    assert len(warned) == 1 and "shown non-inferior with probability about" in warned[0]
    assert "the margin 10.0% (" in warned[0]
    assert re.search(r"80% needs a margin of about \d+\.\d% of the comparator's mean",
                     warned[0]), warned[0]
    quiet = [b + float(rng.normal(0, 0.001)) for b in base]
    report = decided(paired_report(base, quiet, margin=0.02), holm=True)
    assert report["practical_verdict"] == "non-inferior"
    assert not [w for w in report["warnings"] if "seeds resolve" in w]


def test_the_leaderboard_tests_an_idea_as_its_report_does():
    from pathlib import Path

    from benchkit.verdict import leaderboard

    report = decided(built(make_spec(GRID[:2], N), TRACK, accident_runs(), [],
                                  alpha=ALPHA), holm=True)
    entry = leaderboard.Entry("accident", Path("r.json"), Report.from_json(report))
    entry.seeds = list(range(N))
    p, (lo, hi) = leaderboard.idea_p(entry), leaderboard.idea_interval(entry, 0.05)
    assert p == report["comparison"]["p_value"] != report["comparison"]["p_fixed_configs"]
    assert lo <= 0 <= hi


def test_a_wilcoxon_bench_decides_by_the_signed_rank_test():
    from benchkit.stats import signtest
    from builders import make_run, runs_from  # noqa: F401

    spec = make_spec(GRID[:2], N, test="wilcoxon")
    report = decided(built(spec, TRACK, accident_runs(), [], alpha=ALPHA), holm=True)
    comp = report["comparison"]
    assert comp["test"] == "wilcoxon" and report["protocol"]["test"] == signtest.WILCOXON_NAME
    assert comp["p_value"] == selection.p_value(sweeps.of_record(Report.from_json(report)), "lower",
                                                statistic="wilcoxon")
    assert comp["p_mean"] == selection.p_value(sweeps.of_record(Report.from_json(report)), "lower")
    assert report["practical_verdict"] == "inconclusive"
