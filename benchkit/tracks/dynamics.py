"""``dynamics``: Lorenz-63 (RK4) forecasting from noisy windows, normalised.

A window holds 16 observed states with Gaussian observation noise; the target is the true state
5 observations (0.25 time units) after the last one. Far enough ahead that the flow map is
strongly nonlinear, and with noise on every input, so that a model gains by using the whole
window (denoising is memory) and by nonlinearity: floors in the last two states (linear,
quadratic, ridge cubic) stay 5x above the GRU, which given only the last state doubles its
error. Every window comes from its own trajectory, started at a random point and burned in onto
the attractor, so train, val and test share no state.

Budget ``convergence``: under a cosine schedule the GRU's validation MSE levels off by three
quarters of its 48 epochs and 96 epochs do no better; the noise leaves an error no model
removes (docs/tracks.md, benchmarks/results/tracks/dynamics_*.json).
"""
from __future__ import annotations

import functools

import numpy as np

from benchkit.tracks import floors as floor
from benchkit.tracks.base import Data, Split, Track

N_TRAIN, N_VAL, N_TEST = 1000, 400, 1000
WINDOW = 16          # observed states per window
HORIZON = 5          # the target is the true state HORIZON observations after the last one
NOISE = 0.2          # sd of the observation noise added to the inputs, in normalised units
DT = 0.01            # RK4 step
STRIDE = 5           # RK4 steps between observed states (observed every 0.05 time units)
BURN_IN = 500        # RK4 steps before the first observation
SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
_DATA_SALT = 0xD1A
_NOISE_SALT = 0x0B5


def _lorenz(s: np.ndarray) -> np.ndarray:
    x, y, z = s[:, 0], s[:, 1], s[:, 2]
    return np.stack([SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z], axis=1)


def _rk4(s: np.ndarray, steps: int) -> np.ndarray:
    for _ in range(steps):
        k1 = _lorenz(s)
        k2 = _lorenz(s + 0.5 * DT * k1)
        k3 = _lorenz(s + 0.5 * DT * k2)
        k4 = _lorenz(s + DT * k3)
        s = s + DT / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s


def trajectories(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """``n`` independent observed trajectories of ``length`` states, each burned in onto the
    attractor from its own random start: shape (n, length, 3)."""
    s = rng.normal(size=(n, 3)) * np.array([8.0, 8.0, 8.0]) + np.array([0.0, 0.0, 25.0])
    s = _rk4(s, BURN_IN)
    states = [s]
    for _ in range(length - 1):
        s = _rk4(s, STRIDE)
        states.append(s)
    return np.stack(states, axis=1)


def windows(seed: int, *, horizon: int = HORIZON, noise: float = NOISE,
            sizes: tuple[int, int, int] = (N_TRAIN, N_VAL, N_TEST)):
    """The train, val and test ``(x (n, WINDOW, 3), y (n, 3))`` of ``seed``: ``x`` the window's
    observed states plus ``noise`` sd of Gaussian noise, ``y`` the true state ``horizon``
    observations after the window's last; all normalised with the per-coordinate mean and std
    of the train split's clean window states, float32. The noise has its own stream, so the clean
    states do not depend on it."""
    rng = np.random.default_rng([_DATA_SALT, seed])
    traj = trajectories(rng, sum(sizes), WINDOW + horizon)
    train = traj[:sizes[0], :WINDOW].reshape(-1, 3)
    traj = (traj - train.mean(axis=0)) / train.std(axis=0)
    x, y = traj[:, :WINDOW], traj[:, -1]
    if noise:
        x = x + noise * np.random.default_rng([_DATA_SALT, _NOISE_SALT, seed]).normal(size=x.shape)
    x, y = x.astype(np.float32), y.astype(np.float32)
    cut = np.cumsum([0, *sizes])
    return tuple((x[a:b], y[a:b]) for a, b in zip(cut[:-1], cut[1:]))


@functools.lru_cache(maxsize=64)
def arrays(seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The track's train, val and test splits of ``seed`` (:func:`windows` at its defaults)."""
    return windows(seed)


def floor_values(splits) -> dict[str, float]:
    """Test MSE of persistence (the last observed state), and of least squares fitted on the
    train split: linear and quadratic in the last two states, and ridge regression cubic in
    them (its penalty chosen on the validation split; plain least squares on those 83 nearly
    collinear columns extrapolates wildly)."""
    (x, y), (xv, yv), (xt, yt) = splits

    def last(a, k):
        return a[:, -k:].reshape(len(a), -1)

    quad, cubic = floor.quadratic_features, floor.cubic_features
    return {"persistence": float(np.mean((xt[:, -1].astype(np.float64) - yt) ** 2)),
            "linear": floor.least_squares_mse(last(x, 2), y, last(xt, 2), yt),
            "quadratic": floor.least_squares_mse(quad(last(x, 2)), y, quad(last(xt, 2)), yt),
            "cubic": floor.ridge_mse(cubic(last(x, 2)), y, cubic(last(xv, 2)), yv,
                                     cubic(last(xt, 2)), yt)}


@functools.lru_cache(maxsize=64)
def make_data(seed: int) -> Data:
    import torch

    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in arrays(seed)))


def floors(seed: int) -> dict[str, float]:
    """:func:`floor_values` on the track's splits of ``seed``."""
    return floor_values(arrays(seed))


def make_model():
    from benchkit.tracks.models import rnn_small  # torch is imported when a model is built
    return rnn_small()


TRACK = Track(
    name="dynamics",
    make_data=make_data,
    make_model=make_model,
    model_name="rnn_small",
    grid=({"lr": 2e-2}, {"lr": 4e-2}, {"lr": 8e-2}),  # results/tracks/dynamics_*.json
    epochs=48,
    batch_size=64,
    schedule="cosine",
    budget="convergence",
    make_floors=floors,
    budget_reason="validation levels off by 3/4 of the 48 cosine epochs and twice the epochs "
                  "gain nothing (benchmarks/results/tracks/dynamics_curves*.json)",
    description=f"Lorenz-63 (RK4) windows of {WINDOW} noisy states, predict the true state "
                f"{HORIZON} observations ahead; rnn_small GRU(64); test MSE on normalised states",
    extra_protocol={"n_train": N_TRAIN, "n_val": N_VAL, "n_test": N_TEST, "window": WINDOW,
                    "dt": DT * STRIDE, "horizon": HORIZON, "noise": NOISE},
)
