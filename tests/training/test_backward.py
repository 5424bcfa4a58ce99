"""run.fit's backward step (benchkit/training/loop.py:backward): autograd's engine given the
gradient 1 directly for a plain scalar loss, ``Tensor.backward`` for anything else."""
from __future__ import annotations

import pytest
import torch

from benchkit.training import loop


def grads(step) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    step(((model(x) - y) ** 2).mean())
    return [p.grad for p in model.parameters()]


def test_a_scalar_loss_gets_the_gradients_of_tensor_backward(monkeypatch):
    expected = grads(torch.Tensor.backward)

    def refuse(self, *args, **kwargs):
        raise AssertionError("the scalar loss went through Tensor.backward")

    monkeypatch.setattr(torch.Tensor, "backward", refuse)  # fails where backward() used it
    got = grads(loop.backward)
    assert all(torch.equal(a, b) for a, b in zip(got, expected))


def test_a_loss_without_a_gradient_fails_as_tensor_backward_does():
    with pytest.raises(RuntimeError, match="does not require grad"):
        loop.backward(torch.tensor(1.0))


def test_a_non_scalar_loss_fails_as_tensor_backward_does():
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        loop.backward(w * 2)


def test_a_backward_that_writes_into_its_gradient_leaves_the_next_step_alone():
    class Doubling(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad.mul_(2)  # in place, into the gradient it was given

    def two_steps(step) -> list[torch.Tensor]:
        w = torch.tensor(3.0, requires_grad=True)
        got = []
        for _ in range(2):
            w.grad = None
            step(Doubling.apply(w * w))
            got.append(w.grad.clone())
        return got

    assert [float(g) for g in two_steps(loop.backward)] == \
        [float(g) for g in two_steps(torch.Tensor.backward)] == [12.0, 12.0]
