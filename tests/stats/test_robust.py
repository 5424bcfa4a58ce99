"""test="sign": the exact sign test decides, robust to a rare catastrophic seed."""
from __future__ import annotations

import pytest
from scipy import stats as sps

from benchkit.stats import signtest
from benchkit.spec import arguments
from benchkit.spec import SpecError
from builders import GRID, TRACK, as_report, built, decided, make_run, make_spec
from idea_modules import arm, idea_module


@pytest.mark.parametrize("diffs", [
    [-1, -2, -3, -4, -5, -6, -7, -8, -9, 100],   # 9 wins, 1 catastrophic loss
    [-1, 2, -3, 4, -5, 6], [1.0] * 6, [-1, -1, 0, 0, -1, -1, -1, -1], [0.5, -0.5, 0.2],
])
def test_sign_test_p_is_the_exact_binomial_test(diffs):
    pos, neg = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    expected = sps.binomtest(pos, pos + neg, 0.5).pvalue
    assert signtest.sign_test_p(diffs) == pytest.approx(expected, rel=1e-12)


def test_no_nonzero_difference_gives_p_1():
    assert signtest.sign_test_p([0.0, 0.0, 0.0]) == 1.0


def _report(test, base, idea):
    grid = GRID[:1]
    runs = [make_run("baseline", grid[0], s, b, b) for s, b in enumerate(base)]
    runs += [make_run("idea", grid[0], s, i, i) for s, i in enumerate(idea)]
    spec = make_spec(grid, len(base), test=test)
    report = built(spec, TRACK, runs, [], alpha=0.05)
    return decided(report, report["comparison"]["p_value"], 1)


@pytest.mark.slow
def test_a_catastrophic_seed_sinks_the_mean_test_not_the_sign_test():
    """10 seeds: the idea is better by 0.1 on 9 and diverges to +50 on one (lower is better)."""
    base = [1.0 + 0.01 * s for s in range(10)]
    idea = [b - 0.1 for b in base[:9]] + [base[9] + 50.0]
    mean, sign = _report("mean", base, idea), _report("sign", base, idea)
    assert mean["practical_verdict"] == "inconclusive"
    assert sign["practical_verdict"] == "helps"
    comp = sign["comparison"]
    assert comp["test"] == "sign" and comp["p_value"] == pytest.approx(22 / 1024)
    assert comp["p_mean"] == mean["comparison"]["p_value"] > 0.05
    assert comp["median_delta"] == pytest.approx(-0.1)
    assert "sign test" in sign["protocol"]["test"] and "median" in sign["protocol"]["test"]
    assert "sign-flip" in mean["protocol"]["test"] and mean["comparison"]["test"] == "mean"


@pytest.mark.parametrize("n,level,k", [(10, 0.05, 2), (10, 0.01, 1), (20, 0.05, 6), (6, 0.05, 1)])
def test_the_sign_interval_is_the_textbook_order_statistic_interval(n, level, k):
    """Distinct values: [d_(k), d_(n+1-k)] with k the largest count whose two-sided binomial
    tail stays below level (n=10, 0.05: d_(2)..d_(9); n=6, 0.05: d_(1)..d_(6))."""
    d = [float(3 * j % (2 * n + 1) - n) / 7 for j in range(1, n + 1)]  # distinct, shuffled
    s = sorted(d)
    assert signtest.sign_test_ci(d, level) == [s[k - 1], s[n - k]]


def test_the_sign_interval_is_unbounded_when_no_p_can_reach_the_level():
    assert signtest.sign_test_ci([1.0, 2.0, 3.0, 4.0, 5.0], 0.05) == [None, None]  # min p 1/16
    assert signtest.sign_test_ci([0.0, 0.0, 1.0], 0.05) == [None, None]


def test_the_sign_interval_excludes_0_exactly_when_the_sign_test_rejects():
    """Ties and exact zeros included (rounded draws): 0 in [lo, hi] <=> p >= level."""
    import numpy as np

    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(600):
        n = int(rng.integers(1, 14))
        d = np.round(rng.normal(rng.normal(0, 1), 1, n), int(rng.integers(0, 2)))
        level = float(rng.choice([0.01, 0.025, 0.05, 0.1]))
        lo, hi = signtest.sign_test_ci(d, level)
        inside = (lo is None or lo <= 0) and (hi is None or 0 <= hi)
        assert inside == (signtest.sign_test_p(d) >= level), (d.tolist(), level, lo, hi)
        checked += signtest.sign_test_p(d) < level
    assert checked > 50  # both sides of the rule were exercised


def test_an_end_open_at_exactly_0_is_moved_off_it():
    """[0, 1..6]: at 0 the zero drops out and six wins give p 1/32 < 0.05; just above 0 the
    split is 1 vs 6, p 0.125, accepted. The reported lower end is the float above 0, not 0."""
    d = [0.0] + [float(j) for j in range(1, 7)]
    assert signtest.sign_test_p(d) == pytest.approx(1 / 32)
    lo, hi = signtest.sign_test_ci(d, 0.05)
    assert 0.0 < lo < 1e-300 and hi == 6.0


def test_the_report_and_summary_carry_the_sign_interval_only_under_the_sign_test():
    from benchkit.report.summary import render_summary_md as render_summary

    base = [1.0 + 0.01 * s for s in range(10)]
    idea = [b - 0.1 - 0.01 * s for s, b in enumerate(base)]
    sign, mean = _report("sign", base, idea), _report("mean", base, idea)
    ci = sign["comparison"]["sign_ci"]
    assert ci["confidence"] == pytest.approx(0.95)
    assert [ci["lo"], ci["hi"]] == pytest.approx([-0.18, -0.11])   # d_(2), d_(9)
    assert "sign_ci" not in mean["comparison"]
    text = render_summary(as_report(sign))
    assert "95% interval of the median difference (idea - baseline): [-0.18, -0.11]; it " \
           "inverts the sign test at the level the verdict was decided at (0.05)" in text
    assert "two-sided exact sign test" in text and "sign-flip permutation test;" not in text
    assert "sign test" not in render_summary(as_report(mean))


def test_the_test_is_validated():
    with pytest.raises(SpecError, match="test='median'; valid: 'mean' .*'sign' .* or 'wilcoxon'"):
        arguments.parse_test({"test": "median"}, "m.py")
    assert arguments.parse_test({}, "m.py") == "mean"
    assert arguments.parse_test({"test": "wilcoxon"}, "m.py") == "wilcoxon"


def rb_module(test: str = "sign") -> str:
    """An untrained idea (lr 1e-6) decided by ``test``."""
    return idea_module("rb", arm("baseline"), arm("idea", "run.fit(run.track.model(), lr=1e-6)"),
                       grid={"lr": [1e-2], "epochs": [1]}, seeds=6, test=test)


def test_sign_test_through_the_plugin(pytester):
    from sessions import validate_report

    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rb=rb_module())
    result = pytester.runpytest()
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = validate_report(pytester.path / "reports/rb/tabular/bench_report.json")
    comp = report["comparison"]
    assert comp["test"] == "sign" and comp["p_value"] == signtest.sign_test_p(
        comp["per_seed_diffs"])
    assert report["practical_verdict"] == "harms"   # an untrained idea: worse on all 6 seeds
    summary = (pytester.path / "reports/rb/tabular/summary.md").read_text()
    assert "sign-test p = 0.0312 < level 0.05" in summary
    bad = pytester.makepyfile(test_rb=rb_module(test="median"))
    assert bad.exists()
    result = pytester.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*test='median'; valid: 'mean'*"])
    assert "Traceback" not in result.stdout.str()
