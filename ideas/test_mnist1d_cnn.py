"""A small CNN on MNIST-1D: does a convolutional prior beat the paper's MLP at equal tuning?

Claim. MNIST-1D's digits sit at random offsets (translations of up to 48 positions before the
signal is resampled to 40) under correlated noise and shear, so a model whose filters are
local and shared across positions should classify them far better than an MLP that must learn
every offset apart: Greydanus & Kobak report CNN 94% against MLP 68% test accuracy. The idea
arm trains the paper's CNN (``benchkit.tracks.models.mnist1d_cnn``: three stride-2 ReLU
convolutions of 25 channels, a linear head, 5,210 parameters: the track's default model); the
baseline names the paper's MLP (``mnist1d_mlp``, 15,210 parameters), which the track no
longer uses as its default (gradient-boosted trees beat it). Both arms get the track's
protocol and grid.

The parameter budgets differ by design (the CNN has a third of the MLP's parameters, which
can only make the claim harder to show): waived below with that reason.

What the bench can and cannot show: the practical verdict tests the accuracy difference
(measured: +0.266, 8/8 seeds, p = 0.0078, benchmarks/results/tracks/bench/). The mechanism
(locality and weight sharing) is checked only as arithmetic, by the claim test below: the
convolution stack commutes with shifts by its total stride. A passing claim test checks the
method, not the trained model: mechanism_ok stays null and the system verdict reads "partial"
(helps, mechanism not confirmed), as reports/mnist1d_cnn/mnist1d/ says, since no trained run
confirms the reason; the published contrast that does, the CNN's fall to 0.59 (paper: 0.56) when the
40 positions are shuffled while the MLP keeps 0.65 (0.68), is reproduced by
benchmarks/tracks/mnist1d_table.py (docs/tracks.md).
"""
from __future__ import annotations

import importlib.util

import pytest
import torch

from benchkit.tracks.models import mnist1d_cnn, mnist1d_mlp

if importlib.util.find_spec("mnist1d") is None:  # found, not imported: collection stays cheap
    pytest.skip("the mnist1d track needs the mnist1d package: pip install benchkit[tracks]",
                allow_module_level=True)

pytestmark = pytest.mark.bench(
    name="mnist1d_cnn", track="mnist1d",
    claim="the paper's small CNN classifies MNIST-1D better than its MLP (published: 94% vs "
          "68% test accuracy)",
    budget_waiver={"params": "the CNN has a third of the MLP's parameters; the claim is about "
                             "the architecture's prior, and fewer parameters only make it "
                             "harder to show"})


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(mnist1d_mlp())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(mnist1d_cnn())


@pytest.mark.mechanism
def test_the_convolutions_commute_with_shifts_by_their_total_stride():
    """Shifting the input by 8 positions (the stack's stride, 2 x 2 x 2) shifts every
    interior feature by one position: the same filters read every offset."""
    torch.manual_seed(0)
    features = mnist1d_cnn().features
    x = torch.randn(4, 1, 80)
    shifted = torch.roll(x, 8, dims=-1)
    with torch.no_grad():
        a, b = features(x), features(shifted)
    assert torch.allclose(a[..., 2:-3], b[..., 3:-2], atol=1e-5)
    assert not torch.allclose(a[..., 2:-3], b[..., 2:-3], atol=1e-2)  # the shift is visible
