"""The edge-extension rule: a selection at the edge of a grid axis extends that axis.

A baseline tuned at the edge of its grid is under-tuned. So when an arm's selected config sits
at the edge of a numeric axis that the declared grid gives three or more values (a shorter
axis is the user's fixed choice), the axis grows by one step in that direction, for **both**
arms (equal tuning budget), up to ``extend`` steps per side (``pytest.mark.bench(extend=...)``,
2 by default, 0 = off). A step is geometric on a log-spaced axis (all values positive, the
ratio of the two edge values repeated) and arithmetic otherwise; a step that would leave the
axis's valid range (a learning rate <= 0, a non-integer count) is not taken.

The rule is a pure function of the runs (:func:`resolve`), applied by the report to the
session's runs and at collection to the stored ones: a session trains the extension the
stored runs already call for, and a report whose runs call for an extension that has not run
yet is incomplete until a session trains it. So the verdict stays a function of the runs and
the plan declared in the module.
"""
from __future__ import annotations

import math
import numbers
from typing import Callable

from benchkit.stats import paired

INT_KEYS = ("epochs", "batch_size")   # counts: an extension must stay a positive integer


def _numeric(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def axes(grid: list[dict]) -> dict[str, list]:
    """The extendable axes of a declared grid: key -> its sorted distinct values, for every
    key that every config has, with numeric values, three or more of them."""
    keys = [k for k in grid[0] if all(k in c and _numeric(c[k]) for c in grid)]
    found = {}
    for k in keys:
        values = sorted({c[k] for c in grid})
        if len(values) >= 3:
            found[k] = values
    return found


def log_spaced(values: list) -> bool:
    """Positive values whose consecutive ratios vary less than their differences do."""
    if min(values) <= 0:
        return False
    ratios = [b / a for a, b in zip(values, values[1:])]
    diffs = [b - a for a, b in zip(values, values[1:])]
    spread = lambda xs: max(xs) / min(xs)  # noqa: E731
    return spread(ratios) <= spread(diffs)


def next_value(values: list, side: str, key: str, log: bool):
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


def extended(grid: list[dict], key: str, old: float, new: float) -> list[dict]:
    """``grid`` plus a copy of each config at ``key=old`` with ``key=new`` (in grid order)."""
    return list(grid) + [{**c, key: new} for c in grid if c[key] == old]


def selected_edges(grid: list[dict], chosen: dict, declared_axes: dict) -> list[tuple]:
    """(arm, key, side) for each arm whose chosen config sits at an edge of an axis."""
    edges = []
    for arm, cfg in chosen.items():
        for key in declared_axes:
            values = sorted({c[key] for c in grid})
            for side, edge in (("low", values[0]), ("high", values[-1])):
                if cfg[key] == edge:
                    edges.append((arm, key, side))
    return edges


def resolve(declared: list[dict], val_of: Callable, seeds: list[int], direction: str,
            limit: int, arms=("baseline", "idea"), fixed=()) -> dict:
    """Apply the rule to the runs: ``val_of(arm, cfg, seed)`` is a run's validation value
    (None when the run is missing, nan when it diverged).

    Returns ``grid`` (the declared grid plus every extension the runs call for),
    ``extensions`` (what was added and why), ``pending`` (True when the grid's runs are not all
    there yet, so the selection and any further extension are not known) and ``at_edge``
    (arm, axis, side) still at an edge after the limit (or where no valid step exists).
    Every arm in ``arms`` (controls included) tunes on the same grid. Axes in ``fixed`` (a
    frontier's budget axis) are never at an edge: each of their values is benched alone."""
    grid = [dict(c) for c in declared]
    ax = {k: v for k, v in axes(grid).items() if k not in fixed}
    steps = {(k, s): 0 for k in ax for s in ("low", "high")}
    extensions = []
    while True:
        vals = {arm: [[val_of(arm, c, s) for s in seeds] for c in grid]
                for arm in arms}
        if any(v is None for rows in vals.values() for row in rows for v in row):
            return {"grid": grid, "extensions": extensions, "pending": True, "at_edge": []}
        chosen = {}
        for arm, rows in vals.items():
            idx = paired.select_config(rows, direction)
            if idx is not None:
                chosen[arm] = grid[idx]
        edges = selected_edges(grid, chosen, ax)
        todo, at_edge = {}, []
        for arm, key, side in edges:
            values = sorted({c[key] for c in grid})
            new = next_value(values, side, key, log_spaced(values))
            if steps[(key, side)] >= limit or new is None:
                at_edge.append((arm, key, side))
            else:
                todo.setdefault((key, side), (values[0] if side == "low" else values[-1],
                                              new, []))[2].append(arm)
        if not todo:
            return {"grid": grid, "extensions": extensions, "pending": False,
                    "at_edge": at_edge}
        for (key, side), (old, new, arms) in sorted(todo.items()):
            grid = extended(grid, key, old, new)
            steps[(key, side)] += 1
            extensions.append({"axis": key, "side": side, "from": old, "value": new,
                               "arms": sorted(arms)})


