"""Floors computed while the runs train (benchkit.store.floor_ahead): a child process gives the
numbers the same floor function gives in the controller, and any fault leaves a seed to the
controller (None), never a wrong number or a hung session."""
from __future__ import annotations

import dataclasses
import time

import pytest

from benchkit import tracks
from benchkit.store import floor_cache
from benchkit.store.floor_ahead import Ahead, function_name
from benchkit.tracks import floors, tabular


@pytest.mark.slow  # the real tabular floors of one seed in a child: seconds
def test_the_child_gives_the_controllers_numbers_bit_for_bit():
    track, ahead = tracks.get("tabular"), Ahead()
    try:
        ahead.want(track, 0)
        ahead.want(track, 0)  # asked once
        got = ahead.get(track, 0)
    finally:
        ahead.close()
    tabular.floors.cache_clear()
    assert got == tabular.floors(0)  # ==: the same bits, not approximately


def test_a_wait_for_the_child_ends_soon_after_stop_says_so():
    """A child still computing (here: asked, never answering) is not waited for once
    ``stop()`` is true: the session's SIGTERM is not kept waiting on floors."""
    ahead, track = Ahead(), tracks.get("tabular")
    ahead.asked.add((function_name(track), 0))  # asked of a child that never answers
    calls = []
    started = time.monotonic()
    assert ahead.get(track, 0, stop=lambda: calls.append(1) or len(calls) >= 2) is None
    assert len(calls) == 2 and time.monotonic() - started < 5.0


def test_a_floor_that_raises_in_the_child_is_none_and_the_controller_computes_it():
    broken = dataclasses.replace(tracks.get("tabular"), name="broken",
                                 make_floors=floors.mean_mse)  # benchkit's; wrong arguments
    ahead = Ahead()
    try:
        ahead.want(broken, 3)
        assert ahead.get(broken, 3) is None
        assert ahead.get(broken, 4) is None  # never asked
    finally:
        ahead.close()


def test_a_users_track_is_not_sent_to_the_child():
    mine = dataclasses.replace(tracks.get("tabular"), name="mine",
                               make_floors=lambda seed: {"zero": float(seed)})
    ahead = Ahead()
    ahead.want(mine, 1)
    assert ahead.proc is None and ahead.get(mine, 1) is None
    ahead.close()


def test_floors_take_the_childs_answer_where_the_cache_has_none():
    class Given:
        def get(self, track, seed, stop):
            return {"kernel ridge": float(seed)}

        def started(self, track, seed):
            return True

    class Cache(dict):
        def get(self, key, default):
            return super().get(key, default)

        def set(self, key, value):
            self[key] = value

    track, cache = tracks.get("tabular"), Cache()
    assert floor_cache.floors(track, [2, 4], cache, Given()) == {"kernel ridge": 3.0}
    assert cache[floor_cache.key(track, 4)] == {"kernel ridge": 4.0}  # kept for later sessions


def test_the_controller_computes_the_seeds_the_child_has_not_reached_from_the_last(
        monkeypatch):
    """A child behind the training (a loaded machine, its lower priority): the controller
    takes the seeds it has answered, waits only for the one it is computing, and computes the
    others itself, from the last, meanwhile; the mean is over the seeds in their order."""
    computed, waited = [], []
    track = dataclasses.replace(tracks.get("tabular"), make_floors=lambda seed: computed.append(
        seed) or {"kernel ridge": float(seed)})
    monkeypatch.setattr(floor_cache, "cacheable", lambda track: True)

    class Behind:   # answered seed 0, computing seed 1, not yet at 2 and 3
        def get(self, track, seed, stop):
            waited.append(seed)
            return {"kernel ridge": float(seed)}

        def started(self, track, seed):
            return seed in (0, 1)

    assert floor_cache.floors(track, [0, 1, 2, 3], None, Behind()) == {"kernel ridge": 1.5}
    assert computed == [3, 2] and waited == [1, 0]


def test_started_is_an_answered_seed_or_the_one_the_child_is_on():
    ahead, track = Ahead(), tracks.get("tabular")
    name = lambda seed: (function_name(track), seed)  # noqa: E731
    ahead.asked, ahead.order = {name(0), name(1), name(2)}, [name(0), name(1), name(2)]
    ahead.answers = {name(0): None}
    assert [ahead.started(track, s) for s in (0, 1, 2, 3)] == [True, True, False, False]
    ahead.ended = True   # the child has gone: nothing more is coming
    assert [ahead.started(track, s) for s in (0, 1, 2)] == [True, False, False]


def test_closing_stops_a_child_still_computing():
    ahead = Ahead()
    ahead.want(tracks.get("tabular"), 5)
    proc = ahead.proc
    ahead.close()
    assert proc is not None and proc.poll() is not None


def test_the_child_runs_below_the_training_s_priority():
    import os

    broken = dataclasses.replace(tracks.get("tabular"), name="broken",
                                 make_floors=floors.mean_mse)
    ahead = Ahead()
    try:
        ahead.want(broken, 1)
        assert ahead.get(broken, 1) is None  # answered: the child has set its niceness
        assert ahead.proc is not None
        child = os.getpriority(os.PRIO_PROCESS, ahead.proc.pid)
        assert child == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    finally:
        ahead.close()


def test_the_child_calls_what_it_is_given_first(tmp_path):
    """The controller gives the trained floors' loop this way (the store layer imports no
    training): a prepare function that fails leaves every seed to the controller."""
    broken = dataclasses.replace(tracks.get("tabular"), name="broken",
                                 make_floors=floors.mean_mse)
    ahead = Ahead(("benchkit.tracks.floors:no_such_function",))
    try:
        ahead.want(broken, 1)
        assert ahead.get(broken, 1) is None  # the child stopped at once: no answer
    finally:
        ahead.close()
