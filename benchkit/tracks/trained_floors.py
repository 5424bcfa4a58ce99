"""Floors that are neural networks, trained as the track trains its baseline (issue 54): the
track's optimizer, schedule, batch size, epochs and loss, the lr chosen on the seed's
validation split from a grid. A network floor trained with a weaker protocol than the
baseline's (another library's defaults, no schedule) flatters the baseline.

The tracks layer imports nothing above it, so the loop comes from the training layer:
``benchkit.training.provide_floor_trainer()`` (called by whoever computes floors) hands it
down through :func:`provide_trainer`; a floor computed before that says so.

Deterministic in the seed: the model's init and the minibatch order come from the seed, the
global RNG is restored afterwards (a floor never disturbs a run's seeding) and the floor trains
on one torch thread (the thread count changes float reductions, hence the bits), whatever
process computes it.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

from benchkit.tracks.base import Data, Track

FLOOR_SALT = 0xF100  # the floor's init and order stream: apart from every run's
_TRAINER: list[Callable] = []  # benchkit.training.loop.fit, once benchkit.training is imported


def provide_trainer(fit: Callable) -> None:
    """Set the loop trained floors train with (``benchkit.training.loop.fit``'s signature);
    called by ``benchkit.training.provide_floor_trainer``."""
    _TRAINER[:] = [fit]


class TrainedFloor(NamedTuple):
    """The test metric at the selected ``lr`` and every lr's validation metric (NaN when that
    run diverged)."""

    test: float
    lr: float
    val_by_lr: dict[float, float]


def trained_floor(track: Track, make_model: Callable, data: Data, lrs, *,
                  seed: int) -> TrainedFloor:
    """``make_model()`` trained on ``data.train`` with ``track``'s protocol at each lr of
    ``lrs``; the lr with the best validation metric (in the track's direction) gives the test
    metric. Raises ValueError when every lr diverged."""
    import torch

    if not _TRAINER:
        raise RuntimeError(f"track {track.name!r}: its trained floors need benchkit.training's "
                           "loop; call benchkit.training.provide_floor_trainer() "
                           "before computing them")
    fit = _TRAINER[0]
    threads = torch.get_num_threads()
    val_by_lr: dict[float, float] = {}
    test_by_lr: dict[float, float] = {}
    try:
        torch.set_num_threads(1)
        with torch.random.fork_rng(devices=[]):
            for lr in lrs:
                torch.manual_seed(FLOOR_SALT + int(seed))
                result = fit(make_model(), data, track, lr=float(lr), epochs=track.epochs,
                                  batch_size=track.batch_size, seed=FLOOR_SALT + int(seed),
                                  schedule=track.schedule)
                val_by_lr[float(lr)] = math.nan if result.diverged else result.val
                test_by_lr[float(lr)] = result.test
    finally:
        torch.set_num_threads(threads)
    finite = [lr for lr, v in val_by_lr.items() if math.isfinite(v)]
    if not finite:
        raise ValueError(f"track {track.name!r}: the trained floor diverged at every lr of "
                         f"{list(lrs)}; give a grid with smaller lrs")
    pick = (min if track.direction == "lower" else max)(finite, key=val_by_lr.__getitem__)
    return TrainedFloor(test_by_lr[pick], pick, val_by_lr)
