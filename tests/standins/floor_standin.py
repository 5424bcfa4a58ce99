"""A pytest plugin that gives benchkit's built-in tracks a cheap stand-in for their floors, for
the suite's pytest sessions whose tests are not about floors. The real floors fit kernel ridge,
boosted trees, an SVM or an MLP per seed (seconds each), and every session in a fresh process
paid them again. The stand-in is one real floor, the train mean for MSE, chance accuracy
(1 / the classes) for a classifier: neither fits anything, and chance needs no data (MNIST-1D's
generator costs seconds a seed in each process). Each is named so that a report shows it was
used. It replaces the built-in tracks in the registry before any conftest.py is loaded.

tests/conftest.py loads it through ``PYTEST_PLUGINS`` (so sessions in subprocesses get it too)
for every test not marked ``floors``; the floor tests fit the real ones. The tracks are
restored when the session ends (an in-process session shares this process's registry).
PYTEST_DONT_REWRITE: imported before in-process sessions load it, so pytest must not warn that
it cannot rewrite it.
"""
from __future__ import annotations

import dataclasses

import pytest

from benchkit import tracks
from benchkit.tracks import dynamics, mnist1d, tabular
from benchkit.tracks.floors import mean_mse

NAME = "train mean (suite stand-in)"
CHANCE = "chance (suite stand-in)"
BUILT_IN = (tabular, dynamics, mnist1d)  # each has TRACK and a numpy arrays(seed)


def stand_in(module):
    """Floors of ``module``'s track, no fitting: the train mean's test MSE on its own numpy
    splits, or a classifier's chance accuracy (``module.N_CLASSES``)."""
    classes = module.N_CLASSES if module.TRACK.direction == "higher" else None

    def floors(seed: int) -> dict[str, float]:
        if classes is not None:
            return {CHANCE: 1.0 / classes}
        (_, y_train), _, (_, y_test) = module.arrays(int(seed))
        return {NAME: mean_mse(y_train, y_test)}
    floors.stand_in = True  # type: ignore[attr-defined]
    return floors


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before any conftest.py: a project's conftest that derives a track from a built-in one
    (``dataclasses.replace(tracks.get("tabular"), ...)``) derives it from the stand-in."""
    for module in BUILT_IN:
        if tracks.get(module.TRACK.name) is module.TRACK:
            tracks.register(dataclasses.replace(module.TRACK, make_floors=stand_in(module)),
                            replace=True)


def restore() -> None:
    """The built-in tracks back in the registry where a stand-in replaced them (also called by
    tests/conftest.py after each test: a session stopped by a usage error never unconfigures)."""
    for module in BUILT_IN:
        if getattr(tracks.get(module.TRACK.name).make_floors, "stand_in", False):
            tracks.register(module.TRACK, replace=True)


def pytest_unconfigure(config):
    restore()
