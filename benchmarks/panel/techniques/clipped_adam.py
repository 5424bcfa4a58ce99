"""Adam with gradient-norm clipping, for the clipping technique modules (tabular and mnist1d):
one optimizer class, so the two tracks bench the same technique."""
from __future__ import annotations

import torch


class ClippedAdam(torch.optim.Adam):
    """Adam (fused, as run.fit's: the same kernel and bits) that rescales the gradients to a
    total norm of at most ``max_norm`` before each step; run.fit still applies the track's
    schedule to it."""

    def __init__(self, params, *, lr: float, max_norm: float):
        super().__init__(params, lr=lr, fused=True)
        self.max_norm = max_norm

    def step(self, closure=None):
        torch.nn.utils.clip_grad_norm_([p for g in self.param_groups for p in g["params"]],
                                       self.max_norm)
        return super().step(closure)
