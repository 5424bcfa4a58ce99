"""Small positive: the tabular model trained on all 2,000 training rows against the same model
on the first 1,600 of them (a quarter more data), at the same number of optimizer steps.

Source: the track's learning curve and the textbook reason (an estimator's variance falls
with the sample): docs/tracks.md's scaling table has the MLP's test MSE fall from 0.83 at
1,000 rows to 0.63 at 2,000. Measured first (seeds 0-3, each arm's lr chosen on validation,
scratch script at the track's protocol): 1,700 rows 0.0275 worse than 2,000 (3 of 4 seeds),
1,500 rows 0.066 worse (4 of 4); 1,600 rows sits between, about 0.045, under 2 of the A/A
bench's MDE (0.024 at 8 seeds). The baseline keeps the track's model, init and schedule; only
its rows differ.
"""
from __future__ import annotations

import pytest
from panel_models import fit_on_first_rows

expected = "helps"
BASELINE_ROWS = 1600

pytestmark = pytest.mark.bench(
    name="more_rows", track="tabular",
    claim="2,000 training rows give a better model than 1,600 at the same number of steps")


@pytest.mark.arm("baseline")
def test_baseline(run):
    fit_on_first_rows(run, run.track.model(), BASELINE_ROWS)


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model())
