"""The edge-extension rule (benchkit.verdict.extension): a selection at the edge of a grid axis of
three
or more values extends that axis for both arms, up to ``extend`` steps, recorded in the report.
"""
from __future__ import annotations

import math

import pytest

from benchkit.verdict import extension
from idea_modules import arm, idea_module
from benchkit.verdict.sections import AtEdge, Extension

def bowl(optimum: float):
    """A validation value whose best (lowest) learning rate is ``optimum``."""
    return lambda arm, cfg, seed: (math.log10(cfg["lr"] / optimum)) ** 2 + 0.001 * seed


def test_axes_are_numeric_keys_with_three_or_more_values():
    grid = [{"lr": lr, "wd": wd, "act": "relu"} for lr in (1e-3, 3e-3, 1e-2) for wd in (0.0, 0.1)]
    assert extension.axes(grid) == {"lr": [1e-3, 3e-3, 1e-2]}  # wd has two values: fixed
    assert extension.axes([{"lr": 1e-3}, {"lr": 3e-3}]) == {}


def test_steps_are_geometric_on_log_axes_and_stay_valid():
    assert extension.log_spaced([1e-3, 3e-3, 1e-2]) and not extension.log_spaced([1, 2, 3])
    assert extension.next_value([1e-3, 2e-3, 4e-3], "high", "lr", True) == 8e-3
    assert extension.next_value([1e-3, 2e-3, 4e-3], "low", "lr", True) == 5e-4
    assert extension.next_value([2, 4, 6], "high", "epochs", False) == 8
    assert extension.next_value([2, 4, 6], "low", "epochs", False) is None   # 0 epochs: invalid
    assert extension.next_value([0.1, 0.2, 0.3], "low", "lr", False) is None  # lr 0: invalid
    assert extension.next_value([0.0, 0.1, 0.2], "low", "wd", False) == -0.1


def test_the_edges_of_the_valid_range():
    assert not extension.log_spaced([0.0, 0.1, 0.2])          # a zero: never log-spaced
    assert not extension.log_spaced([-1e-3, 1e-3, 3e-3])
    assert extension.next_value([3, 5, 7], "low", "epochs", False) == 1    # 1 epoch is valid
    assert extension.next_value([2, 3, 4], "low", "batch_size", False) == 1
    eight = extension.next_value([2.0, 4.0, 6.0], "high", "epochs", False)
    assert eight == 8 and isinstance(eight, int)            # a count stays an integer
    assert extension.next_value([8, 16, 32], "high", "width", True) == 64  # an int axis too
    assert extension.next_value([1e-3, 2e-3, 4e-3], "low", "wd", False) == 0.0


def test_each_arm_selects_on_its_own_values_and_the_extension_names_its_arms():
    def val(arm, cfg, seed):  # the baseline's optimum lies below the grid, the idea's inside
        return bowl(1e-4 if arm == "baseline" else 2e-3)(arm, cfg, seed)
    out = extension.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)], val, [0], "lower", 1)
    assert [e.to_json() for e in out.extensions] == [
        {"axis": "lr", "side": "low", "from": 1e-3, "value": 5e-4, "arms": ["baseline"]}]
    assert out.at_edge == (AtEdge("baseline", "lr", "low"),)   # the limit of one step


def test_a_step_out_of_the_valid_range_leaves_the_selection_at_the_edge():
    out = extension.resolve([{"lr": v} for v in (0.1, 0.2, 0.3)], bowl(1e-3), [0], "lower", 2)
    assert out.extensions == () and list(out.grid) == [{"lr": v} for v in (0.1, 0.2, 0.3)]
    assert out.at_edge == (AtEdge("baseline", "lr", "low"), AtEdge("idea", "lr", "low"))


def test_a_frontier_axis_is_fixed():
    grid = [{"keep": k, "lr": v} for k in (0.25, 0.5, 1.0) for v in (1e-3, 2e-3, 4e-3)]
    out = extension.resolve(grid, lambda a, c, s: bowl(2e-3)(a, c, s) + c["keep"], [0], "lower",
                         2, fixed={"keep": [0.25, 0.5, 1.0]})
    assert out.extensions == () and out.at_edge == ()


@pytest.mark.parametrize("limit, grid, edges", [
    (2, [1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2], []),          # interior after two steps
    (1, [1e-3, 2e-3, 4e-3, 8e-3], ["baseline", "idea"]),  # still at the edge: the limit
    (0, [1e-3, 2e-3, 4e-3], ["baseline", "idea"]),        # off
])
def test_resolve_extends_both_arms_until_interior_or_the_limit(limit, grid, edges):
    out = extension.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)], bowl(1e-2), [0, 1],
                         "lower", limit)
    assert [c["lr"] for c in out.grid] == grid
    assert out.pending is False
    assert [e.value for e in out.extensions] == grid[3:]
    assert all(e.arms == ("baseline", "idea") and e.side == "high" for e in out.extensions)
    assert [e.arm for e in out.at_edge] == edges


def test_resolve_honours_the_direction_and_waits_for_missing_runs():
    higher = extension.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)],
                            lambda a, c, s: -bowl(1e-4)(a, c, s), [0], "higher", 2)
    assert [e.side for e in higher.extensions] == ["low", "low"]
    assert [c["lr"] for c in higher.grid][3:] == [5e-4, 2.5e-4]
    missing = extension.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)],
                             lambda a, c, s: None if c["lr"] == 2e-3 else 1.0, [0], "lower", 2)
    assert missing.pending is True and missing.extensions == ()


def optimum_beyond(**options) -> str:
    return idea_module("beyond", '''
        def record(run):
            v = math.log10(run.cfg["lr"] / 1e-2) ** 2  # best at lr = 1e-2, beyond the grid
            run.record(val=v + 0.001 * run.seed, test=v + 0.002 * run.seed)
        ''', arm("baseline", "record(run)"), arm("idea", "record(run)"),
        imports="import math\nimport pytest", grid={"lr": [1e-3, 2e-3, 4e-3]}, **options)


def test_an_optimum_beyond_the_grid_ends_interior_on_one_extended_grid(pytester, read_report):
    pytester.makepyfile(test_beyond=optimum_beyond())
    counts = []
    for session in range(3):  # each session trains the extension the stored runs call for
        result = pytester.runpytest()
        counts.append(result.parseoutcomes()["passed"])
        report = read_report(pytester.path, "beyond")
        if session < 2:
            assert report["complete"] is False
            assert "run the same command again" in " ".join(report["incomplete"]["reasons"])
    assert counts == [12, 16, 20]  # 2 arms x 2 seeds x (3, 4, 5) configs; stored runs reused
    assert report["complete"] is True
    assert report["baseline"]["best_cfg"] == {"lr": 0.008}
    assert report["idea_config"] == {"lr": 0.008}
    lrs = [1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2]
    assert [c["lr"] for c in report["protocol"]["grid"]] == lrs
    assert [r["cfg"]["lr"] for r in report["baseline"]["sweep"]] == lrs
    assert [r["cfg"]["lr"] for r in report["idea_sweep"]] == lrs  # both arms, same grid
    ext = report["grid_extensions"]
    assert ext["limit"] == 2 and [c["lr"] for c in ext["declared_grid"]] == lrs[:3]
    assert [(e["axis"], e["side"], e["value"]) for e in ext["extensions"]] == [
        ("lr", "high", 8e-3), ("lr", "high", 1.6e-2)]
    assert ext["at_edge"] == [] and not any("edge" in w for w in report["warnings"])


@pytest.mark.parametrize("extra, args", [({"extend": 0}, ()), ({}, ("--bench-seeds", "2"))])
def test_without_extension_the_edge_is_a_warning(pytester, read_report, extra, args):
    """extend=0 turns the rule off; an override session (--bench-seeds/--bench-epochs) is
    exploratory and does not extend either."""
    pytester.makepyfile(test_beyond=optimum_beyond(**extra))
    for _ in range(2):
        pytester.runpytest(*args).assert_outcomes(passed=12)
    report = read_report(pytester.path, "beyond")
    assert report["complete"] is True and report["grid_extensions"]["extensions"] == []
    assert report["baseline"]["best_cfg"] == {"lr": 0.004}
    assert report["grid_extensions"]["at_edge"] == [
        {"arm": "baseline", "axis": "lr", "side": "high"},
        {"arm": "idea", "axis": "lr", "side": "high"}]
    assert any("high edge of lr" in w for w in report["warnings"])


def test_a_bad_extend_is_a_collection_error(pytester):
    pytester.makepyfile(test_beyond=optimum_beyond(extend=-1))
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "extend=-1 must be an integer in [0, 1000]" in result.stdout.str()


# -- extendable grids ----------------------------------------------------------------------------


def test_axes_skip_keys_that_are_missing_or_not_numeric():
    grid = [{"opt": o, "lr": lr, "wd": wd} for o, lr, wd in (("a", 1, 0.1), ("b", 2, 0.2),
                                                              ("c", 3, 0.3))]
    assert extension.axes(grid) == {"lr": [1, 2, 3], "wd": [0.1, 0.2, 0.3]}
    del grid[1]["wd"]   # a key some config lacks is no axis
    assert extension.axes(grid) == {"lr": [1, 2, 3]}


@pytest.mark.parametrize("values, log", [
    ([1, 2, 4], True), ([1, 2, 3], False),
    ([1, 3, 6], True),   # ratios 3, 2 and differences 2, 3 vary alike (1.5): a tie is log
])
def test_log_spacing_at_the_tie(values, log):
    assert extension.log_spaced(values) is log


def test_a_high_side_extension_steps_from_the_highest_value():
    def val(arm, cfg, seed):  # both arms' optimum lies above the grid
        return math.log10(cfg["lr"] / 1e-2) ** 2 + 0.001 * seed
    out = extension.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)], val, [0], "lower", 1)
    assert out.extensions == (Extension(axis="lr", side="high", edge=4e-3, value=8e-3,
                                        arms=("baseline", "idea")),)
    assert sorted(c["lr"] for c in out.grid) == [1e-3, 2e-3, 4e-3, 8e-3]


def test_every_arm_is_judged_again_after_a_step_for_another_arm():
    """The baseline's optimum lies below the grid, the idea's above it: each side extends to the
    limit, and both arms stay at their edges (a step for one arm never stops the rule from
    reading the other's runs)."""
    def val(arm, cfg, seed):
        return math.log(cfg["lr"]) if arm == "baseline" else -math.log(cfg["lr"])
    out = extension.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)], val, [0], "lower", 2)
    assert sorted((e.side, e.arms) for e in out.extensions) == [
        ("high", ("idea",)), ("high", ("idea",)), ("low", ("baseline",)), ("low", ("baseline",))]
    assert set(out.at_edge) == {AtEdge("baseline", "lr", "low"), AtEdge("idea", "lr", "high")}
