"""The loop the tracks layer's trained floors train with: the tracks layer imports nothing above
it, so whoever computes floors (the plugin's controller, the floors' child process, scripts)
calls :func:`provide_floor_trainer` first; importing this imports no torch, numpy or track."""
from __future__ import annotations


def _floor_fit(*args, **kwargs):
    """:func:`benchkit.training.loop.fit`, importing torch only when a trained floor trains."""
    from benchkit.training import loop

    return loop.fit(*args, **kwargs)


def provide_floor_trainer() -> None:
    """Hand the tracks layer's trained floors this layer's loop (the tracks layer imports nothing
    above it). Called by whoever computes floors (the plugin's controller, the floors' child
    process, scripts), so no process computes them without it."""
    from benchkit.tracks import trained_floors

    trained_floors.provide_trainer(_floor_fit)
