"""The standard training and evaluation loop: in-memory tensors, no DataLoader.

Minibatches are slices of a per-epoch permutation drawn from a generator seeded by the run's
seed alone, so both arms of a seed see the same order. Non-finite losses are detected without a
per-step host sync (a flag tensor checked once per epoch); a diverged run stops early and is
reported as diverged, never raised.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from benchkit import recorder
from benchkit.optim import OPTIMIZERS
from benchkit.tracks.base import Split, Track

ORDER_SALT = 0x5EED0  # the minibatch-order stream is its own, apart from init and data


@dataclass(frozen=True)
class FitResult:
    val: float
    test: float
    diverged: bool
    epochs: int
    steps: int


def order_generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(ORDER_SALT + int(seed))


@torch.no_grad()
def evaluate(model: nn.Module, split: Split, track: Track) -> float:
    """The track's metric on one split, in one batched forward."""
    was_training = model.training
    model.eval()
    try:
        value = float(track.metric(model(split.x), split.y))
    finally:
        model.train(was_training)
    return value


def train(model: nn.Module, train_split: Split, track: Track, *, lr: float, epochs: int,
          batch_size: int, seed: int, weight_decay: float = 0.0) -> tuple[bool, int]:
    """Train in place with the track's loss and optimizer. Returns (diverged, steps)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("run.fit: the model has no trainable parameters")
    opt = OPTIMIZERS[track.optimizer](params, lr, weight_decay=weight_decay)
    gen = order_generator(seed)
    n = len(train_split)
    x, y = train_split.x, train_split.y
    model.train()
    steps, paused = 0, None
    try:
        for epoch in range(epochs):
            if epoch == 1:  # later epochs repeat the first one's calls: see benchkit.recorder
                paused = recorder.pause()
            finite = torch.ones((), dtype=torch.bool)
            order = torch.randperm(n, generator=gen)
            for start in range(0, n, batch_size):
                idx = order[start:start + batch_size]
                loss = track.loss(model(x[idx]), y[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                finite &= torch.isfinite(loss.detach())
                steps += 1
            if not bool(finite):
                return True, steps
        return False, steps
    finally:
        recorder.resume(paused)


def fit(model: nn.Module, data, track: Track, *, lr: float, epochs: int, batch_size: int,
        seed: int, weight_decay: float = 0.0) -> FitResult:
    diverged, steps = train(model, data.train, track, lr=lr, epochs=epochs,
                            batch_size=batch_size, seed=seed, weight_decay=weight_decay)
    if diverged:
        return FitResult(math.nan, math.nan, True, epochs, steps)
    val = evaluate(model, data.val, track)
    test = evaluate(model, data.test, track)
    return FitResult(val, test, not (math.isfinite(val) and math.isfinite(test)), epochs, steps)
