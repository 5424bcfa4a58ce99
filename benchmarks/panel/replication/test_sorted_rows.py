"""Realistic null: a "curriculum" that sorts the training rows by target before training,
which the loader's shuffle, a fresh uniform permutation every epoch, undoes.

Source: construction. Sorting permutes the rows; a uniform permutation of permuted rows is
again uniform, so the idea's minibatch sequence has the baseline's distribution and the
expected difference is zero; yet the sequences differ, so each seed's difference is of the
size of the training noise (not an exact reparametrisation: this null can fail). Same model,
init, steps and lr grid.
"""
from __future__ import annotations

import pytest
from panel_models import fit_on_rows

from benchkit.tracks.base import Split

expected = "inconclusive"

pytestmark = pytest.mark.bench(
    name="rep_sorted_rows", track="tabular",
    claim="training on rows sorted by target (a curriculum) gives a better model")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    train = run.data.train
    order = train.y[:, 0].argsort(stable=True)
    fit_on_rows(run, run.track.model(), Split(train.x[order], train.y[order]))
