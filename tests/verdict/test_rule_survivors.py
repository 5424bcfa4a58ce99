"""Tests that pin the rules issue 41's mutation audit found unpinned (each named by the mutant
it kills): the verdict order over comparators, the selection-aware p of the declared statistic,
groups of mixed sizes, a frontier selected per point, the collection-time rules reading
validation, NEXT lines past seed 9 and after ``--bench-shard=K/N``, the margin warning's
threshold, and ``--bench-threads`` in the run store's reuse key."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from benchkit.spec.run_record import CurvePoint, RunResult
from benchkit.verdict import grids
from benchkit.report.nextstep import missing_seeds, next_steps, without
from benchkit.stats import paired, selection
from benchkit.stats.noninferior import NonInferiorityTest
from benchkit.store.backends import DirectoryStorage
from benchkit.store.runs import RunStore
from benchkit.verdict import comparison, convergence, decision, margins, sweeps
from benchkit.verdict.records import Frontier
from builders import ALPHA, TRACK, built_frontier, make_run, make_spec, as_report
from idea_modules import TORCH, idea_module
from sessions import run_session


def random_sweeps(n=8, k=3, seed=0, groups=None):
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 0.1, (n, 1)) + np.linspace(0, 0.02, k)
    return selection.sweeps(*[1 + level + rng.normal(0, s, (n, k)) for s in (0.05, 0.01) * 2],
                            groups=groups)


def comp_of(sw, test="mean"):
    d = selection.binding(sw, "lower", test).d
    compared = comparison.of_figures(paired.compare(np.zeros(len(d)), d, direction="lower"))
    return dataclasses.replace(compared, p_value=0.5, test=test)


FIXED = ([1.0] * 8, [1.1] * 8)


# ------------------------------------------------- VERDICT_ORDER: inconclusive below non-inferior
@pytest.mark.parametrize("against", [[("non-inferior", "baseline"), ("inconclusive", "control:c")],
                                     [("inconclusive", "baseline"), ("non-inferior", "control:c")]])
def test_inconclusive_against_one_comparator_outranks_non_inferior_against_another(against):
    got = decision.Decision.from_verdicts(against, None, None)
    assert got.practical == "inconclusive"
    assert got.decided_by == next(arm for v, arm in against if v == "inconclusive")


# ------------------------------------- the declared statistic decides with more than one config
@pytest.mark.parametrize("test", ["sign", "wilcoxon"])
def test_a_swept_comparison_decides_by_its_declared_statistic(test):
    sw = random_sweeps(seed=4)
    comp = sweeps.decide_by_selection(comp_of(sw, test), sw, FIXED, "lower")
    assert comp.p_value == selection.p_value(sw, "lower", statistic=test)
    assert comp.p_mean == selection.p_value(sw, "lower")
    assert comp.p_value != comp.p_mean


# ------------------------------------------------ all() over groups: mixed sizes are still swept
def test_groups_of_mixed_sizes_are_tested_with_their_selection():
    sw = random_sweeps(seed=1, groups=[[0], [1, 2]])
    comp = sweeps.decide_by_selection(comp_of(sw), sw, FIXED, "lower")
    assert comp.p_value == selection.p_value(sw, "lower")
    assert comp.p_value != comp.p_fixed_configs


# -------------------------------------------------- a frontier selects per point, not once
def test_a_frontier_selects_each_point_on_its_own():
    n, grid = 8, [{"lr": lr, "width": w} for w in (8, 16) for lr in (1e-3, 1e-2)]
    rng = np.random.default_rng(7)
    runs = []
    for arm in ("baseline", "idea"):
        for cfg in grid:
            for s in range(n):
                v = 1.0 + 0.01 * s + rng.normal(0, 0.05)
                runs.append(make_run(arm, cfg, s, v, v + rng.normal(0, 0.01)))
    spec = make_spec(grid, n, frontier={"width": [8, 16]})
    report = built_frontier(spec, TRACK, runs, [], alpha=ALPHA)
    by_run = {(r.arm, r.cfg["lr"], r.cfg["width"], r.seed): r for r in runs}
    keyed = {(a, sweeps.cfg_id(c), s): by_run[(a, c["lr"], c["width"], s)]
             for a in ("baseline", "idea") for c in grid for s in range(n)}
    per_point = sweeps.from_runs(keyed, "baseline", grid, list(range(n)),
                                 sweeps.groups_of(grid, Frontier.from_json(report["frontier"])))
    once = sweeps.from_runs(keyed, "baseline", grid, list(range(n)))
    assert report["comparison"]["p_value"] == selection.p_value(per_point, "lower")
    assert selection.p_value(per_point, "lower") != selection.p_value(once, "lower")


def test_a_frontier_of_one_track_reads_none_of_another_tracks_runs():
    """An idea on two tracks hands every track's runs to each report: the frontier's pooled
    comparison must read its own track's only (a survivor of the sampled mutation run let
    another track's passed runs in, where they overwrite this track's at the same cfg and
    seed)."""
    n, grid = 6, [{"lr": 1e-3, "width": w} for w in (8, 16)]
    runs = [make_run(arm, cfg, s, 1.0 + 0.01 * s, 1.0 + 0.01 * s - (0.1 if arm == "idea" else 0))
            for arm in ("baseline", "idea") for cfg in grid for s in range(n)]
    other = [make_run(r.arm, r.cfg, r.seed, r.val, r.test + (0.5 if r.arm == "idea" else 0),
                      track="dynamics") for r in runs]
    spec = make_spec(grid, n, frontier={"width": [8, 16]})
    alone = built_frontier(spec, TRACK, runs, [], alpha=ALPHA)
    mixed = built_frontier(spec, TRACK, runs + other, [], alpha=ALPHA)
    assert mixed["comparison"]["per_seed_diffs"] == alone["comparison"]["per_seed_diffs"]
    assert alone["comparison"]["per_seed_diffs"] == pytest.approx([-0.1] * n)


def test_frontier_groups_hold_each_points_configs_and_the_favoured_arm_its_direction():
    """Two survivors of the sampled mutation run: groups of the other points' configs (the
    same two groups, swapped, on a frontier of two points) and the favoured arm read as if
    lower were always better (which arm the effective-grid rule refuses)."""
    from types import SimpleNamespace

    grid = [{"lr": lr, "width": w} for w in (8, 16, 32) for lr in (1e-3, 1e-2)]
    assert sweeps.groups_of(grid, Frontier("width", (8, 16, 32), ())) == [
        [0, 1], [2, 3], [4, 5]]
    up = SimpleNamespace(test="mean", delta_mean=0.1, per_seed_diffs=(0.1, 0.1))
    assert sweeps.favoured_arm(up, "higher") == "idea"
    assert sweeps.favoured_arm(up, "lower") == "comparator"


# ----------------------------------------- collection-time rules read validation, never test
def test_the_collection_time_extension_follows_validation_not_test():
    grid = [{"lr": lr} for lr in (1e-3, 2e-3, 4e-3)]
    spec = make_spec(grid, 2, extend=1, declared_grids={TRACK: grid})

    def result(track, arm, cfg, seed):  # validation best at the lowest lr, test at the highest
        return RunResult(val=1.0 + cfg["lr"], test=1.0 - cfg["lr"], diverged=False, seconds=1.0)

    lrs = sorted(c["lr"] for c in grids.grids_from_store(spec, result)[TRACK])
    assert lrs == [5e-4, 1e-3, 2e-3, 4e-3]


def test_a_diverged_stored_run_is_a_run_the_extension_reads():
    """A stored run that diverged is there, its config ineligible (NaN), not missing: the
    session trains the edge extension the report's rule calls for instead of waiting forever
    for a run that exists (a diverged run read as missing leaves the grid as declared)."""
    grid = [{"lr": lr} for lr in (1e-3, 2e-3, 4e-3)]
    spec = make_spec(grid, 2, extend=1, declared_grids={TRACK: grid})

    def result(track, arm, cfg, seed):  # best at the lowest lr; 4e-3 diverged on seed 1
        if cfg["lr"] == 4e-3 and seed == 1:
            return RunResult(val=None, test=None, diverged=True, seconds=1.0)
        return RunResult(val=1.0 + cfg["lr"], test=1.0 + cfg["lr"], diverged=False, seconds=1.0)

    lrs = sorted(c["lr"] for c in grids.grids_from_store(spec, result)[TRACK])
    assert lrs == [5e-4, 1e-3, 2e-3, 4e-3]


def test_the_session_trains_the_budget_checks_the_stored_runs_call_for():
    """checks_from_store, in process (its sessions are e2e, which mutation runs skip): the
    flagged arm's selected config at 1.5x the epochs, on the first 3 seeds of the bench's draw,
    then on the 4 a 4 x 8 grid affords while the stored check runs leave it undetermined;
    nothing for the unflagged arm, nor before the whole grid is stored."""
    grid = [{"lr": lr} for lr in (1e-3, 2e-3, 4e-3, 8e-3)]
    spec = make_spec(grid, 8)
    order = convergence.check_order(spec.seeds, spec.name, TRACK)
    gains = dict(zip(order, (0.03, -0.01, 0.02)))   # the first look straddles the 1% threshold

    def result(track, arm, cfg, seed, stored=True, checked=True):
        if "epochs" in cfg:   # a check run: stored for the first look's seeds only
            if not checked or arm != "baseline" or seed not in gains:
                return None
            val = 2.0 * (1 - gains[seed])
            return RunResult(val=val, test=val, diverged=False, seconds=1.0,
                             curve=(CurvePoint(epoch=45, val=val),))
        if not stored and cfg["lr"] == 8e-3:
            return None
        end = 2.0 + cfg["lr"] * 100 * (arm == "idea")   # lr 1e-3 selected by both arms
        before = end * (1.05 if arm == "baseline" else 1.0)   # the baseline still learning
        return RunResult(val=end, test=end, diverged=False, seconds=1.0,
                         curve=(CurvePoint(epoch=22, val=before), CurvePoint(epoch=30, val=end)))

    check = {"epochs": 45, "lr": 1e-3}
    assert grids.checks_from_store(spec, lambda *a: result(*a, checked=False)) == (
        {TRACK: {"baseline": check}}, {TRACK: {"baseline": order[:3]}})
    assert grids.checks_from_store(spec, result) == (
        {TRACK: {"baseline": check}}, {TRACK: {"baseline": order[:4]}})
    assert grids.checks_from_store(spec, lambda *a: result(*a, stored=False)) == ({}, {})


# ------------------------------------------------------------------------------- NEXT lines
def test_missing_seeds_past_nine_are_named():
    report = {"incomplete": {"missing": ["idea[tabular-lr=0.01-seed12]",
                                         "baseline[tabular-lr=0.01-seed3]"]}}
    assert missing_seeds(as_report(report)) == [3, 12]
    lines = next_steps([(None, as_report({"name": "i", "track": "t", "incomplete": {
        "pending": [], "missing": ["idea[t-lr=0.1-seed10]", "idea[t-lr=0.1-seed11]"]}}))],
        ["--bench-shard=merge", "ideas/test_x.py"], fresh=False, merge=True)
    assert "(i t seed(s) 10, 11; a shard" in lines[0]
    assert "`pytest ideas/test_x.py` trains the missing runs" in lines[0]


def test_the_module_after_a_shard_option_stays_in_the_command():
    assert without(["--bench-shard=1/2", "ideas/test_x.py"], "--bench-shard") == [
        "ideas/test_x.py"]
    assert without(["--bench-shard", "1/2", "ideas/test_x.py"], "--bench-shard") == [
        "ideas/test_x.py"]


# ------------------------------------------------------------ the margin warning's threshold
def with_margin(diffs, margin_abs, margin_rel):
    """The comparison of these per-seed differences with a declared margin's figures."""
    d = np.asarray(diffs, dtype=float)
    compared = comparison.of_figures(paired.compare(np.zeros(len(d)), d, direction="lower"))
    return dataclasses.replace(compared, noninferiority=NonInferiorityTest(
        margin_rel=margin_rel, margin_abs=margin_abs, bound=None, non_inferior=False,
        p_value=None))


@pytest.mark.parametrize("margin_sd, warned", [(0.9, True), (1.1, False), (3.0, False)])
def test_the_margin_warning_fires_below_80_percent_power_only(margin_sd, warned):
    """8 seeds of differences with sd 1: the one-sided margin test at 0.05 shows an arm
    exactly as good non-inferior with probability 0.73 at a margin of 0.9 sd, 0.86 at 1.1."""
    d = np.array([-1.5, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.5])
    d = d / d.std(ddof=1)
    comp = with_margin(d, margin_sd, margin_sd / 10)
    got = margins.unresolved_margin(comp, [10.0] * 8, 0.05)
    assert (got is not None) == warned
    if warned:
        assert "with probability about 0.73" in got and "80% needs a margin of about" in got


def test_the_margin_warning_at_two_seeds_and_where_nothing_can_be_said():
    """Two seeds are enough to warn (the smallest bench); no warning without an absolute
    margin or with no spread in the differences (no planning figure): the survivors of the
    sampled mutation run that moved these edges."""
    assert margins.unresolved_margin(with_margin([-1.0, 1.0], 0.1, 0.01), [10.0] * 2,
                                     0.05) is not None
    assert margins.unresolved_margin(with_margin([-1.0, 1.0], None, 0.01), [10.0] * 2,
                                     0.05) is None
    assert margins.unresolved_margin(with_margin([0.5] * 4, 0.1, 0.01), [10.0] * 4,
                                     0.05) is None


# ------------------------------------------------------------- threads in the run store's key
def test_the_reuse_key_holds_the_thread_count(tmp_path):
    stores = [RunStore(DirectoryStorage(tmp_path), tmp_path, threads=t) for t in (1, 2, 1)]
    keys = [s.key(arm_fingerprint="f", protocol={"epochs": 1}, arm="idea", track=TRACK,
                  cfg={"lr": 0.01}, seed=0) for s in stores]
    assert keys[0] != keys[1] and keys[0] == keys[2]


def test_the_reuse_key_holds_the_device(tmp_path):
    """A run trained on an accelerator is never reused for a CPU session (nor back): the
    device is keyed (a survivor of the sampled mutation run dropped it from the key)."""
    stores = [RunStore(DirectoryStorage(tmp_path), tmp_path, threads=1, device=d)
              for d in ("cpu", "mps", "cpu")]
    keys = [s.key(arm_fingerprint="f", protocol={"epochs": 1}, arm="idea", track=TRACK,
                  cfg={"lr": 0.01}, seed=0) for s in stores]
    assert keys[0] != keys[1] and keys[0] == keys[2]


def test_the_reuse_key_does_not_depend_on_the_order_of_a_configs_keys(tmp_path):
    """A cfg read back from JSON or a spec may list its keys in another order: the same run
    (a survivor of the sampled mutation run hashed the key material unsorted)."""
    store = RunStore(DirectoryStorage(tmp_path), tmp_path, threads=1)
    keys = [store.key(arm_fingerprint="f", protocol={"epochs": 1, "model": "m"}, arm="idea",
                      track=TRACK, cfg=cfg, seed=0)
            for cfg in ({"lr": 0.01, "width": 8}, {"width": 8, "lr": 0.01})]
    assert keys[0] == keys[1]


RECORDING = '''
@pytest.mark.arm("baseline")
def test_baseline(run):
    run.record(val=1.0, test=1.0 + 0.01 * run.seed)

@pytest.mark.arm("idea")
def test_idea(run):
    run.record(val=1.0, test=0.9 + 0.01 * run.seed)
'''


@pytest.fixture
def keep_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.slow
def test_a_session_at_another_thread_count_reuses_nothing(pytester, keep_threads):
    pytester.makepyfile(test_threads=idea_module("threads", RECORDING, imports=TORCH))
    store = f"--bench-store={pytester.path / 'store'}"
    for threads, trained, reused in ((1, 4, 0), (2, 4, 0), (1, 0, 4), (2, 0, 4)):
        result = run_session(pytester, "-p", "no:randomly", store, f"--bench-threads={threads}")
        result.stdout.fnmatch_lines([f"benchkit: {trained} run(s) trained, {reused} reused "
                                     "from the run store*"])
