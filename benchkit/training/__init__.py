"""What trains: :class:`~benchkit.training.run.Run` (what an arm test gets), the standard loop
(:mod:`.loop`), optimizers and schedules (:mod:`.optim`) and the device (:mod:`.device`).
torch-bound, imported lazily: importing this package imports no torch. Imports
:mod:`benchkit.tracks` and :mod:`benchkit.store` (recording what a run executed, the
environment)."""
