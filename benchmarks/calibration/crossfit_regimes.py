"""The arms-that-differ regimes (issue 49) for the cross-fitted deciding test: draws shared by
the simulation (crossfit_calibration.py) and the plugin runs (crossfit_plugin.py).

Every regime is a pair of (seeds x configs) sweeps, lower is better. The comparator's configs
have true means MEANS along lr; a seed's effect (sd 0.1) is shared by every run of the seed;
validation noise sd 0.05, test noise sd 0.01 (selection_calibration.py's "selection noise"
regime: configs near the optimum, validation noisier than test). The idea differs as the
regime says; in every regime of NULLS the arms' best configs have the same true mean (the
declared estimand, the best configs' difference, is 0) whatever the arms' shapes.
"""
from __future__ import annotations

import math

import numpy as np

MEANS = (0.0, 0.01, 0.02)
SEED_SD, VAL_SD, TEST_SD = 0.1, 0.05, 0.01


def _noise(rng, shape, sd: float, kind: str) -> np.ndarray:
    """Noise of sd ``sd``: normal, t(3) scaled to sd, or centred lognormal(0, 1) scaled to sd."""
    if kind == "t3":
        return rng.standard_t(3, shape) * sd / math.sqrt(3.0)
    if kind == "lognormal":
        z = rng.lognormal(0.0, 1.0, shape)
        return (z - math.exp(0.5)) / math.sqrt((math.e - 1) * math.e) * sd
    return rng.normal(0.0, sd, shape)


def _arm(rng, seed: np.ndarray, means, *, val_sd=VAL_SD, test_sd=TEST_SD, kind="normal",
         columns=None):
    """(val, test) of one arm: ``columns`` maps each config to the run it is (a clamped lr
    runs the same run twice; a constant arm runs one run at every config)."""
    means = np.asarray(means, float)
    k = len(means)
    n = seed.shape[0]
    runs = max(columns) + 1 if columns is not None else k
    cols = list(columns) if columns is not None else list(range(k))
    val = _noise(rng, (n, runs), val_sd, kind)[:, cols]
    test = _noise(rng, (n, runs), test_sd, kind)[:, cols]
    return 1 + seed + means + val, 1 + seed + means + test


def draw(regime: str, rng, n: int, effect: float = 0.0):
    """base_val, base_test, idea_val, idea_test of one bench of ``regime``; the idea better by
    ``effect`` (metric units, every config) before any null shift."""
    means = MEANS
    seed = rng.normal(0, SEED_SD, (n, 1))
    if regime == "pair grid":          # (lr, wd) pairs: no two configs differ in one key
        means = (0.0, 0.005, 0.01, 0.02)
    bv, bt = _arm(rng, seed, means)
    k = len(means)
    idea_means, kw = np.asarray(means), {}
    if regime in ("lr-blind", "lr-blind + 1e-12", "pair grid"):
        idea_means, kw = np.zeros(k), {"columns": [0] * k}
    elif regime == "clamped lr":       # lr clamped at the middle value: configs 2 and 3 alike
        idea_means, kw = np.asarray(means)[[0, 1, 1]], {"columns": [0, 1, 1]}
    elif regime == "10x less lr-sensitive":
        idea_means = np.asarray(means) / 10
    elif regime == "flat A/A":
        idea_means = np.zeros(k)
    elif regime == "noisier idea":
        kw = {"val_sd": 3 * VAL_SD, "test_sd": 3 * TEST_SD}
    elif regime == "heavy tails":
        kw = {"kind": "t3"}
    elif regime == "skewed idea":
        kw = {"kind": "lognormal", "test_sd": 3 * TEST_SD}
    elif regime == "different optimum":  # the idea's best lr is the comparator's worst
        idea_means = np.asarray(means)[::-1]
    iv, it = _arm(rng, seed, idea_means, **kw)
    if regime == "flat A/A":
        bv, bt = _arm(rng, seed, np.zeros(k))
    if regime == "lr-blind + 1e-12":
        iv, it = iv + 1e-12 * rng.normal(size=iv.shape), it + 1e-12 * rng.normal(size=it.shape)
    return bv, bt, iv - effect, it - effect


def best_config(regime: str) -> int:
    """The column of the idea's true best config in ``regime`` (the comparator's is 0)."""
    return 2 if regime == "different optimum" else 0


NULLS = ("A/A", "flat A/A", "lr-blind", "lr-blind + 1e-12", "clamped lr",
         "10x less lr-sensitive", "pair grid", "noisier idea", "heavy tails", "skewed idea",
         "different optimum")
