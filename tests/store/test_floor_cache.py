"""Floors kept between sessions (benchkit.store.floor_cache): taken from pytest's cache where a
valid value is kept under the track's key, computed and kept otherwise; a user's track is
never kept; a session's report takes its floors from the cache, and --cache-clear recomputes
them."""
from __future__ import annotations

import dataclasses
import json
import math

import pytest

from benchkit import tracks
from benchkit.store import floor_cache
from idea_modules import FAST, HARMS


class DictCache:
    """pytest's ``config.cache`` interface (``get(key, default)``, ``set(key, value)``)."""

    def __init__(self):
        self.values: dict = {}

    def get(self, key, default):
        return self.values.get(key, default)

    def set(self, key, value):
        self.values[key] = json.loads(json.dumps(value))


def seed_floors(seed: int) -> dict[str, float]:
    """Floors that cost nothing; counted as benchkit's own code, so kept like a built-in's."""
    CALLS.append(seed)
    return {"linear": 1.0 + seed, "kernel ridge": 0.5 + seed}


seed_floors.__module__ = "benchkit.tracks.cheap"  # what :func:`floor_cache.cacheable` reads
CALLS: list[int] = []


@pytest.fixture
def cheap():
    """The tabular track with :func:`seed_floors`; the real floor fits are tested with a session
    (marked ``floors``) below."""
    CALLS.clear()
    track = dataclasses.replace(tracks.get("tabular"), make_floors=seed_floors)
    assert floor_cache.cacheable(track)
    return track


def test_floors_are_computed_once_per_seed_then_read_from_the_cache(cheap):
    cache = DictCache()
    assert floor_cache.floors(cheap, [0, 1], cache) == cheap.floors([0, 1])
    assert sorted(cache.values) == sorted(floor_cache.key(cheap, s) for s in (0, 1))
    assert cache.values[floor_cache.key(cheap, 1)] == seed_floors(1)
    CALLS.clear()
    assert floor_cache.floors(cheap, [0, 1], cache) == cheap.floors([0, 1]) and CALLS == [0, 1]
    # what is kept is what is used: a kept value stands for the computation
    cache.values[floor_cache.key(cheap, 1)] = {name: 5.0 for name in seed_floors(1)}
    CALLS.clear()
    got = floor_cache.floors(cheap, [0, 1], cache)
    assert CALLS == [] and got == {n: (v + 5.0) / 2 for n, v in seed_floors(0).items()}


@pytest.mark.parametrize("bad", [None, {}, {"linear": "x"}, {"linear": math.nan}, [1.0],
                                 {"linear": True}])
def test_a_kept_value_that_is_not_floors_is_a_miss_and_is_replaced(cheap, bad):
    cache = DictCache()
    cache.values[floor_cache.key(cheap, 0)] = bad
    assert floor_cache.floors(cheap, [0], cache) == seed_floors(0) and CALLS == [0, 0]
    assert cache.values[floor_cache.key(cheap, 0)] == seed_floors(0)


def test_a_users_track_is_never_kept_and_no_cache_computes_as_before(cheap):
    mine = dataclasses.replace(cheap, name="mine", make_floors=lambda seed: {"zero": float(seed)})
    cache = DictCache()
    assert floor_cache.floors(mine, [1, 3], cache) == {"zero": 2.0} and cache.values == {}
    assert not floor_cache.cacheable(dataclasses.replace(mine, make_floors=None))
    assert floor_cache.floors(cheap, [0], None) == seed_floors(0)


def test_after_a_stop_no_seed_is_computed_and_the_kept_ones_still_count(cheap):
    """A SIGTERM while the reports are written (``stop``): the floors not yet computed are left
    out, not waited for; seeds kept meanwhile stay kept, and all kept is all computed."""
    cache = DictCache()
    floor_cache.floors(cheap, [1], cache)
    CALLS.clear()
    with pytest.raises(floor_cache.FloorsStopped, match="1 of 2 seed"):
        floor_cache.floors(cheap, [0, 1], cache, stop=lambda: True)
    assert CALLS == []
    assert floor_cache.floors(cheap, [1], cache, stop=lambda: True) == seed_floors(1)
    mine = dataclasses.replace(cheap, name="mine", make_floors=lambda seed: {"zero": 0.0})
    with pytest.raises(floor_cache.FloorsStopped, match="2 seed"):
        floor_cache.floors(mine, [1, 3], cache, stop=lambda: True)
    assert floor_cache.floors(dataclasses.replace(mine, make_floors=None), [1], cache,
                              stop=lambda: True) == {}


def test_the_key_is_the_track_seed_and_floor_code_not_the_rest_of_the_protocol(monkeypatch):
    """Floors depend on the track's data and floor code and the seed: the epochs or the grid
    (what --bench-epochs or an idea's grid change) leave the key alone, and reading the key
    imports nothing (scikit-learn's import alone cost seconds on a loaded machine)."""
    track = tracks.get("tabular")
    base = floor_cache.key(track, 0)
    assert base == floor_cache.key(track, 0) and base.startswith(floor_cache.PREFIX)
    assert floor_cache.key(track, 1) != base
    assert floor_cache.key(dataclasses.replace(track, epochs=track.epochs + 1), 0) == base
    assert floor_cache.key(dataclasses.replace(track, grid=({"lr": 1.0},)), 0) == base
    monkeypatch.setattr(floor_cache, "floor_code_digest", lambda: "edited")
    assert floor_cache.key(track, 0) != base


def test_the_floor_code_is_benchkits_tracks_and_training_packages(tmp_path, monkeypatch):
    digest = floor_cache.floor_code_digest()
    assert digest == floor_cache.floor_code_digest() and len(digest) == 32
    floor_cache.floor_code_digest.cache_clear()
    monkeypatch.setattr(floor_cache, "CODE", ("tracks",))
    try:
        assert floor_cache.floor_code_digest() != digest
    finally:
        floor_cache.floor_code_digest.cache_clear()


@pytest.mark.floors
@pytest.mark.slow
@pytest.mark.timeout(600)  # real floors of two seeds, twice: seconds each on a loaded machine
def test_a_session_takes_its_floors_from_the_cache_and_cache_clear_recomputes(pytester,
                                                                              read_report):
    pytester.makepyfile(test_const=HARMS)
    two_seeds = [*FAST, "--bench-seeds", "2"]
    assert pytester.runpytest(*two_seeds).ret == 0
    true = read_report(pytester.path, "const")["floors"]
    folder = pytester.path / ".pytest_cache" / "v" / "benchkit" / "floors"
    files = sorted(folder.iterdir())
    assert len(files) == 2  # one per seed
    for f in files:
        f.write_text(json.dumps({name: 7.0 for name in true}))
    assert pytester.runpytest(*two_seeds).ret == 0
    assert read_report(pytester.path, "const")["floors"] == {name: 7.0 for name in true}
    assert pytester.runpytest(*two_seeds, "--cache-clear").ret == 0
    assert read_report(pytester.path, "const")["floors"] == pytest.approx(true)
