"""``Run``: what an arm test receives as its ``run`` fixture — one training run.

The run owns the record of its result. ``fit`` is the single entry to training, so that a
different executor (lockstep training of all members of an arm) can be put behind it without
changing what idea modules write.

torch is imported when a run trains, not before: a run restored from the store (and a rerun
where every run is restored) never imports it.
"""
from __future__ import annotations

import functools
import math
import numbers
import random
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from benchkit.tracks.base import Data, Split, Track

if TYPE_CHECKING:
    from torch import nn

INIT_SALT = 0  # the global RNGs (init, dropout, ...) are seeded with the seed itself
FIT_KEYS = ("lr", "epochs", "batch_size", "weight_decay")


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch from the seed alone, before the test body."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(INIT_SALT + seed)


def to_float(value: Any, what: str) -> float:
    """A plain Python float from a number, numpy scalar or one-element tensor."""
    torch = sys.modules.get("torch")  # not imported: then value is no tensor
    if torch is not None and isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(f"{what} must be a single number, got a tensor of shape "
                            f"{tuple(value.shape)}")
        return float(value.detach().cpu().item())
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise TypeError(f"{what} must be a single number, got an array of shape "
                            f"{value.shape}")
        return float(value.item())
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.generic)):
        raise TypeError(f"{what} must be a number, got {type(value).__name__}: {value!r}")
    return float(value)


class Run:
    """One training run of one arm at one (track, config, seed)."""

    def __init__(self, *, arm: str, track: Track, cfg: dict, seed: int, epochs: int | None = None):
        self.arm = arm
        self.track = track
        self.cfg = dict(cfg)
        self.seed = int(seed)
        self.epochs = int(epochs if epochs is not None else track.epochs)
        self._data: Data | None = None
        self.val: float | None = None
        self.test: float | None = None
        self.diverged = False
        self.fits = 0
        self.signatures: dict[str, dict] = {}
        self.logs: dict[str, float] = {}
        self._started = time.perf_counter()
        self.store_key: str | None = None
        self.reused_seconds: float | None = None  # set when the result came from the store
        self.provenance: dict = {}  # key, digest, origin, trained_in (see benchkit.fixture)
        self.audit_expected: str | None = None  # the stored digest an audited run must give

    @property
    def data(self) -> Data:
        """The seed's train/val/test splits. Generated once per process and seed, and copied
        per run: an arm that edits its tensors in place cannot change another run's data."""
        if self._data is None:
            shared = self.track.data(self.seed)
            self._data = Data(*(Split(s.x.clone(), s.y.clone()) for s in shared))
        return self._data

    # -- training -------------------------------------------------------------------------
    def fit(self, model: nn.Module, **overrides: Any) -> nn.Module:
        """Train ``model`` with the track's protocol and ``run.cfg`` (``overrides`` win),
        evaluate it on val and test and record both. The last call's evaluation is the result."""
        unknown = set(overrides) - set(FIT_KEYS)
        if unknown:
            raise TypeError(f"run.fit: unknown override(s) {sorted(unknown)}; valid: "
                            f"{list(FIT_KEYS)}")
        settings = {"epochs": self.epochs, "batch_size": self.track.batch_size,
                    "weight_decay": 0.0}
        settings.update({k: v for k, v in self.cfg.items() if k in FIT_KEYS})
        settings.update(overrides)
        if "lr" not in settings:
            raise TypeError("run.fit: no learning rate: the grid config has no 'lr' and no "
                            "lr= override was given")
        from benchkit import train as _train

        result = _train.fit(model, self.data, self.track, lr=float(settings["lr"]),
                            epochs=int(settings["epochs"]),
                            batch_size=int(settings["batch_size"]), seed=self.seed,
                            weight_decay=float(settings["weight_decay"]))
        self.fits += 1
        self._set_result(result.val, result.test)
        return model

    def evaluate(self, model: nn.Module, split: str | Split = "test") -> float:
        """The track's metric of ``model`` on a split (``"train"``, ``"val"``, ``"test"``)."""
        if isinstance(split, str):
            if split not in Data._fields:
                raise ValueError(f"run.evaluate: unknown split {split!r}; valid: "
                                 f"{list(Data._fields)}")
            split = getattr(self.data, split)
        from benchkit import train as _train

        return _train.evaluate(model, split, self.track)

    def record(self, *, val: Any = None, test: Any = None) -> None:
        """Record the result of an arm that trains with its own loop."""
        if val is None or test is None:
            raise TypeError("run.record needs both results: run.record(val=<validation "
                            "metric>, test=<test metric>), each a number, numpy scalar or "
                            "one-element tensor")
        self._set_result(to_float(val, "run.record(val=...)"),
                         to_float(test, "run.record(test=...)"))

    def _set_result(self, val: float, test: float) -> None:
        self.val, self.test = val, test
        self.diverged = not (math.isfinite(val) and math.isfinite(test))

    # -- evidence -------------------------------------------------------------------------
    def signature(self, name: str, observed: Any, predicted: Any, tol: Any,
                  prediction: str | None = None) -> None:
        """Record mechanism evidence measured on the trained model.

        Confirmed when ``|observed - predicted| <= tol``. A non-finite observation is recorded
        as unconfirmed (never silently confirmed); a negative or non-finite tolerance is an error.
        """
        if not isinstance(name, str) or not name:
            raise TypeError("run.signature: name must be a non-empty string")
        observed = to_float(observed, f"run.signature({name!r}, observed=...)")
        predicted = to_float(predicted, f"run.signature({name!r}, predicted=...)")
        tol = to_float(tol, f"run.signature({name!r}, tol=...)")
        if not math.isfinite(predicted):
            raise ValueError(f"run.signature({name!r}): predicted must be finite, got {predicted}")
        if not (math.isfinite(tol) and tol >= 0):
            raise ValueError(f"run.signature({name!r}): tol must be a finite number >= 0, "
                             f"got {tol}")
        finite = math.isfinite(observed)
        self.signatures[name] = {
            "observed": observed if finite else None,
            "predicted": predicted,
            "tol": tol,
            "prediction": prediction,
            "confirmed": bool(finite and abs(observed - predicted) <= tol),
        }

    def log(self, name: str, value: Any) -> None:
        """Record any extra per-run figure (parameters, FLOPs, seconds)."""
        if not isinstance(name, str) or not name:
            raise TypeError("run.log: name must be a non-empty string")
        value = to_float(value, f"run.log({name!r}, ...)")
        self.logs[name] = value if math.isfinite(value) else None

    # -- payload --------------------------------------------------------------------------
    def restore(self, stored: dict) -> None:
        """Take the result of a stored run (see benchkit.records) instead of training. A
        diverged run's missing metrics come back as NaN: it stays a diverged run."""
        self.val, self.test = (math.nan if stored[k] is None else stored[k]
                               for k in ("val", "test"))
        self.diverged = stored["diverged"] is True
        self.signatures = stored.get("signatures", {})
        self.logs = stored.get("logs", {})
        self.reused_seconds = float(stored.get("seconds") or 0.0)

    def payload(self) -> dict:
        """Plain values only: this crosses process boundaries through xdist."""
        return {
            "arm": self.arm, "track": self.track.name, "cfg": self.cfg, "seed": self.seed,
            "val": _finite_or_none(self.val), "test": _finite_or_none(self.test),
            "diverged": bool(self.diverged),
            "seconds": (self.reused_seconds if self.reused_seconds is not None
                        else round(time.perf_counter() - self._started, 6)),
            "reused": self.reused_seconds is not None,
            "signatures": self.signatures, "logs": self.logs, **self.provenance,
        }


def _finite_or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def set_threads(threads: int) -> None:
    """One thread count per process, fixed: it changes float reductions, hence the bits.
    Called before a run trains, so it is where a process imports torch."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def environment(threads: int | None = None) -> dict:
    """The software and hardware a run ran on (part of its store key and of the report).
    ``threads`` is the torch thread count the run trains with (see :func:`set_threads`);
    without it torch is asked. Versions are read from the installed metadata, so that keying a
    run does not import torch."""
    if threads is None:
        import torch
        threads = torch.get_num_threads()
    return dict(_environment(int(threads)))


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:  # a source checkout on sys.path: ask the module
        return str(__import__(package).__version__)


@functools.lru_cache(maxsize=4)
def _environment(threads: int) -> dict:
    import platform  # platform.platform() reads the interpreter binary: once per process

    import benchkit
    from benchkit import hardware
    return {
        "python": platform.python_version(), "torch": _version("torch"),
        "numpy": _version("numpy"), "benchkit": benchkit.__version__,
        "device": "cpu", "threads": threads,
        "platform": platform.platform(), "machine": platform.machine(), "cpu": hardware.cpu(),
    }
