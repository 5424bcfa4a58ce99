"""benchkit's Adam: torch's fused Adam kernel called directly where this torch has it (the bits
of torch.optim.Adam(fused=True)), torch.optim.Adam where it does not."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from benchkit.training import optim
from benchkit.training.optim import OPTIMIZERS, FusedAdam


def _train(make_opt, weight_decay: float, steps: int = 25) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 1))
    frozen_late = model[2].bias  # no grad on odd steps: its state must not advance then
    opt = make_opt(list(model.parameters()), weight_decay)
    x, y = torch.randn(64, 5), torch.randn(64, 1)
    for step in range(steps):
        loss = torch.mean((model(x) - y) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if step % 2:
            frozen_late.grad = None
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.slow
@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
@pytest.mark.parametrize("name, cls", [("adam", torch.optim.Adam), ("adamw", torch.optim.AdamW)])
def test_fused_adam_gives_the_bits_of_torch_optim_fused(name, cls, weight_decay):
    ours = _train(lambda p, wd: OPTIMIZERS[name](p, 3e-3, weight_decay=wd), weight_decay)
    theirs = _train(lambda p, wd: cls(p, lr=3e-3, fused=True, weight_decay=wd), weight_decay)
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))
    plain = _train(lambda p, wd: cls(p, lr=3e-3, weight_decay=wd), weight_decay)
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(ours, plain))


def test_a_schedule_gets_torch_optims_adam_with_the_same_bits():
    params = [torch.zeros(2, requires_grad=True)]
    assert isinstance(OPTIMIZERS["adam"](params, 1e-3, schedulable=True), torch.optim.Adam)
    assert isinstance(OPTIMIZERS["adamw"](params, 1e-3, schedulable=True), torch.optim.AdamW)
    scheduled = _train(lambda p, wd: OPTIMIZERS["adam"](p, 3e-3, weight_decay=wd,
                                                        schedulable=True), 0.01)
    fused = _train(lambda p, wd: OPTIMIZERS["adam"](p, 3e-3, weight_decay=wd), 0.01)
    assert all(torch.equal(a, b) for a, b in zip(scheduled, fused))


def test_adam_falls_back_to_torch_optim_for_mixed_dtypes():
    params = [torch.zeros(2, requires_grad=True),
              torch.zeros(2, dtype=torch.float64, requires_grad=True)]
    assert not FusedAdam.supports(params)
    assert isinstance(OPTIMIZERS["adam"](params, 1e-3), torch.optim.Adam)


def test_the_fused_kernel_is_found_on_cpu_float32():
    """torch>=2.4 (the floor in pyproject.toml) has it: the fast path is the one taken."""
    assert optim.fused_available("cpu", torch.float32)
    assert isinstance(OPTIMIZERS["adam"]([torch.zeros(2, requires_grad=True)], 1e-3), FusedAdam)


def test_without_the_fused_kernel_adam_is_torch_optim_adam(monkeypatch):
    monkeypatch.setattr(optim, "fused_available", lambda device, dtype, kernel: False)
    params = [torch.zeros(2, requires_grad=True)]
    assert isinstance(OPTIMIZERS["adam"](params, 1e-3), torch.optim.Adam)
    plain = _train(lambda p, wd: torch.optim.Adam(p, lr=3e-3, weight_decay=wd), 0.01)
    ours = _train(lambda p, wd: OPTIMIZERS["adam"](p, 3e-3, weight_decay=wd), 0.01)
    assert all(torch.equal(a, b) for a, b in zip(ours, plain))


@pytest.mark.slow
def test_a_default_run_does_not_import_torch_dynamo():
    code = ("import sys; from benchkit import tracks; from benchkit.training.run import Run; "
            "r = Run(arm='baseline', track=tracks.get('tabular'), cfg={'lr': 3e-3}, seed=0, "
            "epochs=1); r.fit(r.track.model()); print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_the_tracks_validate_against_the_optimizers_that_exist():
    from benchkit.tracks import base

    assert set(base.OPTIMIZERS) == set(OPTIMIZERS)
