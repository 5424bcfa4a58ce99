"""Batch normalisation between each convolution and its ReLU against none, on MNIST-1D's CNN.

Source: Ioffe & Szegedy, "Batch Normalization: Accelerating Deep Network Training by Reducing
Internal Covariate Shift" (ICML 2015): normalising each channel's pre-activation over the
minibatch trained faster and ended more accurate on ImageNet. The idea's network is the
baseline's with ``nn.BatchNorm1d(25)`` between each Conv1d and its ReLU (scored with the
running statistics); batch-norm layers draw nothing at construction, so both arms start from
the same convolution weights; they add 150 parameters (2.9%, within the 5% budget tolerance).
"""
from __future__ import annotations

import pytest
from torch import nn

published = "helps"
source = "Ioffe & Szegedy, ICML 2015"

pytestmark = pytest.mark.bench(
    looks=(8, 16, 24),  # the track's 24 seeds, with looks: a clear effect stops at 8
    seeds=8,  # look 1
    name="technique_batchnorm", track="mnist1d",
    claim="batch normalisation of the convolutions' pre-activations raises test accuracy")


def with_batchnorm(model: nn.Module) -> nn.Module:
    """``model`` with ``nn.BatchNorm1d`` after each ``nn.Conv1d`` of its ``features``."""
    layers: list[nn.Module] = []
    for layer in model.features:
        layers.append(layer)
        if isinstance(layer, nn.Conv1d):
            layers.append(nn.BatchNorm1d(layer.out_channels))
    model.features = nn.Sequential(*layers)
    return model


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(with_batchnorm(run.track.model()))
