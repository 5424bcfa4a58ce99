"""The real-data tracks (charlm, mnist1d): data deterministic in the seed, splits disjoint,
the metric's direction honoured end to end, and a clear error when an optional dependency is
missing."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from benchkit import tracks
from benchkit.spec import cfg_id
from builders import uncached

REAL = ("charlm",)  # mnist1d: tests/tracks/test_mnist1d.py


@pytest.mark.parametrize("name", REAL)
def test_data_is_deterministic_in_the_seed_and_fresh_per_seed(name):
    track = tracks.get(name)
    make = uncached(track)
    first, again, other = make(5), make(5), make(6)
    for a, b, c in zip(first, again, other, strict=True):
        assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
        assert not torch.equal(a.x, c.x)


def test_charlm_windows_are_disjoint_and_targets_are_the_next_character():
    from benchkit.tracks import charlm

    starts = charlm.window_starts(3)
    assert [len(s) for s in starts] == [charlm.N_TRAIN, charlm.N_VAL, charlm.N_TEST]
    chars = [{int(a) + i for a in s for i in range(charlm.CONTEXT + 1)} for s in starts]
    assert sum(len(c) for c in chars) == (charlm.CONTEXT + 1) * sum(len(s) for s in starts)
    assert np.array_equal(np.sort(np.concatenate(starts)), np.unique(np.concatenate(starts)))
    assert not np.array_equal(starts[0], charlm.window_starts(4)[0])
    data = tracks.get("charlm").data(3)
    ids = charlm.tokens()
    for split, first in zip(data, (s[0] for s in starts)):
        assert split.x.shape == split.y.shape == (len(split), charlm.CONTEXT)
        assert split.x.dtype == torch.int64
        assert torch.equal(split.x[0], torch.from_numpy(ids[first:first + 64].astype(np.int64)))
        assert torch.equal(split.x[:, 1:], split.y[:, :-1])  # the target is the next character
    assert int(ids.max()) < charlm.VOCAB


def test_charlm_blocks_of_other_sizes_contexts_and_texts_stay_disjoint():
    """benchmarks/tracks/charlm_configs.py draws other split sizes, contexts and texts through
    the same function; the track's own blocks are its defaults."""
    from benchkit.tracks import charlm

    ids = charlm.encode("a\u00e9\n" * 400)  # 1,200 characters: 'a', other, newline
    assert ids[:3].tolist() == [ord("a") - 32, charlm.VOCAB - 1, 95]
    train, val, test = charlm.blocks(2, (20, 5, 5), 16, ids)
    assert train.shape == (20, 17) and val.shape == test.shape == (5, 17)
    starts = np.concatenate(charlm.window_starts(2, (20, 5, 5), 16, ids))
    assert len(set((starts[:, None] + np.arange(17)).ravel().tolist())) == 30 * 17
    assert all(np.array_equal(a, b) for a, b in zip(charlm.blocks(1), charlm.blocks(
        1, (charlm.N_TRAIN, charlm.N_VAL, charlm.N_TEST), charlm.CONTEXT, charlm.tokens())))


def test_charlm_tokens_keep_ascii_and_the_protocol_names_the_python_version():
    import platform

    from benchkit.tracks import charlm

    ids = charlm.tokens()
    assert len(ids) > 100_000
    text = "".join(" " if i == 96 else "\n" if i == 95 else chr(32 + int(i)) for i in ids[:2000])
    assert "assert" in text or "the" in text  # English and Python, not noise
    track = tracks.get("charlm")
    assert platform.python_version() in track.protocol()["text"]
    assert platform.python_version() in track.description
    assert track.direction == "lower" and track.metric_name == "bits_per_char"


def test_charlm_bits_per_char_of_a_uniform_guess_is_log2_of_the_vocabulary():
    from benchkit.tracks import charlm

    track = tracks.get("charlm")
    logits = torch.zeros(3, charlm.CONTEXT, charlm.VOCAB)
    y = torch.randint(0, charlm.VOCAB, (3, charlm.CONTEXT))
    assert float(track.metric(logits, y)) == pytest.approx(np.log2(charlm.VOCAB), rel=1e-6)
    torch.manual_seed(0)
    out = track.model()(tracks.get("charlm").data(0).val.x[:4])
    assert out.shape == (4, charlm.CONTEXT, charlm.VOCAB)


def test_charlm_floors_are_the_ngrams_up_to_five_each_better_than_the_last():
    from benchkit.tracks import charlm, floors

    got = tracks.get("charlm").floors([0])
    assert list(got) == list(floors.NGRAMS)
    values = list(got.values())
    assert all(a > b for a, b in zip(values, values[1:])), got
    assert values[0] < np.log2(charlm.VOCAB)


def test_a_char_transformer_with_a_window_sees_only_that_many_characters():
    """window=2: the prediction at t depends on the characters at t and t - 1 only (the
    trigram's context), whatever the depth; without a window, on all before it."""
    from benchkit.tracks.models import char_transformer

    x = torch.randint(0, 97, (1, 16), generator=torch.Generator().manual_seed(0))
    changed = x.clone()
    changed[0, 5] = (x[0, 5] + 1) % 97
    for window, moved in ((2, {5, 6}), (None, set(range(5, 16)))):
        torch.manual_seed(0)
        model = char_transformer(97, context=16, window=window).eval()
        with torch.no_grad():
            diff = (model(x) - model(changed)).abs().amax(dim=-1)[0]
        assert {t for t in range(16) if diff[t] > 1e-6} == moved, window


AA_IDEA = '''
import pytest

pytestmark = pytest.mark.bench(name="aa_{track}", track="{track}", grid={grid})


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model())
'''


def test_mnist1d_without_its_package_is_a_collection_error_naming_the_extra(pytester):
    pytester.makeconftest("import sys\nsys.modules['mnist1d'] = None\n")
    pytester.makepyfile(test_aa=AA_IDEA.format(track="mnist1d", grid=None))
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

    caches = (mnist1d.arrays, mnist1d.make_data)
    for cache in caches:
        cache.cache_clear()
    for size, n in (("N_TRAIN", 200), ("N_VAL", 100), ("N_TEST", 100)):
        monkeypatch.setattr(mnist1d, size, n)
    yield
    for cache in caches:
        cache.cache_clear()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name, grid", [("mnist1d", {"lr": [3e-3, 1e-2]})])
def test_an_aa_module_benches_end_to_end(pytester, read_report, request, name, grid):
    """(charlm's end to end is its A/A bench, benchmarks/tracks/test_aa.py: one of its epochs
    is 96 steps of a transformer, too long for the suite.)"""
    if name == "mnist1d":
        request.getfixturevalue("small_mnist1d")
    track = tracks.get(name)
    pytester.makepyfile(test_aa=AA_IDEA.format(track=name, grid=grid))
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
    assert set(report["floors"]) == {"logistic_regression"}
