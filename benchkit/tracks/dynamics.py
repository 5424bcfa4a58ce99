"""``dynamics``: next-state prediction on Lorenz-63 windows (RK4), normalised.

Every window comes from its own trajectory, started at a random point and burned in onto the
attractor, so train, val and test share no state. Inputs and targets are normalised with the
train split's per-coordinate mean and std.

Budget ``fixed``: at its default epochs the baseline is still learning fast (validation keeps
falling over the last quarter and with twice the epochs, benchmarks/results/convergence.json);
the epochs are a stated budget kept short for cost, and an idea is judged at that budget.
"""
from __future__ import annotations

import functools

import numpy as np

from benchkit.tracks import floors as floor
from benchkit.tracks.base import Data, Split, Track

N_TRAIN, N_VAL, N_TEST = 400, 200, 400
WINDOW = 16          # input states per window; the target is the next one
DT = 0.01            # RK4 step
STRIDE = 5           # RK4 steps between observed states (observed every 0.05 time units)
BURN_IN = 500        # RK4 steps before the first observation
SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
_DATA_SALT = 0xD1A


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


def trajectories(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` independent observed trajectories of ``WINDOW + 1`` states: shape (n, W+1, 3)."""
    s = rng.normal(size=(n, 3)) * np.array([8.0, 8.0, 8.0]) + np.array([0.0, 0.0, 25.0])
    s = _rk4(s, BURN_IN)
    states = [s]
    for _ in range(WINDOW):
        s = _rk4(s, STRIDE)
        states.append(s)
    return np.stack(states, axis=1)


@functools.lru_cache(maxsize=64)
def arrays(seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The train, val and test ``(x (n, WINDOW, 3), y (n, 3))`` of ``seed``, normalised with
    the train split's statistics, as float32 numpy arrays."""
    rng = np.random.default_rng([_DATA_SALT, seed])
    n = N_TRAIN + N_VAL + N_TEST
    traj = trajectories(rng, n)
    mean = traj[:N_TRAIN].reshape(-1, 3).mean(axis=0)
    std = traj[:N_TRAIN].reshape(-1, 3).std(axis=0)
    traj = ((traj - mean) / std).astype(np.float32)
    x, y = traj[:, :WINDOW], traj[:, WINDOW]
    cut = np.cumsum([0, N_TRAIN, N_VAL, N_TEST])
    return tuple((x[a:b], y[a:b]) for a, b in zip(cut[:-1], cut[1:]))


@functools.lru_cache(maxsize=64)
def make_data(seed: int) -> Data:
    import torch

    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in arrays(seed)))


def floors(seed: int) -> dict[str, float]:
    """Test MSE of persistence (the last state), and of linear and quadratic least squares on
    the last two states."""
    (x, y), _, (xt, yt) = arrays(seed)
    last2, last2_t = x[:, -2:].reshape(len(x), -1), xt[:, -2:].reshape(len(xt), -1)
    return {"persistence": float(np.mean((xt[:, -1].astype(np.float64) - yt) ** 2)),
            "linear": floor.least_squares_mse(last2, y, last2_t, yt),
            "quadratic": floor.least_squares_mse(floor.quadratic_features(last2), y,
                                                 floor.quadratic_features(last2_t), yt)}


def make_model():
    from benchkit.tracks.models import rnn_small  # torch is imported when a model is built
    return rnn_small()


TRACK = Track(
    name="dynamics",
    make_data=make_data,
    make_model=make_model,
    model_name="rnn_small",
    grid=({"lr": 5e-3}, {"lr": 1e-2}, {"lr": 2e-2}),  # benchmarks/results/grids.json
    epochs=8,
    budget="fixed",
    make_floors=floors,
    budget_reason="the baseline is still learning at 8 epochs; a budget kept short for cost "
                  "(benchmarks/results/convergence.json)",
    description="Lorenz-63 (RK4) windows of 16 states, predict the next; rnn_small GRU(64); "
                "test MSE on normalised states",
    extra_protocol={"n_train": N_TRAIN, "n_val": N_VAL, "n_test": N_TEST, "window": WINDOW,
                    "dt": DT * STRIDE},
)
