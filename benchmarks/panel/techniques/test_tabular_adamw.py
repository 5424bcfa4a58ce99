"""AdamW (decoupled weight decay) against Adam with an L2 penalty, on tabular's tanh MLP.

Source: Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019): with Adam,
an L2 penalty added to the gradient is scaled down by the second-moment estimate where the
gradients are large, so it is not weight decay; decoupling the decay from the gradient step
(AdamW) gave lower test error than Adam + L2 on CIFAR-10 and ImageNet32, each at its best decay.
Each arm's decay here is its best on validation in a pilot before any bench ran (seeds 100-101,
lr 2e-3: Adam + L2 1e-3, AdamW 0.1; benchmarks/panel/techniques_pilot.py); both sweep the
track's lr grid. Expected here: inconclusive (the pilot's two validation means differed by
less than the seeds' spread).
"""
from __future__ import annotations

import pytest

published = "helps"
expected = "inconclusive"
source = "Loshchilov & Hutter, Decoupled Weight Decay Regularization, ICLR 2019"
L2 = 1e-3  # Adam + L2's best decay in the pilot (techniques_pilot.json)
DECOUPLED = 0.1  # AdamW's best decay in the pilot

pytestmark = pytest.mark.bench(
    looks=(16, 32, 64),  # the track's 64 seeds, with looks: a clear effect stops at 16
    seeds=64,  # look 3: inconclusive at 16 and at 32 (README, "More seeds later")
    name="technique_tabular_adamw", track="tabular",
    claim="AdamW at its tuned decay beats Adam + L2 at its tuned decay")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model(), optimizer="adam", weight_decay=L2)


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), optimizer="adamw", weight_decay=DECOUPLED)
