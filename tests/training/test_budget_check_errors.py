"""The budget check's errors hold beyond normal gains (issue 49 item 5): its decision is a
sign test on the median (every seed of a look on one side, and the t bound too), a look needs
3 measured seeds, "trained out" allows for the luck of the config validation chose, and each
bench draws its own checked seeds."""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchkit.spec.run_record import CurvePoint, RunResult
from benchkit.stats import sequential
from benchkit.verdict import convergence

THRESHOLD = convergence.STILL_IMPROVING


def decide(values, looks=(3, 5), **kw):
    return sequential.three_way(values, THRESHOLD, looks=looks,
                                level=convergence.CHECK_LEVEL, **kw)


def test_a_later_look_decides_only_when_every_seed_is_on_its_side():
    """Five seeds whose mean's t lower bound is above 1% (1.4%) but one gains 0.5%: the t bound
    alone said "still improving"; one seed under the threshold is what a skewed or outlying
    gain looks like, and a median above it is not shown."""
    gains = [0.005, 0.03, 0.03, 0.03, 0.03]
    d = decide(gains)
    assert d.lower > THRESHOLD and d.seeds == 5
    assert d.decision == "undetermined"
    assert decide([0.015, 0.03, 0.03, 0.03, 0.03]).decision == "above"
    assert decide([0.015, -0.02, -0.02, -0.02, -0.02]).decision == "undetermined"
    assert decide([-0.02, -0.02, -0.02, 0.005, 0.005]).decision == "below"   # at 3 already


def test_a_look_needs_three_measured_seeds():
    """Two measured gains of a look of 3 (the third not measurable) bound nothing a sign test
    can stand behind (2^-2 = 1/4): undetermined, however close the two are."""
    d = decide([0.02, 0.0201, math.nan], looks=(3,))
    assert d.lower > THRESHOLD and d.seeds == 2
    assert d.decision == "undetermined"


@pytest.mark.parametrize("shape", ["lognormal right", "lognormal left", "two clusters"])
def test_the_errors_hold_whatever_the_gains_distribution_when_the_median_is_on_it(shape):
    """Median exactly on the threshold, looks 3 then 5, 3,000 checks: each error at most
    2^-3 = 1/8 (by 3 SE) for lognormal gains of shape 1.5 (beyond the calibration's) and for
    gains in two clusters (half at +3%, half just under the threshold), where the t bound
    alone says "still improving" in 0.50 of checks: 3 or 4 seeds of 5 far above the
    threshold and the rest just under give a mean whose bound clears it."""
    rng = np.random.default_rng([49, 5, len(shape)])
    size = (3000, 5)
    if shape.startswith("lognormal"):
        tail = 1 if shape.endswith("right") else -1
        g = THRESHOLD + 0.02 * tail * (np.exp(1.5 * rng.standard_normal(size)) - 1.0)
    else:
        up = rng.random(size) < 0.5
        g = THRESHOLD + np.where(up, 0.03, -0.001) + 1e-4 * rng.random(size)
    d = [decide(row).decision for row in g]
    se = math.sqrt(0.125 * 0.875 / len(g))
    for side in ("above", "below"):
        assert d.count(side) / len(g) <= 0.125 + 3 * se, side


def test_the_luck_of_the_best_of_equal_configs_is_the_expected_maximum():
    """selection_luck: E[max of K standard normals] x tau / sqrt(seeds), tau from the two-way
    residuals; on 3 equal configs x 8 seeds its mean is near the luck the best one had."""
    assert sequential._expected_max(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-6)
    assert sequential._expected_max(3) == pytest.approx(0.846284, abs=1e-5)
    rng = np.random.default_rng([49, 6])
    tau, configs, seeds = 0.3, 3, 8
    val = rng.standard_normal((4000, 1, seeds)) + tau * rng.standard_normal((4000, configs, seeds))
    luck = [v[:, :].mean(axis=1)[v.mean(axis=1).argmax()] - v.mean() for v in val]
    bounds = [sequential.selection_luck(v) for v in val]
    assert np.mean(bounds) == pytest.approx(np.mean(luck), rel=0.1)
    assert sequential.selection_luck([[1.0, 2.0, 3.0]]) == 0.0   # nothing chosen among


def run(val, epoch, *, before=None):
    curve = (CurvePoint(epoch=epoch, val=val),) if before is None else (
        CurvePoint(epoch=epoch * 3 // 4, val=before), CurvePoint(epoch=epoch, val=val))
    return RunResult(val=val, test=val, diverged=False, seconds=None, curve=curve)


def checked_section(grid_vals, longer_vals, bench=None):
    """The baseline's selected config, its 3 seeds at 1.0 (lower is better), checked at 12
    epochs with ``longer_vals``; ``grid_vals``: the configs validation chose among."""
    chosen = convergence.SelectedRuns({"lr": 0.01}, tuple(run(1.0, 8, before=1.05)
                                                          for _ in range(3)), grid_vals)
    return convergence.section(
        "tabular", {"baseline": chosen}, "lower", epochs=8, schedule="cosine",
        longer=lambda arm, cfg: [run(v, 12) for v in longer_vals], configs=8,
        seeds=None if bench is None else [0, 1, 2], bench=bench)[0].arms["baseline"]


def test_trained_out_allows_for_the_luck_of_the_config_validation_chose():
    """Gains of 0.4-0.6%, under the 1% threshold: trained out when nothing was chosen (one
    config); when validation picked the config among 3 whose runs scatter by 5%, its runs
    were luckier than longer ones of the same seeds by up to ~1.5%, so the same gains show
    nothing: undetermined. "Still improving" is unchanged (the luck only pulls gains down)."""
    longer = [0.995, 0.994, 0.996]
    one = checked_section(((1.0, 1.0, 1.0),), longer).budget_check
    assert one.decision == "trained out" and one.allowance == 0.0
    scatter = ((1.0, 1.05, 0.95), (1.06, 0.96, 1.0), (0.95, 1.0, 1.05))
    chosen = checked_section(scatter, longer).budget_check
    assert chosen.allowance == pytest.approx(convergence.check_allowance(scatter))
    assert chosen.allowance > 0.01 and chosen.decision == "undetermined"
    warning = convergence.section(
        "tabular", {"baseline": convergence.SelectedRuns(
            {"lr": 0.01}, tuple(run(1.0, 8, before=1.05) for _ in range(3)), scatter)},
        "lower", epochs=8, schedule="cosine", configs=8,
        longer=lambda arm, cfg: [run(v, 12) for v in longer])[1]
    assert (f"threshold 1%, trained out below {1 - 100 * chosen.allowance:.1f}% for the "
            "selection's luck): whether it was still improving is not settled") in warning[0]
    assert checked_section(scatter, [0.97, 0.975, 0.972]).budget_check.decision \
        == "still improving"


def test_each_bench_draws_its_own_checked_seeds():
    """check_order: a permutation of the bench's seeds from its name and track, the same in
    every session; two benches reusing one baseline check it on other seeds, so one unlucky
    draw is not every bench's; the report names the seeds it checked."""
    seeds = list(range(8))
    a = convergence.check_order(seeds, "idea_a", "tabular")
    assert sorted(a) == seeds and a == convergence.check_order(seeds, "idea_a", "tabular")
    assert a[:3] == [2, 4, 0]   # pinned: a change of the draw re-trains every stored check
    assert a[:3] != convergence.check_order(seeds, "idea_b", "tabular")[:3]
    assert a != convergence.check_order(seeds, "idea_a", "mnist1d")
    order = convergence.check_order([0, 1, 2], "bench", "tabular")
    gains = [0.01 * (s + 1) for s in (0, 1, 2)]   # seed s's check gains (s + 1)%
    arm = checked_section(((1.0, 1.0, 1.0),), [1 - g for g in gains], bench="bench")
    assert list(arm.budget_check.checked) == order
    assert list(arm.budget_check.per_seed) == pytest.approx([gains[s] for s in order])
