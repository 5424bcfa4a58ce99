"""The grids a collection session trains: each track's declared grid extended by the edge rule
(:mod:`benchkit.verdict.extension`) as far as the module's stored runs call for, so that a
session trains the extension its stored runs already decided."""
from __future__ import annotations

from benchkit import tracks
from benchkit.store.fingerprint import arm_fingerprint
from benchkit.verdict.extension import resolve


def grids_from_store(spec, store, module_obj, module_path) -> dict:
    """Each track's grid extended as far as the stored runs of the module call for: what a
    session collects, so that it trains the extension the runs already decided."""
    prints = {arm: arm_fingerprint(getattr(module_obj, qualname))
              for arm, qualname in spec.arm_tests}

    def val_of(track):
        def val(arm, cfg, seed):
            rec = store.lookup(store.key(arm_fingerprint=prints[arm], seed=seed, arm=arm,
                                         protocol=spec.protocols[track], track=track, cfg=cfg),
                               module_path)
            res = None if rec is None else rec["result"]
            return None if res is None else (float("nan") if res["diverged"] else res["val"])
        return val

    return {t: tuple(resolve(list(spec.declared_grids[t]), val_of(t), list(spec.seeds),
                             tracks.get(t).direction, spec.extend, spec.arms)["grid"])
            for t in spec.tracks}
