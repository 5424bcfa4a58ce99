"""Task-visible pruning of a ReLU MLP: replace first the units the task never switches.

Claim. On the task's inputs many hidden ReLU units of a trained MLP are *one-sided*: their
pre-activation z stays on one side of zero, so the unit is affine (relu(z) = z) or zero and a
ReLU-free surrogate replaces it exactly. So ranking units by how often they cross zero and
replacing the least-crossing ones first, each by its majority side (fold relu(z) -> z or drop
-> 0), should lose less than ranking them by weight magnitude.

Judged where the claim lives: a few units replaced per hidden layer (2, 4 or 8 of 64, a
frontier over `replaced`; every arm's verdict pairs the mean over the points), not at keep <=
1/2, where every arm was as bad as predicting the train mean. The model is the ReLU MLP
``mlp_tiny`` on tabular (whatever the track's default: the claim is about ReLU units). Every
arm prunes the identical dense model of its seed (one lr: an lr grid would tune the dense
training to the pruning) and is decided on the pruned model's test MSE right after replacement
(no fit, so no budget check applies). Arms, ranking x surrogate:

* baseline: magnitude ranking (||W_in[j]|| ||W_out[:, j]||), dropped units;
* control magnitude_shortcut: magnitude ranking, the idea's majority-side surrogate (the same
  structure with affine skips: it separates the ranking, which the claim is about, from the
  shortcut the target's linear term rewards);
* control magnitude_lstsq: magnitude ranking, each replaced unit by its least-squares fit
  a z + b of relu(z) on train: the strongest cheap rule, which the idea must beat too;
* idea: most-crossing units kept (ties: magnitude), the rest by their majority side.

Fine-tuned against trained from scratch is a separate claim with its own verdict, in
test_pruning_finetune_vs_scratch.py (a module has one idea and one decided metric).

Signature: on the trained dense model, replacing exactly the units one-sided on every training
input moves the *test* outputs by <= 1e-4 (exact on train by construction, it can fail where a
unit crosses on a held-out input). Null: as many units per layer drawn among the crossing ones.

Verdict at the default protocol (reports/task_visible_pruning/tabular/): harms / failed. Every
arm is far better than predicting the train mean at these points; the idea ties magnitude
pruning and is worse than both controls on every seed; the signature fails on one seed, and
mechanism_ok is no. Few units replaced save little compute: the controls' affine skips cost
more multiply-adds than their replaced units save (multiply_adds_ratio in the report).
"""
from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from benchkit.tracks.models import mlp_tiny
from mlp_surgery import (Plan, by_crossing, by_magnitude, compact_mlp, crossing, drop,
                         least_squares, majority_side, make_plan, multiply_adds, n_params,
                         preactivations, surrogate_forward)

REPLACED = [2, 4, 8]  # ReLU units replaced per hidden layer (of 64): the frontier
LR = 5e-3  # the dense model's lr: mlp_tiny's A/A selection on tabular (120 cosine epochs)

pytestmark = pytest.mark.bench(
    name="task_visible_pruning", track="tabular", frontier={"replaced": REPLACED},
    grid={"lr": [LR]},
    claim="right after replacing 2, 4 or 8 ReLU units per layer, replacing the least-crossing "
          "units first by their majority side loses less than magnitude ranking, with dropped, "
          "majority-side or least-squares surrogates")


def prune(run, order, surrogate) -> nn.Module:
    """Train the dense model, replace ``run.frontier`` units per hidden layer and record the
    compact model's val/test right after replacement. Returns the dense model."""
    model = run.fit(mlp_tiny())
    pruned = compact_mlp(model, make_plan(model, run.data.train.x, run.frontier, order,
                                          surrogate))
    run.budget("params", n_params(pruned))
    run.log("multiply_adds_ratio", multiply_adds(pruned) / multiply_adds(model))
    run.record(val=run.evaluate(pruned, "val"), test=run.evaluate(pruned, "test"))
    return model


@pytest.mark.arm("baseline")
def test_magnitude_pruning(run):
    prune(run, by_magnitude, drop)


@pytest.mark.arm("control", name="magnitude_shortcut")
def test_magnitude_with_shortcut(run):
    prune(run, by_magnitude, majority_side)


@pytest.mark.arm("control", name="magnitude_lstsq")
def test_magnitude_with_least_squares(run):
    prune(run, by_magnitude, least_squares)


@torch.no_grad()
def one_sided_plan(model, x, g: torch.Generator | None = None) -> Plan:
    """Replace by their majority side the units one-sided on every row of ``x``; with ``g``
    (the null) as many per layer, at least one, drawn among the units that cross zero."""
    keep, slope, offset = [], [], []
    for z in preactivations(model, x):
        sided = (z.min(0).values > 0) | (z.max(0).values < 0)
        if g is not None:
            crossers = (~sided).nonzero().flatten()
            n = max(1, int(sided.sum()))
            pick = crossers[torch.randperm(len(crossers), generator=g)[:n]]
            sided = torch.zeros_like(sided).index_fill(0, pick, True)
        a, b = majority_side(z)
        keep.append((~sided).nonzero().flatten())
        slope.append(a * sided)
        offset.append(b)
    return Plan(keep, slope, offset)


@pytest.mark.arm("idea")
def test_task_visible_pruning(run):
    model = prune(run, by_crossing, majority_side)
    x, test = run.data.train.x, run.data.test.x
    with torch.no_grad():
        dense = model(test)
    sided, null = one_sided_plan(model, x), one_sided_plan(
        model, x, torch.Generator().manual_seed(run.seed))
    run.log("one_sided_units", sum(len(z) - len(k) for z, k in zip(sided.slope, sided.keep)))
    run.signature("max_replacement_error",
                  observed=(surrogate_forward(model, test, sided) - dense).abs().max(),
                  predicted=0.0, tol=1e-4,
                  null=(surrogate_forward(model, test, null) - dense).abs().max(),
                  prediction="units one-sided on every training input are affine or zero on "
                             "the test inputs")


# -- mechanism: the exact parts of the claim, on random float64 MLPs ----------------------------
widths = st.lists(st.integers(1, 12), min_size=3, max_size=5)  # 1..3 hidden layers
seeds = st.integers(0, 2**31)


def random_mlp(ws, seed, one_sided=False):
    """A float64 Linear/ReLU stack and 50 inputs; with ``one_sided``, about half the units of
    each layer (never all) shifted to be strictly active or strictly inactive on them."""
    g = torch.Generator().manual_seed(seed)
    layers = [nn.Linear(a, b, dtype=torch.float64) for a, b in itertools.pairwise(ws)]
    for p in (p for lin in layers for p in lin.parameters()):
        nn.init.normal_(p, generator=g)
    x = torch.randn(50, ws[0], generator=g, dtype=torch.float64)
    with torch.no_grad():
        a = x
        for lin in layers[:-1] if one_sided else []:
            shift = torch.rand(lin.out_features, generator=g) < 0.5
            shift[torch.randint(len(shift), (1,), generator=g)] = False
            z = lin(a)
            sign = torch.randint(2, (lin.out_features,), generator=g) * 2.0 - 1
            edge = torch.where(sign > 0, z.min(0).values, z.max(0).values)
            lin.bias[shift] += (sign - edge)[shift]  # z >= 1 or z <= -1 on every input
            a = lin(a).relu()
    return nn.Sequential(*[m for lin in layers for m in (lin, nn.ReLU())][:-1]), x, g


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, seed=seeds, replaced=st.integers(0, 12),
       surrogate=st.sampled_from([drop, majority_side, least_squares]))
def test_the_compact_model_is_the_model_with_its_units_replaced(ws, seed, replaced, surrogate):
    model, x, _ = random_mlp(ws, seed)
    plan = make_plan(model, x, replaced, by_crossing, surrogate)
    compact = compact_mlp(model, plan)
    assert [m.out_features for m in compact.main][:-1] == [max(1, w - replaced)
                                                           for w in ws[1:-1]]
    expected = surrogate_forward(model, x, plan)
    with torch.no_grad():
        torch.testing.assert_close(compact(x), expected, rtol=1e-9,
                                   atol=1e-9 * (1 + float(expected.abs().max())))


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, seed=seeds)
def test_one_sided_units_are_replaced_exactly_and_the_null_is_not(ws, seed):
    model, x, g = random_mlp(ws, seed, one_sided=True)
    plan, null = one_sided_plan(model, x), one_sided_plan(model, x, g)
    with torch.no_grad():
        dense = model(x)
    torch.testing.assert_close(surrogate_forward(model, x, plan), dense, rtol=1e-12,
                               atol=1e-12 * (1 + float(dense.abs().max())))
    for a, kept, drawn in zip(plan.slope, plan.keep, null.keep):  # the null draws crossers
        assert set(range(len(a))) - set(kept.tolist()) <= set(drawn.tolist())


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, seed=seeds, replaced=st.integers(0, 12))
def test_least_crossing_units_are_replaced_first(ws, seed, replaced):
    model, x, _ = random_mlp(ws, seed)
    plan = make_plan(model, x, replaced, by_crossing, majority_side)
    for z, kept in zip(preactivations(model, x), plan.keep):
        out = torch.ones(z.shape[1], dtype=torch.bool).index_fill(0, kept, False)
        assert not out.any() or crossing(z)[kept].min() >= crossing(z)[out].max()


@pytest.mark.mechanism
@settings(max_examples=60, deadline=None)
@given(ws=widths, seed=seeds, one_sided=st.booleans())
def test_least_squares_fits_each_unit_on_train_at_least_as_well_as_its_majority_side(
        ws, seed, one_sided):
    model, x, _ = random_mlp(ws, seed, one_sided)
    for z in preactivations(model, x):
        (a, b), (f, _) = least_squares(z), majority_side(z)
        fitted, folded = (a * z + b - z.relu()).pow(2).mean(0), (f * z - z.relu()).pow(2).mean(0)
        assert (fitted <= folded + 1e-9 * (1 + z.pow(2).mean(0))).all()
