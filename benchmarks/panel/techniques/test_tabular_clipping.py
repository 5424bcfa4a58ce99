"""Gradient-norm clipping at 1.0 against none, on tabular's tanh MLP.

Source: Pascanu, Mikolov & Bengio, "On the difficulty of training recurrent neural networks"
(ICML 2013): rescaling the gradient to a maximum norm stops exploding gradients and helped
their RNNs; a max norm of 1.0 is a common default since (e.g. Hugging Face's Trainer). Here it
bites: the baseline's total gradient norm is above 1.0 on 94% of steps (median 1.6; seed 100,
benchmarks/panel/techniques_pilot.py). Nothing explodes in this MLP, and Adam divides the
step by the gradients' running scale, so clipping mostly reweights steps. Expected here:
inconclusive.
"""
from __future__ import annotations

import pytest

from clipped_adam import ClippedAdam

published = "helps"
expected = "inconclusive"
source = "Pascanu, Mikolov & Bengio, ICML 2013"
MAX_NORM = 1.0

pytestmark = pytest.mark.bench(
    looks=(16, 32, 64),  # the track's 64 seeds, with looks: a clear effect stops at 16
    seeds=16,
    name="technique_tabular_clipping", track="tabular",
    claim="clipping the gradient norm at 1.0 lowers test MSE")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(),
            optimizer=lambda params: ClippedAdam(params, lr=run.cfg["lr"], max_norm=MAX_NORM))
