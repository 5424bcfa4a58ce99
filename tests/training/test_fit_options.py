"""``run.fit``'s training choices (optimizer, loss, schedule, momentum) and ``run.batches``.

Each choice is checked against a loop written here with torch alone (its own permutation, its
own torch.optim optimizer): the bits must match, so run.fit does exactly what its arguments say,
the default path is unchanged (torch.optim.Adam(fused=True) bits, as tests/training/test_optim.py
pins for the fused kernel), and ``run.batches`` is the order run.fit trains in.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import pytest
import torch

from benchkit import tracks
from benchkit.tracks import tabular
from benchkit.training.run import Run, seed_everything
from benchkit.training.loop import ORDER_SALT

LR = 3e-3
STEPS = math.ceil(tabular.N_TRAIN / tabular.TRACK.batch_size)  # one epoch of tabular


def constant(track: str):
    """The track with a constant learning rate: the loops written here take no schedule."""
    return dataclasses.replace(tracks.get(track), schedule="constant")


def make_run(track: str = "tabular", seed: int = 1, epochs: int = 2, **cfg) -> Run:
    return Run(arm="idea", track=constant(track), cfg={"lr": LR, **cfg}, seed=seed,
               epochs=epochs)


def fresh_model(run: Run) -> torch.nn.Module:
    seed_everything(run.seed)
    return run.track.model()


def torch_loop(run: Run, make_opt, loss=None, make_sched=None) -> tuple[float, float]:
    """What run.fit must equal: the track's data, a permutation per epoch from a generator
    seeded ORDER_SALT + seed, minibatches of the track's size, ``make_opt(params)``."""
    model = fresh_model(run)
    loss = loss or run.track.loss
    x, y = run.data.train
    opt = make_opt(list(model.parameters()))
    sched = make_sched(opt) if make_sched else None
    gen = torch.Generator().manual_seed(ORDER_SALT + run.seed)
    for _ in range(run.epochs):
        order = torch.randperm(len(x), generator=gen)
        for start in range(0, len(x), run.track.batch_size):
            idx = order[start:start + run.track.batch_size]
            value = loss(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            value.backward()
            opt.step()
            if sched:
                sched.step()
    return run.evaluate(model, "val"), run.evaluate(model, "test")


def fitted(run: Run, **kw) -> tuple[float, float]:
    run.fit(fresh_model(run), **kw)
    return run.val, run.test


def bits(pair) -> tuple[str, str]:
    return tuple(float.hex(v) for v in pair)


SCHEDULERS = {"constant": None,  # a track's default schedule as torch spells it (1 epoch)
              "cosine": lambda steps: lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(
                  opt, T_max=steps)}


@pytest.mark.slow
@pytest.mark.parametrize("track", ["tabular", "dynamics"])
def test_the_default_fit_is_fused_torch_adam_unchanged(track):
    run = make_run(track, epochs=1)
    sched = SCHEDULERS[run.track.schedule]
    steps = -(-len(run.data.train) // run.track.batch_size)
    expected = torch_loop(run, lambda p: torch.optim.Adam(p, lr=LR, fused=True), None,
                          sched and sched(steps))
    assert bits(fitted(run)) == bits(expected)
    assert bits(fitted(make_run(track, epochs=1), optimizer="adam")) == bits(expected)


@pytest.mark.slow
def test_adamw_decouples_weight_decay():
    run = make_run()
    got = fitted(run, optimizer="adamw", weight_decay=1e-2)
    assert bits(got) == bits(torch_loop(run, lambda p: torch.optim.AdamW(
        p, lr=LR, weight_decay=1e-2, fused=True)))
    assert bits(got) != bits(fitted(make_run(), optimizer="adam", weight_decay=1e-2))


@pytest.mark.slow
def test_an_optimizer_factory_is_called_with_the_parameters():
    seen = []

    def factory(params):
        seen.append(params)
        return torch.optim.SGD(params, lr=0.05)

    run = make_run()
    got = fitted(run, optimizer=factory)
    assert len(seen) == 1 and all(isinstance(p, torch.nn.Parameter) for p in seen[0])
    assert bits(got) == bits(torch_loop(run, lambda p: torch.optim.SGD(p, lr=0.05)))
    assert bits(got) == bits(fitted(make_run(), optimizer="sgd", lr=0.05))


@pytest.mark.slow
def test_sgd_takes_its_momentum_from_the_grid_config():
    run = make_run(momentum=0.9)
    got = fitted(run, optimizer="sgd")
    assert bits(got) == bits(torch_loop(run, lambda p: torch.optim.SGD(p, lr=LR, momentum=0.9)))
    assert bits(got) != bits(fitted(make_run(), optimizer="sgd"))
    # a grid's momentum is for SGD: Adam ignores it, as run.fit ignored unknown cfg keys before
    assert bits(fitted(make_run(momentum=0.9))) == bits(fitted(make_run()))


@pytest.mark.slow
def test_a_custom_loss_is_what_trains():
    def l1(pred, target):
        return (pred - target).abs().mean()

    run = make_run()
    got = fitted(run, loss=l1)
    assert bits(got) == bits(torch_loop(run, lambda p: torch.optim.Adam(p, lr=LR, fused=True),
                                        loss=l1))
    assert bits(got) != bits(fitted(make_run()))


@pytest.mark.slow
@pytest.mark.parametrize("schedule, make_sched", [
    ("cosine", lambda opt: torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 0.5 * (1.0 + math.cos(math.pi * k / (2 * STEPS))))),
    ("linear", lambda opt: torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 1.0 - k / (2 * STEPS))),
])
def test_named_schedules_anneal_over_every_step(schedule, make_sched):
    run = make_run()  # 2 epochs of STEPS minibatches
    expected = torch_loop(run, lambda p: torch.optim.Adam(p, lr=LR, fused=True), None,
                          make_sched)
    assert bits(fitted(run, schedule=schedule)) == bits(expected)


@pytest.mark.slow
def test_a_track_s_schedule_is_the_default_and_an_arm_s_choice_wins():
    cosine = dataclasses.replace(constant("tabular"), schedule="cosine")
    assert cosine.protocol()["schedule"] == "cosine"
    run = Run(arm="idea", track=cosine, cfg={"lr": LR}, seed=1, epochs=2)
    assert bits(fitted(run)) == bits(fitted(make_run(), schedule="cosine"))
    assert bits(fitted(run, schedule="constant")) == bits(fitted(make_run()))
    with pytest.raises(ValueError, match="unknown schedule 'step'.*cosine"):
        dataclasses.replace(cosine, schedule="step")


@pytest.mark.slow
@pytest.mark.parametrize("schedule, torch_scheduler", [
    ("cosine", lambda opt, t: torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=t)),
    ("linear", lambda opt, t: torch.optim.lr_scheduler.LinearLR(opt, 1.0, 0.0, total_iters=t))])
def test_named_schedules_are_torch_s_schedulers_in_closed_form(schedule, torch_scheduler):
    """torch's schedulers update the rate recursively; benchkit's closed form agrees with them
    to 1e-12 at every step of a long run, and the fused path applies it without a scheduler."""
    from benchkit.training import optim

    total, lr = 2000, 3e-3
    params = [torch.zeros(3, requires_grad=True)]
    reference = torch.optim.SGD(params, lr=lr)
    scheduler = torch_scheduler(reference, total)
    fused = optim.OPTIMIZERS["adam"](params, lr)
    assert optim.make_schedule(schedule, fused, total) is None  # FusedAdam schedules itself
    for _ in range(total):
        assert fused.lr_now() == pytest.approx(reference.param_groups[0]["lr"], rel=1e-12,
                                               abs=1e-18)
        params[0].grad = torch.ones(3)
        fused.step()
        reference.step()
        scheduler.step()


@pytest.mark.slow
def test_a_schedule_factory_gets_the_optimizer():
    def step_lr(opt):
        assert isinstance(opt, torch.optim.Optimizer)
        return torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)

    run = make_run()
    expected = torch_loop(run, lambda p: torch.optim.Adam(p, lr=LR, fused=True), None,
                          lambda opt: torch.optim.lr_scheduler.StepLR(opt, 5, gamma=0.5))
    assert bits(fitted(run, schedule=step_lr)) == bits(expected)


@pytest.mark.parametrize("kw, error, words", [
    ({"optimizer": "rmsprop"}, ValueError, ["'rmsprop'", "adam", "adamw", "sgd", "factory"]),
    ({"schedule": "step"}, ValueError, ["'step'", "constant", "cosine", "linear", "factory"]),
    ({"loss": "mse"}, TypeError, ["loss must be a callable"]),
    ({"loss": lambda p, t: (p - t) ** 2}, TypeError,
     ["scalar tensor", f"({tabular.TRACK.batch_size}, 1)"]),
    ({"optimizer": lambda p: object()}, TypeError, ["factory returned object"]),
    ({"optimizer": lambda p: torch.optim.SGD(p, lr=0.1), "lr": 0.1}, TypeError,
     ["lr given with an optimizer factory"]),
    ({"momentum": 0.9}, TypeError, ["momentum= applies to optimizer='sgd' only", "'adam'"]),
    ({"schedule": lambda opt: 3}, TypeError, ["schedule factory returned int"]),
    ({"optim": "sgd"}, TypeError, ["unknown override(s) ['optim']", "optimizer="]),
    ({"epochs": 1.5}, ValueError, ["epochs must be an integer >= 0", "1.5"]),
    ({"batch_size": 0}, ValueError, ["batch_size must be an integer >= 1"]),
])
def test_a_wrong_choice_says_what_is_valid(kw, error, words):
    run = make_run()
    with pytest.raises(error) as info:
        run.fit(fresh_model(run), **kw)
    assert all(word in str(info.value) for word in words), str(info.value)
    assert run.val is None  # nothing recorded


def test_batches_are_the_order_fit_trains_in():
    run = make_run(epochs=3)
    batches = list(run.batches())
    n, b = tabular.N_TRAIN, run.track.batch_size
    assert len(batches) == 3 * STEPS
    gen = torch.Generator().manual_seed(ORDER_SALT + run.seed)
    x, y = run.data.train
    expected = []
    for _ in range(3):
        order = torch.randperm(n, generator=gen)
        expected += [(x[order[s:s + b]], y[order[s:s + b]]) for s in range(0, n, b)]
    assert all(torch.equal(bx, ex) and torch.equal(by, ey)
               for (bx, by), (ex, ey) in zip(batches, expected))
    assert len(list(run.batches(epochs=1))) == STEPS
    assert [len(b.x) for b in run.batches(epochs=1, batch_size=100)] == [100] * (n // 100)
    with pytest.raises(ValueError, match="run.batches: epochs must be an integer"):
        run.batches(epochs=-1)


@pytest.mark.slow
def test_an_own_loop_over_batches_equals_fit():
    run = make_run(epochs=1)
    model = fresh_model(run)
    opt = torch.optim.Adam(model.parameters(), lr=LR, fused=True)
    for x, y in run.batches():
        loss = run.track.loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    own = run.evaluate(model, "val"), run.evaluate(model, "test")
    assert bits(own) == bits(fitted(make_run(epochs=1)))


def aa_module(track: str) -> str:
    """benchmarks/device/device_check.py's A/A idea (baseline run.fit; idea its own loop over
    run.batches with torch.optim.Adam(fused=True)): one text for the test and the GPU check."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "device" / "device_check.py"
    spec = importlib.util.spec_from_file_location("benchkit_device_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.AA_MODULE.format(track=track)


@pytest.mark.timeout(300)
def test_an_aa_bench_with_an_own_loop_over_batches_has_zero_diffs(pytester, read_report):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_aa=aa_module("tabular"))
    result = pytester.runpytest("--bench-seeds", "2", "--bench-epochs", "1",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=2 * len(tracks.get("tabular").grid) * 2)  # arms x grid x seeds
    report = read_report(pytester.path, "aa_tabular")
    assert report["idea"]["per_seed"] == report["baseline"]["full"]["per_seed"]
    by_arm = {arm: {(r["cfg"]["lr"], r["seed"]): (r["val"], r["test"])
                    for r in report["runs"] if r["arm"] == arm} for arm in ("baseline", "idea")}
    assert by_arm["idea"] == by_arm["baseline"]  # every config, not only the selected one
