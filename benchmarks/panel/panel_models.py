"""Model wrappers and a data-subset fit shared by the panel's modules (benchmarks/panel/).

Each wrapper changes what a model sees, never how it is trained: the arms still train with
``run.fit`` at the track's protocol. Permutations come from their own generator, seeded by the
run's seed, so drawing one leaves the global RNG (and the model's init) as the baseline's.
"""
from __future__ import annotations

import torch
from torch import nn

from benchkit.tracks.base import Split
from benchkit.training import loop

PERMUTATION_SALT = 0x9E12  # the permutation's stream, apart from init, data and minibatch order


def permutation(seed: int, n: int) -> torch.Tensor:
    """A permutation of ``range(n)`` fixed by ``seed`` (one per seed, as the paper's shuffled
    MNIST-1D draws one), from a generator that is not the global one."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(PERMUTATION_SALT + seed))


class PermutedInput(nn.Module):
    """``net(x[..., order])``: the input's last axis (MNIST-1D's positions, tabular's
    features) read in a fixed permuted order, the same for train, validation and test, as a
    dataset with permuted columns would be. The order is a buffer, not a parameter."""

    def __init__(self, order: torch.Tensor, net: nn.Module):
        super().__init__()
        self.register_buffer("order", order.clone())
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x[..., self.order])


class LastStateOnly(nn.Module):
    """``net`` given a window whose every state is replaced by its last one: the window's
    length and shape are kept (any window model fits), its information is the last state's."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x[:, -1:].expand_as(x))


class Average(nn.Module):
    """The mean of the members' predictions (an ensemble of separately trained models)."""

    def __init__(self, *members: nn.Module):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([m(x) for m in self.members]).mean(dim=0)


def fit_on_first_rows(run, model: nn.Module, rows: int) -> None:
    """Train ``model`` on the first ``rows`` of the seed's train split (rows are drawn i.i.d.,
    so they are a random subset): :func:`fit_on_rows`."""
    train = run.data.train
    fit_on_rows(run, model, Split(train.x[:rows], train.y[:rows]))


def fit_on_rows(run, model: nn.Module, rows: Split) -> None:
    """Train ``model`` on ``rows`` in place of the seed's train split for as many optimizer
    steps as ``run.fit`` takes on that split (epochs scaled by the ratio of batches per
    epoch), with the track's optimizer, schedule, batch size and ``run.cfg``'s lr; record
    val, test, params and steps (budgets match the baseline's within a batch per epoch)."""
    track = run.track
    per_epoch = -(-len(run.data.train) // track.batch_size)
    given = -(-len(rows) // track.batch_size)
    diverged, steps = loop.train(
        model, rows, track, lr=run.cfg["lr"], epochs=max(1, run.epochs * per_epoch // given),
        batch_size=track.batch_size, seed=run.seed, schedule=track.schedule)
    run.budget("params", sum(p.numel() for p in model.parameters() if p.requires_grad))
    run.budget("steps", steps)
    nan = float("nan")
    run.record(val=nan if diverged else run.evaluate(model, "val"),
               test=nan if diverged else run.evaluate(model, "test"))
