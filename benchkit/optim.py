"""The optimizers a track can name, built for the standard loop in :mod:`benchkit.train`.

Adam steps with torch's fused Adam kernel called directly when this torch has it for the
parameters' device and dtype, and is ``torch.optim.Adam`` otherwise. The kernel is the one
``torch.optim.Adam(fused=True)`` runs, with the same state and arguments, so the bits are the
same (``tests/test_optim.py``); calling it directly skips ``torch.optim``'s per-step wrappers,
a per-step cost on the small models benchkit trains. ``torch._fused_adam_`` is the one private
API benchkit uses, and only behind :func:`fused_available`.
"""
from __future__ import annotations

import functools
from typing import Callable, Iterable

import torch


@functools.lru_cache(maxsize=None)
def fused_available(device: str, dtype: torch.dtype) -> bool:
    """Whether this torch's fused Adam kernel runs on ``device``/``dtype`` with the arguments
    :class:`FusedAdam` passes: tried once on a one-element tensor, any failure means no."""
    kernel = getattr(torch, "_fused_adam_", None)
    if kernel is None:
        return False
    try:
        p = torch.zeros(1, device=device, dtype=dtype)
        g, m, v = torch.ones_like(p), torch.zeros_like(p), torch.zeros_like(p)
        kernel([p], [g], [m], [v], [], [torch.ones((), dtype=torch.float32, device=device)],
               amsgrad=False, lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8,
               maximize=False, grad_scale=None, found_inf=None)
    except Exception:  # an older torch, another signature, no kernel for this device
        return False
    return True


class FusedAdam:
    """Adam (no amsgrad, no maximize) over parameters of one device and dtype."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float, *, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0):
        self.params = list(params)
        self.lr, self.eps, self.weight_decay = float(lr), float(eps), float(weight_decay)
        self.beta1, self.beta2 = (float(b) for b in betas)
        self.exp_avgs = [torch.zeros_like(p, memory_format=torch.preserve_format)
                         for p in self.params]
        self.exp_avg_sqs = [torch.zeros_like(p, memory_format=torch.preserve_format)
                            for p in self.params]
        # torch.optim keeps a fused step count as a float32 tensor per parameter
        self.steps = [torch.zeros((), dtype=torch.float32, device=p.device)
                      for p in self.params]

    @staticmethod
    def supports(params: list[torch.Tensor]) -> bool:
        """One floating dtype on one device, where this torch has the fused kernel."""
        kinds = {(p.device.type, p.dtype) for p in params}
        if len(kinds) != 1:
            return False
        device, dtype = kinds.pop()
        return dtype.is_floating_point and fused_available(device, dtype)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        steps = [self.steps[i] for i in live]
        for step in steps:
            step.add_(1)
        torch._fused_adam_(
            [self.params[i] for i in live], [self.params[i].grad for i in live],
            [self.exp_avgs[i] for i in live], [self.exp_avg_sqs[i] for i in live],
            [], steps, amsgrad=False, lr=self.lr, beta1=self.beta1, beta2=self.beta2,
            weight_decay=self.weight_decay, eps=self.eps, maximize=False,
            grad_scale=None, found_inf=None)


def adam(params, lr: float, weight_decay: float = 0.0):
    """Adam with L2 ``weight_decay`` (added to the gradient, as ``torch.optim.Adam``)."""
    params = list(params)
    if FusedAdam.supports(params):
        return FusedAdam(params, lr, weight_decay=weight_decay)
    return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)


def sgd(params, lr: float, weight_decay: float = 0.0):
    return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)


OPTIMIZERS: dict[str, Callable] = {"adam": adam, "sgd": sgd}
