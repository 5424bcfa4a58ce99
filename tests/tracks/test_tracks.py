"""The track registry and the built-in tracks' data: deterministic in the seed, disjoint
splits, documented shapes; a user's track registered from a conftest and benched."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from benchkit import tracks
from benchkit.tracks import base, tabular
from benchkit.training.run import Run
from builders import uncached
from idea_modules import CONST_MODEL, idea_module
import idea_modules

BUILTIN = ("tabular", "dynamics")


@pytest.fixture(params=BUILTIN)
def track(request):
    return tracks.get(request.param)





def assert_data_equal(a, b):
    for split_a, split_b in zip(a, b, strict=True):
        assert torch.equal(split_a.x, split_b.x)
        assert torch.equal(split_a.y, split_b.y)


def digest(data) -> str:
    h = hashlib.sha256()
    for split in data:
        for t in (split.x, split.y):
            h.update(str((tuple(t.shape), t.dtype)).encode())
            h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("seeds", [1, 1001, True, 8.0, "8"])
def test_a_track_s_default_seeds_must_be_none_or_an_integer_a_bench_accepts(seeds):
    with pytest.raises(ValueError, match=r"seeds=.* must be None \(benchkit's default\) or an "
                                         r"integer in \[2, 1000\]"):
        dataclasses.replace(tracks.get("tabular"), seeds=seeds)


def test_the_track_s_seed_bounds_are_the_bench_mark_s():
    from benchkit import spec

    assert (base.MIN_SEEDS, base.MAX_SEEDS) == (spec.MIN_SEEDS, spec.idea.MAX_SEEDS)


def test_builtin_tracks_are_registered():
    assert set(BUILTIN) <= set(tracks.names())
    assert tracks.names() == sorted(tracks.names())


def test_data_is_deterministic_in_the_seed(track):
    make = uncached(track)
    first = make(3)
    torch.manual_seed(12345)  # the global RNGs play no part
    np.random.seed(12345)
    random.seed(12345)
    assert_data_equal(first, make(3))
    assert_data_equal(first, track.data(3))
    other = make(4)
    for split_3, split_4 in zip(first, other):
        assert not torch.equal(split_3.x, split_4.x)
        assert not torch.equal(split_3.y, split_4.y)


@pytest.mark.slow
def test_data_is_the_same_in_a_fresh_process():
    script = textwrap.dedent("""
        import hashlib, json
        from benchkit import tracks
        def digest(data):
            h = hashlib.sha256()
            for split in data:
                for t in (split.x, split.y):
                    h.update(str((tuple(t.shape), t.dtype)).encode())
                    h.update(t.contiguous().numpy().tobytes())
            return h.hexdigest()
        print(json.dumps({f"{n}/{s}": digest(tracks.get(n).data(s))
                          for n in %r for s in (0, 1)}))
        """ % (BUILTIN,))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    there = json.loads(out.strip().splitlines()[-1])
    here = {f"{n}/{s}": digest(tracks.get(n).data(s)) for n in BUILTIN for s in (0, 1)}
    assert there == here


def test_splits_are_disjoint(track):
    data = track.data(0)
    rows = {name: {row.numpy().tobytes() for row in split.x.reshape(len(split), -1)}
            for name, split in zip(data._fields, data)}
    assert rows["train"].isdisjoint(rows["val"])
    assert rows["train"].isdisjoint(rows["test"])
    assert rows["val"].isdisjoint(rows["test"])


def test_tabular_shapes_and_dtypes():
    data = tracks.get("tabular").data(0)
    sizes = (tabular.N_TRAIN, tabular.N_VAL, tabular.N_TEST)
    for split, n in zip(data, sizes, strict=True):
        assert split.x.shape == (n, 10)
        assert split.y.shape == (n, 1)
        assert split.x.dtype == split.y.dtype == torch.float32
        assert len(split) == n
        assert torch.isfinite(split.x).all() and torch.isfinite(split.y).all()


def test_dynamics_shapes_dtypes_and_normalisation():
    from benchkit.tracks import dynamics

    data = tracks.get("dynamics").data(0)
    sizes = (dynamics.N_TRAIN, dynamics.N_VAL, dynamics.N_TEST)
    for split, n in zip(data, sizes, strict=True):
        assert split.x.shape == (n, dynamics.WINDOW, 3)  # windows of 3-D states
        assert split.y.shape == (n, 3)                    # one future state
        assert split.x.dtype == split.y.dtype == torch.float32
        assert torch.isfinite(split.x).all() and torch.isfinite(split.y).all()
    (clean, y), *_ = dynamics.windows(0, noise=0.0)
    states = clean.reshape(-1, 3).astype(np.float64)  # normalised on the clean train windows
    np.testing.assert_allclose(states.mean(0), 0.0, atol=1e-5)
    np.testing.assert_allclose(states.std(0), 1.0, atol=1e-5)
    assert np.array_equal(data.train.y.numpy(), y)  # the noise touches the inputs only
    noise = data.train.x.numpy().astype(np.float64) - clean
    assert abs(noise.std() - dynamics.NOISE) < 0.01 * dynamics.NOISE
    assert abs(noise.mean()) < 0.01 * dynamics.NOISE


def test_dynamics_target_is_the_last_state_integrated_horizon_observations_ahead():
    """Checked with scipy's adaptive integrator on the de-normalised states of a few windows."""
    from scipy.integrate import solve_ivp

    from benchkit.tracks import dynamics

    (train, _), _, (x, y) = dynamics.windows(3, noise=0.0)
    flat = train.reshape(-1, 3)  # normalised: mean 0, sd 1, so the raw statistics are lost;
    raw = dynamics.trajectories(np.random.default_rng([0xD1A, 3]), dynamics.N_TRAIN,
                                dynamics.WINDOW).reshape(-1, 3)  # rebuild them
    mean, std = raw.mean(0), raw.std(0)
    np.testing.assert_allclose(flat * std + mean, raw, rtol=1e-5, atol=1e-4)
    t = dynamics.HORIZON * dynamics.STRIDE * dynamics.DT
    for i in range(4):
        sol = solve_ivp(lambda _, s: dynamics._lorenz(s[None])[0], (0, t),
                        x[i, -1] * std + mean, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose((sol.y[:, -1] - mean) / std, y[i], atol=1e-3)


@pytest.mark.slow
def test_dynamics_data_is_deterministic_per_seed():
    from benchkit.tracks import dynamics

    first, again, other = dynamics.windows(5), dynamics.windows(5), dynamics.windows(6)
    for a, b, c in zip(first, again, other, strict=True):
        assert all(np.array_equal(u, v) for u, v in zip(a, b))
        assert not np.array_equal(a[0], c[0])


def test_default_model_and_metric_fit_the_data(track):
    data = track.data(0)
    torch.manual_seed(0)
    model = track.model()
    pred = model(data.val.x)
    assert pred.shape == data.val.y.shape
    value = track.metric(pred, data.val.y)
    assert value.shape == () and torch.isfinite(value)
    assert track.protocol()["metric_direction"] == "lower is better"
    assert track.protocol(epochs=1)["epochs"] == 1


def test_run_data_is_fixed_by_the_seed_even_after_an_in_place_edit():
    """An arm that edits its data in place (``x -= x.mean(0)``) must not change the data
    another run of the same seed sees later in the same process: with -n 0 every run shares
    the process, with -n 2 only some do, so the numbers would depend on the scheduling."""
    tabular = tracks.get("tabular")
    seed = 987  # used by no other test
    expected = uncached(tabular)(seed).train.x
    first = Run(arm="idea", track=tabular, cfg={"lr": 1e-2}, seed=seed)
    first.data.train.x.sub_(first.data.train.x.mean(0))
    second = Run(arm="baseline", track=tabular, cfg={"lr": 1e-2}, seed=seed)
    assert torch.equal(second.data.train.x, expected), (
        "an in-place edit through one run's data changed a later run's data of the same seed")


def test_default_grids_bracket_the_measured_optima():
    """Every arm swept by benchmarks/tracks/grids.py (results/grids.json, or a track's own
    results/tracks/<track>_grid.json) has its optimum strictly inside the track's default grid,
    with a grid value on each side: a baseline tuned at the edge is under-tuned."""
    from pathlib import Path

    results = Path(__file__).parents[2] / "benchmarks" / "results"
    measured = json.loads((results / "grids.json").read_text())["tracks"]
    for path in sorted((results / "tracks").glob("*_grid.json")):  # a track's own sweep wins
        measured.update(json.loads(path.read_text())["tracks"])
    for name, sweep in measured.items():
        if sweep["epochs"] != tracks.get(name).epochs:
            continue  # measured at an earlier protocol: says nothing of today's grid
        lrs = sorted(cfg["lr"] for cfg in tracks.get(name).grid)
        assert 3 <= len(lrs) <= 5
        for arm, result in sweep["arms"].items():
            assert lrs[0] < result["optimum_lr"] < lrs[-1], (name, arm, result["optimum_lr"], lrs)


STRONG_FLOORS = {"mnist1d": {"boosted trees", "RBF SVM"},
                 "tabular": {"kernel ridge", "boosted trees"}}


def aa_report(name: str, folder: str = "aa") -> dict:
    from pathlib import Path

    return json.loads((Path(__file__).parents[2] / "benchmarks" / "results" / "tracks" / folder
                       / "aa" / name / "bench_report.json").read_text())


# tracks whose A/A bench's budget check came out undetermined (neither trained out nor still
# improving), with the measurement: the bar's "trained out" is not shown for them
BUDGET_UNDETERMINED = {
    "tabular": "issue 54's mixture teacher and 10-128-128-1 model: the A/A bench's budget check "
               "is undetermined (the baseline's lr 2e-3 at 180 epochs 1.2% worse on validation, "
               "mean of 5 seeds, one-sided 95% bounds of the gain -3.9% to 1.4% against the 1% "
               "threshold); not shown trained out"}


@pytest.mark.parametrize("name, folder", [
    ("tabular", "aa"),
    ("mnist1d", "aa"),
    *(pytest.param("mnist1d", folder, marks=pytest.mark.xfail(
        strict=True, reason="the committed report is of the earlier protocol (1,000 test "
        "signals, lr grid 3e-3 / 1e-2 / 3e-2, 16 seeds; since issue 53: 5,000 signals, lr 1e-2 "
        "alone, 24 seeds); it stays as the evidence that 1e-2 is tuned (the one-config test)"))
      for folder in ("aa_offset_2000003", "aa_offset_3000017", "aa_baseline_4000037"))])
def test_each_track_s_a_a_bench_passes_the_bar_at_the_track_s_protocol(name, folder):
    """The committed A/A benches of every shipped track (benchmarks/results/tracks/aa, and
    aa_offset_N for a further one on init offset N), at the protocol, grid and default seeds
    the track declares today: inconclusive, both arms selecting strictly inside the grid (or its
    one config, backed by a wider grid: the test above), the
    baseline trained out (its budget check measured where the track's schedule calls for one), the
    strongest standard methods among its floors, and the baseline better than the strongest
    floor (limits left out) by at least the bench's MDE (issue 40). A retired track is no
    yardstick and has no bar here (dynamics: tests/tracks/test_retired_track.py)."""
    from benchkit.spec import DEFAULT_SEEDS

    report = aa_report(name, folder)
    track = tracks.get(name)
    assert {k: report["protocol"][k] for k in track.protocol()} == track.protocol()
    assert report["n_seeds"] == (track.seeds or DEFAULT_SEEDS)  # the default protocol's seeds
    lrs = sorted(cfg["lr"] for cfg in track.grid)
    assert sorted(c["lr"] for c in report["protocol"]["grid"]) == lrs
    for selected in (report["baseline"]["best_cfg"], report["idea_config"]):
        # a one-config grid is checked against its earlier wider grid (the test below)
        assert lrs[0] < selected["lr"] < lrs[-1] or lrs == [selected["lr"]], selected
    assert report["practical_verdict"] == "inconclusive"
    baseline = report["convergence"]["arms"]["baseline"]
    if track.schedule != "constant":
        assert baseline["budget_check"]["gain"] is not None, baseline["budget_check"]
    assert STRONG_FLOORS[name] <= set(report["floors"]), report["floors"]
    strongest = base.strongest_floor(report["floors"], track.direction)
    assert strongest is not None and strongest[0] in STRONG_FLOORS[name]
    mean = report["baseline"]["full"]["mean"]
    margin = strongest[1] - mean if track.direction == "lower" else mean - strongest[1]
    assert margin >= report["comparison"]["mde"], (name, strongest, mean,
                                                  report["comparison"]["mde"])
    if baseline["still_improving"] is None and name in BUDGET_UNDETERMINED:
        pytest.xfail(BUDGET_UNDETERMINED[name])  # every other part of the bar checked above
    assert baseline["still_improving"] is False


def test_a_one_config_grid_is_the_config_every_arm_chose_strictly_inside_a_wider_grid():
    """A track whose default grid is one config (mnist1d: the paper's lr, so that a seed is two
    runs, issue 53) has the evidence that this config is tuned, not at an edge: in each of its
    committed A/A benches on a grid of three or more lrs, both arms selected it, strictly
    inside that grid."""
    from pathlib import Path

    results = Path(__file__).parents[2] / "benchmarks" / "results" / "tracks"
    for name in tracks.names():
        track = tracks.get(name)
        if len(track.grid) != 1 or track.retired:
            continue
        wider = []
        for path in sorted(results.glob(f"aa*/aa/{name}/bench_report.json")):
            report = json.loads(path.read_text())
            lrs = sorted(c["lr"] for c in report["protocol"]["grid"])
            if len(lrs) >= 3:
                wider.append(path)
                for selected in (report["baseline"]["best_cfg"], report["idea_config"]):
                    assert selected == track.grid[0] and lrs[0] < selected["lr"] < lrs[-1], (
                        path, selected, lrs)
        assert len(wider) >= 2, (name, "no committed bench on a wider grid backs its one config")


@pytest.mark.parametrize("name", [
    "tabular",
    "mnist1d"])
def test_the_default_protocol_finds_a_2_percent_effect_with_80_percent_power(name):
    """Issue 53's target: the A/A bench at the track's default protocol (its default seeds)
    plans an 80%-power MDE of at most 2% of the baseline mean (1 point for an accuracy)."""
    from benchkit.spec import DEFAULT_SEEDS

    report = aa_report(name)
    track = tracks.get(name)
    assert {k: report["protocol"][k] for k in track.protocol()} == track.protocol()
    assert report["n_seeds"] == (track.seeds or DEFAULT_SEEDS)
    mean = report["baseline"]["full"]["mean"]
    target = 0.01 if track.metric_name == "accuracy" else 0.02 * abs(mean)
    assert report["comparison"]["mde_power80"] <= target, (report["comparison"], target)


def test_a_further_a_a_takes_its_init_offset_from_the_environment_and_refuses_a_bad_one():
    """benchmarks/tracks/test_aa.py's BENCHKIT_AA_INIT_OFFSET (and BENCHKIT_AA_BASELINE_OFFSET):
    a positive integer, default 1,000,003 (the baseline's: 0, its own stream); 0 or a
    non-number is refused by name."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "aa_bench", Path(__file__).parents[2] / "benchmarks" / "tracks" / "test_aa.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.init_offset(None) == 1_000_003
    assert module.init_offset("2000003") == 2_000_003
    assert module.init_offset(None, default=0) == 0 == module.BASELINE_INIT_OFFSET
    for bad in ("x", "0", "-5", "1.5"):
        with pytest.raises(ValueError, match=r"BENCHKIT_AA_BASELINE_OFFSET.*a positive integer"):
            module.init_offset(bad)


# ======================================================================== the registry
def test_unknown_track_lists_the_known_ones():
    with pytest.raises(KeyError, match="unknown track 'nope'; known tracks: .*tabular"):
        tracks.get("nope")
    with pytest.raises(KeyError, match="track 'digits' was retired: .*use 'mnist1d'"):
        tracks.get("digits")


def test_registering_another_track_under_a_taken_name_raises(monkeypatch):
    monkeypatch.setattr(tracks, "_REGISTRY", dict(tracks._REGISTRY))  # restored afterwards
    tabular = tracks.get("tabular")
    impostor = dataclasses.replace(tabular, epochs=1)
    with pytest.raises(ValueError, match="'tabular' is already registered.*replace=True"):
        tracks.register(impostor)
    assert tracks.get("tabular") is tabular
    assert tracks.register(tabular) is tabular  # the very same track again is harmless
    assert tracks.register(impostor, replace=True) is impostor
    assert tracks.get("tabular") is impostor


def test_register_refuses_what_is_not_a_track():
    with pytest.raises(TypeError, match="Track"):
        tracks.register({"name": "tabular"})


def test_track_direction_is_validated():
    with pytest.raises(ValueError, match="direction must be 'lower' or 'higher'"):
        dataclasses.replace(tracks.get("tabular"), name="x", direction="sideways")


TINY_CONFTEST = '''
import torch
from torch import nn

from benchkit.tracks import Data, Split, Track, register


def make_data(seed):
    g = torch.Generator().manual_seed(1000 + seed)
    x = torch.randn(160, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1 * torch.randn(160, 1, generator=g)
    return Data(Split(x[:96], y[:96]), Split(x[96:128], y[96:128]), Split(x[128:], y[128:]))


def neg_mse(pred, y):
    return -torch.mean((pred - y) ** 2)


def floors(seed):  # predicting 0 everywhere
    test = make_data(seed).test
    return {"zero": float(neg_mse(torch.zeros_like(test.y), test.y))}


register(Track(name="tiny", make_data=make_data, make_model=lambda: nn.Linear(3, 1),
               model_name="linear", grid=({"lr": 0.05},), epochs=10, batch_size=16,
               metric_name="neg_mse", direction="higher", metric=neg_mse, make_floors=floors))
'''
TINY_IDEA = idea_module("tiny_const", CONST_MODEL, idea_modules.arm("baseline"),
                        idea_modules.arm("idea", "run.fit(Const())"),
                        imports="import pytest\nimport torch\nfrom torch import nn", track="tiny",
                        grid=None, seeds=6,
                        budget_waiver={"params": "a constant predictor, on purpose"})


@pytest.mark.parametrize("mode", [pytest.param([], id="n0"), pytest.param(["-n", "2"], id="n2")])
def test_a_user_track_registered_in_a_conftest_can_be_benched(pytester, read_report, mode):
    pytester.makeconftest(TINY_CONFTEST)
    pytester.makepyfile(test_tiny=TINY_IDEA)
    result = pytester.runpytest_subprocess(*mode)
    result.assert_outcomes(passed=12)
    assert result.ret == 0
    report = read_report(pytester.path, "tiny_const", track="tiny")
    assert report["track"] == "tiny"
    assert report["model"] == "linear"
    assert report["metric_direction"] == "higher is better"
    assert report["baseline"]["best_cfg"] == {"lr": 0.05}
    assert report["protocol"]["epochs"] == 10
    # higher is better: the constant's metric is lower, so it harms and never wins
    assert report["comparison"]["delta_mean"] < 0
    assert report["comparison"]["idea_wins"] == 0
    assert report["practical_verdict"] == "harms"
    # the user's floors, averaged over the bench's 6 seeds, and how far the baseline beats them
    assert set(report["floors"]) == {"zero"} and -10 < report["floors"]["zero"] < -1
    summary = (pytester.path / "reports" / "tiny_const" / "tiny" / "summary.md").read_text()
    assert "better than the best floor, zero" in summary
