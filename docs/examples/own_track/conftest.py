"""Two tracks of one's own, from datasets that ship with scikit-learn (nothing downloads):
``skdiabetes`` (regression, test MSE in units of the target's sd) and ``skdigits``
(10-class classification of 8x8 images, test accuracy). Each seed draws its own 60/20/20
split; features (and the diabetes target) are standardised with the train split's statistics."""
import functools

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_diabetes, load_digits
from sklearn.linear_model import LogisticRegression, Ridge
from torch import nn

from benchkit.tracks import Data, Split, Track, register


def split(x, y, seed):
    """Train/val/test numpy arrays of one seed: a 60/20/20 permutation, features standardised."""
    order = np.random.default_rng([2024, seed]).permutation(len(x))
    cut = np.cumsum([0, int(0.6 * len(x)), int(0.2 * len(x)), len(x)])[1:-1]
    parts = [(x[i], y[i]) for i in np.split(order, cut)]
    mean, sd = parts[0][0].mean(0), parts[0][0].std(0)
    sd[sd == 0] = 1.0  # digits has pixels that are blank in every train image
    return [((xs - mean) / sd, ys) for xs, ys in parts]


@functools.lru_cache(maxsize=64)
def diabetes_arrays(seed):
    x, y = load_diabetes(return_X_y=True)
    parts = split(x.astype(np.float32), y.astype(np.float32), seed)
    mean, sd = parts[0][1].mean(), parts[0][1].std()
    return [(xs, ((ys - mean) / sd)[:, None]) for xs, ys in parts]  # y: float, shape [N, 1]


@functools.lru_cache(maxsize=64)
def digits_arrays(seed):
    x, y = load_digits(return_X_y=True)
    return split(x.astype(np.float32), y.astype(np.int64), seed)  # y: int64 labels, shape [N]


def to_data(parts):
    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in parts))


def mlp(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, n_out))


def ridge_floor(seed):
    (x, y), _, (xt, yt) = diabetes_arrays(seed)
    pred = Ridge().fit(x, y).predict(xt).reshape(yt.shape)  # sklearn gives [N]: no broadcast
    return {"ridge": float(((pred - yt) ** 2).mean())}


def logistic_floor(seed):
    (x, y), _, (xt, yt) = digits_arrays(seed)
    return {"logistic": float(LogisticRegression(max_iter=500).fit(x, y).score(xt, yt))}


def accuracy(logits, y):
    return (logits.argmax(dim=1) == y).float().mean()


register(Track(
    name="skdiabetes",
    make_data=lambda seed: to_data(diabetes_arrays(seed)),
    make_model=lambda: mlp(10, 1),
    model_name="mlp_10_64_64_1",
    grid=({"lr": 1e-4}, {"lr": 3e-4}, {"lr": 1e-3}),
    epochs=40,
    description="scikit-learn's diabetes (442 patients, 10 features), a seeded 60/20/20 split",
    make_floors=ridge_floor,
))  # metric, loss: mse; direction: lower; optimizer: adam; batch_size: 32 (the defaults)

register(Track(
    name="skdigits",
    make_data=lambda seed: to_data(digits_arrays(seed)),
    make_model=lambda: mlp(64, 10),
    model_name="mlp_64_64_64_10",
    grid=({"lr": 3e-3}, {"lr": 1e-2}, {"lr": 3e-2}),
    epochs=20,
    batch_size=64,
    metric_name="accuracy",
    direction="higher",
    loss=F.cross_entropy,
    metric=accuracy,
    description="scikit-learn's digits (1,797 8x8 images, 10 classes), a seeded 60/20/20 split",
    make_floors=logistic_floor,
))
