"""The real-data track (mnist1d) end to end: the metric's direction honoured through the
plugin, its floors in the report, and a clear error when an optional dependency is missing;
a retired track (charlm) named is refused with the reason."""
from __future__ import annotations

import pytest

from benchkit import tracks
from benchkit.spec import cfg_id
from idea_modules import Source, arm, idea_module

def aa_module(track: str, grid: object) -> str:
    """An A/A bench of ``track`` (``grid`` None: the track's own)."""
    return idea_module(f"aa_{track}", arm("baseline"), arm("idea"), track=track,
                       grid=Source(repr(grid)), seeds=None)


def test_mnist1d_without_its_package_is_a_collection_error_naming_the_extra(pytester):
    pytester.makeconftest("import sys\nsys.modules['mnist1d'] = None\n")
    pytester.makepyfile(test_aa=aa_module("mnist1d", None))
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert ("track 'mnist1d' needs mnist1d, which is not installed: pip install benchkit[tracks]"
            in result.stdout.str())
    assert "Traceback" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()


@pytest.fixture
def small_mnist1d(monkeypatch):
    """mnist1d's code at 200 / 100 / 100 examples (generation is most of a short bench's
    time); its data caches are emptied before and after, so no other test sees the small set."""
    from benchkit.tracks import mnist1d

    caches = (mnist1d.arrays, mnist1d.make_data, mnist1d.floors)
    for cache in caches:
        cache.cache_clear()
    for size, n in (("N_TRAIN", 200), ("N_VAL", 100), ("N_TEST", 100)):
        monkeypatch.setattr(mnist1d, size, n)
    # the floors' child process would compute the full-size data's floors: the controller does
    from benchkit.store.floor_ahead import Ahead
    monkeypatch.setattr(Ahead, "want", lambda self, track, seed: None)
    yield
    for cache in caches:
        cache.cache_clear()


@pytest.mark.floors
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name, grid", [("mnist1d", {"lr": [3e-3, 1e-2]})])
def test_an_aa_module_benches_end_to_end(pytester, read_report, request, name, grid):
    if name == "mnist1d":
        request.getfixturevalue("small_mnist1d")
    track = tracks.get(name)
    pytester.makepyfile(test_aa=aa_module(name, grid))
    result = pytester.runpytest("--bench-seeds", "2", "--bench-epochs", "1")
    n_runs = 2 * 2 * len(grid["lr"])
    result.assert_outcomes(passed=n_runs)
    report = read_report(pytester.path, f"aa_{name}", track=name)
    assert report["metric_direction"] == f"{track.direction} is better"
    assert report["metric"] == track.metric_name
    assert report["comparison"]["delta_mean"] == 0.0  # A/A: the same bits seed by seed
    assert report["practical_verdict"] == "inconclusive"
    sweep = report["baseline"]["sweep"]
    pick = max if track.direction == "higher" else min
    best = pick(sweep, key=lambda row: row["val_mean"])
    assert cfg_id(report["baseline"]["best_cfg"]) == cfg_id(best["cfg"])
    assert len({row["val_mean"] for row in sweep}) > 1  # the direction decided something
    # the floors of the bench's seeds, as the track computes them
    assert report["floors"] == pytest.approx(track.floors(report["protocol"]["seeds"]))
    assert set(report["floors"]) == {"logistic_regression", "boosted trees", "RBF SVM"}


def test_the_retired_charlm_track_is_refused_with_its_reason():
    with pytest.raises(KeyError, match="track 'charlm' was retired: a run took 167 s"):
        tracks.get("charlm")
