"""A constant learning rate instead of the track's cosine schedule, on tabular's tanh MLP.

Source: Loshchilov & Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts" (ICLR
2017): annealing the rate along a half cosine ends at a better model than other schedules;
at a constant rate the last iterate keeps the minibatch noise's jitter. The technique is the
track's own schedule, so here the idea is its removal (published: harms). Both arms sweep the
track's lr grid; a constant rate's optimum is likely lower, and a selection at the grid's lower
edge extends the grid for both arms. Expected here: harms.
"""
from __future__ import annotations

import pytest

published = "harms"
expected = "harms"
source = "Loshchilov & Hutter, SGDR, ICLR 2017"

pytestmark = pytest.mark.bench(
    looks=(16, 32, 64),  # the track's 64 seeds, with looks: a clear effect stops at 16
    seeds=16,
    name="technique_tabular_constant_lr", track="tabular",
    claim="a constant lr ends worse than the cosine schedule at equal steps")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), schedule="constant")
