"""The track registry. Built-in tracks register on import; users add theirs with
:func:`register` from their own ``conftest.py``."""
from __future__ import annotations

from benchkit.tracks.base import Data, Split, Track

_REGISTRY: dict[str, Track] = {}


def register(track: Track, *, replace: bool = False) -> Track:
    """Add ``track`` to the registry (returns it, so it can be used as an expression)."""
    if not isinstance(track, Track):
        raise TypeError(f"register() takes a benchkit.tracks.Track, got {type(track).__name__}")
    if track.name in _REGISTRY and not replace and _REGISTRY[track.name] is not track:
        raise ValueError(f"track {track.name!r} is already registered; pass replace=True "
                         "to override it")
    _REGISTRY[track.name] = track
    return track


def get(name: str) -> Track:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown track {name!r}; known tracks: {', '.join(names())}") from None


def names() -> list[str]:
    return sorted(_REGISTRY)


from benchkit.tracks import (charlm, digits, dynamics, tabular)  # noqa: E402  (registers the built-ins)

__all__ = ["Data", "Split", "Track", "register", "get", "names", "tabular", "dynamics", "digits", "charlm"]
