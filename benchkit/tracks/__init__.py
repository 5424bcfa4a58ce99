"""The tracks: what a bench trains on. One module per built-in track (data, default model from
:mod:`.models`, metric, protocol, floors) and this registry. The built-ins register on import;
users add theirs with :func:`register` from their own ``conftest.py``. Imports nothing of
benchkit outside this package; torch only when a model is built (:mod:`.models`)."""
from __future__ import annotations

from benchkit.tracks import dynamics, mnist1d, tabular
from benchkit.tracks.base import Data, Split, Track

_REGISTRY: dict[str, Track] = {}
# built-in tracks taken out, and why: a module that still names one is told what to use instead
RETIRED = {"digits": "it sat at its ceiling (0.98 test accuracy, 7 errors in 360 images) and "
                     "could not tell ideas apart; use 'mnist1d', 10-class classification "
                     "that separates models (docs/tracks.md)",
           "charlm": "a run took 167 s against a 30 s target, and an interpolated Kneser-Ney "
                     "9-gram (1.39 bits/char) beat its transformer (1.63); its measurements are "
                     "in docs/tracks.md"}


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
        raise KeyError(unknown(name)) from None


def unknown(name: str) -> str:
    """Why ``name`` names no registered track, and which ones exist."""
    if name in RETIRED:
        return f"track {name!r} was retired: {RETIRED[name]}; known tracks: {', '.join(names())}"
    return f"unknown track {name!r}; known tracks: {', '.join(names())}"


def retirement(name: str) -> str | None:
    """The warning every report of a bench on ``name`` carries when the registered track is
    retired as a yardstick (:attr:`Track.retired`: it still runs); None otherwise."""
    track = _REGISTRY.get(name)
    if track is None or not track.retired:
        return None
    return (f"track {name!r} is retired as a yardstick: {track.retired}. The verdicts still "
            "compare the arms on it, but its baseline is no strong model of the task")


def names() -> list[str]:
    return sorted(_REGISTRY)


for _builtin in (dynamics, mnist1d, tabular):
    register(_builtin.TRACK)

__all__ = ["Data", "Split", "Track", "register", "get", "names", "unknown", "retirement",
           "tabular", "dynamics", "mnist1d"]
