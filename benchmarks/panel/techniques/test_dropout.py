"""Dropout 0.1 after each convolution's ReLU against none, on MNIST-1D's CNN.

Source: Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from
Overfitting" (JMLR 2014): dropping units at random while training lowered test error on
vision, speech and text benchmarks, convolutional layers included (their SVHN and CIFAR nets
drop units in every layer). The idea's network is the baseline's with ``nn.Dropout(0.1)``
after each of the three ReLUs (the rate of tabular's dropout module); dropout layers draw
nothing at construction, so both arms start from the same weights.
"""
from __future__ import annotations

import pytest
from torch import nn

published = "helps"
source = "Srivastava et al., JMLR 2014"
RATE = 0.1

pytestmark = pytest.mark.bench(
    looks=(8, 16, 24),  # the track's 24 seeds, with looks: a clear effect stops at 8
    seeds=8,  # look 1
    name="technique_dropout", track="mnist1d",
    claim="dropout 0.1 after each convolution raises test accuracy")


def with_dropout(model: nn.Module) -> nn.Module:
    """``model`` with ``nn.Dropout(RATE)`` after each ``nn.ReLU`` of its ``features``."""
    layers: list[nn.Module] = []
    for layer in model.features:
        layers += [layer, nn.Dropout(RATE)] if isinstance(layer, nn.ReLU) else [layer]
    model.features = nn.Sequential(*layers)
    return model


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(with_dropout(run.track.model()))
