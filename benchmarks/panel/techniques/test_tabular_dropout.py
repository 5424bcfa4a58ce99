"""Dropout 0.1 after each hidden layer against none, on tabular's tanh MLP.

Source: Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from
Overfitting" (JMLR 2014): dropping hidden units at random while training lowered test error
on vision, speech and text benchmarks. The idea's network is the baseline's with
``nn.Dropout(0.1)`` after each tanh: dropout layers draw nothing at construction, so both arms
start from the same weights. Expected here: harms (a smooth regression on 2,000 rows, where
the noise dropout injects biases the fit more than it regularises; a common finding on small
regression MLPs, not a published result on this track).
"""
from __future__ import annotations

import pytest
from torch import nn

published = "helps"
expected = "harms"
source = "Srivastava et al., JMLR 2014"
RATE = 0.1

pytestmark = pytest.mark.bench(
    looks=(16, 32, 64),  # the track's 64 seeds, with looks: a clear effect stops at 16
    seeds=16,
    name="technique_tabular_dropout", track="tabular",
    claim="dropout 0.1 on the hidden units lowers test MSE")


def with_dropout(model: nn.Sequential) -> nn.Sequential:
    """``model``'s layers with ``nn.Dropout(RATE)`` after each ``nn.Tanh``."""
    layers: list[nn.Module] = []
    for layer in model:
        layers += [layer, nn.Dropout(RATE)] if isinstance(layer, nn.Tanh) else [layer]
    return nn.Sequential(*layers)


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(with_dropout(run.track.model()))
