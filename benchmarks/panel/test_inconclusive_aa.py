"""Null: A/A on tabular, the track's model against itself built from another init stream.

Source: construction. The arms differ only in the random init, so every paired difference is
symmetric about zero and the sign-flip test's null holds exactly: a verdict other than
inconclusive is a false positive (probability alpha = 0.05). The track's own A/A bench
(benchmarks/tracks/test_aa.py) measures the same; this module is the panel's copy of it.
"""
from __future__ import annotations

import pytest
import torch

expected = "inconclusive"
OTHER_INIT = 1_000_003  # added to the seed: the idea arm's init stream

pytestmark = pytest.mark.bench(
    name="aa_tabular", track="tabular",
    claim="the same model from another init stream: nothing to find (A/A)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    torch.manual_seed(run.seed + OTHER_INIT)
    run.fit(run.track.model())
