"""Task-visible pruning of a ReLU MLP: fold or drop the units the task never switches.

Claim. On the task's inputs many hidden ReLU units of a trained MLP are *one-sided*: their
pre-activation z_j stays on one side of zero, so the unit is affine (always active, relu(z) = z)
or zero (always inactive). Such units can be replaced exactly by a ReLU-free surrogate, so
ranking units by how often they cross zero, and replacing the least-crossing ones first, should
lose less than ranking them by weight magnitude.

Every arm trains mlp_tiny (the identical dense model in every arm of a seed and config), keeps
a fraction `keep` of each hidden layer's ReLU units in a physically smaller model (compact
Linear layers, no masks), and records that model's val/test *right after replacement*: the
claim is about the loss from replacing units, and a fine-tune washes it out (on the old tabular
track the control won on 23 of 24 seeds right after pruning, at p = 0.047 after fine-tuning).
Each arm then fine-tunes a copy with the same budget and logs its test MSE ("finetuned"); the
verdict does not rest on it. The bench is a frontier over `keep` (1/8, 1/4, 1/2): each arm is
benched at each fraction, and the verdict pairs the mean over the fractions. The dense model is
the track's baseline at one lr, the one tabular's A/A bench selects on validation (5e-3,
trained out there): an lr grid would select, on the decided metric, the dense training that
prunes best (lr 1e-3, the least trained, for every arm in a 2-seed run), tuning the model to
the pruning instead of pruning the trained model. No "still improving" check applies: the
decided number comes from no fit.

* Baseline, magnitude: keep the units with the largest ||W_in[j, :]||_2 * ||W_out[:, j]||_2
  (invariant under the (c, 1/c) rescaling ReLU allows); drop the rest.
* Control, magnitude + shortcut: the same magnitude ranking, but the units it does not keep are
  replaced like the idea's (fold a majority-active unit, drop the rest). It has the idea's
  structure and parameter count (the affine skips below), so it separates the ranking rule,
  which the claim is about, from the shortcut, which the tabular target's linear term rewards.
* Idea, task-visible: a unit's crossing fraction is the share of training inputs on its
  minority side, min(P[z_j > 0], P[z_j <= 0]). Keep the most-crossing units (ties: magnitude);
  replace the others by their majority-side surrogate: fold (relu(z) -> z) or drop (-> 0).

Folding is exact: a folded z_j = W_l[j] a_{l-1} + b_l[j] is affine in the layer's *input*, so it
reaches the next pre-activation as an affine skip from a_{l-1}. Chained over layers, the compact
model is a ReLU MLP with affine skips from every earlier kept activation r_m (r_0 = x) to later
pre-activations: z_l = main_l(r_{l-1}) + sum_m skip_{l,m}(r_m).

From-scratch control (Liu et al., "Rethinking the Value of Network Pruning", ICLR 2019): the
idea's compact structure re-initialized and trained from scratch for the fine-tune's epochs
(Scratch-E), logged in the idea arm as "scratch_same_structure" beside "finetuned". It is a
log, not a control arm: a from-scratch model has no replacement, so it has no value on the
decided metric; it answers the other question a reader asks (is a pruned-and-fine-tuned model
better than its architecture alone?), shown side by side under Logged figures. The pipeline's
`steps` budget (dense training + fine-tune) is the same in every arm; the side run's are not
counted in it.

Signature: on the trained unpruned model, replacing exactly the units that are one-sided on
*every* training input (q = 0) moves the output on the *test* inputs by <= 1e-4. Exact on the
training inputs by construction, it can fail on held-out ones (a unit one-sided on train may
cross on test). Null: the same replacement of as many units (at least one per layer) drawn at
random among the crossing ones: it must move the output, or the check could not fail.
Logged: the fine-tuned test MSE, the one-sided count and the compute ratio, multiply-adds per
example of the compact model over the dense one (a timed ratio at this width measures per-call
overhead, not compute).
"""
from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

KEEP = [1 / 8, 1 / 4, 1 / 2]  # ReLU units kept per hidden layer: the frontier
LR = 5e-3  # the dense model's (and the fine-tunes') lr: tabular's A/A selection at 8 seeds

pytestmark = pytest.mark.bench(
    name="task_visible_pruning", track="tabular", frontier={"keep": KEEP}, grid={"lr": [LR]},
    claim="right after replacement, replacing the least-crossing ReLU units first loses less "
          "than magnitude ranking, at equal structure, over keep fractions 1/8 to 1/2")


def linears(model: nn.Module) -> list[nn.Linear]:
    return [m for m in model.modules() if isinstance(m, nn.Linear)]


def n_keep(width: int, fraction: float) -> int:
    return max(1, round(fraction * width))


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.no_grad()
def preactivations(model: nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    """z of every hidden layer of a Linear/ReLU stack, each (N, width)."""
    zs, a = [], x
    for lin in linears(model)[:-1]:
        zs.append(lin(a))
        a = zs[-1].relu()
    return zs


@torch.no_grad()
def magnitude_scores(model: nn.Module) -> list[torch.Tensor]:
    lins = linears(model)
    return [a.weight.norm(dim=1) * b.weight.norm(dim=0) for a, b in zip(lins[:-1], lins[1:])]


def magnitude_plan(model, x, fraction):
    """(keep, fold) index tensors per hidden layer: top magnitudes kept, nothing folded."""
    keep = [s.argsort(descending=True)[:n_keep(len(s), fraction)].sort().values
            for s in magnitude_scores(model)]
    return keep, [k[:0] for k in keep]


def task_visible_plan(model, x, fraction):
    """(keep, fold) per hidden layer: the most-crossing units kept, the rest fold or drop."""
    keep, fold = [], []
    for z, magnitude in zip(preactivations(model, x), magnitude_scores(model)):
        active = (z > 0).double().mean(0)
        crossing = torch.minimum(active, 1 - active)
        order = magnitude.argsort(descending=True, stable=True)
        order = order[crossing[order].argsort(descending=True, stable=True)]  # lexicographic
        k = n_keep(z.shape[1], fraction)
        rest = order[k:]
        keep.append(order[:k].sort().values)
        fold.append(rest[active[rest] > 0.5].sort().values)
    return keep, fold


def magnitude_shortcut_plan(model, x, fraction):
    """(keep, fold) per hidden layer: top magnitudes kept, the rest fold (majority-active on x)
    or drop: the idea's replacement with magnitude's ranking."""
    keep, fold = [], []
    for z, K in zip(preactivations(model, x), magnitude_plan(model, x, fraction)[0]):
        rest = torch.ones(z.shape[1], dtype=torch.bool, device=z.device).index_fill(0, K, False)
        majority_active = (z > 0).double().mean(0) > 0.5
        keep.append(K)
        fold.append((rest & majority_active).nonzero().flatten())
    return keep, fold


def one_sided(model, x):
    """Per hidden layer, (always_active, always_inactive) masks: z > 0 (or z < 0) on every row
    of x."""
    return [(z.min(0).values > 0, z.max(0).values < 0) for z in preactivations(model, x)]


def random_crossing(model, x, masks, g):
    """Masks of the null: per layer, as many units as `masks` replaces (at least one), drawn at
    random among the units that cross zero on x, each replaced by its majority side."""
    null = []
    for z, (on, off) in zip(preactivations(model, x), masks):
        crossing = (~(on | off)).nonzero().flatten()
        n = min(len(crossing), max(1, int((on | off).sum())))
        pick = crossing[torch.randperm(len(crossing), generator=g)[:n]]
        chosen = torch.zeros_like(on).index_fill(0, pick, True)
        majority_active = (z > 0).double().mean(0) > 0.5
        null.append((chosen & majority_active, chosen & ~majority_active))
    return null


@torch.no_grad()
def surrogate_forward(model, x, masks):
    """The full-width model with masked units replaced: active -> z, inactive -> 0."""
    *hidden, last = linears(model)
    a = x
    for lin, (on, off) in zip(hidden, masks):
        z = lin(a)
        a = torch.where(on, z, torch.where(off, 0.0, z.relu()))
    return last(a)


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


def _linear(weight, bias=None) -> nn.Linear:
    lin = nn.utils.skip_init(nn.Linear, weight.shape[1], weight.shape[0],
                             bias=bias is not None, dtype=weight.dtype,
                             device=weight.device)  # no RNG consumed
    lin.weight.copy_(weight)
    if bias is not None:
        lin.bias.copy_(bias)
    return lin


@torch.no_grad()
def compact_mlp(model, keep, fold) -> CompactMLP:
    """Keep units `keep[l]` of hidden layer l as ReLUs, fold units `fold[l]` (relu -> identity),
    drop the rest. G[m] is the coefficient of the current (full-width) pre-activation on r_m."""
    mains, skips = [], []
    for i, lin in enumerate(linears(model)):
        if i == 0:
            G, c = {0: lin.weight}, lin.bias
        else:
            K, F, W = keep[i - 1], fold[i - 1], lin.weight
            G = {m: W[:, F] @ g[F] for m, g in G.items()} if len(F) else {}
            G[i], c = W[:, K], lin.bias + W[:, F] @ c[F]
        rows = keep[i] if i < len(keep) else slice(None)
        mains.append(_linear(G[i][rows], c[rows]))
        skips.append({str(m): _linear(g[rows]) for m, g in G.items() if m != i})
    return CompactMLP(mains, skips)


def multiply_adds(model: nn.Module) -> int:
    """Multiply-adds of one example's forward: in x out of every Linear, skips included (the
    ReLUs and additions are negligible beside them)."""
    return sum(m.in_features * m.out_features for m in linears(model))


def reinitialized(model: nn.Module) -> nn.Module:
    """A copy of ``model``'s structure with every Linear freshly initialized (torch's default,
    from the global RNG the run seeded): the same compact model, trained from scratch."""
    fresh = copy.deepcopy(model)
    for lin in linears(fresh):
        lin.reset_parameters()
    return fresh


def prune(run, plan, scratch: bool = False) -> tuple[nn.Module, nn.Module]:
    """Train the dense model, prune it with `plan` at the run's keep fraction and record the
    pruned model's val/test right after replacement (the decided result); log its test MSE
    after a fine-tune with the same budget ("finetuned"), and with `scratch` that of the same
    compact structure trained from scratch ("scratch_same_structure"). Returns (dense, pruned)."""
    model = run.fit(run.track.model())
    pruned = compact_mlp(model, *plan(model, run.data.train.x, run.frontier))
    result = run.evaluate(pruned, "val"), run.evaluate(pruned, "test")
    fresh = reinitialized(pruned) if scratch else None
    run.fit(copy.deepcopy(pruned))
    run.log("finetuned", run.test)
    steps = run.budgets["steps"]  # dense training + fine-tune: the same in every arm
    if scratch:
        run.fit(fresh)  # a side measurement: its steps are not the pipeline's
        run.log("scratch_same_structure", run.test)
        run.budget("steps", steps)
    run.log("params_fraction", n_params(pruned) / n_params(model))
    run.log("multiply_adds_ratio", multiply_adds(pruned) / multiply_adds(model))
    run.record(val=result[0], test=result[1])
    return model, pruned


@pytest.mark.arm("baseline")
def test_magnitude_pruning(run):
    prune(run, magnitude_plan)


@pytest.mark.arm("control", name="magnitude_shortcut")
def test_magnitude_with_shortcut(run):
    prune(run, magnitude_shortcut_plan)


@pytest.mark.arm("idea")
def test_task_visible_pruning(run):
    model, _ = prune(run, task_visible_plan, scratch=True)
    masks = one_sided(model, run.data.train.x)
    null = random_crossing(model, run.data.train.x, masks,
                           torch.Generator().manual_seed(run.seed))
    x = run.data.test.x
    with torch.no_grad():
        dense = model(x)
        error = (surrogate_forward(model, x, masks) - dense).abs().max()
        null_error = (surrogate_forward(model, x, null) - dense).abs().max()
    run.log("one_sided_units", sum(int((on | off).sum()) for on, off in masks))
    run.signature("max_replacement_error", observed=error, predicted=0.0, tol=1e-4,
                  null=null_error, prediction="units one-sided on every training input are "
                  "affine or zero on the test inputs")


# -- mechanism: the exact part of the claim, on random float64 MLPs ----------------------------
widths = st.lists(st.integers(1, 12), min_size=3, max_size=5)  # 1..3 hidden layers
seeds = st.integers(0, 2**31)


def random_mlp(ws, seed):
    g = torch.Generator().manual_seed(seed)
    layers = [nn.Linear(a, b, dtype=torch.float64) for a, b in zip(ws[:-1], ws[1:])]
    for p in (p for lin in layers for p in lin.parameters()):
        nn.init.normal_(p, generator=g)
    model = nn.Sequential(*[m for lin in layers for m in (lin, nn.ReLU())][:-1])
    return model, torch.randn(50, ws[0], generator=g, dtype=torch.float64), g


@torch.no_grad()
def force_one_sided(model, x, g, sign):
    """Shift the biases of a random subset of units (never all) so their z is strictly of
    `sign` on x; returns the subset's masks."""
    masks, a = [], x
    for lin in linears(model)[:-1]:
        mask = torch.rand(lin.out_features, generator=g) < 0.5
        mask[torch.randint(len(mask), (1,), generator=g)] = False
        z = lin(a)
        edge = z.min(0).values if sign > 0 else z.max(0).values
        lin.bias[mask] += (sign - edge)[mask]  # z >= 1 (sign 1) or z <= -1 (sign -1) on x
        a = lin(a).relu()
        masks.append(mask)
    return masks


@pytest.mark.mechanism
@pytest.mark.parametrize("sign", [1, -1], ids=["fold_strictly_active", "drop_strictly_inactive"])
@settings(max_examples=60, deadline=None)
@given(ws=widths, seed=seeds)
def test_replacing_strictly_one_sided_units_is_exact(sign, ws, seed):
    model, x, g = random_mlp(ws, seed)
    masks = force_one_sided(model, x, g, sign)
    keep = [(~m).nonzero().flatten() for m in masks]
    fold = [m.nonzero().flatten() if sign > 0 else k[:0] for m, k in zip(masks, keep)]
    with torch.no_grad():
        expected, got = model(x), compact_mlp(model, keep, fold)(x)
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9 * (1 + expected.abs().max()))


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, fraction=st.floats(0.01, 1.0), seed=seeds, plan=st.sampled_from(
    [magnitude_plan, magnitude_shortcut_plan, task_visible_plan]))
def test_compact_shapes_and_parameter_counts(ws, fraction, seed, plan):
    model, x, _ = random_mlp(ws, seed)
    keep, fold = plan(model, x, fraction)
    compact = compact_mlp(model, keep, fold)
    k = [ws[0]] + [n_keep(w, fraction) for w in ws[1:-1]] + [ws[-1]]
    assert [lin.out_features for lin in compact.main] == k[1:]
    # a skip r_m -> z_{i+1} exists iff every layer between them folded at least one unit
    skip = sum(k[m] * k[i + 1] for i in range(len(k) - 1) for m in range(i)
               if all(len(fold[j]) for j in range(m, i)))
    assert n_params(compact) == sum((a + 1) * b for a, b in zip(k[:-1], k[1:])) + skip
    assert all(not set(K.tolist()) & set(F.tolist()) for K, F in zip(keep, fold))


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, fraction=st.floats(0.01, 1.0), seed=seeds)
def test_least_crossing_units_are_replaced_first(ws, fraction, seed):
    model, x, _ = random_mlp(ws, seed)
    keep, _ = task_visible_plan(model, x, fraction)
    for z, K in zip(preactivations(model, x), keep):
        active = (z > 0).double().mean(0)
        crossing = torch.minimum(active, 1 - active)
        replaced = torch.ones(len(crossing), dtype=torch.bool).index_fill(0, K, False)
        assert not replaced.any() or crossing[K].min() >= crossing[replaced].max()


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, seed=seeds, sign=st.sampled_from([1, -1]))
def test_the_signature_is_exact_where_measured_and_its_null_is_not(ws, seed, sign):
    model, x, g = random_mlp(ws, seed)
    force_one_sided(model, x, g, sign)
    masks = one_sided(model, x)
    with torch.no_grad():
        dense = model(x)
        torch.testing.assert_close(surrogate_forward(model, x, masks), dense, rtol=1e-12,
                                   atol=1e-12 * (1 + float(dense.abs().max())))
    null = random_crossing(model, x, masks, g)
    for (on, off), (n_on, n_off) in zip(masks, null):
        assert not ((n_on | n_off) & (on | off)).any()  # the null replaces crossing units only
