"""Which planning figures a comparison gets (benchkit.stats.planning.figures, issue 49 item 8):
the selection-aware ones whenever some group of configs was selected among, and seeds needed
only while the result is not significant."""
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


def test_a_choice_within_any_group_makes_the_figures_selection_aware():
    """One point of the frontier chose between two configs: the test that decides is the
    selection-aware one there, so its figures are too (not the one-config sign-flip's)."""
    sw = frontier_sweeps()
    diffs = [-0.1] * sw.n
    f = planning.figures(diffs, -0.1, 0.05, significant=False, sweeps=sw)
    assert f.basis.test.startswith("selection-aware")


def test_a_significant_result_needs_no_more_seeds():
    sw = frontier_sweeps()
    diffs = list(np.linspace(-0.2, 0.05, sw.n))
    assert planning.figures(diffs, -0.08, 0.05, significant=True, sweeps=sw).seeds_needed is None
    assert planning.figures(diffs, -0.08, 0.05, significant=False,
                            sweeps=sw).seeds_needed is not None
    plain = planning.figures(diffs, -0.08, 0.05, significant=True)
    assert plain.seeds_needed is None and plain.basis.test.startswith("sign-flip")
