"""The edge-extension rule: a selection at the edge of a grid axis extends that axis.

A baseline tuned at the edge of its grid is under-tuned. So when an arm's selected config sits
at the edge of a numeric axis that the declared grid gives three or more values (a shorter
axis is the user's fixed choice), the axis grows by one step in that direction, for **both**
arms (equal tuning budget), up to ``extend`` steps per side (``pytest.mark.bench(extend=...)``,
2 by default, 0 = off). A step is geometric on a log-spaced axis (all values positive, the
ratio of the two edge values repeated) and arithmetic otherwise; a step that would leave the
axis's valid range (a learning rate <= 0, a non-integer count) is not taken.

The rule is a pure function of the runs (:func:`resolve` gives a :class:`Resolution`; the
report's section is :func:`section`'s :class:`benchkit.verdict.sections.GridExtensions`),
applied by the report to the session's runs and at collection to the stored ones: a session
trains the extension the stored runs already call for, and a report whose runs call for an
extension that has not run yet is incomplete until a session trains it. So the verdict stays a
function of the runs and the plan declared in the module.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchkit.stats import paired
from benchkit.spec.idea import Config
from benchkit.verdict.sections import AtEdge, Extension, GridExtensions

INT_KEYS = ("epochs", "batch_size")   # counts: an extension must stay a positive integer
ValOf = Callable[[str, Config, int], float | None]  # (arm, cfg, seed) -> a run's validation


@dataclass(frozen=True)
class Resolution:
    """What the rule makes of the runs: ``grid`` (the declared grid plus every extension the
    runs call for), ``extensions`` (each step, in order), ``pending`` (True while the grid's
    runs are not all there, so the selection and any further step are not known) and
    ``at_edge`` (the arms still at an edge after the limit, or where no valid step exists)."""

    grid: tuple[Config, ...]
    extensions: tuple[Extension, ...]
    pending: bool
    at_edge: tuple[AtEdge, ...]


def _numeric(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def axes(grid: Sequence[Config]) -> dict[str, list[Any]]:
    """The extendable axes of a declared grid: key -> its sorted distinct values, for every
    key that every config has, with numeric values, three or more of them."""
    keys = [k for k in grid[0] if all(k in c and _numeric(c[k]) for c in grid)]
    found = {}
    for k in keys:
        values = sorted({c[k] for c in grid})
        if len(values) >= 3:
            found[k] = values
    return found


def log_spaced(values: list[Any]) -> bool:
    """Positive values whose consecutive ratios vary less than their differences do."""
    if min(values) <= 0:
        return False
    ratios = [b / a for a, b in zip(values, values[1:])]
    diffs = [b - a for a, b in zip(values, values[1:])]
    spread: Callable[[list[Any]], Any] = lambda xs: max(xs) / min(xs)  # noqa: E731
    return bool(spread(ratios) <= spread(diffs))


def next_value(values: list[Any], side: str, key: str, log: bool) -> Any:
    """One step beyond the ``side`` ("low"/"high") edge of sorted ``values``; None when the
    step would leave the axis's valid range."""
    a, b = (values[1], values[0]) if side == "low" else (values[-2], values[-1])
    v = b * (b / a) if log else b + (b - a)
    if key in INT_KEYS or all(isinstance(x, int) for x in values):
        v = int(round(v))
        if v in values or (key in INT_KEYS and v < 1):
            return None
        return v
    if not math.isfinite(v) or (key == "lr" and v <= 0):
        return None
    return float(f"{v:.12g}")


def extended(grid: list[Config], key: str, old: Any, new: Any) -> list[Config]:
    """``grid`` plus a copy of each config at ``key=old`` with ``key=new`` (in grid order)."""
    return list(grid) + [{**c, key: new} for c in grid if c[key] == old]


def selected_edges(grid: list[Config], chosen: dict[str, Config],
                   declared_axes: dict[str, list[Any]]) -> list[AtEdge]:
    """Each arm whose chosen config sits at an edge of an axis, with that axis and side."""
    edges = []
    for arm, cfg in chosen.items():
        for key in declared_axes:
            values = sorted({c[key] for c in grid})
            for side, edge in (("low", values[0]), ("high", values[-1])):
                if cfg[key] == edge:
                    edges.append(AtEdge(arm, key, side))
    return edges


def resolve(declared: Sequence[Config], val_of: ValOf, seeds: Sequence[int], direction: str,
            limit: int, arms: Sequence[str] = ("baseline", "idea"),
            fixed: Sequence[str] | Config = ()) -> Resolution:
    """Apply the rule to the runs: ``val_of(arm, cfg, seed)`` is a run's validation value
    (None when the run is missing, nan when it diverged). Every arm in ``arms`` (controls
    included) tunes on the same grid. Axes in ``fixed`` (a frontier's budget axis) are never
    at an edge: each of their values is a bench of its own, where each arm selects its config
    and the rule extends the other axes by those selections (:func:`_by_point`)."""
    points = _by_point(declared, fixed)
    if len(points) > 1:
        return _union(declared, [(len(point), resolve(point, val_of, seeds, direction, limit,
                                                      arms)) for point in points])
    grid = [dict(c) for c in declared]
    ax = {k: v for k, v in axes(grid).items() if k not in fixed}
    steps = {(k, s): 0 for k in ax for s in ("low", "high")}
    extensions: list[Extension] = []
    while True:
        vals = {arm: [[val_of(arm, c, s) for s in seeds] for c in grid]
                for arm in arms}
        if any(v is None for rows in vals.values() for row in rows for v in row):
            return Resolution(tuple(grid), tuple(extensions), pending=True, at_edge=())
        chosen = {}
        for arm, rows in vals.items():
            idx = paired.select_config(rows, direction)
            if idx is not None:
                chosen[arm] = grid[idx]
        todo: dict[tuple[str, str], tuple[Any, Any, list[str]]] = {}
        at_edge = []
        for edge in selected_edges(grid, chosen, ax):
            key, side = edge.axis, edge.side
            values = sorted({c[key] for c in grid})
            new = next_value(values, side, key, log_spaced(values))
            if steps[(key, side)] >= limit or new is None:
                at_edge.append(edge)
            else:
                todo.setdefault((key, side), (values[0] if side == "low" else values[-1],
                                              new, []))[2].append(edge.arm)
        if not todo:
            return Resolution(tuple(grid), tuple(extensions), pending=False,
                              at_edge=tuple(at_edge))
        for (key, side), (old, new, at_this_edge) in sorted(todo.items()):
            grid = extended(grid, key, old, new)
            steps[(key, side)] += 1
            extensions.append(Extension(axis=key, side=side, edge=old, value=new,
                                        arms=tuple(sorted(at_this_edge))))


def _by_point(declared: Sequence[Config], fixed: Sequence[str] | Config
              ) -> list[list[Config]]:
    """The declared configs grouped by their values of the ``fixed`` axes (a frontier's
    points), in order of first appearance; one group when nothing is fixed."""
    groups: dict[tuple[Any, ...], list[Config]] = {}
    for cfg in declared:
        groups.setdefault(tuple(cfg.get(k) for k in fixed), []).append(dict(cfg))
    return list(groups.values())


def _union(declared: Sequence[Config], parts: list[tuple[int, Resolution]]) -> Resolution:
    """The points' resolutions (each with its count of declared configs) as one: the declared
    grid in its order, then each point's extension configs; pending while any point is; each
    arm's edge said once."""
    grid = [dict(c) for c in declared] + [c for n, part in parts for c in part.grid[n:]]
    resolutions = [part for _, part in parts]
    return Resolution(tuple(grid), tuple(e for part in resolutions for e in part.extensions),
                      pending=any(part.pending for part in resolutions),
                      at_edge=tuple(dict.fromkeys(e for part in resolutions for e in part.at_edge)))


def section(declared: Sequence[Config], limit: int, resolved: Resolution) -> GridExtensions:
    """The report's ``grid_extensions``: the rule's ``limit`` and the ``declared`` grid it
    started from, and what it made of the runs (``resolved``)."""
    return GridExtensions(limit=limit, declared_grid=tuple(dict(c) for c in declared),
                          extensions=resolved.extensions, at_edge=resolved.at_edge)


