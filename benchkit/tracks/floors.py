"""Trivial baselines (floors) the tracks score on a seed's test split after fitting on its train
split: least squares and ridge regression on given features, multinomial logistic regression,
smoothed n-gram character models. numpy only (scikit-learn for the logistic regression, imported
there): no torch, so a report can be given its floors without training anything. A trained baseline
that does not beat its track's floors clearly is measuring nothing a closed form cannot.
"""
from __future__ import annotations

import itertools
import math

import numpy as np


def with_intercept(x: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(x), 1)), x])


def quadratic_features(x: np.ndarray) -> np.ndarray:
    """``x`` and every product ``x_i * x_j`` with ``i <= j`` (d + d(d+1)/2 columns)."""
    pairs = [x[:, i] * x[:, j] for i, j in itertools.combinations_with_replacement(
        range(x.shape[1]), 2)]
    return np.hstack([x, np.stack(pairs, axis=1)])


def cubic_features(x: np.ndarray) -> np.ndarray:
    """:func:`quadratic_features` and every product ``x_i * x_j * x_k`` with ``i <= j <= k``."""
    triples = [x[:, i] * x[:, j] * x[:, k] for i, j, k in
               itertools.combinations_with_replacement(range(x.shape[1]), 3)]
    return np.hstack([quadratic_features(x), np.stack(triples, axis=1)])


def _standardiser(x_train: np.ndarray):
    """The map of rows to an intercept column and the columns standardised on ``x_train``."""
    x = np.asarray(x_train, dtype=np.float64)
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    return lambda rows: with_intercept((np.asarray(rows, dtype=np.float64) - mu) / sd)


def _mse(design: np.ndarray, coef: np.ndarray, y) -> float:
    pred = np.einsum("ij,jk->ik", design, coef)
    return float(np.mean((pred - np.asarray(y, dtype=np.float64).reshape(pred.shape)) ** 2))


def least_squares_mse(x_train, y_train, x_test, y_test) -> float:
    """Test MSE (mean over every element) of ordinary least squares with an intercept, fitted
    on the train rows in float64; ``y`` may have several columns. Solved by the normal
    equations of standardised columns, products by ``einsum`` (no BLAS threads: waking them
    on a loaded machine cost 17 ms a fit, against 1 ms)."""
    design = _standardiser(x_train)
    a = design(x_train)
    y = np.asarray(y_train, dtype=np.float64).reshape(len(a), -1)
    try:
        coef = np.linalg.solve(np.einsum("ij,ik->jk", a, a), np.einsum("ij,ik->jk", a, y))
    except np.linalg.LinAlgError:  # collinear columns: the minimum-norm solution
        coef = np.linalg.lstsq(a, y, rcond=None)[0]
    return _mse(design(x_test), coef, y_test)


RIDGE_PENALTIES = tuple(10.0 ** k for k in range(-8, 2))  # per train row, tried on validation


def ridge_mse(x_train, y_train, x_val, y_val, x_test, y_test,
              penalties=RIDGE_PENALTIES) -> float:
    """Test MSE of ridge regression on standardised columns (intercept not penalised), its
    penalty (times the number of train rows) the one of ``penalties`` with the lowest
    validation MSE. For many nearly collinear features (polynomials of successive states),
    where ordinary least squares extrapolates wildly off the train rows."""
    design = _standardiser(x_train)
    a = design(x_train)
    y = np.asarray(y_train, dtype=np.float64).reshape(len(a), -1)
    gram, rhs = np.einsum("ij,ik->jk", a, a), np.einsum("ij,ik->jk", a, y)
    ridge = np.eye(len(gram)) * len(a)
    ridge[0, 0] = 0.0
    coefs = [np.linalg.solve(gram + lam * ridge, rhs) for lam in penalties]
    best = min(coefs, key=lambda c: _mse(design(x_val), c, y_val))
    return _mse(design(x_test), best, y_test)


def mean_mse(y_train, y_test) -> float:
    """Test MSE of predicting the train mean (per output column)."""
    y_train, y_test = np.asarray(y_train, np.float64), np.asarray(y_test, np.float64)
    return float(np.mean((y_test - y_train.mean(axis=0)) ** 2))


def logistic_accuracy(x_train, y_train, x_test, y_test) -> float:
    """Test accuracy of multinomial logistic regression (scikit-learn, L2 at C=1, lbfgs) on
    the flattened inputs, on one thread (a loaded machine makes BLAS threads 100x slower)."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    x_train = np.asarray(x_train).reshape(len(x_train), -1)
    x_test = np.asarray(x_test).reshape(len(x_test), -1)
    with threadpool_limits(1):
        clf = LogisticRegression(max_iter=2000).fit(x_train, y_train)
        return float((clf.predict(x_test) == np.asarray(y_test)).mean())


# -- character n-grams --------------------------------------------------------------------
LAMBDAS = tuple(i / 10 for i in range(11))  # interpolation weights tried on validation


def _gram_keys(blocks: np.ndarray, vocab: int, order: int) -> np.ndarray:
    """Every ``order``-gram inside the blocks as one base-``vocab`` integer: column ``j`` is
    the gram ending at ``blocks[:, j + order - 1]``."""
    n = blocks.shape[1] - order + 1
    keys = np.zeros((blocks.shape[0], n), dtype=np.int64)
    for k in range(order):
        keys = keys * vocab + blocks[:, k:k + n]
    return keys


def _lookup(table: tuple[np.ndarray, np.ndarray], keys: np.ndarray) -> np.ndarray:
    """Counts of ``keys`` in ``table`` (sorted unique keys, their counts); 0 where absent."""
    unique, counts = table
    at = np.minimum(np.searchsorted(unique, keys), len(unique) - 1)
    return np.where(unique[at] == keys, counts[at], 0).astype(np.float64)


def _position_probs(train: np.ndarray, blocks: np.ndarray, vocab: int,
                    orders: int) -> list[np.ndarray]:
    """Per predicted position of ``blocks`` (targets ``blocks[:, 1:]``), the probability of
    the target under each order 1..``orders`` fitted on the train blocks: add-one unigram,
    then maximum likelihood given the previous ``order - 1`` characters (0 for an unseen
    context). A position with fewer characters before it than an order needs gets the
    highest order it has (the first target's trigram term is its bigram's)."""
    target = blocks[:, 1:]
    uni = np.bincount(train.ravel(), minlength=vocab).astype(np.float64)
    probs = [(uni[target] + 1.0) / (uni.sum() + vocab)]
    for order in range(2, orders + 1):
        grams = _gram_keys(train, vocab, order).ravel()
        table = np.unique(grams, return_counts=True)
        contexts = np.unique(grams // vocab, return_counts=True)
        keys = _gram_keys(blocks, vocab, order)  # column j predicts target column j + order - 2
        p = probs[-1].copy()
        p[:, order - 2:] = _lookup(table, keys) / np.maximum(_lookup(contexts, keys // vocab), 1.0)
        probs.append(p)
    return probs


def _bits(probs: list[np.ndarray], weights) -> float:
    mix = sum(w * p for w, p in zip(weights, probs))
    return float(-np.mean(np.log(mix)) / math.log(2))


NGRAMS = ("unigram", "bigram", "trigram", "4-gram", "5-gram")


def ngram_bits(train: np.ndarray, val: np.ndarray, test: np.ndarray, vocab: int,
               orders: int = 3) -> dict[str, float]:
    """Test bits per character of the n-gram models of order 1..``orders`` (at most 5) fitted
    on the train blocks (rows of ``context + 1`` token ids): the unigram with add-one, each
    higher order an interpolation with all lower orders whose weights (steps of 0.1, the
    unigram's at least 0.1) are chosen on the validation blocks. Predicts every position of a
    block as the character models do."""
    if not 1 <= orders <= len(NGRAMS):
        raise ValueError(f"ngram_bits: orders must be 1..{len(NGRAMS)}, got {orders}")
    val_p, test_p = (_position_probs(train, b, vocab, orders) for b in (val, test))
    out = {"unigram": _bits(test_p[:1], (1.0,))}
    for order in range(2, orders + 1):
        candidates = [w for w in itertools.product(LAMBDAS, repeat=order)
                      if w[0] >= 0.1 and math.isclose(sum(w), 1.0)]
        best = min(candidates, key=lambda w: _bits(val_p[:order], w))
        out[NGRAMS[order - 1]] = _bits(test_p[:order], best)
    return out
