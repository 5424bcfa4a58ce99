"""Small harm, a real technique: a cosine learning-rate schedule against the track's constant
one, on MNIST-1D's CNN, at equal steps.

Source: Loshchilov & Hutter, "SGDR" (ICLR 2017) report it helps on CIFAR wide ResNets; on this
track, at its paper's lr, benchmarks/panel/techniques/test_cosine_schedule.py measured -0.98
points of test accuracy on seeds 0-15 (1 of 16 seeds better, MDE80 0.75 points at 16 seeds):
an effect of about the MDE80 at 8 seeds, so a predicted power between the brief's 0.5 and
0.95. Chosen over fewer training rows because it is a technique people ship, not a
construction. Pre-registered on seeds 100-115, disjoint from the replication blocks
(benchmarks/panel/replication.py preregister): -0.0071 (1 of 16 seeds better, paired sd
0.0060): predicted power at 8 seeds 0.62 with the planning sd, 0.81 with the observed. The
baseline arm is test_aa.py's, so a block's session trains it once for every case.
"""
from __future__ import annotations

import pytest

expected = "harms"

pytestmark = pytest.mark.bench(
    name="rep_cosine_schedule_mnist1d", track="mnist1d",
    claim="annealing the lr to zero along a cosine beats the constant lr at equal steps")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), schedule="cosine")
