"""Non-inferiority: the small harm of test_cosine_schedule.py (the same arms, so their runs are
shared), judged against a margin of 2.0% of the baseline's mean test accuracy.

Source: construction on a real technique. The cosine schedule costs this track about 0.7
points of accuracy (-0.0071, pre-registered on seeds 100-115), less than the margin, so the
verdict should be non-inferior as often as the margin test's power at the block's seeds
allows, while the difference test calls it a harm: a small loss that a user declared
acceptable. The margin was pre-registered on seeds 100-115 (test_cosine_schedule's runs
there): the smallest in steps of 0.5% whose predicted power at 8 seeds, with the planning sd,
is at least 0.8 (0.99; 1.5% gave 0.74 there).
"""
from __future__ import annotations

import pytest

expected = "non-inferior"
MARGIN = 0.02

pytestmark = pytest.mark.bench(
    name="rep_cosine_schedule_ni_mnist1d", track="mnist1d", margin=MARGIN,
    claim="annealing the lr along a cosine is no worse than the constant lr, within 2.0%")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), schedule="cosine")
