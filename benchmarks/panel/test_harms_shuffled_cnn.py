"""Large negative: the paper's CNN reading MNIST-1D's 40 positions in a shuffled order.

Source: Greydanus & Kobak, "Scaling Down Deep Learning" (ICML 2024), table 1: shuffling the
positions takes the CNN from 0.94 to 0.56 test accuracy (its filters assume neighbours are
related); reproduced on this track's data (docs/tracks.md: 0.941 to 0.593 on seeds 0-3, a loss
of 0.31-0.39 on every seed). The idea arm is the same CNN, from the same init, given the
positions in one fixed order per seed, the same order for train, validation and test.
"""
from __future__ import annotations

import pytest
from panel_models import PermutedInput, permutation

from benchkit.tracks.models import mnist1d_cnn

expected = "harms"

pytestmark = pytest.mark.bench(
    name="shuffled_cnn", track="mnist1d",
    claim="shuffling MNIST-1D's positions (one fixed order) costs the paper's CNN accuracy "
          "(published: 0.94 to 0.56)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(mnist1d_cnn())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(PermutedInput(permutation(run.seed, 40), mnist1d_cnn()))
