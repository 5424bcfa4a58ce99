"""Twice the channels at equal steps: MNIST-1D's CNN with 50 channels against the track's 25.

Source: Neyshabur et al., "Towards Understanding the Role of Over-Parametrization in
Generalization of Neural Networks" (ICLR 2019) and Nakkiran et al., "Deep Double Descent"
(ICLR 2020): past the interpolation threshold, wider networks trained the same way generalise
better. The idea is the paper's CNN (:class:`benchkit.tracks.models.MNIST1DCNN`) at
``channels=50`` in all three convolutions; both arms train the same epochs, batch and lr
(equal steps). The idea has 3.4x the parameters (17,910 against 5,210), which the budget
waiver states, since width is the technique.
"""
from __future__ import annotations

import pytest

from benchkit.tracks.models import MNIST1DCNN

published = "helps"
source = "Neyshabur et al., ICLR 2019; Nakkiran et al., ICLR 2020"
CHANNELS = 50  # the track's CNN has 25

pytestmark = pytest.mark.bench(
    looks=(8, 16, 24),  # the track's 24 seeds, with looks: a clear effect stops at 8
    seeds=8,  # look 1
    name="technique_width", track="mnist1d",
    budget_waiver={"params": "width is the technique: twice the channels at equal steps"},
    claim="doubling the CNN's channels at equal steps raises test accuracy")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(MNIST1DCNN(channels=CHANNELS))
