"""What a track is: data + default model + loss/metric + protocol + default grid.

Nothing here imports torch: a session whose runs all come from the store (a rerun) collects,
keys and reports without paying torch's import. Track modules import torch where they build
data or models.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:
    import torch
    from torch import nn

# the names of benchkit.training.optim.OPTIMIZERS (tests keep them equal), here so that validating a
# track does not import torch
OPTIMIZERS = ("adam", "adamw", "sgd")
SCHEDULES = ("constant", "cosine", "linear")  # the learning-rate schedules run.fit names


# spec/idea.py's MIN_SEEDS and MAX_SEEDS (tests keep them equal), for the same reason
MIN_SEEDS, MAX_SEEDS = 2, 1000

LIMIT_PREFIX = "limit: "  # a floor named so is an achievable limit (a model no learner has)


def is_limit(name: str) -> bool:
    """Whether floor ``name`` is an achievable limit (e.g. a filter that knows the true
    equations), reported beside the floors but not a floor a baseline must beat."""
    return name.startswith(LIMIT_PREFIX)


def strongest_floor(floors: dict[str, float], direction: str) -> tuple[str, float] | None:
    """The best of ``floors`` in the metric's ``direction`` ("lower" or "higher"), limits
    left out; None when there is none."""
    kept = {k: v for k, v in floors.items() if not is_limit(k) and v is not None
            and math.isfinite(v)}
    if not kept:
        return None
    name = (min if direction == "lower" else max)(kept, key=kept.__getitem__)
    return name, kept[name]


def kept_per_seed(make_floors: Callable[[int], dict[str, float]]):
    """``make_floors`` remembered per seed in this process (a copy returned each time): the
    floors are a pure function of the seed that costs seconds, and a process that reports
    a track several times (a test suite's in-process sessions) should pay them once."""
    remembered = functools.lru_cache(maxsize=64)(make_floors)

    @functools.wraps(make_floors)
    def floors(seed: int) -> dict[str, float]:
        return dict(remembered(int(seed)))

    floors.cache_clear = remembered.cache_clear  # type: ignore[attr-defined]
    return floors


def mean_floors(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Each floor averaged over the seeds' ``{name: test metric}`` (the first seed's names)."""
    return {name: float(sum(f[name] for f in per_seed) / len(per_seed))
            for name in (per_seed[0] if per_seed else {})}


class Split(NamedTuple):
    """One split of in-memory tensors: inputs ``x`` and targets ``y`` (first dim = examples)."""

    x: torch.Tensor
    y: torch.Tensor

    def __len__(self) -> int:
        return int(self.x.shape[0])


class Data(NamedTuple):
    """The three splits of one seed: ``train`` (what the model fits), ``val`` (what selects a
    config) and ``test`` (what the comparison reports)."""

    train: Split
    val: Split
    test: Split


def check_data(track: str, data) -> None:
    """Raise a TypeError or ValueError naming what is wrong when ``data`` (a ``make_data`` result)
    is not a :class:`Data` of three :class:`Split` of tensors with as many targets as inputs, or
    when its integer targets (class labels) are not long tensors of shape [N] ([N, T]: one per
    position): a wrong dtype fails inside the loss at every run, and [N, 1] labels broadcast against
    [N] predictions into a silently wrong accuracy."""
    import torch

    where = f"track {track!r}: make_data(seed)"
    if not isinstance(data, Data):
        raise TypeError(f"{where} returned a {type(data).__name__}; it must return "
                         "benchkit.tracks.Data(train, val, test) of Split(x, y) tensors")
    for split_name, part in zip(Data._fields, data):
        if not (isinstance(part, Split) and isinstance(part.x, torch.Tensor)
                and isinstance(part.y, torch.Tensor)):
            raise TypeError(f"{where}.{split_name} must be a Split(x, y) of torch tensors")
        x, y = part
        if x.ndim == 0 or y.ndim == 0 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
            raise ValueError(f"{where}.{split_name}: x {list(x.shape)} and y {list(y.shape)} "
                             "must hold the same number (> 0) of examples in their first dim")
        if y.is_floating_point() or y.is_complex():
            continue  # regression targets: any float dtype and shape the loss takes
        if y.dtype != torch.long or (y.ndim > 1 and y.shape[-1] == 1):
            fix = "y.squeeze(-1).long()" if y.ndim > 1 and y.shape[-1] == 1 else "y.long()"
            raise ValueError(f"{where}.{split_name}.y holds class labels of dtype {y.dtype} and "
                             f"shape {list(y.shape)}; class labels must be torch.long (int64) "
                             f"of shape [N] (N = {x.shape[0]}; [N, T] for a label per position): "
                             f"use {fix} (float targets are regression targets, of any shape "
                             "the loss takes)")


def mse(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((pred - y) ** 2).mean()


@dataclass(frozen=True)
class Track:
    """A benchmark track.

    ``make_data(seed)`` must be deterministic in the seed alone and use no network; each seed
    draws a fresh sample. ``metric`` maps (prediction, target) to a scalar tensor; ``direction``
    says whether "lower" or "higher" is better, so nothing downstream assumes either.
    """

    name: str
    make_data: Callable[[int], Data]
    make_model: Callable[[], nn.Module]
    model_name: str
    grid: tuple[dict, ...]
    epochs: int
    batch_size: int = 32
    metric_name: str = "mse"
    direction: str = "lower"
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = mse
    metric: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = mse
    optimizer: str = "adam"
    schedule: str = "constant"  # the learning-rate schedule run.fit uses unless an arm names one
    description: str = ""
    extra_protocol: dict = field(default_factory=dict)
    requires: tuple[tuple[str, str], ...] = ()  # (module, how to install it) the data needs
    budget: str = "fixed"  # "convergence": epochs aim at a trained-out model; "fixed": a budget
    budget_reason: str = ""  # one line: why (the report states both; benchkit.verdict.convergence)
    # seed -> {floor name: test metric} of trivial baselines fitted on that seed's train split
    make_floors: Callable[[int], dict[str, float]] | None = None
    # why the track is no yardstick any more ("" while it is one): it still runs, and every
    # report of a bench on it carries the reason as a warning (registry.retirement)
    retired: str = ""
    # the seeds a bench on this track runs when its mark gives no seeds= (None: benchkit's 8):
    # what its variance needs for the power it aims at (docs/tracks.md); not in protocol()
    seeds: int | None = None

    def __post_init__(self) -> None:
        if self.direction not in ("lower", "higher"):
            raise ValueError(f"track {self.name!r}: direction must be 'lower' or 'higher', "
                             f"got {self.direction!r}")
        if self.budget not in ("convergence", "fixed"):
            raise ValueError(f"track {self.name!r}: budget must be 'convergence' or 'fixed', "
                             f"got {self.budget!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"track {self.name!r}: unknown optimizer {self.optimizer!r}; "
                             f"valid: {sorted(OPTIMIZERS)}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"track {self.name!r}: unknown schedule {self.schedule!r}; "
                             f"valid: {list(SCHEDULES)}")
        if self.seeds is not None and (isinstance(self.seeds, bool) or not isinstance(
                self.seeds, int) or not MIN_SEEDS <= self.seeds <= MAX_SEEDS):
            raise ValueError(f"track {self.name!r}: seeds={self.seeds!r:.60} must be None "
                             f"(benchkit's default) or an integer in [{MIN_SEEDS}, {MAX_SEEDS}]")

    def missing(self) -> str | None:
        """Why this track cannot run here (a module it needs is not installed), or None.
        Asked at collection, so that the mistake is named before anything trains."""
        import importlib.util

        for module, install in self.requires:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return f"track {self.name!r} needs {module}, which is not installed: {install}"
        return None

    def model(self) -> nn.Module:
        """A fresh default model (built from the global torch RNG, seeded per run)."""
        return self.make_model()

    def data(self, seed: int) -> Data:
        """The splits of ``seed``, checked (:func:`check_data`) before a run trains on them."""
        data = self.make_data(seed)
        check_data(self.name, data)
        return data

    def floors(self, seeds) -> dict[str, float]:
        """Each floor's test metric averaged over ``seeds`` (the bench's: same splits as its
        runs); ``{}`` for a track that declares none. A trained baseline should beat them all."""
        if self.make_floors is None:
            return {}
        return mean_floors([self.make_floors(int(s)) for s in seeds])

    @property
    def metric_direction(self) -> str:
        return f"{self.direction} is better"

    def better(self, a: float, b: float) -> bool:
        """True when metric value ``a`` is strictly better than ``b``."""
        return a < b if self.direction == "lower" else a > b

    def worst_value(self) -> float:
        return math.inf if self.direction == "lower" else -math.inf

    def protocol(self, epochs: int | None = None) -> dict:
        """Everything about training that is not the arm's config: goes into keys and reports."""
        return {
            "track": self.name,
            "model": self.model_name,
            "optimizer": self.optimizer,
            "schedule": self.schedule,
            "batch_size": self.batch_size,
            "epochs": int(epochs if epochs is not None else self.epochs),
            "metric": self.metric_name,
            "metric_direction": self.metric_direction,
            **self.extra_protocol,
        }
