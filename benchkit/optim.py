"""The optimizers a track can name, built for the standard loop in :mod:`benchkit.train`.

Adam calls torch's fused Adam kernel directly. It is the kernel ``torch.optim.Adam(fused=True)``
runs, with the same state and the same arguments, so the bits are the same (checked by
``tests/test_tracks.py``). What it leaves out is ``torch.optim``'s wrappers: their first call
imports ``torch._dynamo``, measured at 1.4 s per process on the reference machine, paid by every
xdist worker of every session for runs that take a fraction of a second each.
"""
from __future__ import annotations

from typing import Callable, Iterable

import torch


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
        """One floating dtype on one device where torch has the fused kernel."""
        kinds = {(p.device.type, p.dtype) for p in params}
        if len(kinds) != 1:
            return False
        device, dtype = kinds.pop()
        return device in ("cpu", "cuda") and dtype in (torch.float32, torch.float64,
                                                       torch.float16, torch.bfloat16)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        steps = [self.steps[i] for i in live]
        torch._foreach_add_(steps, 1)
        torch._fused_adam_(
            [self.params[i] for i in live], [self.params[i].grad for i in live],
            [self.exp_avgs[i] for i in live], [self.exp_avg_sqs[i] for i in live],
            [], steps, amsgrad=False, lr=self.lr, beta1=self.beta1, beta2=self.beta2,
            weight_decay=self.weight_decay, eps=self.eps, maximize=False,
            grad_scale=None, found_inf=None)


def adam(params, lr: float, weight_decay: float = 0.0):
    params = list(params)
    if FusedAdam.supports(params):
        return FusedAdam(params, lr, weight_decay=weight_decay)
    return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)


def sgd(params, lr: float, weight_decay: float = 0.0):
    return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)


OPTIMIZERS: dict[str, Callable] = {"adam": adam, "sgd": sgd}
