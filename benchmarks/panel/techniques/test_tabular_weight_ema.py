"""An exponential moving average of the weights against the last iterate, on tabular's MLP.

Source: Polyak & Juditsky, "Acceleration of Stochastic Approximation by Averaging" (SIAM J.
Control Optim. 1992); Izmailov et al., "Averaging Weights Leads to Wider Optima and Better
Generalization" (UAI 2018): averaged weights score better than the last iterate. The average
is an EMA with decay 0.99 (a horizon of about 100 steps, 6 of the 120 epochs) over the
baseline's own training: the same optimizer, minibatches and cosine schedule, with the EMA
updated after every step by the schedule object, and the averaged model scored. Expected here:
inconclusive (the cosine schedule already anneals the rate to zero, which removes most of the
jitter an average would smooth).
"""
from __future__ import annotations

import pytest
import torch

from benchkit.training.optim import schedule_factor

published = "helps"
expected = "inconclusive"
source = "Polyak & Juditsky, SIAM J. Control Optim. 1992; Izmailov et al., UAI 2018"
DECAY = 0.99

pytestmark = pytest.mark.bench(
    looks=(16, 32, 64),  # the track's 64 seeds, with looks: a clear effect stops at 16
    seeds=16,
    name="technique_tabular_weight_ema", track="tabular",
    claim="an EMA of the weights scores better than the last iterate of the same training")


class CosineWithAverage:
    """Stepped by run.fit after every optimizer step: the track's cosine schedule (as run.fit
    applies it, via LambdaLR) and then the EMA of ``model``'s parameters in ``average``."""

    def __init__(self, optimizer, total_steps: int, model: torch.nn.Module,
                 average: torch.nn.Module):
        self.cosine = torch.optim.lr_scheduler.LambdaLR(
            optimizer, schedule_factor("cosine", total_steps))
        self.pairs = list(zip(average.parameters(), model.parameters()))

    @torch.no_grad()
    def step(self) -> None:
        self.cosine.step()
        for avg, p in self.pairs:
            avg.lerp_(p, 1.0 - DECAY)


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    model = run.track.model()
    average = run.track.model()
    average.load_state_dict(model.state_dict())  # the MLP has no buffers: weights are all
    steps = -(-len(run.data.train) // run.track.batch_size) * run.epochs
    run.fit(model, schedule=lambda optimizer: CosineWithAverage(optimizer, steps, model, average))
    run.record(val=run.evaluate(average, "val"), test=run.evaluate(average, "test"))
