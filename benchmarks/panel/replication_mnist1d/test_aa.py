"""A/A on mnist1d: the paper's CNN against itself built from another init stream.

Source: construction, as benchmarks/panel/replication/test_aa.py on tabular: each paired
difference is symmetric about zero, so each side rejects with probability alpha / 2 = 2.5%;
over disjoint seed blocks the baseline's own init stream (the seed's) changes too.
"""
from __future__ import annotations

import pytest
import torch

expected = "inconclusive"
OTHER_INIT = 1_000_003  # added to the seed: the idea arm's init stream

pytestmark = pytest.mark.bench(
    name="rep_aa_mnist1d", track="mnist1d",
    claim="the same model from another init stream: nothing to find (A/A)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    torch.manual_seed(run.seed + OTHER_INIT)
    run.fit(run.track.model())
