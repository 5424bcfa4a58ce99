"""Batch normalisation before each hidden tanh against none, on tabular's tanh MLP.

Source: Ioffe & Szegedy, "Batch Normalization: Accelerating Deep Network Training by Reducing
Internal Covariate Shift" (ICML 2015): normalising each unit's pre-activation over the
minibatch trained faster and ended more accurate on ImageNet. The idea's network is the
baseline's with ``nn.BatchNorm1d`` between each hidden Linear and its tanh (scored with the
running statistics); batch-norm layers draw nothing at construction, so both arms start from
the same Linear weights; they add 512 parameters (2.8%, within the 5% budget tolerance).
Expected here: inconclusive (inputs are already standardised and the net is two layers deep).
"""
from __future__ import annotations

import pytest
from torch import nn

published = "helps"
expected = "inconclusive"
source = "Ioffe & Szegedy, ICML 2015"

pytestmark = pytest.mark.bench(
    looks=(16, 32, 64),  # the track's 64 seeds, with looks: a clear effect stops at 16
    seeds=16,
    name="technique_tabular_batchnorm", track="tabular",
    claim="batch normalisation of the hidden pre-activations lowers test MSE")


def with_batchnorm(model: nn.Sequential) -> nn.Sequential:
    """``model``'s layers with ``nn.BatchNorm1d`` before each ``nn.Tanh``."""
    layers: list[nn.Module] = []
    for layer in model:
        if isinstance(layer, nn.Tanh):
            layers.append(nn.BatchNorm1d(layers[-1].out_features))
        layers.append(layer)
    return nn.Sequential(*layers)


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(with_batchnorm(run.track.model()))
