"""Large negative: the tabular model trained on a quarter of the training rows.

Source: the track's learning curve (docs/tracks.md, tabular_convergence.json's scaling: the MLP's
test MSE 1.13 / 1.12 on 500 rows against 0.63 / 0.62 on 2,000, seeds 0 and 1) and the textbook
reason: the teacher's 32 saturating units are estimated from fewer noisy rows. The idea arm
trains the track's model, from the baseline's init, on the first 500 of the 2,000 rows (drawn
i.i.d., so a random subset) for the same number of optimizer steps, so budgets match and only
the data differs.
"""
from __future__ import annotations

import pytest
from panel_models import fit_on_first_rows

expected = "harms"

pytestmark = pytest.mark.bench(
    name="quarter_rows", track="tabular",
    claim="a quarter of the training rows, at the same number of steps, gives a worse model "
          "(measured: test MSE 1.13 against 0.63)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    fit_on_first_rows(run, run.track.model(), len(run.data.train) // 4)
