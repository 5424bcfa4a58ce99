"""``tabular``: nonlinear regression with 10 features, a fixed teacher function plus noise.

The teacher is the same for every seed (its weights come from a constant stream); each seed
draws fresh inputs and noise, so seeds randomize the sample as well as the training. Its tanh
units have pre-activations of sd ~2, so most saturate into soft steps: a quadratic in the
inputs cannot fit them (quadratic least squares stays ~2x the MLP's test MSE), so an idea that
gains here is not recovering what a closed form gives.

Budget ``convergence``: with the cosine schedule the baseline's validation has levelled off by
the default epochs (benchmarks/results/tracks/tabular_convergence.json: last-quarter gains
under 1%, twice the epochs worse), so the epochs aim at a trained-out model. Batch 128: at
batch 32-64 the cosine's last quarter still polished 1-2% of gradient noise away.
"""
from __future__ import annotations

import functools

import numpy as np

from benchkit.tracks import floors as floor
from benchkit.tracks.base import Data, Split, Track

N_FEATURES = 10
N_TRAIN, N_VAL, N_TEST = 2000, 500, 1000
NOISE_SD = 0.5
TANH_SCALE = 2.0  # pre-activation sd of the teacher's tanh units: saturating, not quadratic
_TEACHER_SEED = 20261202
_DATA_SALT = 0x7AB  # separates the data stream from every other use of the seed


@functools.lru_cache(maxsize=1)
def _teacher() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(_TEACHER_SEED)
    w1 = rng.normal(size=(N_FEATURES, 32)) * TANH_SCALE / np.sqrt(N_FEATURES)
    b1 = rng.normal(size=32) * 0.5
    w2 = rng.normal(size=32) * 3.0 / np.sqrt(32)
    lin = rng.normal(size=N_FEATURES) * 0.5
    return w1, b1, w2, lin


def teacher(x: np.ndarray) -> np.ndarray:
    """The noiseless target: 32 saturating tanh units, an interaction term and a linear part."""
    w1, b1, w2, lin = _teacher()
    return np.tanh(x @ w1 + b1) @ w2 + x @ lin + x[:, 0] * x[:, 1]


@functools.lru_cache(maxsize=64)
def arrays(seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The train, val and test ``(x, y)`` of ``seed`` as float32 numpy arrays (y: (n, 1))."""
    rng = np.random.default_rng([_DATA_SALT, seed])
    n = N_TRAIN + N_VAL + N_TEST
    x = rng.normal(size=(n, N_FEATURES))
    y = teacher(x) + NOISE_SD * rng.normal(size=n)
    x, y = x.astype(np.float32), y.astype(np.float32)[:, None]
    cut = np.cumsum([0, N_TRAIN, N_VAL, N_TEST])
    return tuple((x[a:b], y[a:b]) for a, b in zip(cut[:-1], cut[1:]))


@functools.lru_cache(maxsize=64)
def make_data(seed: int) -> Data:
    import torch

    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in arrays(seed)))


def floors(seed: int) -> dict[str, float]:
    """Test MSE of the train mean, of linear and of quadratic least squares on the inputs."""
    (x, y), _, (xt, yt) = arrays(seed)
    return {"mean": floor.mean_mse(y, yt), "linear": floor.least_squares_mse(x, y, xt, yt),
            "quadratic": floor.least_squares_mse(floor.quadratic_features(x), y,
                                                 floor.quadratic_features(xt), yt)}


def make_model():
    from benchkit.tracks.models import mlp_tiny  # torch is imported when a model is built
    return mlp_tiny()


TRACK = Track(
    name="tabular",
    make_data=make_data,
    make_model=make_model,
    model_name="mlp_tiny",
    # benchmarks/results/tracks/tabular_grid.json
    grid=({"lr": 1e-3}, {"lr": 2e-3}, {"lr": 5e-3}, {"lr": 1e-2}),
    epochs=120,
    batch_size=128,  # little gradient noise left for the cosine's last quarter to polish away
    schedule="cosine",
    budget="convergence",
    make_floors=floors,
    budget_reason="with the cosine schedule validation levels off by 120 epochs; twice as many "
                  "overfit (benchmarks/results/tracks/tabular_convergence.json)",
    description=f"10-feature nonlinear regression (saturating tanh teacher + interaction + "
                f"linear, noise sd {NOISE_SD}); mlp_tiny 10-64-64-1, batch 128, cosine "
                "schedule; test MSE",
    extra_protocol={"n_train": N_TRAIN, "n_val": N_VAL, "n_test": N_TEST,
                    "noise_floor_mse": NOISE_SD ** 2, "teacher_tanh_scale": TANH_SCALE},
)
