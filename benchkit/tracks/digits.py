"""``digits``: scikit-learn's bundled 8x8 handwritten digits, 10-class classification.

The 1,797 images ship inside scikit-learn (no download). Each seed draws a fresh stratified
split, 60 / 20 / 20 per class, so every split holds every digit in the same proportions;
pixels are scaled from 0..16 to 0..1. The metric is accuracy (higher is better), the loss is
cross-entropy. scikit-learn is an optional dependency (``pip install benchkit[tracks]``): the
track is always registered, and benching on it without scikit-learn is a collection error
naming the extra.

Budget ``convergence``: at its default epochs the baseline's validation accuracy has levelled
off (benchmarks/results/convergence.json: under 1% over the last quarter, no gain from twice the
epochs), so the epochs aim at a trained-out model.
"""
from __future__ import annotations

import functools

import numpy as np

from benchkit.tracks import floors as floor
from benchkit.tracks.base import Data, Split, Track

VAL_FRACTION = TEST_FRACTION = 0.2   # of each class; the rest trains
N_CLASSES = 10
INSTALL_HINT = "pip install benchkit[tracks]"
_DATA_SALT = 0xD161


def load() -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 images as (n, 64) floats in 0..16 and their labels; scikit-learn imported
    here, with an error naming the extra when it is missing."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:
        raise ImportError(f"the digits track needs scikit-learn: {INSTALL_HINT}") from exc
    bunch = load_digits()
    return bunch.data, bunch.target


def stratified_split(labels: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Indices of train, val and test: each class shuffled and cut by the fractions, then each
    split shuffled (so that minibatches mix classes). Disjoint by construction."""
    parts = ([], [], [])
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        n_val = round(len(idx) * VAL_FRACTION)
        n_test = round(len(idx) * TEST_FRACTION)
        parts[1].append(idx[:n_val])
        parts[2].append(idx[n_val:n_val + n_test])
        parts[0].append(idx[n_val + n_test:])
    return tuple(rng.permutation(np.concatenate(p)) for p in parts)


@functools.lru_cache(maxsize=64)
def arrays(seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The train, val and test ``(x (n, 1, 8, 8) float32 in 0..1, y int64)`` of ``seed``."""
    images, labels = load()
    rng = np.random.default_rng([_DATA_SALT, seed])
    x = (images / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = labels.astype(np.int64)
    return tuple((x[i], y[i]) for i in stratified_split(labels, rng))


@functools.lru_cache(maxsize=64)
def make_data(seed: int) -> Data:
    import torch

    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in arrays(seed)))


def floors(seed: int) -> dict[str, float]:
    """Test accuracy of logistic regression on the 64 pixels."""
    (x, y), _, (xt, yt) = arrays(seed)
    return {"logistic_regression": floor.logistic_accuracy(x, y, xt, yt)}


def cross_entropy(logits, y):
    import torch.nn.functional as F
    return F.cross_entropy(logits, y)


def accuracy(logits, y):
    return (logits.argmax(dim=1) == y).float().mean()


def make_model():
    from benchkit.tracks.models import cnn_digits  # torch is imported when a model is built
    return cnn_digits()


TRACK = Track(
    name="digits",
    make_data=make_data,
    make_model=make_model,
    model_name="cnn_digits",
    grid=({"lr": 3e-3}, {"lr": 1e-2}, {"lr": 3e-2}),
    epochs=10,
    budget="convergence",
    make_floors=floors,
    budget_reason="validation accuracy levels off by 10 epochs; twice as many do not help "
                  "(benchmarks/results/convergence.json)",
    metric_name="accuracy",
    direction="higher",
    loss=cross_entropy,
    metric=accuracy,
    requires=(("sklearn", INSTALL_HINT),),
    description="scikit-learn's 8x8 digits (1,797 images), a fresh stratified 60/20/20 split "
                "per seed; cnn_digits (two 3x3 convolutions, max-pool, linear); test accuracy",
    extra_protocol={"split": "stratified 60/20/20 per seed", "loss": "cross-entropy"},
)
