"""Floors: the trivial baselines each built-in track scores on a seed's test split, fitted on
the same seed's train split the runs see; checked against independent computations."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from benchkit import tracks
from benchkit.tracks import base
from benchkit.tracks import floors


@pytest.mark.slow  # kernel ridge and boosted trees on two seeds: about 5 s
def test_tabular_floors_are_least_squares_on_the_runs_split():
    track = tracks.get("tabular")
    data = track.data(0)
    x, y, xt, yt = (t.double().numpy() for t in (data.train.x, data.train.y,
                                                  data.test.x, data.test.y))
    a = np.hstack([np.ones((len(x), 1)), x])
    coef = np.linalg.solve(a.T @ a, a.T @ y)  # normal equations, not lstsq
    linear = float(track.metric(torch.from_numpy(np.hstack([np.ones((len(xt), 1)), xt]) @ coef),
                                torch.from_numpy(yt)))
    got = track.floors([0])
    assert got["linear"] == pytest.approx(linear, rel=1e-6)
    assert got["mean"] == pytest.approx(float(np.mean((yt - y.mean()) ** 2)), rel=1e-6)
    assert got["kernel ridge"] < got["quadratic"] < got["linear"] < got["mean"]
    both = track.floors([0, 1])
    assert both["linear"] == pytest.approx((linear + track.floors([1])["linear"]) / 2)


@pytest.mark.slow
def test_dynamics_floors_are_fitted_on_the_runs_splits():
    """On a small sample of the track's windows (the same code as its splits): persistence is
    the last observed state, linear the least squares of the last two; each floor family is
    stronger than the last, the window's learners beat the polynomials, and the filter that
    knows the equations beats them all, labelled a limit."""
    from benchkit.tracks import dynamics

    splits = dynamics.windows(2, sizes=(300, 150, 150))
    got = dynamics.floor_values(splits)
    (x, y), _, (xt, yt) = (tuple(np.asarray(a, np.float64) for a in s) for s in splits)
    assert got["persistence"] == pytest.approx(float(np.mean((xt[:, -1] - yt) ** 2)), rel=1e-6)
    last2, last2_t = x[:, -2:].reshape(len(x), -1), xt[:, -2:].reshape(len(xt), -1)
    assert got["linear"] == pytest.approx(floors.least_squares_mse(last2, y, last2_t, yt))
    assert got["persistence"] > got["linear"] > got["quadratic"] > got["cubic"]
    assert max(got["kernel ridge"], got["analogues"], got["window MLP"]) < got["cubic"]
    assert all(not base.is_limit(name) for name in got)


def test_quadratic_and_cubic_features_hold_every_product_once():
    x = np.array([[2.0, 3.0]])
    assert floors.quadratic_features(x).tolist() == [[2.0, 3.0, 4.0, 6.0, 9.0]]
    assert floors.cubic_features(x).tolist() == [[2.0, 3.0, 4.0, 6.0, 9.0,
                                                  8.0, 12.0, 18.0, 27.0]]


def test_ridge_is_least_squares_on_rows_augmented_by_the_penalty():
    """Ridge as the textbook augmented least-squares problem (numpy's SVD lstsq on
    [A; sqrt(lam n) I] without the intercept's row), at the penalty validation picks."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6)) * [1, 2, 3, 4, 5, 6] + 1.0
    x[:, 5] = x[:, 4] + 1e-3 * rng.normal(size=300)  # nearly collinear, as polynomials are
    y = x @ rng.normal(size=(6, 2)) + rng.normal(size=(300, 2))
    (xa, ya), (xv, yv), (xt, yt) = [(x[a:b], y[a:b]) for a, b in ((0, 100), (100, 200),
                                                                   (200, 300))]
    mu, sd = xa.mean(0), xa.std(0)

    def design(rows):
        return np.hstack([np.ones((len(rows), 1)), (rows - mu) / sd])

    def augmented(lam, rows, target):
        penalty = np.sqrt(lam * len(xa)) * np.eye(7)[1:]  # the intercept is not penalised
        coef = np.linalg.lstsq(np.vstack([design(xa), penalty]),
                               np.vstack([ya, np.zeros((6, 2))]), rcond=None)[0]
        return float(np.mean((design(rows) @ coef - target) ** 2))

    penalties = (1e-4, 1e-2, 1.0)
    best = min(penalties, key=lambda lam: augmented(lam, xv, yv))
    assert best != penalties[0]  # validation picks a real penalty on these collinear columns
    got = floors.ridge_mse(xa, ya, xv, yv, xt, yt, penalties)
    assert got == pytest.approx(augmented(best, xt, yt), rel=1e-6)
    assert floors.ridge_mse(xa, ya, xv, yv, xt, yt, (1e-12,)) == pytest.approx(
        floors.least_squares_mse(xa, ya, xt, yt), rel=1e-6)


def test_a_track_without_floors_has_none():
    import dataclasses

    assert dataclasses.replace(tracks.get("tabular"), make_floors=None).floors([0]) == {}


def test_kernel_ridge_is_the_closed_form_at_the_pair_validation_picks():
    """Against the textbook solution (lstsq of K + lam n I on standardised columns, the
    train mean taken out), at the (width, penalty) pair with the lowest validation MSE."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(240, 3)) * [1.0, 3.0, 0.5] + 2.0
    y = np.sin(x[:, :1] - 2.0) + 0.1 * rng.normal(size=(240, 1))
    (xa, ya), (xv, yv), (xt, yt) = [(x[a:b], y[a:b]) for a, b in ((0, 120), (120, 180),
                                                                   (180, 240))]
    mu, sd = xa.mean(0), xa.std(0)

    def fit(g, lam, rows):
        z, r = (xa - mu) / sd, (rows - mu) / sd
        kernel = np.exp(-g / 3 * ((z[:, None] - z[None]) ** 2).sum(-1))
        coef = np.linalg.lstsq(kernel + lam * 120 * np.eye(120), ya - ya.mean(), rcond=None)[0]
        return np.exp(-g / 3 * ((r[:, None] - z[None]) ** 2).sum(-1)) @ coef + ya.mean()

    pairs = [(g, lam) for g in (0.1, 1.0, 10.0) for lam in (1e-4, 1e-1)]
    with floors.single_thread():  # BLAS threads on a loaded machine: seconds, not ms
        best = min(pairs, key=lambda p: float(np.mean((fit(*p, xv) - yv) ** 2)))
        expected_test = float(np.mean((fit(*best, xt) - yt) ** 2))
        expected_val = float(np.mean((fit(*best, xv) - yv) ** 2))
    assert best != (0.1, 1e-1)  # validation prefers a fitted curve to a flat one here
    val, test = floors.kernel_ridge(xa, ya, xv, yv, xt, yt, gammas=(0.1, 1.0, 10.0),
                                    penalties=(1e-4, 1e-1))
    assert test == pytest.approx(expected_test, rel=1e-6)
    assert val == pytest.approx(expected_val, rel=1e-6)
    assert test < floors.mean_mse(ya, yt) / 5


def test_analogues_average_the_nearest_train_targets_and_embeddings_pick_on_validation():
    """Train rows on a line: the nearest of a query at 2.1 is the row at 2 (k = 1 wins when
    the target is a step validation resolves); and the delay embedding whose validation MSE is
    lowest is the one whose test MSE is reported."""
    x = np.arange(10.0)[:, None]
    y = (x >= 5).astype(float)
    val, test = floors.nearest_neighbours(x, y, x + 0.1, y, np.array([[2.1], [7.2]]),
                                          np.array([[0.0], [1.0]]), neighbours=(1, 8))
    assert val == 0.0 and test == 0.0
    calls = []

    def method(*rows):
        calls.append(rows[0].shape[1])
        return {2: (1.0, 10.0), 4: (0.5, 20.0)}[rows[0].shape[1]]

    windows = np.zeros((5, 6, 2))
    splits = ((windows, None), (windows, None), (windows, None))
    assert floors.best_embedding(method, splits, (1, 2)) == 20.0
    assert calls == [2, 4]  # the last 1 and 2 states of 2 coordinates, flattened


def test_the_sklearn_floors_choose_on_validation_and_score_the_test_split():
    """Tiny cases, each with its answer known: boosted trees fit a step exactly, the RBF SVM
    separates two rings a linear model cannot, the MLP regresses a smooth function better
    than the mean; every one is chosen on validation and scored on test."""
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, size=(300, 2))
    step = (x[:, :1] > 0).astype(float)
    splits = [(x[a:b], step[a:b]) for a, b in ((0, 150), (150, 220), (220, 300))]
    flat = [part for pair in splits for part in pair]
    stumps = ({"max_iter": 5, "max_leaf_nodes": 3, "learning_rate": 1.0},)
    assert floors.boosting_mse(*flat, grid=stumps) < 0.05
    rings = (np.hypot(x[:, 0], x[:, 1]) > 0.7).astype(int)
    parts = [(x[a:b], rings[a:b]) for a, b in ((0, 150), (150, 220), (220, 300))]
    flat = [part for pair in parts for part in pair]
    assert floors.svm_accuracy(*flat) > 0.9
    assert floors.boosting_accuracy(*flat, grid=({"max_iter": 30},)) > 0.85
    assert floors.logistic_accuracy(parts[0][0], parts[0][1], parts[2][0], parts[2][1]) < 0.8
    smooth = np.sin(2 * x[:, :1]) * x[:, 1:]
    parts = [(x[a:b], smooth[a:b]) for a, b in ((0, 150), (150, 220), (220, 300))]
    flat = [part for pair in parts for part in pair]
    assert floors.mlp_mse(*flat, hidden=(16,), penalties=(1e-3,)) < floors.mean_mse(
        parts[0][1], parts[2][1]) / 3


def test_the_ensemble_kalman_filter_knows_the_model_and_beats_every_floor():
    """The limit on 40 test windows of a seed: far below persistence and the polynomial
    floors (it integrates the true equations), and deterministic in the seed."""
    from benchkit.tracks import dynamics

    _, _, (xt, yt) = dynamics.arrays(0)
    xt, yt = xt[:40], yt[:40]
    limit = dynamics.ensemble_kalman_mse(0, xt, yt, members=16)
    assert limit == dynamics.ensemble_kalman_mse(0, xt, yt, members=16)
    persistence = float(np.mean((xt[:, -1].astype(np.float64) - yt) ** 2))
    assert limit < persistence / 10
    assert limit < 0.1
    assert base.is_limit(dynamics.LIMIT)


def test_the_strongest_floor_leaves_limits_out_and_follows_the_direction():
    given = {"a": 0.5, "b": 0.3, base.LIMIT_PREFIX + "oracle": 0.1, "c": float("nan")}
    assert base.strongest_floor(given, "lower") == ("b", 0.3)
    assert base.strongest_floor(given, "higher") == ("a", 0.5)
    assert base.strongest_floor({base.LIMIT_PREFIX + "x": 1.0}, "lower") is None
