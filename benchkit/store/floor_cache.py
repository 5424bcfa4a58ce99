"""Floors kept between sessions. A track's floors on one seed are fits of numpy and
scikit-learn (kernel ridge, boosted trees, an SVM or MLP: seconds a seed), the same in every
session that reports that track and seed; a rerun whose runs all come from the store should
not pay them again. They are kept in pytest's cache (``config.cache``; none
under ``-p no:cacheprovider``).

Only benchkit's own tracks are kept: a user's floors may run code benchkit does not
fingerprint, so they are computed each time. The key is the track's protocol, the seed,
benchkit's source and the versions of python, numpy, scikit-learn (an optional extra the
floors use when installed) and the packages the track requires; a cached value that is not
``{name: finite number}`` is a miss.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import math
import platform
from collections.abc import Sequence
from typing import Protocol, TypeGuard

from benchkit.store.runs import benchkit_source_digest
from benchkit.tracks.base import Track, mean_floors

PREFIX = "benchkit/floors/"


class Cache(Protocol):
    """What of pytest's ``config.cache`` the floors use."""

    def get(self, key: str, default: object) -> object: ...

    def set(self, key: str, value: object) -> None: ...


def cacheable(track: Track) -> bool:
    """Whether ``track``'s floors are benchkit's code (so covered by its source digest)."""
    return (track.make_floors is not None
            and getattr(track.make_floors, "__module__", "").startswith("benchkit."))


def _version(module: str) -> str | None:
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    version = getattr(found, "__version__", None)
    if version is None:
        from importlib import metadata
        try:
            version = metadata.version(module)
        except metadata.PackageNotFoundError:
            return None
    return str(version)


def key(track: Track, seed: int) -> str:
    """The cache key of ``track``'s floors on ``seed``."""
    versions = {m: _version(m) for m in ("numpy", "sklearn", *(m for m, _ in track.requires))}
    material = {"track": track.name, "protocol": track.protocol(), "seed": int(seed),
                "benchkit": benchkit_source_digest(), "python": platform.python_version(),
                "versions": versions}
    text = json.dumps(material, sort_keys=True, default=str)
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()


def _valid(value: object) -> TypeGuard[dict[str, float]]:
    return isinstance(value, dict) and bool(value) and all(
        isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
        and math.isfinite(v) for k, v in value.items())


def floors(track: Track, seeds: Sequence[int], cache: Cache | None = None) -> dict[str, float]:
    """``track.floors(seeds)``, each seed's floors taken from ``cache`` (pytest's
    ``config.cache``: ``get(key, default)``, ``set(key, value)``) where kept there, and put
    there when computed."""
    make = track.make_floors
    if cache is None or make is None or not cacheable(track):
        return track.floors(seeds)
    per_seed: list[dict[str, float]] = []
    for seed in seeds:
        name = key(track, seed)
        cached = cache.get(name, None)
        if _valid(cached):
            value = cached
        else:
            value = {k: float(v) for k, v in make(int(seed)).items()}
            cache.set(name, value)
        per_seed.append(value)
    return mean_floors(per_seed)
