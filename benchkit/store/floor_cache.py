"""Floors kept between sessions. A track's floors on one seed are fits of numpy and
scikit-learn (kernel ridge, boosted trees, an SVM or MLP: seconds a seed), the same in every
session that reports that track and seed, whatever the idea and whether its runs are retrained
(``--bench-fresh``): they depend only on the track's data and floor code. They are kept in
pytest's cache (``config.cache``, under ``.pytest_cache/v/benchkit/floors/``; ``--cache-clear``
or deleting that folder clears them; none are kept under ``-p no:cacheprovider``).

Only benchkit's own tracks are kept: a user's floors may run code benchkit does not
fingerprint, so they are computed each time. The key is the track's name, the seed, the code of
``benchkit.tracks`` and ``benchkit.training`` (every built-in track's data and floors, and the
loop an MLP floor may train with: :func:`floor_code_digest`) and the versions of python and of
the packages the floors and data use, read from their metadata (no import); a cached value
that is not ``{name: finite number}`` is a miss.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import platform
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Protocol, TypeGuard

from benchkit.store import fingerprint
from benchkit.tracks.base import Track, mean_floors

PREFIX = "benchkit/floors/"
PACKAGES = ("numpy", "scipy", "scikit-learn", "threadpoolctl", "torch")  # what floors and data run
CODE = ("tracks", "training")  # benchkit's packages a built-in track's data and floors run


class Cache(Protocol):
    """What of pytest's ``config.cache`` the floors use."""

    def get(self, key: str, default: object) -> object: ...

    def set(self, key: str, value: object) -> None: ...


class Ahead(Protocol):
    """Floors computed elsewhere meanwhile (:class:`benchkit.store.floor_ahead.Ahead`)."""

    def get(self, track: Track, seed: int, stop: Callable[[], bool]
            ) -> dict[str, float] | None: ...

    def started(self, track: Track, seed: int) -> bool: ...


def cacheable(track: Track) -> bool:
    """Whether ``track``'s floors are benchkit's code (so covered by :func:`floor_code_digest`)."""
    return (track.make_floors is not None
            and getattr(track.make_floors, "__module__", "").startswith("benchkit."))


@functools.lru_cache(maxsize=1)
def floor_code_digest() -> str:
    """The code of :data:`CODE`'s packages, comment- and docstring-free (read once a process)."""
    root = Path(__file__).resolve().parents[1]
    return fingerprint.digest("\n".join(
        f"{path.relative_to(root).as_posix()}:{fingerprint.code_digest(path)}"
        for package in CODE for path in sorted((root / package).rglob("*.py"))))


@functools.lru_cache(maxsize=None)
def _version(distribution: str) -> str | None:
    # read once a process: each read scans the installed distributions (16 ms a package)
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def key(track: Track, seed: int) -> str:
    """The cache key of ``track``'s floors on ``seed``."""
    versions = {m: _version(m) for m in (*PACKAGES, *(m for m, _ in track.requires))}
    material = {"track": track.name, "seed": int(seed), "code": floor_code_digest(),
                "python": platform.python_version(), "versions": versions}
    text = json.dumps(material, sort_keys=True, default=str)
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()


def valid(value: object) -> TypeGuard[dict[str, float]]:
    """Whether ``value`` is floors: a non-empty ``{name: finite number}``."""
    return isinstance(value, dict) and bool(value) and all(
        isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
        and math.isfinite(v) for k, v in value.items())


def kept(track: Track, seed: int, cache: Cache | None) -> dict[str, float] | None:
    """``track``'s floors on ``seed`` where ``cache`` keeps them, else None."""
    if cache is None or not cacheable(track):
        return None
    value = cache.get(key(track, seed), None)
    return value if valid(value) else None


class FloorsStopped(Exception):
    """The floors were left out: a SIGTERM came while the reports were written, and each
    floor not yet computed (seconds a seed; minutes for mnist1d's) would have kept it waiting."""


def floors(track: Track, seeds: Sequence[int], cache: Cache | None = None,
           ahead: Ahead | None = None, stop: Callable[[], bool] = lambda: False
           ) -> dict[str, float]:
    """``track.floors(seeds)``, each seed's floors taken from ``cache`` (pytest's
    ``config.cache``: ``get(key, default)``, ``set(key, value)``) where kept there, else from
    ``ahead`` (computed while the runs trained) where it has them or is computing them now,
    else computed here; put in ``cache`` when not kept there. The seeds are taken from the
    last: the child answers in the order asked, so where it is behind (a loaded machine, its
    lower priority) the controller computes the seeds it has not reached while it finishes
    the one it is on, and neither waits for the other's whole queue. Once ``stop()`` is true,
    a seed not kept raises :class:`FloorsStopped` instead of being waited for or computed
    (those kept meanwhile stay kept)."""
    make = track.make_floors
    if make is not None and not cacheable(track) and stop():
        raise FloorsStopped(f"{len(seeds)} seed(s) not computed")
    if make is None or not cacheable(track):
        return track.floors(seeds)
    per_seed: list[dict[str, float]] = [{} for _ in seeds]
    for k in reversed(range(len(seeds))):
        seed = int(seeds[k])
        value = kept(track, seed, cache)
        if value is None:
            value = ahead.get(track, seed, stop) \
                if ahead is not None and ahead.started(track, seed) else None
            if value is None:
                if stop():
                    left = sum(kept(track, int(s), cache) is None for s in seeds[:k + 1])
                    raise FloorsStopped(f"{left} of {len(seeds)} seed(s) not computed")
                value = {name: float(v) for name, v in make(seed).items()}
            if cache is not None:
                cache.set(key(track, seed), value)
        per_seed[k] = value
    return mean_floors(per_seed)
