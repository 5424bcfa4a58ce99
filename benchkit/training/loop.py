"""The standard training and evaluation loop: in-memory tensors, no DataLoader.

Minibatches are slices of a per-epoch permutation drawn from a generator seeded by the run's
seed alone, so both arms of a seed see the same order. :func:`minibatches` is the one place that
draws them: ``run.fit`` trains on it and ``run.batches`` hands it to an arm with its own loop,
so the two cannot drift apart. Non-finite losses are detected without a per-step host sync (a
flag tensor checked once per epoch); a diverged run stops early and is reported as diverged,
never raised.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
from torch import nn

from benchkit.store import trace
from benchkit.training.optim import make_optimizer, make_schedule
from benchkit.tracks.base import Split, Track

FRACTIONS = (0.25, 0.5, 0.75, 1.0)  # of training, where run.fit takes validation (its curve)


def curve_epochs(epochs: int) -> tuple[int, ...]:
    """The epochs after which a run's validation metric is taken: floor(f * epochs) for f in
    :data:`FRACTIONS`, at least 1, deduplicated (``()`` for 0 epochs)."""
    return tuple(sorted({max(1, math.floor(f * epochs)) for f in FRACTIONS})) if epochs > 0 else ()


ORDER_SALT = 0x5EED0  # the minibatch-order stream is its own, apart from init and data


@dataclass(frozen=True)
class FitResult:
    val: float
    test: float
    diverged: bool
    epochs: int
    steps: int
    # (epochs done, val): see benchkit.verdict.convergence
    curve: tuple[tuple[int, float], ...] = ()


def order_generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(ORDER_SALT + int(seed))


def minibatches(split: Split, *, batch_size: int, epochs: int,
                seed: int) -> Iterator[Iterator[Split]]:
    """Per epoch, an iterator over that epoch's minibatches (``Split(x, y)``, on the split's
    device). The permutation is drawn on the CPU from :func:`order_generator`, whatever the
    device, so that every device sees the same order."""
    gen = order_generator(seed)
    x, y = split.x, split.y
    for _ in range(epochs):
        order = torch.randperm(len(split), generator=gen)
        if order.device != x.device:
            order = order.to(x.device)
        yield _epoch(x, y, order.split(batch_size))


def _epoch(x: torch.Tensor, y: torch.Tensor, batches) -> Iterator[Split]:
    # index_select: the rows and fresh tensors of ``x[idx]``, without Python's indexing path
    for idx in batches:
        yield Split(torch.index_select(x, 0, idx), torch.index_select(y, 0, idx))


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


def train(model: nn.Module, train_split: Split, track: Track, *, lr: float | None, epochs: int,
          batch_size: int, seed: int, weight_decay: float = 0.0, optimizer=None,
          loss: Callable | None = None, schedule="constant",
          momentum: float | None = None,
          on_epoch: Callable[[int], None] | None = None) -> tuple[bool, int]:
    """Train in place. Returns (diverged, steps). ``optimizer`` (default: the track's),
    ``schedule`` and ``loss`` (default: the track's) are as in :mod:`benchkit.training.optim`;
    ``on_epoch(epochs_done)`` is called after each finite epoch."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("run.fit: the model has no trainable parameters")
    loss_fn = track.loss if loss is None else loss
    opt = make_optimizer(track.optimizer if optimizer is None else optimizer, params, lr=lr,
                         weight_decay=weight_decay, momentum=momentum,
                         schedulable=callable(schedule))
    per_epoch = -(-len(train_split) // batch_size)
    scheduler = make_schedule(schedule, opt, per_epoch * epochs)
    model.train()
    steps, paused = 0, None
    try:
        for number, epoch in enumerate(minibatches(train_split, batch_size=batch_size,
                                                   epochs=epochs, seed=seed)):
            if number == 1:  # later epochs repeat the first one's calls: see benchkit.store.trace
                paused = trace.pause()
            losses = []
            for x, y in epoch:
                value = loss_fn(model(x), y)
                if steps == 0 and loss is not None:
                    _check_loss(value)
                opt.zero_grad(set_to_none=True)
                backward(value)
                opt.step()
                if scheduler is not None:
                    scheduler.step()
                losses.append(value.detach())
                steps += 1
            if losses and not bool(torch.stack(losses).isfinite().all()):
                return True, steps
            if on_epoch is not None:
                on_epoch(number + 1)
        return False, steps
    finally:
        trace.resume(paused)


_ENGINE = getattr(torch.autograd.Variable, "_execution_engine", None)


def backward(value: torch.Tensor) -> None:
    """``value.backward()``. For a plain one-element tensor that requires a gradient (every
    track's loss), autograd's engine is given the gradient 1 directly, as
    ``torch.autograd.backward`` would give it after its Python checks (a tabular run.fit took
    0.88x its time without them, same bits): the same gradients. A subclass, a non-scalar or a
    loss without a gradient goes through ``value.backward()`` and its own errors."""
    if (_ENGINE is None or type(value) is not torch.Tensor or not value.requires_grad
            or value.numel() != 1):
        value.backward()
        return
    one = torch.ones_like(value, memory_format=torch.preserve_format)  # fresh, as torch's: a
    # backward that writes into its incoming gradient must not change the next step's
    _ENGINE.run_backward((value,), (one,), False, False, (), allow_unreachable=True,
                         accumulate_grad=True)


def _check_loss(value) -> None:
    if not isinstance(value, torch.Tensor) or value.numel() != 1:
        got = (f"a tensor of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
               else f"{type(value).__name__}")
        raise TypeError(f"run.fit: loss must return a scalar tensor (one element, with a "
                        f"gradient), got {got}")


def fit(model: nn.Module, data, track: Track, *, lr: float | None, epochs: int,
        batch_size: int, seed: int, **choices) -> FitResult:
    """Train (``choices``: ``weight_decay``, ``optimizer``, ``loss``, ``schedule``,
    ``momentum``, as :func:`train`) and evaluate on val and test. The validation metric is
    also taken at the points of :func:`benchkit.training.loop.curve_epochs` (one batched forward
    each, in eval mode: no training state changes) and returned as ``curve``."""
    points = set(curve_epochs(epochs)) - {epochs}
    curve: list[tuple[int, float]] = []

    def on_epoch(done: int) -> None:
        if done in points:
            curve.append((done, evaluate(model, data.val, track)))

    diverged, steps = train(model, data.train, track, lr=lr, epochs=epochs,
                            batch_size=batch_size, seed=seed, on_epoch=on_epoch, **choices)
    if diverged:
        return FitResult(math.nan, math.nan, True, epochs, steps, tuple(curve))
    val = evaluate(model, data.val, track)
    test = evaluate(model, data.test, track)
    if epochs > 0:
        curve.append((epochs, val))
    return FitResult(val, test, not (math.isfinite(val) and math.isfinite(test)), epochs, steps,
                     tuple(curve))
