"""What every statistic here takes and gives: per-seed values as a finite float array, a
metric's direction checked, and a float as JSON holds it. One home, so that each module of
benchkit.stats checks its inputs with the same words."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

DIRECTIONS = ("lower", "higher")


def checked_direction(direction: str) -> str:
    """``direction`` itself when it is ``lower`` or ``higher`` (which is better); ValueError
    naming the valid ones otherwise."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return direction


def finite_array(values: Any, name: str = "values") -> np.ndarray:
    """``values`` as a flat float array; ValueError naming ``name`` when any is NaN or inf
    (a statistic of them would be meaningless)."""
    a = np.asarray(values, dtype=float).reshape(-1)
    if not np.isfinite(a).all():   # the method: np.all's wrapper costs as much as the check
        raise ValueError(f"{name} contain non-finite values (NaN or inf): {a.tolist()}")
    return a


def json_float(x: Any) -> float | None:
    """Plain float, or None when not finite (JSON has no NaN/inf)."""
    x = float(x)
    return x if math.isfinite(x) else None


def table(a: Union[np.ndarray, Sequence[Sequence[Union[float, None]]]]) -> np.ndarray:
    """A (seeds x configs) float array of ``a`` (an array or rows of numbers), NaN for None;
    a read-only float array is taken as it is (an arm's table shared by its comparisons)."""
    if isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 2 \
            and not a.flags.writeable:
        return a
    return np.array(np.asarray([[np.nan if v is None else v for v in row] for row in a],
                               dtype=object).tolist(), dtype=float, ndmin=2)
