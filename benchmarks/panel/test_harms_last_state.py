"""Large negative: the dynamics model given only the last state of its noisy window.

Source: construction, and its measurement on this track. Every state of the window carries
independent observation noise of sd 0.2, so the window's earlier states are what lets a model
average the noise away and see the velocity; the last state alone cannot (the state 0.25 time
units ahead is not a function of one noisy state). Measured (docs/tracks.md,
dynamics_last.json): the GRU's test MSE rises from 0.0726 / 0.0573 to 0.125 / 0.125 on seeds
0 and 1 given the last state only. Here every state of the window is replaced by the last one,
so the track's model, whatever it is, keeps its input shape and its init.
"""
from __future__ import annotations

import pytest
from panel_models import LastStateOnly

expected = "harms"

pytestmark = pytest.mark.bench(
    name="last_state", track="dynamics",
    claim="a forecaster that sees only the last noisy state does worse than one that sees the "
          "window (measured 1.7-2.2x the MSE)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(LastStateOnly(run.track.model()))
