"""AdamW (decoupled weight decay) against Adam with an L2 penalty, on MNIST-1D's CNN.

Source: Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019): with Adam,
an L2 penalty added to the gradient is scaled down by the second-moment estimate where the
gradients are large, so it is not weight decay; decoupling the decay from the gradient step
(AdamW) gave lower test error than Adam + L2 on CIFAR-10 and ImageNet32, each at its best decay.
Each arm's decay here is its best mean validation accuracy in a pilot before any bench ran
(seeds 100-101, the track's lr 1e-2, constant: Adam + L2 1e-3 of 0, 1e-5, 1e-4, 1e-3, 3e-3;
AdamW 0.03 of 0.01, 0.03, 0.1; benchmarks/panel/techniques_pilot.py --track mnist1d). As on
tabular, the baseline arm is Adam + L2, not the track's Adam without decay, so this module
shares no runs with the other mnist1d technique modules. Expected here: inconclusive (the
pilot's validation means, 0.952 and 0.957, differ by less than the seeds' spread).
"""
from __future__ import annotations

import pytest

published = "helps"
expected = "inconclusive"
source = "Loshchilov & Hutter, Decoupled Weight Decay Regularization, ICLR 2019"
L2 = 1e-3  # Adam + L2's best decay in the pilot (techniques_pilot_mnist1d.json)
DECOUPLED = 0.03  # AdamW's best decay in the pilot

pytestmark = pytest.mark.bench(
    looks=(8, 16, 24),  # the track's 24 seeds, with looks: a clear effect stops at 8
    seeds=16,  # look 2: inconclusive at 8 (README, "More seeds later")
    name="technique_adamw", track="mnist1d",
    claim="AdamW at its tuned decay beats Adam + L2 at its tuned decay")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model(), optimizer="adam", weight_decay=L2)


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), optimizer="adamw", weight_decay=DECOUPLED)
