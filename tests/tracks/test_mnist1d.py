"""The mnist1d track on small generated sets: shapes, determinism in the seed, a fresh set
per seed, disjoint splits, the global RNGs left alone, no network, the shuffled variant, and
floors fitted on the very split the runs train on. Skipped where mnist1d is not installed."""
from __future__ import annotations

import random
import socket

import numpy as np
import pytest
import torch

pytest.importorskip("mnist1d", reason="the mnist1d track needs pip install benchkit[tracks]")

from benchkit import tracks  # noqa: E402
from benchkit.tracks import mnist1d  # noqa: E402


@pytest.fixture
def small(monkeypatch):
    """The track's split at 60 / 20 / 20 examples: the same code, a fraction of the time."""
    monkeypatch.setattr(mnist1d, "N_TRAIN", 60)
    monkeypatch.setattr(mnist1d, "N_VAL", 20)
    monkeypatch.setattr(mnist1d, "N_TEST", 20)
    return mnist1d.arrays.__wrapped__


def test_generation_is_offline_deterministic_and_leaves_the_global_rngs_alone(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("mnist1d generation opened a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    random.seed(7)
    np.random.seed(7)
    expected = (random.random(), np.random.rand())
    random.seed(7)
    np.random.seed(7)
    x, y = mnist1d.generate(3, 50)
    assert (random.random(), np.random.rand()) == expected  # states restored
    again, other = mnist1d.generate(3, 50), mnist1d.generate(4, 50)
    assert x.shape == (50, mnist1d.LENGTH) and x.dtype == np.float32
    assert y.shape == (50,) and y.dtype == np.int64 and set(y) <= set(range(10))
    assert np.array_equal(x, again[0]) and np.array_equal(y, again[1])
    assert not np.array_equal(x, other[0])
    assert mnist1d.generator_seed(3) != mnist1d.generator_seed(4)


def test_shuffled_sequences_are_one_permutation_of_the_positions_per_seed():
    x, y = mnist1d.generate(2, 30)
    xs, ys = mnist1d.generate(2, 30, shuffle_seq=True)
    assert np.array_equal(y, ys)
    perm = [int(np.flatnonzero(np.isclose(x[:, j][:, None], xs, atol=0).all(0))[0])
            for j in range(x.shape[1])]
    assert sorted(perm) == list(range(x.shape[1])) and perm != list(range(x.shape[1]))
    assert np.array_equal(x, xs[:, perm])


def test_splits_are_disjoint_sized_and_floors_use_the_train_and_test_split(small):
    parts = small(1)
    assert [len(x) for x, _ in parts] == [60, 20, 20]
    rows = [{r.tobytes() for r in x} for x, _ in parts]
    assert sum(map(len, rows)) == 100 and len(set.union(*rows)) == 100
    data = mnist1d.to_data(parts)
    assert data.train.x.dtype == torch.float32 and data.train.y.dtype == torch.int64
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(max_iter=2000).fit(data.train.x.numpy(), data.train.y.numpy())
    expected = float((fitted.predict(data.test.x.numpy()) == data.test.y.numpy()).mean())
    got = mnist1d.floors_of(parts)
    assert got["logistic_regression"] == pytest.approx(expected)
    assert set(got) == {"logistic_regression", "boosted trees", "RBF SVM"}
    assert all(0.0 <= v <= 1.0 for v in got.values())


def test_the_track_is_registered_with_the_paper_protocol():
    track = tracks.get("mnist1d")
    assert track.direction == "higher" and track.metric_name == "accuracy"
    assert track.batch_size == 100 and track.epochs * (mnist1d.N_TRAIN // 100) == 6000
    assert track.missing() is None
    torch.manual_seed(0)
    model = track.model()
    assert sum(p.numel() for p in model.parameters()) == 5_210  # the paper's CNN
    assert model(torch.zeros(3, mnist1d.LENGTH)).shape == (3, 10)


def test_the_papers_other_models_have_their_parameter_counts():
    from benchkit.tracks import models

    counts = {name: sum(p.numel() for p in getattr(models, f"mnist1d_{name}")().parameters())
              for name in ("logistic", "cnn", "gru")}
    assert counts == {"logistic": 410, "cnn": 5_210, "gru": 5_134}  # the repository's prints


def test_without_the_package_the_track_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mnist1d", None)
    monkeypatch.setitem(sys.modules, "mnist1d.data", None)
    assert tracks.get("mnist1d").missing() == (
        "track 'mnist1d' needs mnist1d, which is not installed: pip install benchkit[tracks]")
    with pytest.raises(ImportError, match=r"mnist1d package: pip install benchkit\[tracks\]"):
        mnist1d.generate(0, 10)
