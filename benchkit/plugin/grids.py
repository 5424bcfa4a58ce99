"""What a collection session trains beyond the declared grid, decided by the module's stored
runs: each track's grid extended by the edge rule (:mod:`benchkit.verdict.extension`), and the
budget checks of the selected configs (:mod:`benchkit.verdict.convergence`). A session trains what
its stored runs already call for, so the report's rules and the session's work agree."""
from __future__ import annotations

from benchkit import tracks
from benchkit.stats.paired import select_config
from benchkit.store.fingerprint import arm_fingerprint
from benchkit.verdict.convergence import check_decision, checked, checks_called_for
from benchkit.verdict.extension import resolve
from benchkit.verdict.plan import declared_plan


def stored_results(spec, store, module_obj, module_path):
    """``result(track, arm, cfg, seed)``: the stored run's result dict, or None (always
    None without a ``store``). Each record is read once: the extension and the checks ask for
    the same runs."""
    if store is None:
        return lambda track, arm, cfg, seed: None
    prints = {arm: arm_fingerprint(getattr(module_obj, qualname))
              for arm, qualname in spec.arm_tests}
    read: dict = {}
    plan = declared_plan(spec)   # stored runs are chosen under it (RunStore.lookup)

    def result(track, arm, cfg, seed):
        key = store.key(arm_fingerprint=prints[arm], seed=seed, arm=arm,
                        protocol=spec.protocols[track], track=track, cfg=cfg)
        if key not in read:
            rec = store.lookup(key, module_path, plan,
                               extension=cfg not in spec.declared_grids[track])
            read[key] = None if rec is None else rec["result"]
        return read[key]
    return result


def _val(res) -> float | None:
    return None if res is None else (float("nan") if res["diverged"] else res["val"])


def grids_from_store(spec, result) -> dict:
    """Each track's grid extended as far as the stored runs (``result``) call for."""
    return {t: tuple(resolve(list(spec.declared_grids[t]),
                             lambda arm, cfg, s, t=t: _val(result(t, arm, cfg, s)),
                             list(spec.seeds), tracks.get(t).direction, spec.extend,
                             spec.arms)["grid"])
            for t in spec.tracks}


def checks_from_store(spec, result) -> tuple[dict, dict]:
    """(checks, check seeds): track -> {arm: budget check config} for each arm whose selected
    config the stored runs call a check for, and track -> {arm: the seeds the check's current
    look trains} (the first 3, then 5 while the stored check runs leave it undetermined:
    :func:`benchkit.verdict.convergence.check_decision`); nothing for a track whose grid is not
    all stored yet (even a one-config grid: only its runs show whether the arm's curves can be
    checked)."""
    checks, seeds = {}, {}
    for t in spec.tracks:
        direction, grid = tracks.get(t).direction, spec.grids[t]
        on, every = checked(t, spec.protocols[t].get("schedule"))
        if not on:
            continue
        found = {arm: [[result(t, arm, c, s) for s in spec.seeds] for c in grid]
                 for arm in spec.arms}
        if any(r is None for rows in found.values() for row in rows for r in row):
            continue
        selected = {}
        for arm, rows in found.items():
            best = select_config([[_val(r) for r in row] for row in rows], direction)
            if best is not None:
                selected[arm] = [{**r, "cfg": grid[best]} for r in rows[best]]
        calls = checks_called_for(selected, direction, spec.epochs[t], every=every)
        if calls:
            checks[t] = calls
            seeds[t] = {arm: list(spec.seeds[:check_decision(
                selected[arm], [result(t, arm, cfg, s) for s in spec.seeds], direction,
                cfg["epochs"]).called]) for arm, cfg in calls.items()}
    return checks, seeds
