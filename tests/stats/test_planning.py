"""Planning figures of the test that decides (benchkit.stats.planning, selection.mde_power80;
issue 41 item 3): with a sweep they come from the selection-aware test simulated on the bench's
own sweeps, each simulated bench's critical effect is where the test's decision flips, a figure
of another test says so in its name, and seeds_needed is labelled post hoc; the figures write
the comparison's planning keys and read them back."""
from __future__ import annotations

import numpy as np
import pytest

from benchkit.stats import planning, selection, signflip

pytestmark = pytest.mark.timeout(60)


def noisy_sweeps(n=8, seed=0):
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 0.1, (n, 1)) + np.array([0.0, 0.01, 0.02])
    return selection.sweeps(*[1 + level + rng.normal(0, s, (n, 3)) for s in (0.05, 0.01) * 2])


@pytest.mark.parametrize("direction", ["lower", "higher"])
def test_each_simulated_benchs_critical_effect_is_where_the_test_decides(direction):
    sw, n, reps, level = noisy_sweeps(), 8, 6, 0.05
    crit = selection.critical_effects(sw, direction, level, reps=reps, seed=3)
    center = float(np.mean(selection.observed(sw, direction).diffs))
    idx = np.random.default_rng([3, n]).integers(0, sw.n, size=(reps, n))  # its draws
    better = -1.0 if direction == "lower" else 1.0
    for r in range(reps):
        assert np.isfinite(crit[r])
        eps = 1e-3 * abs(crit[r]) + 1e-6
        for effect, found in ((crit[r] + eps, True), (crit[r] - eps, False)):
            move = better * effect  # the idea's whole sweep, validation and test
            bench = selection.sweeps(sw.base_val[idx[r]], sw.base_test[idx[r]],
                                     sw.idea_val[idx[r]] + move,
                                     sw.idea_test[idx[r]] - center + move)
            d = np.mean(selection.observed(bench, direction).diffs)
            detected = (selection.p_value(bench, direction) < level) and better * d > 0
            assert detected == found, (r, effect)


def test_a_swept_comparison_plans_with_the_selection_aware_test():
    sw = noisy_sweeps()
    d = selection.observed(sw, "lower").diffs
    got = planning.figures(d, float(np.mean(d)), 0.05, significant=False, sweeps=sw)
    assert got.basis.test is not None and got.basis.test.startswith("selection-aware")
    crit = np.sort(selection.critical_effects(sw, "lower", 0.05))
    assert got.mde_power80 == max(0.0, crit[159])   # 80% of 200 simulated benches below
    assert np.mean(crit < got.mde_power80 * 1.0001) >= 0.8
    assert got.seeds_needed == max(6, int(np.ceil(8 * (got.mde_power80 / abs(np.mean(d)))
                                                  ** 2)))
    assert got.basis.seeds_needed_for is not None and "post hoc" in got.basis.seeds_needed_for
    # the fixed-config figure it replaces describes another test, and is smaller here
    assert got.mde_power80 > signflip.mde_power80(8, float(np.std(d, ddof=1)), 0.05)


def test_one_config_plans_with_the_sign_flip_test_as_before():
    d = [0.1, -0.2, 0.3, 0.05, 0.2, -0.1, 0.15, 0.25]
    got = planning.figures(d, float(np.mean(d)), 0.05, significant=False)
    sd = float(np.std(d, ddof=1))
    assert got.mde_power80 == signflip.mde_power80(8, sd, 0.05)
    assert got.seeds_needed == signflip.seeds_needed(float(np.mean(d)), sd, 0.05)
    assert list(got.to_json()) == ["mde_power80", "seeds_needed", "planning"]
    assert list(got.to_json()["planning"]) == ["level", "min_seeds", "test", "seeds_needed_for",
                                               "assumption"]
    assert planning.PlanningFigures.from_json(got.to_json()) == got


def test_figures_of_the_mean_test_under_sign_say_so_in_their_names():
    sw = noisy_sweeps()
    d = selection.observed(sw, "lower").diffs
    got = planning.figures(d, float(np.mean(d)), 0.05, significant=False, sweeps=sw,
                           test="sign")
    assert got.of_mean_test and got.mde_power80 == selection.mde_power80(sw, "lower", 0.05)
    written = got.to_json()
    assert list(written) == list(planning.KEYS)
    assert written["mde_power80"] is None and written["seeds_needed"] is None
    assert written["mde_power80_mean_test"] == got.mde_power80
    assert written["planning"]["test"].startswith("mean selection-aware")
    assert planning.PlanningFigures.from_json(written) == got


def test_an_older_reports_planning_object_reads_back_as_it_was():
    older = {"mde_power80": 0.5, "seeds_needed": 12,
             "planning": {"level": 0.05, "min_seeds": 6, "assumption": "normal differences"}}
    figures = planning.PlanningFigures.from_json(older)
    assert figures.basis.test is None and figures.to_json() == older


@pytest.mark.parametrize("data, says", [
    ({"mde_power80": 0.5, "planning": {"level": 0.05, "min_seeds": 6, "assumption": "a"}},
     "a comparison's planning figures are"),
    ({"mde_power80": 0.5, "seeds_needed": 1, "mde_power80_mean_test": 0.1,
      "seeds_needed_mean_test": 3, "planning": {"level": 0.05, "min_seeds": 6,
                                                "assumption": "a"}},
     "with the first two null"),
    ({"mde_power80": 0.5, "seeds_needed": 1, "planning": {"level": 0.05, "assumption": "a",
                                                          "power": 0.8}},
     r"unknown: \['power'\], missing: \['min_seeds'\]"),
])
def test_planning_figures_of_another_shape_are_refused(data, says):
    with pytest.raises(ValueError, match=says):
        planning.PlanningFigures.from_json(data)


def test_an_idea_with_a_smaller_effective_grid_has_no_power_to_be_found_better():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(8, 3))
    idea = np.repeat(rng.normal(size=(8, 1)), 3, axis=1)
    grid = [{"lr": 1e-3}, {"lr": 1e-2}, {"lr": 1e-1}]
    sw = selection.sweeps(base, base, idea, idea, grid=grid)
    assert selection.mde_power80(sw, "lower", 0.05) is None


def test_seeds_needed_scales_the_mde():
    assert selection.seeds_needed(0.2, 8, 0.1, 0.05) == 32
    assert selection.seeds_needed(0.05, 8, 0.1, 0.05) == 6   # never below min_pairs
    assert selection.seeds_needed(None, 8, 0.1, 0.05) is None
    assert selection.seeds_needed(0.2, 8, 0.0, 0.05) is None
