"""``dynamics``: Lorenz-63 (RK4) forecasting from noisy windows, normalised.

A window holds 16 observed states with Gaussian observation noise; the target is the true state
5 observations (0.25 time units) after the last one. Far enough ahead that the flow map is
strongly nonlinear, and with noise on every input, so that a model gains by using the whole
window (denoising is memory) and by nonlinearity: polynomial floors in the last two states stay
5x above the GRU, which given only the last state doubles its error; the strongest floors are
kernel ridge and nearest-neighbour analogues on delay embeddings and an MLP on the window
trained like the GRU. That MLP beats the GRU, so the track fails its bar and is retired as a
yardstick (:data:`RETIRED`, issue 54): it still runs, and every report on it says why. An
ensemble Kalman filter that knows the equations and the noise gives the achievable limit. Every
window comes from its own trajectory, started at a random point and burned in onto the
attractor, so train, val and test share no state. 10,000 test windows: with 1,000, the test
set's sampling noise was 90% of the paired A/A variance (results/tracks/variance_dynamics.json).

Budget ``convergence``: under a cosine schedule the GRU's validation MSE levels off by three
quarters of its 48 epochs and 96 epochs do no better; the noise leaves an error no model
removes (docs/tracks.md, benchmarks/results/tracks/dynamics_*.json).
"""
from __future__ import annotations

import functools

import numpy as np

from benchkit.tracks.floors import (best_embedding, cubic_features, kernel_ridge,
                                    least_squares_mse, nearest_neighbours, quadratic_features,
                                    ridge_mse)
from benchkit.tracks.base import LIMIT_PREFIX, Data, Split, Track, kept_per_seed
from benchkit.tracks.trained_floors import trained_floor

N_TRAIN, N_VAL, N_TEST = 1000, 400, 10000
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


def _normalised(seed: int, horizon: int, sizes: tuple[int, int, int]):
    """The seed's clean trajectories normalised with the per-coordinate mean and sd of the
    train split's clean window states, and that mean and sd."""
    rng = np.random.default_rng([_DATA_SALT, seed])
    traj = trajectories(rng, sum(sizes), WINDOW + horizon)
    train = traj[:sizes[0], :WINDOW].reshape(-1, 3)
    mean, sd = train.mean(axis=0), train.std(axis=0)
    return (traj - mean) / sd, mean, sd


def windows(seed: int, *, horizon: int = HORIZON, noise: float = NOISE,
            sizes: tuple[int, int, int] = (N_TRAIN, N_VAL, N_TEST)):
    """The train, val and test ``(x (n, WINDOW, 3), y (n, 3))`` of ``seed``: ``x`` the window's
    observed states plus ``noise`` sd of Gaussian noise, ``y`` the true state ``horizon``
    observations after the window's last; all normalised with the per-coordinate mean and std
    of the train split's clean window states, float32. The noise has its own stream, so the clean
    states do not depend on it."""
    traj, _, _ = _normalised(seed, horizon, sizes)
    x, y = traj[:, :WINDOW], traj[:, -1]
    if noise:
        x = x + noise * np.random.default_rng([_DATA_SALT, _NOISE_SALT, seed]).normal(size=x.shape)
    x, y = x.astype(np.float32), y.astype(np.float32)
    cut = np.cumsum([0, *sizes])
    return tuple((x[a:b], y[a:b]) for a, b in zip(cut[:-1], cut[1:]))


ENSEMBLE = 64      # members per window of the ensemble Kalman filter
_FILTER_SALT = 0xEC4


def ensemble_kalman_mse(seed: int, x_test: np.ndarray, y_test: np.ndarray, *,
                        members: int = ENSEMBLE) -> float:
    """Test MSE of a stochastic ensemble Kalman filter that knows the true model (Lorenz-63,
    RK4 at the track's step) and the observation noise: per test window, ``members`` states
    drawn around the first observation with the noise's covariance, then at each later
    observation the forecast ensemble updated with perturbed observations (gain from the
    ensemble's covariance), and the ensemble mean run ``HORIZON`` observations past the last.
    The achievable limit of the track, not a floor: no model learned from data knows the
    equations."""
    _, mean, sd = _normalised(seed, HORIZON, (N_TRAIN, N_VAL, N_TEST))
    rng = np.random.default_rng([_DATA_SALT, _FILTER_SALT, seed])
    obs = np.asarray(x_test, np.float64) * sd + mean           # (n, WINDOW, 3), physical units
    noise_sd = NOISE * sd
    n = len(obs)
    ens = obs[:, None, 0] + noise_sd * rng.normal(size=(n, members, 3))
    for step in range(1, WINDOW):
        ens = _rk4(ens.reshape(-1, 3), STRIDE).reshape(n, members, 3)
        anomalies = ens - ens.mean(axis=1, keepdims=True)
        cov = np.einsum("nmi,nmj->nij", anomalies, anomalies) / (members - 1)
        gain = np.linalg.solve(cov + np.diag(noise_sd ** 2), cov).transpose(0, 2, 1)  # P (P+R)^-1
        perturbed = obs[:, None, step] + noise_sd * rng.normal(size=(n, members, 3))
        ens = ens + np.einsum("nij,nmj->nmi", gain, perturbed - ens)
    forecast = _rk4(ens.reshape(-1, 3), STRIDE * HORIZON).reshape(n, members, 3).mean(axis=1)
    return float(np.mean(((forecast - mean) / sd - np.asarray(y_test, np.float64)) ** 2))


@functools.lru_cache(maxsize=64)
def arrays(seed: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The track's train, val and test splits of ``seed`` (:func:`windows` at its defaults)."""
    return windows(seed)


EMBEDDINGS = (2, 4, 8)               # delay-embedding lengths tried on validation
KERNEL_GAMMAS = (1.0, 3.0, 10.0)     # kernel ridge's grid (floors.kernel_ridge's units)
KERNEL_PENALTIES = (1e-5, 1e-4, 1e-3)
LIMIT = LIMIT_PREFIX + "ensemble Kalman filter, true model"


# the window MLP floor's lr grid: its validation optimum lies inside on seeds 0-1 at 1,000 and
# 4,000 training windows (results/tracks/dynamics_floor_margin_mlp.json)
WINDOW_MLP_LRS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


def window_mlp_floor(splits, seed: int):
    """The window MLP (tanh 128-128 on the flattened window) trained like the baseline: the
    track's optimizer, schedule, batch size and epochs, the lr of :data:`WINDOW_MLP_LRS` best
    on validation (:func:`benchkit.tracks.trained_floors.trained_floor`)."""
    from benchkit.tracks.models import window_mlp  # torch is imported when a floor trains

    return trained_floor(TRACK, window_mlp, _as_data(splits), WINDOW_MLP_LRS, seed=seed)


def floor_values(splits, seed: int = 0) -> dict[str, float]:
    """Test MSE of persistence (the last observed state), and of models fitted on the train
    split: least squares linear and quadratic in the last two states, ridge regression cubic in
    them (penalty chosen on validation: plain least squares on those 83 nearly collinear
    columns extrapolates wildly), RBF kernel ridge and nearest-neighbour analogues on delay
    embeddings (length, width, penalty and neighbours chosen on validation), and an MLP on the
    whole window trained like the baseline (:func:`window_mlp_floor`; ``seed`` its streams)."""
    (x, y), (xv, yv), (xt, yt) = splits

    def last(a, k):
        return a[:, -k:].reshape(len(a), -1)

    def tuned_kernel_ridge(*rows):
        return kernel_ridge(*rows, gammas=KERNEL_GAMMAS, penalties=KERNEL_PENALTIES)

    quad, cubic = quadratic_features, cubic_features
    return {"persistence": float(np.mean((xt[:, -1].astype(np.float64) - yt) ** 2)),
            "linear": least_squares_mse(last(x, 2), y, last(xt, 2), yt),
            "quadratic": least_squares_mse(quad(last(x, 2)), y, quad(last(xt, 2)), yt),
            "cubic": ridge_mse(cubic(last(x, 2)), y, cubic(last(xv, 2)), yv,
                               cubic(last(xt, 2)), yt),
            "kernel ridge": best_embedding(tuned_kernel_ridge, splits, EMBEDDINGS),
            "analogues": best_embedding(nearest_neighbours, splits, EMBEDDINGS),
            "window MLP": window_mlp_floor(splits, seed).test}


def _as_data(splits) -> Data:
    import torch

    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y)) for x, y in splits))


@functools.lru_cache(maxsize=64)
def make_data(seed: int) -> Data:
    return _as_data(arrays(seed))


@kept_per_seed
def floors(seed: int) -> dict[str, float]:
    """:func:`floor_values` on the track's splits of ``seed``, and the achievable limit of
    :func:`ensemble_kalman_mse` on its test split."""
    splits = arrays(seed)
    return {**floor_values(splits, seed), LIMIT: ensemble_kalman_mse(seed, *splits[2])}


def make_model():
    from benchkit.tracks.models import rnn_small  # torch is imported when a model is built
    return rnn_small()


# why the track is no yardstick (Track.retired): the means of
# results/tracks/dynamics_floor_margin_today.json and ..._n4000_val1000_test10000.json
RETIRED = ("the window MLP floor (a tanh MLP on the flattened window trained with the GRU's "
           "protocol) beats the GRU baseline: test MSE 0.0666 against 0.0759, means of seeds "
           "0-3 at the track's protocol, and 0.0491 against 0.0543 with 4,000 training windows; "
           "no baseline tried (more data, larger MLPs, a low-rank filter) keeps a margin over "
           "it, every learner approaches the same error (docs/tracks.md, dynamics)")

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
    retired=RETIRED,
    budget_reason="validation levels off by 3/4 of the 48 cosine epochs and twice the epochs "
                  "gain nothing (benchmarks/results/tracks/dynamics_curves*.json)",
    description=f"Lorenz-63 (RK4) windows of {WINDOW} noisy states, predict the true state "
                f"{HORIZON} observations ahead; rnn_small GRU(64); test MSE on normalised states",
    extra_protocol={"n_train": N_TRAIN, "n_val": N_VAL, "n_test": N_TEST, "window": WINDOW,
                    "dt": DT * STRIDE, "horizon": HORIZON, "noise": NOISE},
)
