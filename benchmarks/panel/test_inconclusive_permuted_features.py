"""Null: an exact reparametrisation. Tabular's 10 features read in a permuted order by a model
whose first layer's columns are permuted to match.

Source: construction. With ``W'[:, j] = W[:, order[j]]``, ``W' x[order] = W x`` for every
input, so the idea's model computes the baseline's function at init; its gradients are the
baseline's with the first layer's columns permuted and Adam's update is elementwise, so the two
trajectories agree in exact arithmetic. Only the order of summation differs (rounding), which
training may amplify into A/A-sized noise (Summers & Dinneen, "Nondeterminism and Instability
in Neural Network Optimization", ICML 2021: a one-bit change to the init varies the result as
much as a new seed), never into a systematic difference.
"""
from __future__ import annotations

import pytest
from panel_models import PermutedInput, absorb_permutation, permutation

expected = "inconclusive"

pytestmark = pytest.mark.bench(
    name="permuted_features", track="tabular",
    claim="permuting the features and the first layer's columns alike changes nothing (an "
          "exact reparametrisation)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    model = run.track.model()
    order = permutation(run.seed, run.data.train.x.shape[1])
    absorb_permutation(model, order)
    run.fit(PermutedInput(order, model))
