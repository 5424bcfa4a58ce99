"""Is training over? Per-run validation curves and the "still improving" flag.

``run.fit``'s standard loop takes the validation metric after the epochs of
:func:`benchkit.training.loop.curve_epochs` (a quarter, a half, three quarters and all of training, deduplicated) and
stores them as the run's ``curve``: ``[{"epoch": e, "val": v}, ...]``, one batched forward each.
An arm with its own loop (``run.batches``/``run.record``) has no curve.

The report's ``convergence`` section states the track's declaration (``Track.budget``:
``convergence``, its epochs aim at a trained-out model, or ``fixed``, a stated budget) and,
per arm, the median across seeds of the relative validation improvement over the last quarter
of training at the selected config, direction-aware (positive = better at the end). More than
:data:`STILL_IMPROVING` flags the arm: its comparison is at a budget where it was still learning,
which a report must say whatever the track declares. Pure Python: no torch.
"""
from __future__ import annotations

import math
import statistics

from benchkit import tracks
from benchkit.spec.idea import cfg_id

STILL_IMPROVING = 0.01  # a relative validation gain over the last quarter above this flags
BUDGETS = ("convergence", "fixed")
def last_quarter_gain(curve, direction: str) -> float | None:
    """Relative improvement of validation from the 3/4 point to the end of ``curve``
    (positive = better), or None when the curve has no 3/4 point before its end (fewer than 2
    epochs) or a value there is missing or zero."""
    if not curve:
        return None
    points = {p["epoch"]: p["val"] for p in curve}
    end = max(points)
    start = max(1, math.floor(0.75 * end))
    before, after = points.get(start), points[end]
    if start == end or before is None or after is None or before == 0:
        return None
    gain = (before - after) if direction == "lower" else (after - before)
    return gain / abs(before)


def section(track: str, selected: dict[str, list[dict]], direction: str,
            threshold: float = STILL_IMPROVING) -> tuple[dict, list[str]]:
    """The report's ``convergence`` field and its warnings. ``selected``: arm -> the run
    payloads of its selected config (one per seed)."""
    budget, reason = declaration(track)
    arms, warnings = {}, []
    for arm, runs in selected.items():
        gains = [g for g in (last_quarter_gain(r.get("curve"), direction) for r in runs)
                 if g is not None]
        median = statistics.median(gains) if gains else None
        flagged = median is not None and median > threshold
        arms[arm] = {"cfg": runs[0]["cfg"] if runs else None, "last_quarter_gain": median,
                     "seeds": len(gains), "still_improving": flagged}
        if flagged:
            warnings.append(
                f"still improving: the {arm}'s selected config {cfg_id(arms[arm]['cfg'])} gained "
                f"{median:.1%} on validation over the last quarter of training (median of "
                f"{len(gains)} seeds; threshold {threshold:.0%}); the track's epochs are "
                f"{'a fixed budget' if budget == 'fixed' else 'meant to converge'}")
    return {"budget": budget, "budget_reason": reason, "threshold": threshold,
            "arms": arms}, warnings


def declaration(track: str) -> tuple[str | None, str | None]:
    """The registered track's ``(budget, budget_reason)``; (None, None) when it is unknown
    here."""
    try:
        t = tracks.get(track)
    except KeyError:
        return None, None
    return t.budget, t.budget_reason
