"""Floors the tracks score on a seed's test split after fitting on its train split and choosing
hyperparameters on its validation split: the trivial ones (the mean, least squares and ridge on
given features, logistic regression) and the strongest standard methods a reviewer names (RBF
kernel ridge, nearest-neighbour analogues, gradient-boosted trees, an RBF support vector
machine, an MLP). numpy, and scikit-learn where imported (an optional extra: a track computes
the floors that need it only when it is installed); no torch, so a report gets its floors
without training anything. A trained baseline that does not beat its track's strongest floor
by its A/A bench's MDE measures nothing a standard method does not.
"""
from __future__ import annotations

import itertools
import math
import warnings

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
        with single_thread():
            coef = np.linalg.solve(np.einsum("ij,ik->jk", a, a), np.einsum("ij,ik->jk", a, y))
    except np.linalg.LinAlgError:  # collinear columns: the minimum-norm solution
        with single_thread():
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
    with single_thread():
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


# -- the strongest standard methods (issue 40): kernels, boosted trees, SVM, analogues, MLP --
def single_thread():
    """A context in which BLAS and OpenMP use one thread (threadpoolctl, a scikit-learn
    dependency), or a no-op without it: on a loaded machine their threads cost more than they
    save (a 120 x 120 lstsq: 0.5 s against 1 ms, with seven other jobs on 2 cores), and one
    thread keeps the floors the same from machine to machine."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1)


def has_sklearn() -> bool:
    import importlib.util
    return importlib.util.find_spec("sklearn") is not None


def _standardise(x_train, *others):
    x = np.asarray(x_train, dtype=np.float64).reshape(len(x_train), -1)
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    return [(x - mu) / sd] + [(np.asarray(o, np.float64).reshape(len(o), -1) - mu) / sd
                              for o in others]


def _sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return np.maximum(d, 0.0)


KERNEL_GAMMAS = (0.1, 0.3, 1.0)      # times 1 / the number of (standardised) columns
KERNEL_PENALTIES = (1e-5, 1e-4, 1e-3)  # times the number of train rows


def kernel_ridge(x_train, y_train, x_val, y_val, x_test, y_test, gammas=KERNEL_GAMMAS,
                 penalties=KERNEL_PENALTIES) -> tuple[float, float]:
    """Validation and test MSE of RBF kernel ridge regression on standardised columns (the
    train mean of ``y`` taken out first), its width ``gamma / d`` and penalty ``lam * n`` the
    pair of the grids with the lowest validation MSE. One Cholesky solve per pair
    (:func:`spd_solver`): half an LU solve's cost and a twentieth of an eigendecomposition's
    (2,000 rows, one thread: 0.11 s, 0.20 s, 1.8 s), so a grid of up to ten pairs is cheaper
    than an eigendecomposition per width reused across the penalties."""
    a, v, t = _standardise(x_train, x_val, x_test)
    y = np.asarray(y_train, np.float64).reshape(len(a), -1)
    centre = y.mean(axis=0)
    yv = np.asarray(y_val, np.float64).reshape(len(v), -1)
    yt = np.asarray(y_test, np.float64).reshape(len(t), -1)
    best = (math.inf, math.inf)
    spd_solve = spd_solver()  # scipy loaded before the thread limit: see spd_solver
    with single_thread():
        d2_train, d2_val, d2_test = _sq_dists(a, a), _sq_dists(v, a), _sq_dists(t, a)
        for g in gammas:
            gamma = g / a.shape[1]
            kernel, k_val, k_test = (np.exp(-gamma * d) for d in (d2_train, d2_val, d2_test))
            for lam in penalties:
                coef = spd_solve(kernel + lam * len(a) * np.eye(len(a)), y - centre)
                err = float(np.mean((k_val @ coef + centre - yv) ** 2))
                if err < best[0]:
                    best = (err, float(np.mean((k_test @ coef + centre - yt) ** 2)))
    return best


def spd_solver():
    """A function ``(matrix, rhs) -> matrix^-1 rhs`` for a symmetric positive definite
    ``matrix`` (a kernel plus a positive ridge): scipy's Cholesky solve where scipy is installed
    (a scikit-learn dependency), LU otherwise or where the factorisation finds the matrix not
    positive definite; the two agree to round-off (relative 1e-12 on the tabular track's
    kernels). Call it *before* :func:`single_thread`: threadpoolctl limits only the libraries
    loaded when it is entered, and scipy's own OpenBLAS, loaded later, would run on every
    core, with other bits on the first call of a process than on the next."""
    try:
        from scipy.linalg import cho_factor, cho_solve
    except ImportError:
        return np.linalg.solve

    def solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        try:
            factor = cho_factor(matrix, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return np.linalg.solve(matrix, rhs)
        return cho_solve(factor, rhs, check_finite=False)

    return solve


def kernel_ridge_mse(x_train, y_train, x_val, y_val, x_test, y_test, gammas=KERNEL_GAMMAS,
                     penalties=KERNEL_PENALTIES) -> float:
    """The test MSE of :func:`kernel_ridge`."""
    return kernel_ridge(x_train, y_train, x_val, y_val, x_test, y_test, gammas=gammas,
                        penalties=penalties)[1]


NEIGHBOURS = (1, 2, 4, 8, 16, 32)


def nearest_neighbours(x_train, y_train, x_val, y_val, x_test, y_test,
                       neighbours=NEIGHBOURS) -> tuple[float, float]:
    """Validation and test MSE of the method of analogues: the mean target of the ``k`` train
    rows nearest (Euclidean, standardised columns), ``k`` the one of ``neighbours`` best on
    validation."""
    a, v, t = _standardise(x_train, x_val, x_test)
    y = np.asarray(y_train, np.float64).reshape(len(a), -1)

    def errors(rows, target):
        order = np.argsort(_sq_dists(rows, a), axis=1, kind="stable")[:, :max(neighbours)]
        target = np.asarray(target, np.float64).reshape(len(rows), -1)
        return {k: float(np.mean((y[order[:, :k]].mean(axis=1) - target) ** 2))
                for k in neighbours}

    with single_thread():
        val = errors(v, y_val)
        best = min(neighbours, key=val.__getitem__)
        return val[best], errors(t, y_test)[best]


def best_embedding(method, splits, lengths) -> float:
    """The test MSE of ``method`` (a function of the six arrays returning validation and test
    MSE) on the delay embedding of the last ``m`` states of each window (``x``: (n, window,
    dim)), ``m`` the one of ``lengths`` with the lowest validation MSE."""
    (x, y), (xv, yv), (xt, yt) = splits

    def last(a, m):
        return np.asarray(a)[:, -m:].reshape(len(a), -1)

    results = [method(last(x, m), y, last(xv, m), yv, last(xt, m), yt) for m in lengths]
    return min(results)[1]


BOOSTING_GRID = ({"learning_rate": 0.1, "max_leaf_nodes": 15, "max_iter": 200},)


def _staged_best(model, rows, target, score, better):
    """The best score of ``model``'s staged predictions on ``rows`` (the number of boosting
    iterations chosen on them) and that iteration count."""
    best, best_at = None, 0
    for at, pred in enumerate(model.staged_predict(rows), start=1):
        value = score(pred, target)
        if best is None or better(value, best):
            best, best_at = value, at
    return best, best_at


def _at_iteration(model, rows, iterations):
    for at, pred in enumerate(model.staged_predict(rows), start=1):
        if at == iterations:
            return pred
    raise ValueError(f"the model has fewer than {iterations} iterations")


def _boosting(make, x_train, y_train, x_val, y_val, x_test, y_test, grid, score, better):
    """The test score of the boosted model (``make(**cfg)``, fitted per config of ``grid``)
    and iteration count best on validation."""
    x, xv, xt = (np.asarray(z, np.float64).reshape(len(z), -1) for z in (x_train, x_val, x_test))
    best = None
    with single_thread():
        for cfg in grid:
            model = make(**cfg).fit(x, y_train)
            value, at = _staged_best(model, xv, y_val, score, better)
            if best is None or better(value, best[0]):
                best = (value, model, at)
        _, model, at = best
        return score(_at_iteration(model, xt, at), y_test)


def boosting_mse(x_train, y_train, x_val, y_val, x_test, y_test, grid=BOOSTING_GRID) -> float:
    """Test MSE of scikit-learn's histogram gradient-boosted trees on one target column (no
    early stopping, ``random_state`` 0), the config of ``grid`` and the number of boosting
    iterations best on validation."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    def make(**cfg):
        return HistGradientBoostingRegressor(early_stopping=False, random_state=0, **cfg)

    def mse(pred, target):
        return float(np.mean((pred - np.asarray(target, np.float64).ravel()) ** 2))

    ravel = [np.asarray(y, np.float64).ravel() for y in (y_train, y_val, y_test)]
    return _boosting(make, x_train, ravel[0], x_val, ravel[1], x_test, ravel[2], grid, mse,
                     lambda a, b: a < b)


def boosting_accuracy(x_train, y_train, x_val, y_val, x_test, y_test,
                      grid=BOOSTING_GRID) -> float:
    """Test accuracy of scikit-learn's histogram gradient-boosted trees (no early stopping,
    ``random_state`` 0), the config of ``grid`` and the number of boosting iterations best on
    validation."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    def make(**cfg):
        return HistGradientBoostingClassifier(early_stopping=False, random_state=0, **cfg)

    def accuracy(pred, target):
        return float((pred == np.asarray(target)).mean())

    return _boosting(make, x_train, y_train, x_val, y_val, x_test, y_test, grid, accuracy,
                     lambda a, b: a > b)


def _choose(fits, score_val, better):
    """The fitted model of ``fits`` (an iterable of fitted estimators) best on validation."""
    best, best_score = None, None
    for model in fits:
        score = score_val(model)
        if best is None or better(score, best_score):
            best, best_score = model, score
    return best


SVM_C = (3.0, 30.0)
SVM_GAMMAS = (0.5, 2.0)  # times 1 / d on standardised columns (scikit-learn's "scale")


def svm_accuracy(x_train, y_train, x_val, y_val, x_test, y_test, cs=SVM_C,
                 gammas=SVM_GAMMAS) -> float:
    """Test accuracy of scikit-learn's RBF support vector classifier on standardised columns,
    ``C`` and ``gamma / d`` the pair of the grids best on validation."""
    from sklearn.svm import SVC

    x, xv, xt = _standardise(x_train, x_val, x_test)
    with single_thread():
        fits = (SVC(C=c, gamma=g / x.shape[1]).fit(x, y_train) for c in cs for g in gammas)
        best = _choose(fits, lambda m: float((m.predict(xv) == np.asarray(y_val)).mean()),
                       lambda a, b: a > b)
        return float((best.predict(xt) == np.asarray(y_test)).mean())


MLP_PENALTIES = (1e-4, 1e-2)


def mlp_mse(x_train, y_train, x_val, y_val, x_test, y_test, hidden=(128, 128),
            penalties=MLP_PENALTIES) -> float:
    """Test MSE of scikit-learn's MLPRegressor (ReLU, Adam, its own early stopping off,
    ``random_state`` 0) on standardised columns, the L2 penalty of ``penalties`` best on
    validation."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    x, xv, xt = _standardise(x_train, x_val, x_test)
    y = np.asarray(y_train, np.float64).reshape(len(x), -1)
    yv = np.asarray(y_val, np.float64).reshape(len(xv), -1)
    yt = np.asarray(y_test, np.float64).reshape(len(xt), -1)
    with single_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter is the budget
        target = y.ravel() if y.shape[1] == 1 else y  # scikit-learn wants 1-d for one column
        fits = (MLPRegressor(hidden_layer_sizes=hidden, alpha=p, max_iter=300,
                             random_state=0).fit(x, target) for p in penalties)
        best = _choose(fits, lambda m: float(np.mean((m.predict(xv).reshape(yv.shape) - yv) ** 2)),
                       lambda a, b: a < b)
        return float(np.mean((best.predict(xt).reshape(yt.shape) - yt) ** 2))
