"""What trains: :class:`~benchkit.training.run.Run` (what an arm test gets), the standard loop
(:mod:`.loop`), optimizers and schedules (:mod:`.optim`) and the device (:mod:`.device`).
torch-bound, imported lazily: importing this package imports no torch. Imports
:mod:`benchkit.tracks` and :mod:`benchkit.store` (recording what a run executed, the
environment)."""
from __future__ import annotations

from benchkit.tracks import trained_floors


def _floor_fit(*args, **kwargs):
    """:func:`benchkit.training.loop.fit`, importing torch only when a trained floor trains."""
    from benchkit.training import loop

    return loop.fit(*args, **kwargs)


trained_floors.provide_trainer(_floor_fit)  # the tracks layer's trained floors train with this loop
