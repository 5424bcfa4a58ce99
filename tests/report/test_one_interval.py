"""One interval per comparison (issue 41 item 4): ``comparison.ci95`` is the deciding test's own
interval at the level the verdict was decided at, the same numbers summary.md and paired.png
show, and it excludes 0 exactly when the verdict is significant, at every Holm step."""
from __future__ import annotations

import pytest

from benchkit.report import plots
from benchkit.report.summary import render_summary_md
from benchkit.verdict.decision import decided_level
from builders import decided, ALPHA, BASE8, IDEA8, P8, paired_report, as_report


@pytest.mark.parametrize("p_adjusted", [
    P8,               # one track, or Holm's last step: tested at alpha itself
    2 * P8,           # Holm's first step of two
    0.049, 0.051,     # just inside and outside alpha (an earlier step's larger p carried over)
    3 * P8 + 1e-12,   # Holm's first of three: just not significant at 0.05 (3 * 4/256 > 0.0468)
    1.0,
])
def test_the_interval_excludes_zero_exactly_when_the_verdict_is_significant(p_adjusted):
    report = paired_report(BASE8, IDEA8)
    report = decided(report, p_adjusted, 3)
    comp = report["comparison"]
    level = ALPHA * P8 / p_adjusted if p_adjusted > P8 else ALPHA
    assert comp["signflip_ci"]["confidence"] == pytest.approx(1 - level, rel=1e-12)
    assert comp["ci95"] == [comp["signflip_ci"]["lo"], comp["signflip_ci"]["hi"]]
    lo, hi = comp["ci95"]
    excludes_zero = (lo is not None and lo > 0) or (hi is not None and hi < 0)
    assert excludes_zero == (p_adjusted < ALPHA)
    assert (report["practical_verdict"] == "helps") == (p_adjusted < ALPHA)


def test_the_decided_level_is_holms_step_level():
    assert decided_level(0.05, 0.01, 0.01) == 0.05          # one track
    assert decided_level(0.05, 0.01, 0.03) == pytest.approx(0.05 / 3)   # first of three
    assert decided_level(0.05, 0.02, 0.04) == pytest.approx(0.05 / 2)   # second of three
    assert decided_level(0.05, 0.01, None) == 0.05


def test_summary_and_plot_show_the_same_one_interval():
    report = paired_report(BASE8, IDEA8)
    report = decided(report, 2 * P8, 2)
    comp = report["comparison"]
    lo, hi = comp["ci95"]
    md = render_summary_md(as_report(report))
    assert f"[{lo:+.4g}, {hi:+.4g}]" in md
    assert "paired t" not in md.split("## Comparison")[1].split("- MDE")[0]  # no t interval
    assert plots.interval_of(as_report(report).comparison)[0] == [lo, hi]

