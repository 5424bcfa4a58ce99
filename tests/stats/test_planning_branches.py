"""Which planning figures a comparison gets (benchkit.stats.planning.figures, issue 49 item 8):
seeds needed only while the result is not significant. (The branch on groups, any -> all, is
gone with the bootstrap of sweeps: the figures are of the comparison's per-seed differences,
with a sweep the binding paired test's, whatever the groups.)"""
from __future__ import annotations

import numpy as np

from benchkit.stats import planning, selection


def frontier_sweeps(seeds=8):
    """Two frontier points: one of two configs (validation chooses), one of a single config;
    the idea 0.1 better (lower) everywhere."""
    rng = np.random.default_rng([49, 8])
    base = 1.0 + 0.05 * rng.standard_normal((seeds, 3))
    idea = base - 0.1 + 0.05 * rng.standard_normal((seeds, 3))
    return selection.sweeps(base, base, idea, idea, groups=[[0, 1], [2]])


def test_a_choice_within_any_group_plans_with_the_deciding_tests_differences():
    """One point of the frontier chose between two configs: the figures are of the
    differences the selection-aware test binds on (as the report's per_seed_diffs)."""
    sw = frontier_sweeps()
    diffs = selection.binding(sw, "lower").d
    f = planning.figures(diffs, float(np.mean(diffs)), 0.05, significant=False)
    assert f.basis.test == "sign-flip test"
    assert f.mde_power80 == planning.figures(list(diffs), 0.0, 0.05,
                                             significant=True).mde_power80


def test_a_significant_result_needs_no_more_seeds():
    diffs = list(np.linspace(-0.2, 0.05, 8))
    assert planning.figures(diffs, -0.08, 0.05, significant=True).seeds_needed is None
    assert planning.figures(diffs, -0.08, 0.05, significant=False).seeds_needed is not None
    plain = planning.figures(diffs, -0.08, 0.05, significant=True)
    assert plain.seeds_needed is None and plain.basis.test.startswith("sign-flip")
