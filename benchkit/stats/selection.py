"""The selection-aware exact sign-flip test: tuning is inside the permutation.

Each arm's config is chosen on validation from means over all seeds, so a test that treats the
chosen configs as fixed ignores that the choice itself is random (a tuning accident looks like a
difference on every seed). Under H0 (the idea is the baseline) the unit that is exchangeable is a
seed's *whole sweep*: both arms, every config, validation and test. So for every flip vector the
arms' whole sweeps are swapped on the flipped seeds, each arm's selection is redone on
validation (:func:`benchkit.stats.paired.select_config`'s rule, bit for bit), and the statistic
is recomputed at the configs selected then. Exact over all 2^n flips up to EXACT_MAX seeds,
seeded Monte Carlo ((1 + count) / (1 + N_RESAMPLES), the draws of
:func:`benchkit.stats.paired.sign_flip_p_value`) above. With one config per arm the swapped
difference is the negated one, so the p-values equal today's sign-flip and sign tests'.

``groups`` partitions the configs; each group is selected on its own and an arm's value on a seed
is the mean over groups of its selected config's test value (a frontier: one group per point).
A flip in which an arm has no eligible config, or whose statistic is not finite, counts as at
least as extreme as the observed one (conservative). Shifting the idea's whole sweep by a
per-seed constant changes no selection (every config of a seed moves together), which gives the
margin tests (shift by the margin, then flip) and intervals that invert the test exactly.

**Effective grids.** An arm whose results are identical along a grid axis (its own loop, a
fixed lr) has fewer configs in effect than the other arm: the other pays for selecting on noisy
validation along that axis and it does not, so the arms' sweeps are not exchangeable and the
test cannot separate a better arm from the other's tuning loss (:func:`effective_grids`). The
claims that favour the arm with the smaller effective grid are then refused (:func:`blocked`).
numpy only; the report's fields are frozen records (:func:`noninferiority`'s
:class:`benchkit.stats.noninferior.NonInferiorityTest`, :func:`tost`'s
:class:`benchkit.stats.equivalence.EquivalenceTest`) or plain floats, bools and None.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from benchkit.stats import equivalence, paired
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.stats.values import checked_direction, json_float
from benchkit.stats import signflip

EXACT_MAX = 16
N_RESAMPLES = 20000
STATISTICS = ("mean", "sign", "wilcoxon")

Columns = tuple[int, ...]  # column indices of a (seeds x configs) table
Groups = tuple[Columns, ...]
AxisClasses = tuple[tuple[str, Groups], ...]  # (axis, classes), see axis_classes
Grid = Sequence[Mapping[str, Any]]  # the configs, column order: a user's values
# a (seeds x configs) table as given: an array or rows of numbers, None where missing
Table = Union[np.ndarray, Sequence[Sequence[Union[float, None]]]]
Selected = tuple[list[int], list[int]]  # the columns selected per group: comparator's, idea's


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
    axes: AxisClasses = ()  # (axis, classes): column tuples of configs that differ only along axis
    margin_reference: float | None = None  # margins relative to this fixed value, not to b_s
    # null_rows, unshifted, by (direction, seed)
    _rows: dict[tuple[str, int], NullRows] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n(self) -> int:
        return int(self.base_val.shape[0])


def sweeps(base_val: Table, base_test: Table, idea_val: Table, idea_test: Table,
           groups: Sequence[Sequence[int]] | None = None, grid: Grid | None = None,
           margin_reference: float | None = None) -> Sweeps:
    """Validated :class:`Sweeps` from four (seeds x configs) arrays; None entries become NaN.
    ``groups`` defaults to one group of every config; ``grid`` (the configs, column order) gives
    the axes along which :func:`effective_grids` compares the arms; ``margin_reference`` the
    value fixed before the bench that relative margins are of (None: each seed's comparator
    value, an approximation: see :func:`margin_test`)."""
    arrays = [np.array(np.asarray(a, dtype=object).tolist(), dtype=float, ndmin=2)
              for a in (_nan(base_val), _nan(base_test), _nan(idea_val), _nan(idea_test))]
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
    if grid is not None and len(grid) != k:
        raise ValueError(f"grid has {len(grid)} configs for {k} columns")
    if margin_reference is not None and not (math.isfinite(margin_reference)
                                             and margin_reference > 0):
        raise ValueError(f"margin_reference must be a finite number > 0, got {margin_reference}")
    base_v, base_t, idea_v, idea_t = arrays
    return Sweeps(base_v, base_t, idea_v, idea_t, groups=columns,
                  axes=axis_classes(grid, columns) if grid else (),
                  margin_reference=margin_reference)


def axis_classes(grid: Grid, groups: Groups) -> AxisClasses:
    """(axis, classes) for every key whose value varies inside a group: each class holds the
    columns of one group whose configs agree on every other key (classes of one left out)."""
    keys = sorted({key for cfg in grid for key in cfg})
    out = []
    for key in keys:
        classes: dict[tuple[int, tuple[tuple[str, str], ...]], list[int]] = {}
        for gi, cols in enumerate(groups):
            for c in cols:
                rest = tuple(sorted((k, repr(v)) for k, v in grid[c].items() if k != key))
                classes.setdefault((gi, rest), []).append(c)
        found = tuple(tuple(cols) for cols in classes.values() if len(cols) > 1)
        if found and any(len({repr(grid[c].get(key)) for c in cols}) > 1 for cols in found):
            out.append((key, found))
    return tuple(out)


def _constant(val: np.ndarray, test: np.ndarray, classes: Groups) -> bool:
    """Whether the arm's validation and test values are identical (NaN equal to NaN) across the
    columns of every class, on every seed."""
    return all(np.array_equal(a[:, cols], np.repeat(a[:, cols[:1]], len(cols), axis=1),
                              equal_nan=True) for cols in classes for a in (val, test))


@dataclass(frozen=True)
class EffectiveGrids:
    """The axes along which only the idea's results are constant (``idea_constant``), and only
    the comparator's (``comparator_constant``); empty when the arms' effective grids agree.
    :meth:`to_json` gives the comparison's ``effective_grids`` object, keys in its order."""

    idea_constant: tuple[str, ...] = ()
    comparator_constant: tuple[str, ...] = ()

    @property
    def differ(self) -> bool:
        return bool(self.idea_constant or self.comparator_constant)

    def to_json(self) -> dict[str, list[str]]:
        return {"idea_constant": list(self.idea_constant),
                "comparator_constant": list(self.comparator_constant)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EffectiveGrids:
        """The record of a comparison's ``effective_grids`` object: exactly its two keys, each
        a list of axis names."""
        names = ["idea_constant", "comparator_constant"]
        if sorted(data) != sorted(names) or not all(
                isinstance(data[k], list) and all(isinstance(a, str) for a in data[k])
                for k in names):
            raise ValueError(f"a comparison's effective_grids has the keys {names}, each a list "
                             f"of axis names; got {dict(data)!r}")
        return cls(tuple(data["idea_constant"]), tuple(data["comparator_constant"]))


def effective_grids(sw: Sweeps) -> EffectiveGrids:
    """Compare the arms' effective grids along every axis of ``sw.axes``: an axis along which
    one arm's values are identical on every seed and the other's are not."""
    idea, comparator = [], []
    for axis, classes in sw.axes:
        i = _constant(sw.idea_val, sw.idea_test, classes)
        b = _constant(sw.base_val, sw.base_test, classes)
        if i and not b:
            idea.append(axis)
        elif b and not i:
            comparator.append(axis)
    return EffectiveGrids(tuple(idea), tuple(comparator))


def blocked(sw: Sweeps) -> set[str]:
    """The arms a claim may not favour: ``"idea"`` when only the idea is constant along an
    axis (helps, non-inferior and equivalent are refused), ``"comparator"`` in the mirror case
    (harms refused); a claim against the arm with the smaller effective grid stays valid."""
    grids = effective_grids(sw)
    return ({"idea"} if grids.idea_constant else set()) | \
        ({"comparator"} if grids.comparator_constant else set())


def _nan(a: Table) -> list[list[float]]:
    return [[np.nan if v is None else v for v in row] for row in a]


@functools.lru_cache(maxsize=8)
def flip_rows(n: int, seed: int = 0) -> tuple[np.ndarray, bool]:
    """(flips, exact): a bool matrix, one row per flip vector (True: the seed's sweeps are
    swapped), all 2^n up to EXACT_MAX seeds (row r flips seed j when bit j of r is set, so
    row 0 is the observed data), else sign_flip_p_value's seeded draws (its sign -1 is a flip)."""
    if n <= EXACT_MAX:
        rows = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    else:
        rng = np.random.default_rng(seed)
        chunks, left = [], N_RESAMPLES
        while left > 0:
            k = min(left, max(1, 2_000_000 // n))
            chunks.append(rng.integers(0, 2, size=(k, n)) == 0)
            left -= k
        rows = np.concatenate(chunks)
    rows.setflags(write=False)
    return rows, n <= EXACT_MAX


def _select(flips: np.ndarray, own: np.ndarray, other: np.ndarray, cols: Columns,
            sign: float) -> np.ndarray:
    """Per flip row, the column (of ``cols``) an arm selects when its seeds are ``own``'s,
    or ``other``'s where flipped; -1 when none is eligible. The score is select_config's:
    sign * (validation summed over seeds in seed order / n), ties to the first, a config with
    a non-finite value on any seed not eligible. ``own``/``other`` are (seeds x configs), or
    carry leading batch axes (the result then has them too: batch x flips)."""
    n = own.shape[-2]
    c = list(cols)
    shape = own.shape[:-2] + (len(flips), len(c))
    acc = np.zeros(shape)
    bad = np.zeros(shape, dtype=bool)
    own_c, other_c = own[..., c][..., None, :], other[..., c][..., None, :]  # .., seeds, 1, k
    for s in range(n):
        v = np.where(flips[:, s, None], other_c[..., s, :, :], own_c[..., s, :, :])
        bad |= ~np.isfinite(v)
        acc += v
    with np.errstate(invalid="ignore"):
        score = sign * (acc / n)
    score[bad | np.isnan(score)] = np.inf
    pick = np.argmin(score, axis=-1)
    chosen: np.ndarray = np.asarray(c)[pick]
    chosen[np.take_along_axis(score, pick[..., None], axis=-1)[..., 0] == np.inf] = -1
    return chosen


@dataclass(frozen=True)
class NullRows:
    """The flipped data sets: per row its per-seed differences ``diffs`` (idea - baseline at
    the configs selected in that row, after ``shift``), whether both arms selected a config and
    the differences are finite (``valid``), and the flips; ``observed`` is the unflipped row."""

    diffs: np.ndarray
    valid: np.ndarray
    flips: np.ndarray
    exact: bool
    observed: np.ndarray
    selected: Selected | None  # None: an arm has no eligible config on the observed data


def null_rows(sw: Sweeps, direction: str, *, shift: np.ndarray | None = None,
              seed: int = 0) -> NullRows:
    """Every flip's differences of ``sw``, the idea's test values shifted per seed by
    ``shift`` (added to every config of that seed before flipping); see the module doc."""
    sign = 1.0 if checked_direction(direction) == "lower" else -1.0
    if shift is None and (direction, seed) in sw._rows:
        return sw._rows[(direction, seed)]
    flips, exact = flip_rows(sw.n, seed)
    diffs, valid, observed, selected = _diffs(sw, flips, sign, shift)
    rows = NullRows(diffs, valid, flips, exact, observed, selected)
    if shift is None:
        sw._rows[(direction, seed)] = rows
    return rows


def _diffs(sw: Sweeps, flips: np.ndarray, sign: float, shift: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Selected | None]:
    it = sw.idea_test if shift is None else sw.idea_test + np.asarray(shift, float)[:, None]
    diffs, valid, kb, ki = _batch_diffs(sw.base_val, sw.base_test, sw.idea_val, it, sw.groups,
                                        flips, sign)
    selected = ([int(k[0]) for k in kb], [int(k[0]) for k in ki]) if valid[0] else None
    return diffs[1:], valid[1:], diffs[0], selected


def _batch_diffs(bv: np.ndarray, bt: np.ndarray, iv: np.ndarray, it: np.ndarray,
                 groups: Groups, flips: np.ndarray, sign: float
                 ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Row 0 (the observed data) and every flip's per-seed differences idea - baseline at the
    configs selected there, whether valid, and each group's selected columns (kb, ki; -1
    where none). The arrays are (seeds x configs) or carry leading batch axes."""
    n = bv.shape[-2]
    all_rows = np.vstack([np.zeros((1, n), dtype=bool), flips])  # row 0: the observed data
    shape = bv.shape[:-2] + (len(all_rows), n)
    base, idea = np.zeros(shape), np.zeros(shape)
    valid = np.ones(shape[:-1], dtype=bool)
    kbs: list[np.ndarray] = []
    kis: list[np.ndarray] = []
    for cols in groups:
        kb = _select(all_rows, bv, iv, cols, sign)
        ki = _select(all_rows, iv, bv, cols, sign)
        kbs.append(kb)
        kis.append(ki)
        valid &= (kb >= 0) & (ki >= 0)
        kb, ki = np.maximum(kb, 0), np.maximum(ki, 0)
        base += np.where(all_rows, _at(it, kb), _at(bt, kb))
        idea += np.where(all_rows, _at(bt, ki), _at(it, ki))
    g = len(groups)
    if g > 1:
        base, idea = base / g, idea / g
    with np.errstate(invalid="ignore"):
        diffs = idea - base
    valid &= np.all(np.isfinite(diffs), axis=-1)
    return diffs, valid, kbs, kis


def _at(values: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """values[..., s, cols[..., r]] as (..., rows x seeds)."""
    picked: np.ndarray = np.swapaxes(np.take_along_axis(values, cols[..., None, :], axis=-1),
                                     -1, -2)
    return picked


def prefix(sw: Sweeps, m: int) -> Sweeps:
    """The sweeps of the first m seeds (an earlier look)."""
    return Sweeps(sw.base_val[:m], sw.base_test[:m], sw.idea_val[:m], sw.idea_test[:m],
                  sw.groups, sw.axes, sw.margin_reference)


def flipped_sums(sw: Sweeps, direction: str, flips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The summed differences of the given flip rows (bool, True: swapped) and whether each
    is valid (both arms selected a config, finite differences)."""
    sign = 1.0 if checked_direction(direction) == "lower" else -1.0
    diffs, valid, _, _ = _diffs(sw, np.asarray(flips, dtype=bool), sign, None)
    return diffs.sum(axis=1), valid


def _statistic(diffs: np.ndarray, statistic: str) -> np.ndarray:
    """Per row: the summed differences ("mean"), wins minus losses ("sign"), or the signed
    rank sum ("wilcoxon": ranks of |d| with ties averaged, exact zeros ranked and counted 0,
    Pratt's treatment, scipy.stats.wilcoxon's zero_method="pratt")."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    value: np.ndarray
    if statistic == "sign":
        value = np.sign(diffs).sum(axis=-1)
    elif statistic == "wilcoxon":
        from scipy.stats import rankdata

        value = (np.sign(diffs) * rankdata(np.abs(diffs), axis=-1)).sum(axis=-1)
    else:
        value = diffs.sum(axis=-1)
    return value


def _p(count: int, rows: NullRows) -> float:
    return count / len(rows.flips) if rows.exact else (1 + count) / (1 + len(rows.flips))


def _observed(rows: NullRows) -> np.ndarray:
    if rows.selected is None:
        raise ValueError("the observed sweeps leave an arm without an eligible config or with a "
                         "non-finite test value at its selected config: no test")
    return rows.observed


def p_value(sw: Sweeps, direction: str, *, statistic: str = "mean", seed: int = 0,
            rows: NullRows | None = None) -> float:
    """Two-sided selection-aware p: the share of flips whose |statistic| (the summed
    differences, wins minus losses for ``"sign"``, the signed rank sum for ``"wilcoxon"``)
    is at least the observed one."""
    rows = rows or null_rows(sw, direction, seed=seed)
    d = _observed(rows)
    obs = abs(float(_statistic(d, statistic)))
    tol = {"mean": paired.REL_TOL * float(np.abs(d).sum()), "sign": 0.0,
           "wilcoxon": 1e-9 * len(d)}[statistic]  # rank sums: halves at most
    stat = np.abs(_statistic(rows.diffs, statistic))
    return _p(int(np.count_nonzero(~rows.valid | (stat >= obs - tol))), rows)


def one_sided_p(sw: Sweeps, direction: str, *, shift: np.ndarray, alternative: str,
                seed: int = 0) -> float:
    """One-sided selection-aware p of the mean difference after ``shift``: the share of flips
    whose summed difference is at most (``"less"``) or at least (``"greater"``) the observed."""
    if alternative not in ("less", "greater"):
        raise ValueError(f"alternative must be 'less' or 'greater', got {alternative!r}")
    rows = null_rows(sw, direction, shift=shift, seed=seed)
    d = _observed(rows)
    obs, tol = float(d.sum()), paired.REL_TOL * float(np.abs(d).sum())
    s = rows.diffs.sum(axis=1)
    hit = s <= obs + tol if alternative == "less" else s >= obs - tol
    return _p(int(np.count_nonzero(~rows.valid | hit)), rows)


@dataclass(frozen=True)
class Observed:
    """The observed selection: each arm's column per group (None when an arm has no eligible
    config) and the per-seed differences idea - baseline at it."""

    baseline: list[int] | None
    idea: list[int] | None
    diffs: list[float]


def observed(sw: Sweeps, direction: str) -> Observed:
    """The selection on the data as observed (no seed flipped)."""
    sign = 1.0 if checked_direction(direction) == "lower" else -1.0
    _, _, d, selected = _diffs(sw, np.zeros((0, sw.n), dtype=bool), sign, None)
    return Observed(baseline=None if selected is None else selected[0],
                    idea=None if selected is None else selected[1], diffs=d.tolist())


def interval(sw: Sweeps, direction: str, level: float, *,
             seed: int = 0) -> list[float | None]:
    """[lo, hi]: every shift c of the idea's whole sweep for which the two-sided test keeps
    p >= level; shifting changes no selection, so flip r's sum is S_r - c k_r (k_r: seeds not
    flipped minus flipped) and the interval is found as :func:`signflip.sign_flip_ci` finds
    it. 0 lies outside it exactly when :func:`p_value` < level. The end on the side of an arm
    the test may not favour (:func:`blocked`) is None: no shift that favours it is rejected."""
    rows = null_rows(sw, direction, seed=seed)
    d = _observed(rows)
    n = sw.n
    total, base = (len(rows.flips), 0) if rows.exact else (len(rows.flips) + 1, 1)
    need = math.ceil(level * total) - base - int(np.count_nonzero(~rows.valid))
    k = (n - 2 * rows.flips.sum(axis=1))[rows.valid]
    a = rows.diffs[rows.valid].sum(axis=1)
    rejects = p_value(sw, direction, rows=rows) < level
    lo, hi = signflip.interval_of_rows(a, k, float(d.sum()), n, need, rejects,
                                       scale=float(np.abs(d).max()))
    refused = blocked(sw)
    lower = checked_direction(direction) == "lower"  # idea better: a shift below the mean
    if "idea" in refused:
        lo, hi = (lo, None) if lower else (None, hi)
    if "comparator" in refused:
        lo, hi = (None, hi) if lower else (lo, None)
    return [lo, hi]


def _worse(direction: str) -> float:
    return 1.0 if checked_direction(direction) == "lower" else -1.0


def margin_scale(sw: Sweeps, b: np.ndarray) -> np.ndarray:
    """Per seed, what a relative margin is of: the declared reference (a constant fixed before
    the bench: the shifted arms are exactly exchangeable at the margin) or, without one, the
    comparator's selected test value |b_s| (taken from the data: exchangeable only
    approximately when the seeds' levels differ)."""
    scale: np.ndarray = (np.full(len(b), float(sw.margin_reference))
                         if sw.margin_reference is not None else np.abs(b))
    return scale


@dataclass(frozen=True)
class MarginTest:
    """One side of a margin claim: its p and the per-seed ``scale`` the relative margin is of;
    ``blocked`` when refused (p 1)."""

    p_value: float
    scale: np.ndarray
    blocked: bool


def margin_test(sw: Sweeps, direction: str, margin: float, *, side: str = "worse",
                seed: int = 0) -> MarginTest:
    """One side of a margin claim of size margin * s_s (s_s: :func:`margin_scale`).
    ``side="worse"`` (non-inferiority): H0 the idea is worse by margin * s_s or more; the
    idea's whole sweep is moved margin * s_s towards better on each seed, and the one-sided
    selection-aware test asks whether it is then still worse. ``side="better"``: the mirror
    (H0 better by the margin or more). Returns p and the scale s; p is 1 when the claim
    favours an arm with the smaller effective grid (:func:`blocked`)."""
    if not (math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    sel = observed(sw, direction)
    if sel.baseline is None:
        raise ValueError("no eligible config in an arm: no margin test")
    b = _selected_values(sw.base_test, sel.baseline, sw.groups)
    scale = margin_scale(sw, b)
    worse = _worse(direction)
    toward = -worse if side == "worse" else worse
    alternative = ("less" if worse > 0 else "greater") if side == "worse" else \
        ("greater" if worse > 0 else "less")
    if ("idea" if side == "worse" else "comparator") in blocked(sw):
        return MarginTest(p_value=1.0, scale=scale, blocked=True)
    p = one_sided_p(sw, direction, shift=toward * margin * scale, alternative=alternative,
                    seed=seed)
    return MarginTest(p_value=float(p), scale=scale, blocked=False)


def _selected_values(test: np.ndarray, cols: list[int], groups: Groups) -> np.ndarray:
    out = np.zeros(test.shape[0])
    for c in cols:
        out += test[:, c]
    return out / len(groups) if len(groups) > 1 else out


def noninferiority(sw: Sweeps, direction: str, margin: float, alpha: float, *,
                   seed: int = 0) -> NonInferiorityTest:
    """stats.noninferiority's record, selection-aware: non-inferior when the shifted one-sided
    test (:func:`margin_test`) has p < alpha. ``bound_rel`` is the smallest relative margin
    the test would show at alpha (it inverts the test: non-inferior exactly when margin >
    bound_rel), ``bound`` the same in the metric's units (bound_rel * mean |b|, as a bound on
    idea - baseline: an upper one when lower is better, a lower one when higher)."""
    test = margin_test(sw, direction, margin, seed=seed)
    p = test.p_value
    ni = p < alpha
    bound_rel = None if test.blocked else _ni_bound(sw, direction, test.scale, alpha, ni,
                                                    margin, seed)
    scale = float(test.scale.mean())
    bound_worse = None if bound_rel is None else bound_rel * scale
    bound = None if bound_worse is None else (bound_worse if _worse(direction) > 0
                                              else -bound_worse)
    return NonInferiorityTest(
        margin_rel=float(margin), margin_abs=json_float(margin * scale),
        bound=None if bound is None else json_float(bound),
        bound_rel=None if bound_rel is None else json_float(bound_rel),
        non_inferior=bool(ni), p_value=json_float(p),
        test="selection-aware one-sided sign-flip test of the sweep shifted by the margin"
            + (f", relative to the declared reference {sw.margin_reference:g}"
               if sw.margin_reference is not None else
               ", relative to each seed's comparator value (exchangeable only approximately "
               "when the seeds' levels differ: declare margin_reference)")
            + ("; refused (p 1): the idea's results do not vary along a grid axis on which the "
               "comparator is tuned, so the sweeps are not exchangeable" if test.blocked
               else ""))


def _ni_bound(sw: Sweeps, direction: str, scale: np.ndarray, alpha: float, ni: bool,
              margin: float, seed: int) -> float | None:
    """The relative margin m* with: non-inferior at alpha exactly when margin > m*. At margin
    m, flip r counts when W_r - W <= -2 m F_r (W: the summed 'worse' differences unshifted,
    F_r: the flipped seeds' |b| summed), i.e. when m <= t_r = (W - W_r) / (2 F_r) for F_r > 0;
    p(m) < alpha once fewer than ``need`` rows have t_r >= m. None when no margin suffices."""
    rows = null_rows(sw, direction, seed=seed)
    d = _observed(rows)
    worse = _worse(direction)
    w_obs, w = worse * float(d.sum()), worse * rows.diffs.sum(axis=1)
    f = rows.flips.astype(float) @ scale
    total, base = (len(rows.flips), 0) if rows.exact else (len(rows.flips) + 1, 1)
    tol = paired.REL_TOL * float(np.abs(d).sum())
    always = ~rows.valid | ((f <= 0) & (w <= w_obs + tol))
    need = math.ceil(alpha * total) - base - int(np.count_nonzero(always))
    moving = rows.valid & (f > 0)
    t = np.sort((w_obs - w[moving]) / (2.0 * f[moving]))[::-1]
    if need <= 0:
        bound = math.inf
    elif need > len(t):
        bound = -math.inf
    else:
        bound = float(t[need - 1])
    if ni and not bound < margin:  # float rounding at the edge: the test's side
        bound = math.nextafter(margin, -math.inf)
    elif not ni and bound < margin:
        bound = float(margin)
    return None if not math.isfinite(bound) else bound


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


PLAN_REPS = 200        # simulated benches per planning figure (SE of a power near 0.8: 0.028)
PLAN_FLIPS = 500       # flip rows of a simulated bench above 9 seeds (seeded); all 2^n below
PLAN_ASSUMPTION = (
    "planning figure: the test that decides, the selection-aware test, simulated on {reps} "
    "benches whose seeds are drawn with replacement from this bench's (both arms' whole "
    "sweeps), the observed mean difference removed and the idea's whole sweep moved by the "
    "effect in its favour; Monte Carlo SE of a power near 0.8 about {se:.2f}. seeds_needed "
    "scales that effect as 1/sqrt(seeds) from this bench's count (the selection noise shrinks "
    "with more seeds too, so it errs towards more seeds)")


def _plan_flips(n: int, seed: int) -> tuple[np.ndarray, bool]:
    if n <= 9:
        return flip_rows(n)
    rng = np.random.default_rng([seed, n, 1])
    return rng.integers(0, 2, size=(PLAN_FLIPS, n)) == 1, False


def critical_effects(sw: Sweeps, direction: str, level: float, n: int | None = None, *,
                     reps: int = PLAN_REPS, seed: int = 0) -> np.ndarray:
    """Per simulated bench of ``n`` seeds (default the bench's), drawn with replacement from
    ``sw``'s seeds (both arms' whole sweeps) with the observed mean difference taken out of the
    idea's test values: the smallest effect in the idea's favour (metric units: the idea's
    whole sweep moved) at which the two-sided test at ``level`` finds the idea better there;
    inf where none does. The test's power at effect e is the share below e. A move of the idea's
    whole sweep changes no selection, so each bench's interval (:func:`interval`'s inversion)
    gives its answer at every effect at once."""
    n = sw.n if n is None else int(n)
    if "idea" in blocked(sw):
        return np.full(reps, np.inf)
    sign = 1.0 if checked_direction(direction) == "lower" else -1.0
    center = float(np.mean(observed(sw, direction).diffs))
    rng = np.random.default_rng([seed, n])
    idx = rng.integers(0, sw.n, size=(reps, n))
    flips, exact = _plan_flips(n, seed)
    k = n - 2 * flips.sum(axis=1)
    total, base = (len(flips), 0) if exact else (len(flips) + 1, 1)
    out = np.full(reps, np.inf)
    step = max(1, 4_000_000 // (len(flips) * n * sw.base_val.shape[1]))
    for lo_r in range(0, reps, step):
        rows = idx[lo_r:lo_r + step]
        diffs, valid, _, _ = _batch_diffs(sw.base_val[rows], sw.base_test[rows],
                                          sw.idea_val[rows], sw.idea_test[rows] - center,
                                          sw.groups, flips, sign)
        for j in range(len(rows)):
            if not valid[j, 0]:
                continue
            d, ok = diffs[j, 0], valid[j, 1:]
            sums = diffs[j, 1:].sum(axis=1)
            tol = paired.REL_TOL * float(np.abs(d).sum())
            hits = int(np.count_nonzero(~ok | (np.abs(sums) >= abs(d.sum()) - tol)))
            p = hits / total if exact else (1 + hits) / total
            need = math.ceil(level * total) - base - int(np.count_nonzero(~ok))
            lo, hi = signflip.interval_of_rows(sums[ok], k[ok], float(d.sum()), n, need,
                                               p < level, scale=float(np.abs(d).max()))
            end = hi if sign > 0 else (None if lo is None else -lo)
            out[lo_r + j] = np.inf if end is None else end
    return out


def mde_power80(sw: Sweeps, direction: str, level: float, target: float = 0.8, *,
                reps: int = PLAN_REPS, seed: int = 0) -> float | None:
    """The effect in the idea's favour (metric units) that the selection-aware test at
    ``level`` detects with probability ``target`` on benches like this one (see
    :func:`critical_effects`); None when no effect reaches it."""
    crit = np.sort(critical_effects(sw, direction, level, reps=reps, seed=seed))
    m = float(crit[math.ceil(target * len(crit)) - 1])
    return max(0.0, m) if math.isfinite(m) else None


def seeds_needed(mde: float | None, n: int, effect: float, level: float,
                 max_n: int = 10000) -> int | None:
    """The seeds at which an effect of |effect| would be the test's 80%-power effect, scaling
    the bench's simulated ``mde`` (:func:`mde_power80` at n seeds) as 1/sqrt(seeds); never
    below the smallest count at which p < level is possible. None when undefined (no mde,
    effect 0 or not finite) or above max_n."""
    if mde is None or not (math.isfinite(effect) and effect != 0):
        return None
    needed = max(signflip.min_pairs(level), math.ceil(n * (mde / abs(effect)) ** 2))
    return needed if needed <= max_n else None
