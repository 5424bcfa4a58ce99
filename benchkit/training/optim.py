"""The optimizers and learning-rate schedules ``run.fit`` can name, built for the standard loop
in :mod:`benchkit.training.loop`; an arm may give its own factory instead of a name.

Adam and AdamW step with torch's fused kernels called directly when this torch has them for the
parameters' device and dtype, and are ``torch.optim.Adam``/``AdamW`` otherwise. The kernels are
the ones ``torch.optim.Adam(fused=True)`` and ``AdamW(fused=True)`` run, with the same state and
arguments, so the bits are the same (``tests/training/test_optim.py``); calling them directly
skips ``torch.optim``'s per-step wrappers, a per-step cost on the small models benchkit trains.
A named schedule (``cosine``, ``linear``) is applied by :class:`FusedAdam` itself, as
``LambdaLR`` would set the rate (the same bits again); a schedule *factory* needs a
``torch.optim.Optimizer``, so there Adam and AdamW are ``torch.optim``'s own, fused where
available. ``torch._fused_adam_``/``_fused_adamw_`` are the one private API benchkit uses, and
only behind :func:`fused_available`.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Iterable

import torch

from benchkit.tracks.base import SCHEDULES  # noqa: F401  (named there, so tracks validate without torch)


@functools.lru_cache(maxsize=None)
def fused_available(device: str, dtype: torch.dtype, kernel: str = "_fused_adam_") -> bool:
    """Whether this torch's fused Adam (or AdamW) kernel runs on ``device``/``dtype`` with the
    arguments :class:`FusedAdam` passes: tried once on a one-element tensor, any failure means
    no."""
    function = getattr(torch, kernel, None)
    if function is None:
        return False
    try:
        p = torch.zeros(1, device=device, dtype=dtype)
        g, m, v = torch.ones_like(p), torch.zeros_like(p), torch.zeros_like(p)
        function([p], [g], [m], [v], [], [torch.ones((), dtype=torch.float32, device=device)],
                 amsgrad=False, lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8,
                 maximize=False, grad_scale=None, found_inf=None)
    except Exception:  # an older torch, another signature, no kernel for this device
        return False
    return True


class FusedAdam:
    """Adam (no amsgrad, no maximize) over parameters of one device and dtype; with
    ``decoupled=True``, AdamW (weight decay applied to the weights, not added to the gradient)."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float, *, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled: bool = False):
        self.params = list(params)
        self.lr, self.eps, self.weight_decay = float(lr), float(eps), float(weight_decay)
        self.beta1, self.beta2 = (float(b) for b in betas)
        self.kernel = getattr(torch, kernel_name(decoupled))
        self.exp_avgs = [torch.zeros_like(p, memory_format=torch.preserve_format)
                         for p in self.params]
        self.exp_avg_sqs = [torch.zeros_like(p, memory_format=torch.preserve_format)
                            for p in self.params]
        # torch.optim keeps a fused step count as a float32 tensor per parameter; while every
        # step has moved every parameter the counts are equal, so one tensor stands for all
        # (one add a step, not one per parameter) until a step skips a parameter
        shared = torch.zeros((), dtype=torch.float32,
                             device=self.params[0].device if self.params else None)
        self.steps = [shared] * len(self.params)
        self.shared: torch.Tensor | None = shared
        self.factor: Callable[[int], float] | None = None  # set by make_schedule
        self.taken = 0

    def lr_now(self) -> float:
        """The learning rate of the next step: ``lr * factor(steps taken)`` under a named
        schedule, as ``torch.optim.lr_scheduler.LambdaLR`` sets it; ``lr`` without one."""
        return self.lr if self.factor is None else self.lr * self.factor(self.taken)

    @staticmethod
    def supports(params: list[torch.Tensor], decoupled: bool = False) -> bool:
        """One floating dtype on one device, where this torch has the fused kernel."""
        kinds = {(p.device.type, p.dtype) for p in params}
        if len(kinds) != 1:
            return False
        device, dtype = kinds.pop()
        return dtype.is_floating_point and fused_available(device, dtype, kernel_name(decoupled))

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        grads = [p.grad for p in self.params]
        if all(g is not None for g in grads):  # the usual step: every parameter has a gradient
            params, exp_avgs, exp_avg_sqs, steps = (self.params, self.exp_avgs,
                                                    self.exp_avg_sqs, self.steps)
        else:
            live = [i for i, g in enumerate(grads) if g is not None]
            if not live:
                return
            if self.shared is not None:  # the counts part: each parameter its own from now
                self.steps, self.shared = [step.clone() for step in self.steps], None
            params, grads, exp_avgs, exp_avg_sqs, steps = (
                [self.params[i] for i in live], [grads[i] for i in live],
                [self.exp_avgs[i] for i in live], [self.exp_avg_sqs[i] for i in live],
                [self.steps[i] for i in live])
        if self.shared is not None:
            self.shared.add_(1)
        else:
            torch._foreach_add_(steps, 1)
        lr, self.taken = self.lr_now(), self.taken + 1
        self.kernel(
            params, grads, exp_avgs, exp_avg_sqs,
            [], steps, amsgrad=False, lr=lr, beta1=self.beta1, beta2=self.beta2,
            weight_decay=self.weight_decay, eps=self.eps, maximize=False,
            grad_scale=None, found_inf=None)


def kernel_name(decoupled: bool) -> str:
    return "_fused_adamw_" if decoupled else "_fused_adam_"


def _adam(params, lr: float, weight_decay: float, decoupled: bool, schedulable: bool):
    params = list(params)
    fused = FusedAdam.supports(params, decoupled)
    if fused and not schedulable:
        return FusedAdam(params, lr, weight_decay=weight_decay, decoupled=decoupled)
    cls = torch.optim.AdamW if decoupled else torch.optim.Adam
    return cls(params, lr=lr, weight_decay=weight_decay, fused=True if fused else None)


def adam(params, lr: float, weight_decay: float = 0.0, schedulable: bool = False):
    """Adam with L2 ``weight_decay`` (added to the gradient, as ``torch.optim.Adam``)."""
    return _adam(params, lr, weight_decay, False, schedulable)


def adamw(params, lr: float, weight_decay: float = 0.0, schedulable: bool = False):
    """AdamW: ``weight_decay`` decoupled from the gradient (``torch.optim.AdamW``)."""
    return _adam(params, lr, weight_decay, True, schedulable)


def sgd(params, lr: float, weight_decay: float = 0.0, schedulable: bool = False,
        momentum: float = 0.0):
    return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay, momentum=momentum)


OPTIMIZERS: dict[str, Callable] = {"adam": adam, "adamw": adamw, "sgd": sgd}


def check_choices(optimizer, schedule, loss) -> None:
    """Refuse an unknown optimizer or schedule name, or a loss that is no callable, before
    anything trains: a clear message naming what is valid."""
    if not callable(optimizer) and optimizer not in OPTIMIZERS:
        raise ValueError(f"run.fit: unknown optimizer {optimizer!r}; valid: one of "
                         f"{sorted(OPTIMIZERS)} or a factory params -> torch.optim.Optimizer")
    if not callable(schedule) and schedule not in SCHEDULES:
        raise ValueError(f"run.fit: unknown schedule {schedule!r}; valid: one of "
                         f"{list(SCHEDULES)} or a factory optimizer -> "
                         "torch.optim.lr_scheduler.LRScheduler")
    if loss is not None and not callable(loss):
        raise TypeError(f"run.fit: loss must be a callable (prediction, target) -> scalar "
                        f"tensor, got {type(loss).__name__}: {loss!r}")


def make_optimizer(optimizer, params: list, *, lr: float | None, weight_decay: float,
                   momentum: float | None, schedulable: bool):
    """The optimizer ``run.fit`` steps: a name of :data:`OPTIMIZERS` built with ``lr`` and
    ``weight_decay`` (and SGD's ``momentum``), or a factory called with the parameters."""
    if callable(optimizer):
        built = optimizer(params)
        if not (callable(getattr(built, "step", None))
                and callable(getattr(built, "zero_grad", None))):
            raise TypeError(f"run.fit: the optimizer factory returned {type(built).__name__}; "
                            "valid: a torch.optim.Optimizer (or anything with step() and "
                            "zero_grad())")
        return built
    extra = {"momentum": momentum} if optimizer == "sgd" and momentum is not None else {}
    return OPTIMIZERS[optimizer](params, lr, weight_decay=weight_decay, schedulable=schedulable,
                                 **extra)


def schedule_factor(schedule: str, total_steps: int) -> Callable[[int], float]:
    """The multiplier of the learning rate at optimizer step ``k`` (0-based) of a named
    schedule over ``total_steps``: ``cosine`` 0.5 (1 + cos(pi k / T)), ``linear`` 1 - k / T, both
    reaching 0 at T (torch's ``CosineAnnealingLR`` and ``LinearLR`` values, in closed form)."""
    steps = max(int(total_steps), 1)
    if schedule == "cosine":
        return lambda k: 0.5 * (1.0 + math.cos(math.pi * min(k, steps) / steps))
    return lambda k: 1.0 - min(k, steps) / steps


def make_schedule(schedule, opt, total_steps: int):
    """The learning-rate scheduler stepped after every optimizer step, or None (constant, or a
    named schedule that :class:`FusedAdam` applies itself, skipping a scheduler's per-step
    call). ``cosine`` anneals to 0 and ``linear`` decays to 0 over ``total_steps``
    (:func:`schedule_factor`); a ``torch.optim`` optimizer gets them as ``LambdaLR``."""
    if not callable(schedule) and schedule == "constant":
        return None
    if not callable(schedule):
        factor = schedule_factor(schedule, total_steps)
        if isinstance(opt, FusedAdam):
            opt.factor = factor
            return None
        if not isinstance(opt, torch.optim.Optimizer):
            raise TypeError(f"run.fit: schedule={schedule!r} needs a torch.optim.Optimizer, "
                            f"the optimizer is a {type(opt).__name__}")
        return torch.optim.lr_scheduler.LambdaLR(opt, factor)
    built = schedule(opt)
    if not callable(getattr(built, "step", None)):
        raise TypeError(f"run.fit: the schedule factory returned {type(built).__name__}; "
                        "valid: a torch.optim.lr_scheduler.LRScheduler (anything with step())")
    return built
