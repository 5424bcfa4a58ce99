"""Cosine learning-rate schedule against the track's constant one, on MNIST-1D's CNN.

Source: Loshchilov & Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts" (ICLR
2017): annealing the learning rate along a half cosine ends at a better model than the usual
schedules on CIFAR-10/100 wide ResNets. The mechanism: at a constant rate the last iterate
keeps the minibatch noise's stationary jitter; annealing to zero removes it.
"""
from __future__ import annotations

import pytest

published = "helps"
source = "Loshchilov & Hutter, SGDR, ICLR 2017"

pytestmark = pytest.mark.bench(
    looks=(8, 16, 24),  # the track's 24 seeds, with looks: a clear effect stops at 8
    seeds=16,  # the second look: undecided at 8 (README, "More seeds later")
    name="technique_cosine", track="mnist1d",
    claim="annealing the lr to zero along a cosine beats the constant lr at equal steps")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), schedule="cosine")
