"""Small harm: the tabular model trained on the first 1,800 of its 2,000 rows, at the same
number of optimizer steps.

Source: construction (an estimator's variance rises as its sample shrinks; the rows are drawn
i.i.d., so the first ones are a random subset). Its effect was pre-registered on seeds 100-115,
disjoint from the replication blocks (benchmarks/panel/replication.py preregister): +0.056
test MSE at the selected configs, worse on 16 of 16 seeds.
"""
from __future__ import annotations

import pytest
from panel_models import fit_on_first_rows

expected = "harms"
KEPT_ROWS = 1800

pytestmark = pytest.mark.bench(
    name="rep_fewer_rows", track="tabular",
    claim="fewer rows, at equal steps, give a worse model")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    fit_on_first_rows(run, run.track.model(), KEPT_ROWS)
