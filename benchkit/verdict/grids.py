"""What a collection session trains beyond the declared grid, decided by the module's stored
runs: each track's grid extended by the edge rule (:mod:`benchkit.verdict.extension`), and the
budget checks of the selected configs (:mod:`benchkit.verdict.convergence`). A session trains what
its stored runs already call for, so the report's rules and the session's work agree. The runs
come in as ``result(track, arm, cfg, seed)`` (:func:`benchkit.store.idea_results.stored_results`):
these rules read results, not the store."""
from __future__ import annotations

from collections.abc import Callable

from benchkit import tracks
from benchkit.spec.idea import Config, IdeaSpec
from benchkit.spec.run_record import RunResult
from benchkit.stats.paired import select_config
from benchkit.verdict.convergence import (SelectedRuns, check_allowance, check_decision,
                                          check_order, checked, checks_called_for)
from benchkit.verdict.extension import resolve

# (track, arm, cfg, seed) -> the stored run's result, or None where no run is stored
StoredResult = Callable[[str, str, Config, int], RunResult | None]


def _val(res: RunResult | None) -> float | None:
    if res is None:
        return None
    return float("nan") if res.diverged else res.val


def grids_from_store(spec: IdeaSpec, result: StoredResult) -> dict[str, tuple[Config, ...]]:
    """Each track's grid extended as far as the stored runs (``result``) call for."""
    def val_of(track: str) -> Callable[[str, Config, int], float | None]:
        return lambda arm, cfg, seed: _val(result(track, arm, cfg, seed))
    return {t: tuple(resolve(list(spec.declared_grids[t]), val_of(t), list(spec.seeds),
                             tracks.get(t).direction, spec.extend, spec.arms,
                             fixed=spec.frontier or {}).grid)
            for t in spec.tracks}


def checks_from_store(spec: IdeaSpec, result: StoredResult
                      ) -> tuple[dict[str, dict[str, Config]], dict[str, dict[str, list[int]]]]:
    """(checks, check seeds): track -> {arm: budget check config} for each arm whose selected
    config the stored runs call a check for, and track -> {arm: the seeds the check's current
    look trains} (the bench's own draw, :func:`benchkit.verdict.convergence.check_order`: its
    first 3, then up to 5 while the stored check runs leave it undetermined, as the grid
    affords: :func:`benchkit.verdict.convergence.check_decision`); nothing for a track whose
    grid is not all stored yet (even a one-config grid: only its runs show whether the arm's
    curves can be checked)."""
    checks: dict[str, dict[str, Config]] = {}
    seeds: dict[str, dict[str, list[int]]] = {}
    for t in spec.tracks:
        direction, grid = tracks.get(t).direction, spec.grids[t]
        on, every = checked(t, spec.protocols[t].get("schedule"))
        if not on:
            continue
        found = {arm: [[result(t, arm, c, s) for s in spec.seeds] for c in grid]
                 for arm in spec.arms}
        complete = {arm: [[r for r in row if r is not None] for row in rows]
                    for arm, rows in found.items()}
        if any(len(row) != len(spec.seeds) for rows in complete.values() for row in rows):
            continue
        selected = {}
        for arm, rows in complete.items():
            best = select_config([[_val(r) for r in row] for row in rows], direction)
            if best is not None:
                selected[arm] = SelectedRuns(grid[best], tuple(rows[best]), tuple(
                    tuple(_val(r) for r in row) for row in rows))
        calls = checks_called_for(selected, direction, spec.epochs[t], every=every)
        if calls:
            checks[t] = calls
            order = check_order(spec.seeds, spec.name, t)
            at = {s: i for i, s in enumerate(spec.seeds)}
            seeds[t] = {arm: order[:check_decision(
                [selected[arm].results[at[s]] for s in order],
                [result(t, arm, cfg, s) for s in order], direction,
                cfg["epochs"], configs=len(grid),
                allowance=check_allowance(selected[arm].grid_vals)).called]
                for arm, cfg in calls.items()}
    return checks, seeds
