"""Null: the paper's MLP reading MNIST-1D's 40 positions in a shuffled order.

Source: construction, and the paper. An MLP's first layer is dense and its init i.i.d. per
weight, so permuting the inputs is the same as permuting the first layer's columns, whose init
distribution is unchanged: the shuffled and plain MLPs have the same distribution of results,
and the paired differences are those of an A/A bench with another first-layer init.
Greydanus & Kobak (ICML 2024, table 1) report the MLP at 0.68 with and without shuffling;
this track measured 0.672 and 0.654 on seeds 0-3 (one shuffled order per seed drawn by the
package, unpaired, sd 0.023 and 0.033: docs/tracks.md).
"""
from __future__ import annotations

import pytest
from panel_models import PermutedInput, permutation

from benchkit.tracks.models import mnist1d_mlp

expected = "inconclusive"

pytestmark = pytest.mark.bench(
    name="shuffled_mlp", track="mnist1d",
    claim="shuffling MNIST-1D's positions changes nothing for an MLP (published: 0.68 both)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(mnist1d_mlp())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(PermutedInput(permutation(run.seed, 40), mnist1d_mlp()))
