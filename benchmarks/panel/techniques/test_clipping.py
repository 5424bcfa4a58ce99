"""Gradient-norm clipping at 1.0 against none, on MNIST-1D's CNN.

Source: Pascanu, Mikolov & Bengio, "On the difficulty of training recurrent neural networks"
(ICML 2013): rescaling the gradient to a maximum norm stops exploding gradients and helped
their RNNs; a max norm of 1.0 is a common default since (e.g. Hugging Face's Trainer). Here it
bites on a minority of steps: the baseline's total gradient norm is above 1.0 on 23% of its
6,000 steps, with a median of 0.007 and a 95th percentile of 1.9 (seed 100, the track's lr
1e-2, constant; benchmarks/panel/techniques_pilot.py --track mnist1d). Adam divides each step
by the gradients' running scale, so clipping reweights the large-gradient steps rather than
shortening them all. Expected here: inconclusive (at 8 seeds, the first look, only an effect
of about 3 points is found, as label smoothing's MDE80 there was).
"""
from __future__ import annotations

import pytest

from clipped_adam import ClippedAdam

published = "helps"
expected = "inconclusive"
source = "Pascanu, Mikolov & Bengio, ICML 2013"
MAX_NORM = 1.0

pytestmark = pytest.mark.bench(
    looks=(8, 16, 24),  # the track's 24 seeds, with looks: a clear effect stops at 8
    seeds=16,  # look 2: undecided at 8 (README, "More seeds later")
    name="technique_clipping", track="mnist1d",
    claim="clipping the gradient norm at 1.0 raises test accuracy")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(),
            optimizer=lambda params: ClippedAdam(params, lr=run.cfg["lr"], max_norm=MAX_NORM))
