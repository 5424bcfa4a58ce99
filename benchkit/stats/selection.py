"""The selection-aware test: an intersection-union of paired sign-flip tests over the configs
each arm could have been tuned to, the tuned arm's own config cross-fitted.

Estimand (the report's ``protocol.test`` sentence): the best configs' difference, per group
theta = min over the idea's configs of its expected test metric - min over the comparator's
(max when higher is better; the mean over groups, a frontier's points). "helps" claims theta <
0: the idea as its rule tunes it beats *every* comparator config. So for each comparator config
c (one per group: every combination) the idea's values, each seed measured at the configs the
idea selects on the other seeds (:mod:`benchkit.stats.crossfit`: a seed's noise never picks
the config it is measured at), are compared with c's, seed by seed; the helps side rejects only
when every such paired test does (an intersection-union test: under H0 theta >= 0 one of them
is against the comparator's best config, whose test keeps its level whatever the arms' shapes:
flat along an axis, clamped, noisier). "harms" is the mirror over the idea's configs. Neither
side assumes the arms exchangeable, and no rule sits beside the test for arms that differ.

Two-sided p = min(1, 2 min(p_helps, p_harms)), each side's p the largest of its one-sided ps
(a test's two-sided p over 2 on its data's side, 1 minus that on the other); the interval's
ends are the largest upper end over the helps tests and the smallest lower end over the harms
tests (a (1 - level) interval for theta; 0 outside it exactly when p < level); margins shift
every test's differences. The comparison's per-seed differences are the binding test's (the
largest p on the side with the smaller p; among equal ps, the one whose differences lie least
toward that side). With one config per arm each side is the plain
sign-flip test (:mod:`benchkit.stats.pairtest`). Combinations of configs over groups above
MAX_COMBOS (256: every pair is a 2^n-flip test) are replaced by each seed's best over the arm's
configs per group (larger, hence conservative, against the claim). numpy only.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from benchkit.codec import JsonRecord
from benchkit.stats import equivalence, pairtest
from benchkit.stats.crossfit import CrossFit, arm_crossfit, tuning_loss
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.stats.pairtest import Pair, worse_sign
from benchkit.stats.values import checked_direction, json_float

MAX_COMBOS = 256

Columns = tuple[int, ...]  # column indices of a (seeds x configs) table
Groups = tuple[Columns, ...]
# a (seeds x configs) table as given: an array or rows of numbers, None where missing
Table = Union[np.ndarray, Sequence[Sequence[Union[float, None]]]]


@dataclass(frozen=True)
class Sweeps:
    """Both arms' sweeps over the same seeds (rows, in seed order) and configs (columns, in
    grid order): validation and test values, NaN where missing or non-finite; ``groups`` are
    tuples of column indices, each selected on its own."""

    base_val: np.ndarray
    base_test: np.ndarray
    idea_val: np.ndarray
    idea_test: np.ndarray
    groups: Groups
    margin_reference: float | None = None  # margins relative to this fixed value, not to b_s
    # the cross-fit and the tests' pairs, by direction
    _fits: dict[str, CrossFit] = field(default_factory=dict, compare=False, repr=False)
    _pairs: dict[str, Family] = field(default_factory=dict, compare=False, repr=False)
    # each side's p and binding test, by (direction, side, statistic, seed)
    _sides: dict[tuple[str, bool, str, int], tuple[float, Pair]] = field(
        default_factory=dict, compare=False, repr=False)
    # the idea's own figures by (what, direction): one for every comparator's (:func:`against`)
    _idea: dict[tuple[str, str], Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n(self) -> int:
        return int(self.base_val.shape[0])


def sweeps(base_val: Table, base_test: Table, idea_val: Table, idea_test: Table,
           groups: Sequence[Sequence[int]] | None = None,
           margin_reference: float | None = None) -> Sweeps:
    """Validated :class:`Sweeps` from four (seeds x configs) arrays; None entries become NaN.
    ``groups`` defaults to one group of every config; ``margin_reference`` the value fixed
    before the bench that relative margins are of (None: each seed's comparator value, an
    approximation: see :func:`margin_test`)."""
    arrays = [_table(a) for a in (base_val, base_test, idea_val, idea_test)]
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays) or shape[0] < 1 or shape[1] < 1:
        raise ValueError(f"the four sweeps must be non-empty (seeds x configs) arrays of one "
                         f"shape, got {[a.shape for a in arrays]}")
    k = shape[1]
    columns = tuple(tuple(int(c) for c in g) for g in (groups or [range(k)]))
    if sorted(c for g in columns for c in g) != list(range(k)) or not all(columns):
        raise ValueError(f"groups must partition the {k} configs, got {columns}")
    for a in arrays:
        a.setflags(write=False)
    if margin_reference is not None and not (math.isfinite(margin_reference)
                                             and margin_reference > 0):
        raise ValueError(f"margin_reference must be a finite number > 0, got {margin_reference}")
    base_v, base_t, idea_v, idea_t = arrays
    return Sweeps(base_v, base_t, idea_v, idea_t, groups=columns,
                  margin_reference=margin_reference)


@dataclass(frozen=True)
class EffectiveGrids(JsonRecord):
    """A comparison's ``effective_grids`` object in reports written before cross-fitting
    (which made it unneeded): the axes along which only one arm's results were constant.
    Read so that such reports still load; never written now."""

    idea_constant: tuple[str, ...] = ()
    comparator_constant: tuple[str, ...] = ()


def against(sw: Sweeps, base_val: Table, base_test: Table) -> Sweeps:
    """Another comparator's sweeps against ``sw``'s idea, seeds, groups and margin reference,
    sharing the idea's figures (its cross-fit, its fixed-config values: computed once)."""
    return dataclasses.replace(sweeps(base_val, base_test, sw.idea_val, sw.idea_test,
                                      sw.groups, sw.margin_reference), _idea=sw._idea)


def _idea_figure(sw: Sweeps, what: str, direction: str, make: Callable[[], Any]) -> Any:
    """The idea's figure ``what`` in ``direction``, made the first time it is asked."""
    if (what, direction) not in sw._idea:
        sw._idea[(what, direction)] = make()
    return sw._idea[(what, direction)]


def _table(a: Table) -> np.ndarray:
    """A (seeds x configs) float array of ``a``, NaN for None; a read-only float array is
    taken as it is (an arm's table shared by its comparisons)."""
    if isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 2 \
            and not a.flags.writeable:
        return a
    return np.array(np.asarray(_nan(a), dtype=object).tolist(), dtype=float, ndmin=2)


def _nan(a: Table) -> list[list[float]]:
    return [[np.nan if v is None else v for v in row] for row in a]


def fit(sw: Sweeps, direction: str) -> CrossFit:
    """The arms' cross-fitted values and selections of ``sw``
    (:func:`benchkit.stats.crossfit.arm_crossfit`), cached per direction (the idea's shared)."""
    direction = checked_direction(direction)
    if direction not in sw._fits:
        sign = 1.0 if direction == "lower" else -1.0
        b, bc = arm_crossfit(sw.base_val, sw.base_test, sw.groups, sign)
        i, ic = _idea_figure(sw, "fit", direction, lambda: arm_crossfit(
            sw.idea_val, sw.idea_test, sw.groups, sign))
        sw._fits[direction] = CrossFit(base=b, idea=i, base_cols=bc, idea_cols=ic)
    return sw._fits[direction]


def idea_tuning_loss(sw: Sweeps, direction: str) -> np.ndarray:
    """Bootstrap draws of the idea's tuning loss on benches of the sweeps' seeds: each seed's
    config is selected on the other n - 1 (:func:`benchkit.stats.crossfit.tuning_loss` of the
    idea's sweep). The helps tests pit the tuned idea against fixed comparator configs, so
    this loss is what the idea pays there (its planning figures count it)."""
    return _arm_tuning_loss(sw.idea_val, sw.idea_test, sw, direction)


def comparator_tuning_loss(sw: Sweeps, direction: str) -> np.ndarray:
    """The same draws for the comparator's sweep: the harms tests pit the tuned comparator
    against fixed idea configs, so this loss is what it pays there."""
    return _arm_tuning_loss(sw.base_val, sw.base_test, sw, direction)


def _arm_tuning_loss(val: np.ndarray, test: np.ndarray, sw: Sweeps, direction: str
                     ) -> np.ndarray:
    """One arm's tuning-loss draws on benches of ``sw``'s seeds, over ``sw``'s groups."""
    sign = 1.0 if checked_direction(direction) == "lower" else -1.0
    return tuning_loss(val, test, sw.groups, sign, sw.n - 1)


@dataclass(frozen=True)
class Family:
    """The paired tests of the two sides: ``helps`` (the idea's cross-fitted values against
    each comparator config combination) and ``harms`` (each idea config combination against
    the comparator's cross-fitted values); empty when an arm has no eligible config or a
    cross-fitted value is not finite (no test)."""

    helps: tuple[Pair, ...]
    harms: tuple[Pair, ...]


def _eligible(val: np.ndarray, test: np.ndarray, cols: Columns) -> list[int]:
    return [c for c in cols if np.isfinite(val[:, c]).all() and np.isfinite(test[:, c]).all()]


def _fixed_values(val: np.ndarray, test: np.ndarray, groups: Groups, sign: float
                  ) -> list[np.ndarray]:
    """Per combination of eligible configs (one per group), the arm's per-seed mean over
    groups; above MAX_COMBOS, the one vector of each seed's best (``sign``) per group."""
    options = [_eligible(val, test, g) for g in groups]
    if not all(options):
        return []
    if math.prod(len(o) for o in options) > MAX_COMBOS:
        best = [sign * np.min(sign * test[:, o], axis=1) for o in options]
        return [np.mean(best, axis=0)]
    return [test[:, list(combo)].mean(axis=1) for combo in itertools.product(*options)]


def family(sw: Sweeps, direction: str) -> Family:
    """The :class:`Family` of ``sw`` (cached per direction)."""
    direction = checked_direction(direction)
    if direction not in sw._pairs:
        cf = fit(sw, direction)
        sign = 1.0 if direction == "lower" else -1.0
        ok = bool(np.isfinite(cf.base).all() and np.isfinite(cf.idea).all())
        helps = [Pair(b, cf.idea) for b in _fixed_values(sw.base_val, sw.base_test, sw.groups,
                                                          sign)] if ok else []
        harms = [Pair(cf.base, i) for i in _idea_figure(
            sw, "fixed", direction, lambda: _fixed_values(sw.idea_val, sw.idea_test, sw.groups,
                                                          sign))] if ok else []
        sw._pairs[direction] = Family(tuple(helps), tuple(harms))
    return sw._pairs[direction]


def _checked(fam: Family) -> Family:
    if not (fam.helps and fam.harms):
        raise ValueError("the sweeps leave an arm without an eligible config or with a "
                         "non-finite test value at a cross-fitted config: no test")
    return fam


def _side(sw: Sweeps, direction: str, idea_better: bool, statistic: str, seed: int
          ) -> tuple[float, Pair]:
    """(the side's p, its binding test): the largest one-sided p over the side's tests (the
    helps tests when ``idea_better``, else the harms tests); computed once per sweeps (the
    comparison's p, its binding test and its verdict all ask)."""
    key = (checked_direction(direction), idea_better, statistic, seed)
    if key not in sw._sides:
        fam = _checked(family(sw, direction))
        pairs = fam.helps if idea_better else fam.harms
        # each test's one-sided p: its two-sided p over 2 when its statistic favours the side,
        # else 1 minus that (the side's tests' ps made together)
        stats = [float(pairtest.statistic(q.d, statistic)) * worse_sign(direction) for q in pairs]
        ps = [p2 / 2 if (s < 0 if idea_better else s > 0) else 1 - p2 / 2
              for p2, s in zip(pairtest.p_values(pairs, statistic, seed=seed), stats)]
        # ties of p (exact ps bottom out at 2^-n): the test nearest the null binds, its summed
        # differences least toward the side (for harms, the idea's least-bad config), not the
        # first listed
        toward = worse_sign(direction) * (-1.0 if idea_better else 1.0)
        j = max(range(len(pairs)), key=lambda i: (ps[i], -toward * float(pairs[i].d.sum())))
        sw._sides[key] = (ps[j], pairs[j])
    return sw._sides[key]


def p_value(sw: Sweeps, direction: str, *, statistic: str = "mean", seed: int = 0) -> float:
    """Two-sided p of the intersection-union test (see the module doc) of ``statistic``
    (the summed differences, wins minus losses for ``"sign"``, the signed rank sum for
    ``"wilcoxon"``)."""
    p_helps = _side(sw, direction, True, statistic, seed)[0]
    p_harms = _side(sw, direction, False, statistic, seed)[0]
    return float(min(1.0, 2 * min(p_helps, p_harms)))


def binding(sw: Sweeps, direction: str, statistic: str = "mean", *, seed: int = 0) -> Pair:
    """The test that binds: the one with the largest p on the side with the smaller p (its
    per-seed values are the comparison's; on a tie of the sides, the helps side's)."""
    p_helps, helps = _side(sw, direction, True, statistic, seed)
    p_harms, harms = _side(sw, direction, False, statistic, seed)
    return helps if p_helps <= p_harms else harms


def interval(sw: Sweeps, direction: str, level: float, *,
             seed: int = 0) -> list[float | None]:
    """[lo, hi] for theta at 1 - level: the largest upper end over the tests of the side that
    the idea being better lowers (helps when lower is better) and the smallest lower end over
    the other side's, each test's interval :func:`benchkit.stats.pairtest.intervals`. 0 lies
    outside it exactly when :func:`p_value` < level; None: an unbounded end."""
    fam = _checked(family(sw, direction))
    low_side, high_side = ((fam.harms, fam.helps) if worse_sign(direction) > 0
                           else (fam.helps, fam.harms))
    ends = pairtest.intervals([*low_side, *high_side], level, seed=seed)   # all in one pass
    los, his = [e[0] for e in ends[:len(low_side)]], [e[1] for e in ends[len(low_side):]]
    lo = None if any(v is None for v in los) else min(v for v in los if v is not None)
    hi = None if any(v is None for v in his) else max(v for v in his if v is not None)
    return [lo, hi]


def prefix(sw: Sweeps, m: int) -> Sweeps:
    """The sweeps of the first m seeds (an earlier look: its cross-fit on those seeds only)."""
    return Sweeps(sw.base_val[:m], sw.base_test[:m], sw.idea_val[:m], sw.idea_test[:m],
                  sw.groups, sw.margin_reference)


def row_p_values(sw: Sweeps, direction: str, signs: np.ndarray) -> np.ndarray:
    """The two-sided p of every flipped data set (rows of ``signs``, +-1, covering the flips
    uniformly): each test's differences flipped alike, its p against the rows' own null, and
    the sides combined as :func:`p_value` combines them; 1 where there is no test."""
    fam = family(sw, direction)
    if not (fam.helps and fam.harms):
        return np.ones(len(signs))
    worse = worse_sign(direction)
    sides = []
    for idea_better, pairs in ((True, fam.helps), (False, fam.harms)):
        worst = np.zeros(len(signs))
        for q in pairs:
            p2 = pairtest.row_p_values(q.d, signs)
            s = (signs @ q.d) * worse
            favours = s < 0 if idea_better else s > 0
            worst = np.maximum(worst, np.where(favours, p2 / 2, 1 - p2 / 2))
        sides.append(worst)
    return np.asarray(np.minimum(1.0, 2 * np.minimum(sides[0], sides[1])))


def margin_scale(sw: Sweeps, b: np.ndarray) -> np.ndarray:
    """Per seed, what a relative margin is of: the declared reference (a constant fixed before
    the bench) or, without one, the comparator's test value |b_s| in that test (taken from the
    data: exact only approximately when the seeds' levels differ)."""
    scale: np.ndarray = (np.full(len(b), float(sw.margin_reference))
                         if sw.margin_reference is not None else np.abs(b))
    return scale


@dataclass(frozen=True)
class MarginTest:
    """One side of a margin claim: its p (the largest over the side's tests), and the binding
    test's per-seed ``scale`` the relative margin is of, and that test."""

    p_value: float
    scale: np.ndarray
    pair: Pair


def margin_test(sw: Sweeps, direction: str, margin: float, *, side: str = "worse",
                seed: int = 0) -> MarginTest:
    """One side of a margin claim of size margin * s_s (s_s: :func:`margin_scale`).
    ``side="worse"`` (non-inferiority): H0 theta is worse by the margin or more; every helps
    test's d is moved margin * s_s towards better and its one-sided test asks whether it is
    then still worse; the largest p decides. ``side="better"``: the mirror over the harms
    tests (H0 better by the margin or more)."""
    if not (math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    fam = _checked(family(sw, direction))
    worse = worse_sign(direction)
    toward = -worse if side == "worse" else worse
    alternative = ("less" if worse > 0 else "greater") if side == "worse" else \
        ("greater" if worse > 0 else "less")
    pairs = fam.helps if side == "worse" else fam.harms
    scales = [margin_scale(sw, q.base) for q in pairs]
    ps = pairtest.one_sided_ps(pairs, [toward * margin * s for s in scales], alternative,
                               seed=seed)
    j = ps.index(max(ps))   # the first of the largest
    return MarginTest(p_value=float(ps[j]), scale=scales[j], pair=pairs[j])


def noninferiority(sw: Sweeps, direction: str, margin: float, alpha: float, *,
                   seed: int = 0) -> NonInferiorityTest:
    """stats.noninferiority's record, selection-aware: non-inferior when the margin test
    (:func:`margin_test`) has p < alpha. ``bound_rel`` is the smallest relative margin the
    test would show at alpha (the largest over the helps tests of each one's, which inverts
    it: non-inferior exactly when margin > bound_rel), ``bound`` the same in the metric's
    units (bound_rel * mean |b| of the binding test, as a bound on idea - baseline: an upper
    one when lower is better, a lower one when higher)."""
    test = margin_test(sw, direction, margin, seed=seed)
    p = test.p_value
    ni = p < alpha
    helps = _checked(family(sw, direction)).helps
    bounds = pairtest.ni_bounds(helps, direction, [margin_scale(sw, q.base) for q in helps],
                                alpha, ni, margin, seed)
    bound_rel = None if any(b is None for b in bounds) else max(
        b for b in bounds if b is not None)
    scale = float(test.scale.mean())
    bound_worse = None if bound_rel is None else bound_rel * scale
    bound = None if bound_worse is None else (bound_worse if worse_sign(direction) > 0
                                              else -bound_worse)
    return NonInferiorityTest(
        margin_rel=float(margin), margin_abs=json_float(margin * scale),
        bound=None if bound is None else json_float(bound),
        bound_rel=None if bound_rel is None else json_float(bound_rel),
        non_inferior=bool(ni), p_value=json_float(p),
        test="one-sided sign-flip tests of the idea's cross-fitted values against every "
             "comparator config, shifted by the margin (intersection-union)"
            + (f", relative to the declared reference {sw.margin_reference:g}"
               if sw.margin_reference is not None else
               ", relative to each seed's comparator value (exact only approximately "
               "when the seeds' levels differ: declare margin_reference)"))


def tost(sw: Sweeps, direction: str, margin: float, level: float, *,
         seed: int = 0) -> equivalence.EquivalenceTest:
    """:func:`benchkit.stats.equivalence.tost`, selection-aware: both sides of
    :func:`margin_test`."""
    worse = margin_test(sw, direction, margin, side="worse", seed=seed)
    better = margin_test(sw, direction, margin, side="better", seed=seed)
    p_w, p_b = worse.p_value, better.p_value
    return equivalence.EquivalenceTest(
        margin_rel=float(margin), margin_abs=float(margin * worse.scale.mean()),
        p_worse=float(p_w), p_better=float(p_b), p_value=float(max(p_w, p_b)),
        level=float(level), equivalent=bool(max(p_w, p_b) < level))
