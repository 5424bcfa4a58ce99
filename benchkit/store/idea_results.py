"""An idea module's stored runs, read as results by (track, arm, cfg, seed): what the session's
grid extension and budget checks (:mod:`benchkit.verdict.grids`) decide from before training."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from benchkit.spec.idea import Config, IdeaSpec
from benchkit.spec.run_record import JsonDict, RunResult
from benchkit.store.fingerprint import arm_fingerprint
from benchkit.store.runs import RunStore


def stored_results(spec: IdeaSpec, store: RunStore | None, module: ModuleType,
                   module_path: Path, plan: JsonDict
                   ) -> Callable[[str, str, Config, int], RunResult | None]:
    """``result(track, arm, cfg, seed)``: the stored run's result, or None (always None
    without a ``store``), chosen under the declared ``plan`` (:meth:`RunStore.lookup`). Each
    record is read once: the extension and the checks ask for the same runs."""
    if store is None:
        return lambda track, arm, cfg, seed: None
    prints = {arm: arm_fingerprint(getattr(module, qualname)) for arm, qualname in spec.arm_tests}
    read: dict[str, RunResult | None] = {}

    def result(track: str, arm: str, cfg: Config, seed: int) -> RunResult | None:
        key = store.key(arm_fingerprint=prints[arm], seed=seed, arm=arm,
                        protocol=spec.protocols[track], track=track, cfg=cfg)
        if key not in read:
            rec = store.lookup(key, module_path, plan,
                               extension=cfg not in spec.declared_grids[track])
            read[key] = None if rec is None else rec.result
        return read[key]
    return result
