"""Surgery on a trained ReLU MLP (a stack of Linear and ReLU): rank its hidden units, replace
the unkept ones by affine surrogates, and build the physically smaller model.

Shared by the two pruning idea modules (test_task_visible_pruning.py, test_pruning_finetune_
vs_scratch.py), so that both prune with the same code. A :class:`Plan` says, per hidden layer,
which units stay ReLUs and the surrogate a_j z_j + b_j that replaces each other unit j
(a = b = 0 drops it; a = 1, b = 0 folds it, relu(z) -> z). z_j is affine in the layer's input,
so a surrogate reaches the next pre-activation as an affine skip: the compact model is a ReLU MLP
whose pre-activations z_l = main_l(r_{l-1}) + sum_m skip_{l,m}(r_m) read every earlier kept
activation r_m (r_0 = x), exactly equal to the full-width model with its units replaced.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass

import torch
from torch import nn

# the pruning modules' frontier: the compact model's multiply-adds per example, as a fraction of
# the dense model's (:func:`within`)
MACS = [0.95, 0.9, 0.8]


@dataclass(frozen=True)
class Plan:
    """Per hidden layer: ``keep`` (sorted indices of the units kept as ReLUs) and, over the
    layer's full width, ``slope`` a and ``offset`` b of each replaced unit (0 where kept)."""
    keep: list[torch.Tensor]
    slope: list[torch.Tensor]
    offset: list[torch.Tensor]


def linears(model: nn.Module) -> list[nn.Linear]:
    layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
    others = {type(m).__name__ for m in model.modules()
              if not isinstance(m, (nn.Linear, nn.ReLU, nn.Sequential))}
    if others:
        raise TypeError(f"pruning needs a Linear/ReLU stack, got a model with {sorted(others)}")
    return layers


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def multiply_adds(model: nn.Module) -> int:
    """Multiply-adds of one example's forward: in x out of every Linear, skips included."""
    return sum(m.in_features * m.out_features for m in model.modules()
               if isinstance(m, nn.Linear))


@torch.no_grad()
def preactivations(model: nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    """z of every hidden layer, each (N, width)."""
    zs, a = [], x
    for lin in linears(model)[:-1]:
        zs.append(lin(a))
        a = zs[-1].relu()
    return zs


@torch.no_grad()
def magnitude_scores(model: nn.Module) -> list[torch.Tensor]:
    """||W_in[j, :]|| * ||W_out[:, j]|| per hidden unit: invariant under ReLU's (c, 1/c)
    rescaling."""
    lins = linears(model)
    return [a.weight.norm(dim=1) * b.weight.norm(dim=0) for a, b in itertools.pairwise(lins)]


def crossing(z: torch.Tensor) -> torch.Tensor:
    """Each unit's share of inputs on its minority side: min(P[z > 0], P[z <= 0])."""
    active = (z > 0).double().mean(0)
    return torch.minimum(active, 1 - active)


def by_magnitude(model: nn.Module, zs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Per hidden layer, its units in the order they are kept: largest magnitude first."""
    return [s.argsort(descending=True, stable=True) for s in magnitude_scores(model)]


def by_crossing(model: nn.Module, zs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Most-crossing first, ties by magnitude: the least-crossing units are replaced first."""
    orders = []
    for z, order in zip(zs, by_magnitude(model, zs)):
        orders.append(order[crossing(z)[order].argsort(descending=True, stable=True)])
    return orders


def by_random(seed: int):
    """A ranking that keeps units in a random order drawn from ``seed`` (the control any
    informed ranking must beat)."""
    def order(model: nn.Module, zs: list[torch.Tensor]) -> list[torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        return [torch.randperm(z.shape[1], generator=g) for z in zs]
    return order


def drop(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """relu(z) -> 0."""
    return z.new_zeros(z.shape[1]), z.new_zeros(z.shape[1])


def majority_side(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """relu(z) -> z where the unit is active on most inputs, else 0."""
    return ((z > 0).double().mean(0) > 0.5).to(z.dtype), z.new_zeros(z.shape[1])


def least_squares(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """relu(z) -> a z + b, fitted by least squares on the inputs z comes from (float64)."""
    z64 = z.double()
    centred, out = z64 - z64.mean(0), z64.relu()
    var = centred.pow(2).mean(0)
    varies = var > 1e-12 * z64.pow(2).mean(0)  # a constant z (up to rounding) gets a = 0
    a = torch.where(varies, (centred * out).mean(0) / var.clamp_min(1e-300), 0.0)
    return a.to(z.dtype), (out.mean(0) - a * z64.mean(0)).to(z.dtype)


@torch.no_grad()
def make_plan(model: nn.Module, x: torch.Tensor, replaced: int, order, surrogate) -> Plan:
    """Replace the last ``replaced`` units of each hidden layer in ``order(model, zs)`` (at
    least one unit stays) by ``surrogate(z)``'s a z + b, z measured on ``x``."""
    zs = preactivations(model, x)
    keep, slope, offset = [], [], []
    for z, units in zip(zs, order(model, zs)):
        kept = units[:max(1, len(units) - replaced)].sort().values
        a, b = surrogate(z)
        keep.append(kept)
        slope.append(a.index_fill(0, kept, 0.0))
        offset.append(b.index_fill(0, kept, 0.0))
    return Plan(keep, slope, offset)


def _linear(weight, bias=None) -> nn.Linear:
    lin = nn.utils.skip_init(nn.Linear, weight.shape[1], weight.shape[0],
                             bias=bias is not None, dtype=weight.dtype,
                             device=weight.device)  # no RNG consumed
    lin.weight.copy_(weight)
    if bias is not None:
        lin.bias.copy_(bias)
    return lin


class CompactMLP(nn.Module):
    """z_l = main[l](r_{l-1}) + sum_m skips[l][m](r_m); r_0 = x, r_l = relu(z_l)."""

    def __init__(self, mains: list[nn.Linear], skips: list[dict[str, nn.Linear]]):
        super().__init__()
        self.main = nn.ModuleList(mains)
        self.skips = nn.ModuleList(nn.ModuleDict(s) for s in skips)

    def forward(self, x):
        rs = [x]
        for lin, skip in zip(self.main, self.skips):
            z = lin(rs[-1])
            for m, s in skip.items():
                z = z + s(rs[int(m)])
            rs.append(z.relu())
        return z


@torch.no_grad()
def compact_mlp(model: nn.Module, plan: Plan) -> CompactMLP:
    """The model with ``plan`` applied, physically smaller. G[m] is the coefficient of the
    current layer's full-width pre-activation on r_m, c its constant."""
    mains, skips = [], []
    for i, lin in enumerate(linears(model)):
        if i == 0:
            G, c = {0: lin.weight}, lin.bias
        else:
            K, a, b, W = plan.keep[i - 1], plan.slope[i - 1], plan.offset[i - 1], lin.weight
            G = {m: W @ (a[:, None] * g) for m, g in G.items()} if bool(a.any()) else {}
            G[i], c = W[:, K], lin.bias + W @ (a * c + b)
        rows = plan.keep[i] if i < len(plan.keep) else slice(None)
        mains.append(_linear(G[i][rows], c[rows]))
        skips.append({str(m): _linear(g[rows]) for m, g in G.items() if m != i})
    return CompactMLP(mains, skips)


def within(model: nn.Module, x: torch.Tensor, budget: float, order, surrogate) -> CompactMLP:
    """The compact model of :func:`make_plan` that replaces the fewest units per hidden layer
    (as many in each) while costing at most ``budget`` times the model's multiply-adds: a
    surrogate's affine skips cost multiply-adds too, so an arm saves only what it really
    saves. A ValueError names the budget when no plan meets it."""
    dense, widest = multiply_adds(model), max(lin.out_features for lin in linears(model)[:-1])
    for replaced in range(widest):
        compact = compact_mlp(model, make_plan(model, x, replaced, order, surrogate))
        if multiply_adds(compact) <= budget * dense:
            return compact
    raise ValueError(f"no plan costs at most {budget} of the model's multiply-adds")


@torch.no_grad()
def surrogate_forward(model: nn.Module, x: torch.Tensor, plan: Plan) -> torch.Tensor:
    """The full-width model with the plan's units replaced: what compact_mlp must equal."""
    *hidden, last = linears(model)
    a = x
    for i, lin in enumerate(hidden):
        z = lin(a)
        replaced = torch.ones_like(z[0], dtype=torch.bool).index_fill(0, plan.keep[i], False)
        a = torch.where(replaced, plan.slope[i] * z + plan.offset[i], z.relu())
    return last(a)


def reinitialized(model: nn.Module) -> nn.Module:
    """A copy of ``model``'s structure with every Linear freshly initialized (torch's default,
    from the global RNG the run seeded)."""
    fresh = copy.deepcopy(model)
    for lin in fresh.modules():
        if isinstance(lin, nn.Linear):
            lin.reset_parameters()
    return fresh
