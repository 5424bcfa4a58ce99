"""Cross-fitted selection: each seed's config is chosen on the validation of the other seeds.

For seed i an arm selects, per group, by the protocol's rule (best validation mean, ties to
the first in grid order, a config with a non-finite validation or test value on any seed not
eligible) over the seeds other than i, and seed i contributes that config's test value (the
mean over groups: a frontier's points). Seed i's noise never picks the config it is measured
at, so a run that is lucky on both splits cannot make its own seed look good. The selection-
aware test (:mod:`benchkit.stats.selection`) measures the tuned arm this way against each of
the other arm's configs; the difference of both arms cross-fitted is no test by itself (which
config each arm lands on is one draw shared by every seed). With one seed there are no other
seeds: the seed selects on itself. numpy only.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_COMBOS = 256  # config combinations an arm's fixed values go to (every one a paired test)


@dataclass(frozen=True)
class CrossFit:
    """Per seed (rows, seed order): each arm's test value at its cross-fitted configs (mean
    over groups; NaN when a group has no eligible config) and the columns it selected per
    group (seeds x groups, -1 where none)."""

    base: np.ndarray
    idea: np.ndarray
    base_cols: np.ndarray
    idea_cols: np.ndarray

    @property
    def diffs(self) -> np.ndarray:
        """idea - comparator per seed (the comparison's per-seed differences)."""
        with np.errstate(invalid="ignore"):
            d: np.ndarray = self.idea - self.base
        return d


def choose(val: np.ndarray, test: np.ndarray, cols: Sequence[int], sign: float) -> np.ndarray:
    """Per seed i, the column of ``cols`` with the best validation mean over the seeds other
    than i (``sign`` 1: lower is better, -1: higher), ties to the first; a column with a
    non-finite validation or test value on any seed (a diverged run) is never eligible; -1
    when none is. ``val``/``test`` are (seeds x configs), or arms stacked ahead of those (each
    arm its own choice: the same sums, one pass for a report's comparators)."""
    c = list(cols)
    v = val[..., c]
    ok = np.isfinite(v).all(axis=-2) & np.isfinite(test[..., c]).all(axis=-2)
    n = v.shape[-2]
    v = np.where(ok[..., None, :], v, 0.0)
    others = ~np.eye(n, dtype=bool) if n > 1 else np.ones((1, 1), dtype=bool)
    sums = np.where(others[:, :, None], v[..., None, :, :], 0.0).sum(axis=-2)  # i: sum j != i
    score = np.where(ok[..., None, :], sign * sums, np.inf)
    chosen: np.ndarray = np.where(ok.any(axis=-1)[..., None],
                                  np.asarray(c)[np.argmin(score, axis=-1)], -1)
    return chosen


def arm_crossfit(val: np.ndarray, test: np.ndarray, groups: Sequence[Sequence[int]],
                 sign: float) -> tuple[np.ndarray, np.ndarray]:
    """One arm's cross-fitted values over ``groups`` (each selected on its own; see
    :func:`choose`; the mean over groups) and its selected columns (seeds x groups), from
    (seeds x configs) validation and test arrays (or arms stacked ahead: each arm's own):
    the arm's own, whatever it is compared with, so computed once per arm
    (:class:`CrossFit` holds both arms')."""
    cols = np.stack([choose(val, test, g, sign) for g in groups], axis=-1)
    picked = np.take_along_axis(test, np.maximum(cols, 0), axis=-1)
    picked = np.where(cols >= 0, picked, np.nan)
    return (picked.mean(axis=-1) if len(groups) > 1 else picked[..., 0]), cols


def eligible(val: np.ndarray, test: np.ndarray, cols: Sequence[int]) -> list[int]:
    """The columns of ``cols`` with every seed's validation and test value finite."""
    ok = np.isfinite(val[:, list(cols)]).all(axis=0) & np.isfinite(test[:, list(cols)]).all(axis=0)
    return [c for c, fine in zip(cols, ok.tolist()) if fine]


def fixed_values(val: np.ndarray, test: np.ndarray, groups: Sequence[Sequence[int]],
                 sign: float) -> list[np.ndarray]:
    """Per combination of eligible configs (one per group), the arm's per-seed mean over
    groups; above MAX_COMBOS, the one vector of each seed's best (``sign``) per group."""
    options = [eligible(val, test, g) for g in groups]
    if not all(options):
        return []
    if math.prod(len(o) for o in options) > MAX_COMBOS:
        best = [sign * np.min(sign * test[:, o], axis=1) for o in options]
        return [np.mean(best, axis=0)]
    means = test[:, np.array(list(itertools.product(*options)))].mean(axis=2)  # seeds x combos
    return list(np.ascontiguousarray(means.T))   # each combination's mean its own row's


LOSS_DRAWS = 400  # bootstrap draws of the tuning loss (its mean and sd to about 5%)


def tuning_loss(val: np.ndarray, test: np.ndarray, groups: Sequence[Sequence[int]],
                sign: float, size: int, *, draws: int = LOSS_DRAWS, seed: int = 0
                ) -> np.ndarray:
    """Bootstrap draws of what an arm's selection costs on test: per draw, ``size`` seeds
    drawn with replacement select per group by the protocol's rule (best validation mean,
    ties to the first; only columns :func:`choose` may pick), and the draw's loss is the
    selected configs' observed test mean minus the best observed test mean (>= 0; the mean
    over groups). A tuned arm pays this against a fixed config, and one draw of it is shared
    by every seed of a bench (the deciding test's planning figures count both). Empty where
    a group has no eligible config. Seeded: the same data give the same draws."""
    n = val.shape[0]
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(max(int(size), 1), np.full(n, 1.0 / n), size=draws)
    losses = []
    for g in groups:
        c = [j for j in g if np.isfinite(val[:, j]).all() and np.isfinite(test[:, j]).all()]
        if not c:
            return np.empty(0)
        means = sign * test[:, c].mean(axis=0)
        picked = np.argmin(sign * (counts @ val[:, c]), axis=1)
        losses.append(means[picked] - means.min())
    loss: np.ndarray = np.mean(losses, axis=0)
    return loss
