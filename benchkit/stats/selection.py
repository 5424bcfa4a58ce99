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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from benchkit.codec import JsonRecord, replaced
from benchkit.stats import equivalence, pairtest
from benchkit.stats.crossfit import (MAX_COMBOS as MAX_COMBOS, CrossFit, arm_crossfit,
                                     fixed_values, tuning_loss)
from benchkit.stats.noninferior import NonInferiorityTest, selection_aware
from benchkit.stats.pairtest import Pair, worse_sign
from benchkit.stats.values import checked_direction, table

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
    # intervals and non-inferiority tests by (what, direction, its figures..., seed)
    _tested: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False, repr=False)

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
    arrays = [table(a) for a in (base_val, base_test, idea_val, idea_test)]
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
    return replaced(sweeps(base_val, base_test, sw.idea_val, sw.idea_test,
                                      sw.groups, sw.margin_reference), _idea=sw._idea)


def _idea_figure(sw: Sweeps, what: str, direction: str, make: Callable[[], Any]) -> Any:
    """The idea's figure ``what`` in ``direction``, made the first time it is asked."""
    if (what, direction) not in sw._idea:
        sw._idea[(what, direction)] = make()
    return sw._idea[(what, direction)]


def fit(sw: Sweeps, direction: str) -> CrossFit:
    """The arms' cross-fitted values and selections of ``sw``
    (:func:`benchkit.stats.crossfit.arm_crossfit`), cached per direction (the idea's shared)."""
    return fits([sw], direction)[0]


def fits(sws: Sequence[Sweeps], direction: str) -> list[CrossFit]:
    """:func:`fit` of each of ``sws`` (one seed count and grid: a report's comparators), their
    comparators' cross-fits made in one pass (arms stacked, each arm's arithmetic its own)."""
    direction = checked_direction(direction)
    sign = 1.0 if direction == "lower" else -1.0
    todo = [sw for sw in sws if direction not in sw._fits]
    if len({(sw.base_val.shape, sw.groups) for sw in todo}) > 1:   # not one grid: apart
        return [fits([sw], direction)[0] for sw in sws]
    if todo:
        b, bc = arm_crossfit(np.stack([sw.base_val for sw in todo]),
                             np.stack([sw.base_test for sw in todo]), todo[0].groups, sign)
    for k, sw in enumerate(todo):
        i, ic = _idea_figure(sw, "fit", direction, lambda: arm_crossfit(
            sw.idea_val, sw.idea_test, sw.groups, sign))
        sw._fits[direction] = CrossFit(base=b[k], idea=i, base_cols=bc[k], idea_cols=ic)
    return [sw._fits[direction] for sw in sws]


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


def family(sw: Sweeps, direction: str) -> Family:
    """The :class:`Family` of ``sw`` (cached per direction)."""
    direction = checked_direction(direction)
    if direction not in sw._pairs:
        cf = fit(sw, direction)
        sign = 1.0 if direction == "lower" else -1.0
        ok = bool(np.isfinite(cf.base).all() and np.isfinite(cf.idea).all())
        helps = [Pair(b, cf.idea) for b in fixed_values(sw.base_val, sw.base_test, sw.groups,
                                                          sign)] if ok else []
        harms = [Pair(cf.base, i) for i in _idea_figure(
            sw, "fixed", direction, lambda: fixed_values(sw.idea_val, sw.idea_test, sw.groups,
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
    helps tests when ``idea_better``, else the harms tests); computed once per sweeps, both
    sides together (:func:`sides`: the comparison's p, its binding test and verdict all ask)."""
    key = (checked_direction(direction), idea_better, statistic, seed)
    if key not in sw._sides:
        _checked(family(sw, direction))
        sides([sw], direction, statistic=statistic, seed=seed)
    return sw._sides[key]


def sides(sws: Sequence[Sweeps], direction: str, *, statistic: str = "mean", seed: int = 0
          ) -> None:
    """Both sides' (p, binding test) of each of ``sws`` (one seed count) that has tests, kept
    with it: every test's p in one pass (a report's comparators, on the same flips), each
    test's arithmetic its own, so each side as it is alone. A side's p: each test's one-sided
    p (its two-sided p over 2 when its statistic favours the side, else 1 minus that), the
    largest; on ties of p (exact ps bottom out at 2^-n) the test nearest the null binds, its
    summed differences least toward the side (for harms, the idea's least-bad config)."""
    direction = checked_direction(direction)
    fits(sws, direction)   # every comparator's cross-fit in one pass
    todo = [(sw, fam) for sw in sws if (direction, True, statistic, seed) not in sw._sides
            for fam in [family(sw, direction)] if fam.helps and fam.harms]
    pairs = [q for _, fam in todo for q in (*fam.helps, *fam.harms)]
    if not pairs:
        return
    p2s = pairtest.p_values(pairs, statistic, seed=seed)
    sums = pairtest.summed(pairs)
    worse = worse_sign(direction)
    stats = [s * worse for s in (sums if statistic == "mean" else [
        float(pairtest.statistic(q.d, statistic)) for q in pairs])]
    at = 0
    for sw, fam in todo:
        for idea_better, side in ((True, fam.helps), (False, fam.harms)):
            ps = [p2 / 2 if (s < 0 if idea_better else s > 0) else 1 - p2 / 2
                  for p2, s in zip(p2s[at:at + len(side)], stats[at:at + len(side)])]
            toward, held = worse * (-1.0 if idea_better else 1.0), sums[at:at + len(side)]
            j = max(range(len(side)), key=lambda i: (ps[i], -toward * held[i]))
            sw._sides[(direction, idea_better, statistic, seed)] = (ps[j], side[j])
            at += len(side)


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
    return intervals([(sw, level)], direction, seed=seed)[0]


def intervals(tests: Sequence[tuple[Sweeps, float]], direction: str, *,
              seed: int = 0) -> list[list[float | None]]:
    """:func:`interval` of each (sweeps, level) of ``tests`` (one seed count), kept with its
    sweeps: every test's interval in one pass (a report's comparisons, each at its level),
    each test's arithmetic its own, so each as it is alone."""
    direction = checked_direction(direction)
    todo = [(sw, level) for sw, level in tests if ("interval", direction, level, seed)
            not in sw._tested]
    sides = [((f.harms, f.helps) if worse_sign(direction) > 0 else (f.helps, f.harms))
             for f in (_checked(family(sw, direction)) for sw, _ in todo)]
    ends = iter(pairtest.intervals([q for low, high in sides for q in (*low, *high)], [
        level for (_, level), (low, high) in zip(todo, sides) for _ in (*low, *high)],
        seed=seed) if todo else [])
    for (sw, level), (low, high) in zip(todo, sides):
        los, his = [next(ends)[0] for _ in low], [next(ends)[1] for _ in high]
        sw._tested[("interval", direction, level, seed)] = (
            None if any(v is None for v in los) else min(v for v in los if v is not None),
            None if any(v is None for v in his) else max(v for v in his if v is not None))
    return [list(sw._tested[("interval", direction, level, seed)]) for sw, level in tests]


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
    return margin_tests([(sw, margin)], direction, side=side, seed=seed)[0]


def margin_tests(tests: Sequence[tuple[Sweeps, float]], direction: str, *,
                 side: str = "worse", seed: int = 0) -> list[MarginTest]:
    """:func:`margin_test` of each (sweeps, margin) of ``tests`` (one seed count): every
    test's one-sided p in one pass, each test's arithmetic its own."""
    for _, margin in tests:
        if not (math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    worse = worse_sign(direction)
    toward = -worse if side == "worse" else worse
    alternative = ("less" if worse > 0 else "greater") if side == "worse" else \
        ("greater" if worse > 0 else "less")
    sides = [fam.helps if side == "worse" else fam.harms
             for fam in (_checked(family(sw, direction)) for sw, _ in tests)]
    scales = [[margin_scale(sw, q.base) for q in pairs] for (sw, _), pairs in zip(tests, sides)]
    ps = pairtest.one_sided_ps([q for pairs in sides for q in pairs], [
        toward * margin * s for (_, margin), own in zip(tests, scales) for s in own],
        alternative, seed=seed) if tests else []
    out, each = [], iter(ps)
    for pairs, own in zip(sides, scales):
        p = [next(each) for _ in pairs]
        j = p.index(max(p))   # the first of the largest
        out.append(MarginTest(p_value=float(p[j]), scale=own[j], pair=pairs[j]))
    return out


def noninferiority(sw: Sweeps, direction: str, margin: float, alpha: float, *,
                   seed: int = 0) -> NonInferiorityTest:
    """stats.noninferiority's record, selection-aware: non-inferior when the margin test
    (:func:`margin_test`) has p < alpha. ``bound_rel`` is the smallest relative margin the
    test would show at alpha (the largest over the helps tests of each one's, which inverts
    it: non-inferior exactly when margin > bound_rel), ``bound`` the same in the metric's
    units (bound_rel * mean |b| of the binding test, as a bound on idea - baseline: an upper
    one when lower is better, a lower one when higher)."""
    return noninferiorities([(sw, margin, alpha)], direction, seed=seed)[0]


def noninferiorities(tests: Sequence[tuple[Sweeps, float, float]], direction: str, *,
                     seed: int = 0) -> list[NonInferiorityTest]:
    """:func:`noninferiority` of each (sweeps, margin, alpha) of ``tests`` (one seed count),
    kept with its sweeps: every test's margin test and bounds in one pass (a report's
    comparisons, each at its level), each test's arithmetic its own."""
    direction = checked_direction(direction)
    todo = [t for t in tests
            if ("noninferiority", direction, t[1], t[2], seed) not in t[0]._tested]
    tested = margin_tests([(sw, margin) for sw, margin, _ in todo], direction, seed=seed)
    helps = [_checked(family(sw, direction)).helps for sw, _, _ in todo]
    per_pair = [(test.p_value < alpha, margin, alpha, margin_scale(sw, q.base))
                for (sw, margin, alpha), test, own in zip(todo, tested, helps) for q in own]
    bounds = pairtest.ni_bounds([q for own in helps for q in own], direction,
                                [s for *_, s in per_pair], [a for _, _, a, _ in per_pair],
                                [ni for ni, *_ in per_pair], [m for _, m, _, _ in per_pair],
                                seed) if per_pair else []
    each = iter(bounds)
    for (sw, margin, alpha), test, own in zip(todo, tested, helps):
        sw._tested[("noninferiority", direction, margin, alpha, seed)] = selection_aware(
            margin, float(test.scale.mean()), [next(each) for _ in own], test.p_value, alpha,
            worse_sign(direction) > 0, sw.margin_reference)
    return [sw._tested[("noninferiority", direction, margin, alpha, seed)]
            for sw, margin, alpha in tests]


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
