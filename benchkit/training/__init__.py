"""What trains: :class:`~benchkit.training.run.Run` (what an arm test gets), the standard loop
(:mod:`.loop`), optimizers and schedules (:mod:`.optim`) and the device (:mod:`.device`).
torch-bound, imported lazily: importing this package imports no torch, numpy or track (a
session that benches nothing must not pay for them). Imports :mod:`benchkit.tracks`,
:mod:`benchkit.spec` (a run's record) and :mod:`benchkit.store` (recording what a run
executed, the environment) where they are used."""
from __future__ import annotations

from benchkit.training.floor_trainer import provide_floor_trainer

__all__ = ["provide_floor_trainer"]
