"""Floors: the trivial baselines each built-in track scores on a seed's test split, fitted on
the same seed's train split the runs see; checked against independent computations."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from benchkit import tracks
from benchkit.tracks import floors


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
    assert got["quadratic"] < got["linear"] < got["mean"]
    both = track.floors([0, 1])
    assert both["linear"] == pytest.approx((linear + track.floors([1])["linear"]) / 2)


def test_dynamics_floors_are_fitted_on_the_runs_splits():
    from benchkit.tracks import dynamics

    track = tracks.get("dynamics")
    data = track.data(2)
    got = track.floors([2])
    assert got["persistence"] == pytest.approx(
        float(track.metric(data.test.x[:, -1], data.test.y)), rel=1e-6)
    x, y, xt, yt = (t.double().numpy() for t in (data.train.x, data.train.y,
                                                  data.test.x, data.test.y))
    last2, last2_t = x[:, -2:].reshape(len(x), -1), xt[:, -2:].reshape(len(xt), -1)
    assert got["linear"] == pytest.approx(floors.least_squares_mse(last2, y, last2_t, yt))
    # each floor is stronger than the last: the cubic is the honest one the GRU must beat
    assert got["persistence"] > got["linear"] > got["quadratic"] > got["cubic"]
    assert dynamics.floors(2) == got


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


def test_ngram_floors_on_a_periodic_text():
    """'abcabc...': the next character is certain given one character of context, so the
    bigram and trigram models approach 0 bits while the unigram model needs log2(3)."""
    text = np.array([i % 3 for i in range(65 * 40)], dtype=np.int64).reshape(40, 65)
    got = floors.ngram_bits(text[:30], text[30:35], text[35:], vocab=5)
    assert got["unigram"] == pytest.approx(math.log2(3), abs=0.01)
    assert got["bigram"] < 0.2 and got["trigram"] < 0.2  # the unigram keeps weight >= 0.1


def test_higher_order_ngrams_see_the_context_a_trigram_lacks():
    """'aaabbb...': two characters leave the next one open after 'aa' and 'bb', three decide
    it, so the 4-gram and 5-gram approach 0 bits where the trigram cannot; orders=3 (the
    default) gives the same three floors as before."""
    text = np.array([(i // 3) % 2 for i in range(65 * 40)], dtype=np.int64).reshape(40, 65)
    got = floors.ngram_bits(text[:30], text[30:35], text[35:], vocab=4, orders=5)
    assert list(got) == ["unigram", "bigram", "trigram", "4-gram", "5-gram"]
    assert got["4-gram"] < 0.1 and got["5-gram"] < 0.1
    assert got["trigram"] > 0.3
    assert floors.ngram_bits(text[:30], text[30:35], text[35:], vocab=4) == {
        k: got[k] for k in ("unigram", "bigram", "trigram")}
    with pytest.raises(ValueError, match="orders must be 1..5, got 6"):
        floors.ngram_bits(text[:30], text[30:35], text[35:], vocab=4, orders=6)


def test_a_track_without_floors_has_none():
    import dataclasses

    assert dataclasses.replace(tracks.get("tabular"), make_floors=None).floors([0]) == {}
