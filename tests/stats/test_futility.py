"""futility=: a non-binding stop at a look before the last, on the conditional power."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from benchkit.stats import futility, paired
from benchkit.spec import SpecError
from builders import GRID, TRACK, as_report, built, decided, make_run, make_spec, parse
from idea_modules import arm, idea_module


# ------------------------------------------------------------------------------ the marker

@pytest.mark.parametrize("value", [0.001, 0.1, 0.5, 0.999])
def test_a_threshold_in_0_1_with_looks_is_accepted(value):
    assert parse(looks=(8, 16), futility=value).futility == value
    assert parse(max_seeds=16, seeds=8, futility=value).futility == value


@pytest.mark.parametrize("kwargs, message", [
    ({"looks": (8, 16), "futility": 0}, "futility=0; valid: a conditional power in (0, 1)"),
    ({"looks": (8, 16), "futility": 1}, "futility=1; valid"),
    ({"looks": (8, 16), "futility": -0.1}, "futility=-0.1; valid"),
    ({"looks": (8, 16), "futility": True}, "futility=True; valid"),
    ({"looks": (8, 16), "futility": "0.1"}, "futility='0.1'; valid"),
    ({"looks": (8, 16), "futility": math.nan}, "futility=nan; valid"),
    ({"seeds": 8, "futility": 0.1}, "needs looks to stop at; declare looks=(8, 16)"),
    ({"looks": (8, 16), "futility": 0.1, "claim_type": "non-inferiority", "margin": 0.05},
     "superiority claims only"),
])
def test_a_wrong_threshold_or_plan_is_refused_with_what_is_valid(kwargs, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(**kwargs)


def test_none_declared_is_none_and_absent_from_the_report():
    assert parse(looks=(8, 16)).futility is None
    report = _look(8, [-0.01] * 4 + [0.01] * 4, threshold=None)
    assert report["sequential"]["futility"] is None


# ------------------------------------------------------------------- conditional power

def test_conditional_power_is_the_b_value_formula():
    """Half way (t = 1/2) with z = 1: CP = 1 - Phi((z_a - z/sqrt(t)) / sqrt(1 - t))."""
    z_a = sps.norm.ppf(1 - 0.05 / 2)
    expected = 1 - sps.norm.cdf((z_a - 1 / math.sqrt(0.5)) / math.sqrt(0.5))
    assert futility.conditional_power(1.0, 8, 16, 0.05) == pytest.approx(expected, rel=1e-9)
    assert futility.conditional_power(math.inf, 8, 16, 0.05) == 1.0
    assert futility.conditional_power(-math.inf, 8, 16, 0.05) == 0.0
    powers = [futility.conditional_power(z, 8, 16, 0.05) for z in (-1, 0, 1, 2, 3)]
    assert powers == sorted(powers) and powers[0] < 0.01 < 0.9 < powers[-1]
    with pytest.raises(ValueError, match="0 < n < n_last"):
        futility.conditional_power(1.0, 16, 16, 0.05)


def test_conditional_power_matches_a_simulated_continuation():
    """Known sd: the first 8 seeds are observed, the next 8 drawn at the observed mean; the
    share of continuations whose 16-seed z-test rejects towards the idea is the CP."""
    rng = np.random.default_rng(3)
    n, n_last, level, sd = 8, 16, 0.05, 1.0
    for observed_mean in (0.2, 0.5, 0.8):
        z = observed_mean / (sd / math.sqrt(n))
        rest = rng.normal(observed_mean, sd, (40000, n_last - n)).sum(axis=1)
        z_last = (n * observed_mean + rest) / n_last / (sd / math.sqrt(n_last))
        simulated = float(np.mean(z_last > sps.norm.ppf(1 - level / 2)))
        assert futility.conditional_power(z, n, n_last, level) == pytest.approx(
            simulated, abs=4 * math.sqrt(0.25 / 40000))


@pytest.mark.parametrize("diffs, direction, test, z", [
    ([-1.0, -2.0, -3.0], "lower", "mean", 2.0 / (1.0 / math.sqrt(3))),
    ([1.0, 2.0, 3.0], "higher", "mean", 2.0 / (1.0 / math.sqrt(3))),
    ([1.0, 2.0, 3.0], "lower", "mean", -2.0 / (1.0 / math.sqrt(3))),
    ([-0.5, -0.5], "lower", "mean", math.inf),
    ([0.0, 0.0], "lower", "mean", 0.0),
    ([-1.0, -1.0, -1.0, 5.0, 0.0], "lower", "sign", 2 / 2.0),   # 3 wins, 1 loss, 1 tie
    ([0.0, 0.0], "lower", "sign", 0.0),
])
def test_the_improvement_is_positive_when_the_idea_is_better(diffs, direction, test, z):
    assert futility.improvement_z(diffs, direction, test) == pytest.approx(z)


# -------------------------------------------------------------------------- the report

def _look(n, diffs, *, threshold=0.1, looks=(8, 16), base=None):
    grid = GRID[:1]
    base = base or [1.0 + 0.1 * s for s in range(n)]
    runs = [make_run("baseline", grid[0], s, b, b) for s, b in enumerate(base)]
    runs += [make_run("idea", grid[0], s, b + d, b + d)
             for s, (b, d) in enumerate(zip(base, diffs))]
    spec = make_spec(grid, n, looks=looks, futility=threshold)
    report = built(spec, TRACK, runs, [], alpha=0.05)
    return decided(report, report["comparison"]["p_value"], 1)


def test_no_trend_at_the_first_look_recommends_stopping():
    report = _look(8, [-0.01, 0.01, -0.02, 0.02, 0.01, -0.01, 0.015, -0.012])
    fut = report["sequential"]["futility"]
    assert report["practical_verdict"] == "inconclusive"        # the verdict is unchanged
    assert fut["stop"] is True and fut["conditional_power"] < 0.1
    assert fut["last_level"] == pytest.approx(paired.look_levels([8, 16], 16, 0.05)[1])
    assert any(w.startswith("futility: ") and "stopping here is recommended" in w
               for w in report["warnings"])
    from benchkit.report.summary import render_summary_md

    assert (f"- futility (non-binding, futility=0.1): the last look (16 seeds) finds the idea "
            f"better with probability {fut['conditional_power']:.3g} if the effect so far is the "
            "true one: stop") in render_summary_md(as_report(report))


def test_the_pipeline_assesses_the_declared_futility_record():
    """The decision fills the declared stop's record in (the report's sequential section is a
    record until Report.to_json): the same figures the report's JSON gives."""
    from benchkit.verdict import pipeline
    from benchkit.verdict.plan import Futility

    diffs = [-0.01, 0.01, -0.02, 0.02, 0.01, -0.01, 0.015, -0.012]
    base = [1.0 + 0.1 * s for s in range(8)]
    runs = [make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(base)]
    runs += [make_run("idea", GRID[0], s, b + d, b + d)
             for s, (b, d) in enumerate(zip(base, diffs))]
    (report,) = pipeline.idea_reports(make_spec(GRID[:1], 8, looks=(8, 16), futility=0.1), runs,
                                      [], alpha=0.05)
    advice = report.sequential.futility
    assert isinstance(advice, Futility) and advice.threshold == 0.1 and advice.stop is True
    assert advice.to_json() == _look(8, diffs)["sequential"]["futility"]


def test_a_promising_trend_does_not_stop():
    """Better on 6 of 8 seeds, p above the first look's level: keep going."""
    diffs = [-0.3, -0.2, -0.4, 0.1, -0.25, -0.35, 0.05, -0.3]
    report = _look(8, diffs)
    fut = report["sequential"]["futility"]
    assert report["practical_verdict"] == "inconclusive"
    assert fut["stop"] is False and fut["conditional_power"] >= 0.1
    assert not any(w.startswith("futility") for w in report["warnings"])
    from benchkit.report.summary import render_summary_md

    assert "true one: continue" in render_summary_md(as_report(report))


def test_the_threshold_decides_at_the_boundary():
    diffs = [-0.3, -0.2, -0.4, 0.1, -0.25, -0.35, 0.05, -0.3]
    power = _look(8, diffs)["sequential"]["futility"]["conditional_power"]
    assert _look(8, diffs, threshold=power)["sequential"]["futility"]["stop"] is False
    assert _look(8, diffs, threshold=math.nextafter(power, 1))["sequential"]["futility"]["stop"]


def test_higher_is_better_is_mirrored():
    diffs = [0.3, 0.2, 0.4, -0.1, 0.25, 0.35, -0.05, 0.3]
    grid = GRID[:1]
    base = [1.0 + 0.1 * s for s in range(8)]
    runs = [make_run("baseline", grid[0], s, -b, b) for s, b in enumerate(base)]
    runs += [make_run("idea", grid[0], s, -(b + d), b + d)
             for s, (b, d) in enumerate(zip(base, diffs))]
    spec = make_spec(grid, 8, looks=(8, 16), direction="higher is better", futility=0.1)
    report = built(spec, TRACK, runs, [], alpha=0.05)
    report = decided(report, report["comparison"]["p_value"], 1)
    lower = _look(8, [-d for d in diffs])
    assert report["sequential"]["futility"]["conditional_power"] == pytest.approx(
        lower["sequential"]["futility"]["conditional_power"])
    assert report["sequential"]["futility"]["stop"] is False


@pytest.mark.parametrize("n, looks, diffs", [
    (16, (8, 16), [-0.01, 0.01] * 8),              # the last look: nothing left to stop
    (8, (8, 16), [-0.5 - 0.01 * s for s in range(8)]),   # significant: stopped for efficacy
])
def test_only_an_inconclusive_look_before_the_last_is_assessed(n, looks, diffs):
    fut = _look(n, diffs, looks=looks)["sequential"]["futility"]
    assert fut["conditional_power"] is None and fut["stop"] is False and fut["threshold"] == 0.1


IDEA = idea_module("fut", arm("baseline"), arm("idea"), grid={"lr": [1e-2], "epochs": [1]},
                   seeds=None, looks=(6, 12), futility=1.5)


def test_a_wrong_threshold_fails_collection_with_what_is_valid(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_fut=IDEA)
    result = pytester.runpytest()
    assert result.ret not in (0, 5)
    result.stdout.fnmatch_lines(["*futility=1.5; valid: a conditional power in (0, 1)*"])
    assert "Traceback" not in result.stdout.str() and "INTERNALERROR" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()
