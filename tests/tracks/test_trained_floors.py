"""Neural floors trained with the track's own protocol (benchkit.tracks.trained_floors): the lr
chosen on validation, deterministic, the caller's RNG and thread count left as they were."""
from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from benchkit import tracks
from benchkit.tracks import models
from benchkit.tracks.base import Data, Split
from benchkit.tracks.trained_floors import trained_floor
from benchkit.training import loop, provide_floor_trainer

provide_floor_trainer()  # trained_floor trains with benchkit.training's loop


def tiny():
    """The tabular track at 3 epochs on 96 random rows of its shape: a fit of milliseconds."""
    g = torch.Generator().manual_seed(5)
    parts = [Split(torch.randn(n, 10, generator=g), torch.randn(n, 1, generator=g))
             for n in (64, 16, 16)]
    return dataclasses.replace(tracks.get("tabular"), epochs=3), Data(*parts)


def test_the_floor_is_the_lr_with_the_best_validation_and_is_deterministic():
    track, data = tiny()
    lrs = (1e-3, 1e-2, 1e-1)
    got = trained_floor(track, models.mlp_tanh, data, lrs, seed=3)
    assert set(got.val_by_lr) == set(lrs)
    assert got.val_by_lr[got.lr] == min(got.val_by_lr.values())
    again = trained_floor(track, models.mlp_tanh, data, lrs, seed=3)
    assert again == got  # bit-identical
    assert trained_floor(track, models.mlp_tanh, data, lrs, seed=4) != got
    # the test value is the track's protocol at the chosen lr: loop.fit from the floor's streams
    from benchkit.tracks.trained_floors import FLOOR_SALT

    torch.manual_seed(FLOOR_SALT + 3)
    fit = loop.fit(models.mlp_tanh(), data, track, lr=got.lr, epochs=3,
                   batch_size=track.batch_size, seed=FLOOR_SALT + 3, schedule=track.schedule)
    assert fit.test == got.test


def test_the_floor_leaves_the_global_rng_and_threads_as_they_were():
    track, data = tiny()
    threads = torch.get_num_threads()
    torch.manual_seed(11)
    expected = torch.rand(3)
    torch.manual_seed(11)
    trained_floor(track, models.mlp_tanh, data, (1e-2,), seed=0)
    assert torch.equal(torch.rand(3), expected)
    assert torch.get_num_threads() == threads


def test_a_floor_that_diverges_at_every_lr_says_so():
    track, data = tiny()
    with pytest.raises(ValueError, match="diverged at every lr"):
        trained_floor(track, models.mlp_tanh, data, (math.inf,), seed=0)


def test_without_the_training_layer_a_trained_floor_says_what_to_import(monkeypatch):
    from benchkit.tracks import trained_floors

    monkeypatch.setattr(trained_floors, "_TRAINER", [])
    track, data = tiny()
    with pytest.raises(RuntimeError, match="provide_floor_trainer"):
        trained_floor(track, models.mlp_tanh, data, (1e-2,), seed=0)


def test_the_window_mlp_maps_a_window_to_a_state():
    torch.manual_seed(0)
    out = models.window_mlp()(torch.randn(5, 16, 3))
    assert out.shape == (5, 3)
