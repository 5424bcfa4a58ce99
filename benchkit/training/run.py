"""``Run``: what an arm test receives as its ``run`` fixture — one training run.

The run owns the record of its result. ``fit`` is the single entry to training, so that a
different executor (lockstep training of all members of an arm) can be put behind it without
changing what idea modules write.

torch is imported when a run trains, not before: a run restored from the store (and a rerun
where every run is restored) never imports it.
"""
from __future__ import annotations

import itertools
import math
import numbers
import random
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from benchkit.store import hardware
from benchkit.store.environment import environment  # noqa: F401  (its old home)
from benchkit.spec.run_record import CurvePoint, Provenance, RunPoint, RunResult, Signature
from benchkit.tracks.base import Data, Split, Track

if TYPE_CHECKING:
    from torch import nn

INIT_SALT = 0  # the global RNGs (init, dropout, ...) are seeded with the seed itself
FIT_KEYS = ("lr", "epochs", "batch_size", "weight_decay", "momentum")


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch from the seed alone, before the test body."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(INIT_SALT + seed)


def to_float(value: Any, what: str) -> float:
    """A plain Python float from a real number, a real numpy scalar or a one-element real
    array or tensor. Anything else is refused in one line naming what is valid: a bool, a
    complex or a string value (numpy's included, which ``float`` would coerce or half-read),
    and an integer beyond float range (``float(10**400)`` overflows)."""
    torch = sys.modules.get("torch")  # not imported: then value is no tensor
    valid = "valid: a real number, numpy scalar or one-element tensor"
    if torch is not None and isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(f"{what} must be a single number, got a tensor of shape "
                            f"{tuple(value.shape)}")
        value = value.detach().cpu().item()
    elif isinstance(value, np.ndarray):
        if value.size != 1:
            raise TypeError(f"{what} must be a single number, got an array of shape "
                            f"{value.shape}")
        value = value.item()
    elif isinstance(value, np.generic):
        value = value.item()   # numpy's own type: a Python int, float, complex, str, bool
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__}: "
                        f"{value!r:.60}; {valid}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{what} = {value!r:.30}... is beyond float range; valid: a real "
                         "number with |x| < 1.8e308") from None


def check_label(name: Any, what: str) -> str:
    """A signature's or a logged figure's name: it becomes a JSON key and a column of
    summary.md, so a short printable string."""
    if not isinstance(name, str) or not name or len(name) > 100 or not name.isprintable():
        raise TypeError(f"{what}: name must be a non-empty printable string of at most 100 "
                        f"characters, got {name!r}"[:300])
    return name


class FrozenCfg(Mapping):
    """``run.cfg``: the run's grid config, read-only. The report keys every run by its config,
    so an arm that changed it would be reported under a config it did not run."""

    __slots__ = ("_cfg",)

    def __init__(self, cfg: Mapping):
        self._cfg = dict(cfg)

    def __getitem__(self, key):
        return self._cfg[key]

    def __iter__(self):
        return iter(self._cfg)

    def __len__(self) -> int:
        return len(self._cfg)

    def __repr__(self) -> str:
        return repr(self._cfg)

    def __or__(self, other: Mapping) -> dict:
        return {**self._cfg, **other}

    def copy(self) -> dict:
        return dict(self._cfg)

    def _refuse(self, *args, **kwargs):
        raise TypeError("run.cfg is read-only: it is the grid config this run is reported "
                        "under; pass changes to run.fit(model, lr=..., epochs=...) or work on "
                        "a copy, dict(run.cfg)")

    __setitem__ = __delitem__ = pop = popitem = update = setdefault = clear = _refuse


class Run:
    """One training run of one arm at one (track, config, seed)."""

    def __init__(self, *, arm: str, track: Track, cfg: dict, seed: int, epochs: int | None = None,
                 device: str = "cpu"):
        self.arm = arm
        self.track = track
        self.cfg = FrozenCfg(cfg)
        self.seed = int(seed)
        self.epochs = int(epochs if epochs is not None else track.epochs)
        self.device_name = str(device)  # resolved by benchkit.training.device: cpu, cuda:N or mps
        self._data: Data | None = None
        self.val: float | None = None
        self.test: float | None = None
        self.diverged = False
        self.fits = 0
        self.signatures: dict[str, Signature] = {}
        self.logs: dict[str, float | None] = {}
        self.budgets: dict[str, float] = {}  # what the arm spent and kept (see run.budget)
        self.curve: tuple[CurvePoint, ...] | None = None  # run.fit's val curve (per epoch)
        self._steps = 0
        self.frontier_axis: str | None = None  # set by the fixture from the bench's frontier=
        self._started = time.perf_counter()
        self.store_key: str | None = None
        self.reused_seconds: float | None = None  # set when the result came from the store
        self.provenance: Provenance | None = None  # set by benchkit.plugin.fixture
        self.audit_expected: str | None = None  # the stored digest an audited run must give
        self.cpu: str | None = None  # the CPU a stored result trained on (None: this one)

    @property
    def frontier(self):
        """This run's value on the bench's frontier axis (``run.cfg[axis]``), None without one."""
        return self.cfg.get(self.frontier_axis) if self.frontier_axis else None

    @property
    def device(self):
        """The ``torch.device`` this run trains on (``--bench-device``): ``run.data`` and the
        models given to ``run.fit``/``run.evaluate`` live there; an arm puts its own tensors
        there with ``.to(run.device)``."""
        import torch

        return torch.device(self.device_name)

    @property
    def data(self) -> Data:
        """The seed's train/val/test splits on ``run.device``. Generated once per process and
        seed, and copied per run: an arm that edits its tensors in place cannot change another
        run's data."""
        if self._data is None:
            shared = self.track.data(self.seed)
            self._data = Data(*(Split(*(_copy_to(t, self.device_name) for t in s))
                                for s in shared))
        return self._data

    # -- training -------------------------------------------------------------------------
    def fit(self, model: nn.Module, *, optimizer: Any = None, loss: Any = None,
            schedule: Any = None, **overrides: Any) -> nn.Module:
        """Train ``model`` with the track's protocol and ``run.cfg`` (``overrides`` win),
        evaluate it on val and test and record both. The last call's evaluation is the result.

        ``optimizer``: a name of :data:`benchkit.training.optim.OPTIMIZERS` (default: the track's)
        or a factory ``params -> torch.optim.Optimizer`` (which then sets its own lr and weight
        decay); ``loss``: ``(prediction, target) -> scalar tensor`` (default: the track's);
        ``schedule``: ``constant``, ``cosine``, ``linear`` or a factory ``optimizer ->
        LRScheduler``, stepped after every optimizer step (default: the track's)."""
        from benchkit.training import optim, loop

        name = self.track.optimizer if optimizer is None else optimizer
        schedule = self.track.schedule if schedule is None else schedule
        optim.check_choices(name, schedule, loss)
        settings = self._fit_settings(overrides, needs_lr=not callable(name))
        momentum = settings.pop("momentum", None)
        if callable(name):
            given = sorted(set(overrides) & {"lr", "weight_decay", "momentum"})
            if given:
                raise TypeError(f"run.fit: {', '.join(given)} given with an optimizer factory; "
                                "set them in the factory (run.cfg has the grid's values)")
        elif name != "sgd":
            if "momentum" in overrides:
                raise TypeError(f"run.fit: momentum= applies to optimizer='sgd' only, not "
                                f"{name!r}")
            momentum = None  # a grid's momentum is for the runs that train with SGD
        model.to(self.device_name)
        result = loop.fit(model, self.data, self.track, seed=self.seed, optimizer=name,
                            loss=loss, schedule=schedule, momentum=momentum,
                            **{"lr": None, **settings})
        self.fits += 1
        self._steps += result.steps
        self.budgets["params"] = float(sum(p.numel() for p in model.parameters()
                                           if p.requires_grad))
        self.budgets["steps"] = float(self._steps)
        self._set_result(result.val, result.test)
        self.curve = tuple(CurvePoint(epoch=e, val=_finite_or_none(v))
                           for e, v in result.curve) or None
        return model

    def batches(self, epochs: int | None = None, batch_size: int | None = None):
        """The minibatches ``run.fit`` would train on, in its order (``Split(x, y)`` pairs,
        every epoch's in turn), for an arm with its own loop: the same generator, the same
        tensors, on ``run.device``."""
        overrides = {k: v for k, v in (("epochs", epochs), ("batch_size", batch_size))
                     if v is not None}
        settings = self._fit_settings(overrides, needs_lr=False, what="run.batches")
        from benchkit.training import loop

        return itertools.chain.from_iterable(loop.minibatches(
            self.data.train, batch_size=settings["batch_size"], epochs=settings["epochs"],
            seed=self.seed))

    def _fit_settings(self, overrides: dict, *, needs_lr: bool, what: str = "run.fit") -> dict:
        """lr, epochs, batch_size, weight_decay (and momentum when given) of a fit: the
        track's, then ``run.cfg``'s, then ``overrides``; checked."""
        unknown = set(overrides) - set(FIT_KEYS)
        if unknown:
            raise TypeError(f"{what}: unknown override(s) {sorted(unknown)}; valid: "
                            f"{list(FIT_KEYS)} and optimizer=, loss=, schedule=")
        settings = {"epochs": self.epochs, "batch_size": self.track.batch_size,
                    "weight_decay": 0.0}
        settings.update({k: v for k, v in self.cfg.items() if k in FIT_KEYS})
        settings.update(overrides)
        if "lr" not in settings and needs_lr:
            raise TypeError("run.fit: no learning rate: the grid config has no 'lr' and no "
                            "lr= override was given")
        for key in ("epochs", "batch_size"):
            value = settings[key]
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                    or value < (0 if key == "epochs" else 1):
                raise ValueError(f"{what}: {key} must be an integer >= "
                                 f"{0 if key == 'epochs' else 1}, got {value!r}")
        floats = {k: float(settings[k]) for k in ("lr", "weight_decay", "momentum")
                  if k in settings}
        return {**settings, **floats, "epochs": int(settings["epochs"]),
                "batch_size": int(settings["batch_size"])}

    def evaluate(self, model: nn.Module, split: str | Split = "test") -> float:
        """The track's metric of ``model`` on a split (``"train"``, ``"val"``, ``"test"``)."""
        if isinstance(split, str):
            if split not in Data._fields:
                raise ValueError(f"run.evaluate: unknown split {split!r}; valid: "
                                 f"{list(Data._fields)}")
            split = getattr(self.data, split)
        else:
            split = Split(*(t.to(self.device_name) for t in split))
        from benchkit.training import loop

        model.to(self.device_name)

        return loop.evaluate(model, split, self.track)

    def record(self, *, val: Any = None, test: Any = None) -> None:
        """Record the result of an arm that trains with its own loop."""
        if val is None or test is None:
            raise TypeError("run.record needs both results: run.record(val=<validation "
                            "metric>, test=<test metric>), each a number, numpy scalar or "
                            "one-element tensor")
        self.curve = None  # an arm's own result: no curve of run.fit's describes it
        self._set_result(to_float(val, "run.record(val=...)"),
                         to_float(test, "run.record(test=...)"))

    def _set_result(self, val: float, test: float) -> None:
        self.val, self.test = val, test
        self.diverged = not (math.isfinite(val) and math.isfinite(test))

    # -- evidence -------------------------------------------------------------------------
    def signature(self, name: str, observed: Any, predicted: Any, tol: Any,
                  prediction: str | None = None, null: Any = None) -> None:
        """Record mechanism evidence measured on the trained model.

        Confirmed when ``|observed - predicted| <= tol``. A non-finite observation is recorded
        as unconfirmed (never silently confirmed); a negative or non-finite tolerance is an error.
        ``null`` is the same statistic measured where the mechanism is absent (the baseline's
        model, a randomised transform): a check whose null is also within ``tol`` cannot tell
        the mechanism from its absence, so it is reported as non-discriminating.
        """
        check_label(name, "run.signature")
        if prediction is not None and not isinstance(prediction, str):
            raise TypeError(f"run.signature({name!r}, prediction=...) must be a string (what "
                            f"the claim predicts, in words) or None, got "
                            f"{type(prediction).__name__}")
        observed = to_float(observed, f"run.signature({name!r}, observed=...)")
        predicted = to_float(predicted, f"run.signature({name!r}, predicted=...)")
        tol = to_float(tol, f"run.signature({name!r}, tol=...)")
        if not math.isfinite(predicted):
            raise ValueError(f"run.signature({name!r}): predicted must be finite, got {predicted}")
        if not (math.isfinite(tol) and tol >= 0):
            raise ValueError(f"run.signature({name!r}): tol must be a finite number >= 0, "
                             f"got {tol}")
        finite = math.isfinite(observed)
        has_null = null is not None
        if has_null:
            null = to_float(null, f"run.signature({name!r}, null=...)")
            null = null if math.isfinite(null) else None  # never within tol: discriminates
        self.signatures[name] = Signature(
            has_null=has_null, null=null, observed=observed if finite else None,
            predicted=predicted, tol=tol, prediction=prediction,
            confirmed=bool(finite and abs(observed - predicted) <= tol))

    def budget(self, name: str, value: Any) -> None:
        """Record what the run spent or kept (stored numbers per state, FLOPs, seconds): the
        report compares every budget between the arms. ``run.fit`` records ``params``
        (trainable parameters of the last model fitted) and ``steps`` (optimizer steps of all
        fits); an arm with its own loop records them here, and a later call replaces a value."""
        if not isinstance(name, str) or not name:
            raise TypeError("run.budget: name must be a non-empty string")
        value = to_float(value, f"run.budget({name!r}, ...)")
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"run.budget({name!r}, ...): a budget must be a finite number "
                             f">= 0, got {value}")
        self.budgets[name] = value

    def log(self, name: str, value: Any) -> None:
        """Record any extra per-run figure (parameters, FLOPs, seconds)."""
        check_label(name, "run.log")
        value = to_float(value, f"run.log({name!r}, ...)")
        self.logs[name] = value if math.isfinite(value) else None

    # -- result ---------------------------------------------------------------------------
    def restore(self, stored: RunResult, cpu: str | None) -> None:
        """Take the result of a stored run (see benchkit.store.records), trained on ``cpu``,
        instead of training. A diverged run's missing metrics come back as NaN: it stays a
        diverged run."""
        self.val, self.test = (math.nan if v is None else v for v in (stored.val, stored.test))
        self.diverged = stored.diverged is True
        self.signatures = dict(stored.signatures)
        self.logs = dict(stored.logs)
        self.budgets = dict(stored.budgets)
        self.curve = stored.curve
        self.reused_seconds = float(stored.seconds or 0.0)
        self.cpu = cpu

    @property
    def reused(self) -> bool:
        """Whether the result came from the store (:meth:`restore`)."""
        return self.reused_seconds is not None

    def point(self) -> RunPoint:
        """Which run of its idea this is: (arm, track, config, seed)."""
        return RunPoint(arm=self.arm, track=self.track.name, cfg=dict(self.cfg), seed=self.seed)

    def result(self) -> RunResult:
        """What the run gave so far: its metrics (None when not finite), seconds (the stored
        run's when reused) and evidence."""
        return RunResult(
            val=_finite_or_none(self.val), test=_finite_or_none(self.test),
            diverged=bool(self.diverged),
            seconds=(self.reused_seconds if self.reused_seconds is not None
                     else round(time.perf_counter() - self._started, 6)),
            signatures=dict(self.signatures), logs=dict(self.logs),
            budgets=dict(self.budgets), curve=self.curve)

    def trained_on(self) -> str:
        """The CPU model the result was computed on (the stored run's when reused)."""
        return self.cpu or hardware.cpu()


def _copy_to(tensor, device: str):
    """A copy of ``tensor`` on ``device`` (a plain clone on its own device)."""
    return tensor.clone() if str(tensor.device) == device else tensor.to(device, copy=True)


def _finite_or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def set_threads(threads: int) -> None:
    """One thread count per process, fixed: it changes float reductions, hence the bits.
    Called before a run trains, so it is where a process imports torch."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
