"""What a control adds to an aggregation is its own work: the figures that are the same for
every comparison (the idea's cross-fit and fixed-config values, a pair's differences, a
comparison's sd, a config's id) are computed once (issue 52: a bench with 2 controls and a
margin aggregates in <= 1.5x the time of the same bench without; benchmarks/pipeline/
controls_cost.py measures it)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import builders as b

from benchkit.spec.idea import cfg_id
from benchkit.stats import crossfit, paired, pairtest, selection
from benchkit.verdict import build, pipeline

GRID = [{"lr": lr} for lr in (0.001, 0.003, 0.01)]
ARMS = ["baseline", "idea", "control:a", "control:b"]


def _runs(arms: list[str]) -> list:
    return [b.make_run(arm, cfg, s, 1.0 + 0.1 * s + 0.2 * k + 0.05 * a + 0.01 * (s * k % 3),
                       2.0 + 0.1 * s - 0.03 * a + 0.02 * ((s + k) % 2))
            for a, arm in enumerate(arms) for k, cfg in enumerate(GRID) for s in range(6)]


def test_the_ideas_cross_fit_is_computed_once_for_every_comparator(monkeypatch):
    calls = []
    real = crossfit.arm_crossfit

    def counted(val, test, groups, sign):
        calls.append(val)
        return real(val, test, groups, sign)

    monkeypatch.setattr(selection, "arm_crossfit", counted)
    report, = pipeline.idea_reports(b.make_spec(GRID, 6, margin=0.05, arms=ARMS), _runs(ARMS),
                                    [], alpha=0.05)
    assert set(report.controls) == {"a", "b"}
    # the 3 comparators' own cross-fits in one pass (arms stacked) and the idea's once (it
    # was once per comparison: 6; then once per arm: 4)
    assert [c.shape[:-2] for c in calls] == [(3,), ()]


def test_sweeps_against_the_same_idea_share_its_figures_and_keep_their_values():
    rng = np.random.default_rng(3)
    val, test = rng.random((6, 3)), rng.random((6, 3))
    idea_val, idea_test = rng.random((6, 3)), rng.random((6, 3))
    first = selection.sweeps(val, test, idea_val, idea_test)
    other = selection.against(first, val + 0.1, test + 0.1)
    alone = selection.sweeps(val + 0.1, test + 0.1, idea_val, idea_test)
    assert selection.fit(other, "lower").idea is selection.fit(first, "lower").idea
    assert selection.p_value(other, "lower") == selection.p_value(alone, "lower")
    assert selection.interval(other, "lower", 0.05) == selection.interval(alone, "lower", 0.05)
    for a, c in zip(selection.family(other, "lower").harms, selection.family(alone, "lower").harms):
        assert np.array_equal(a.d, c.d)


def test_a_pairs_differences_are_made_once_and_cannot_be_changed():
    pair = pairtest.Pair(np.array([1.0, 2.0, 3.0]), np.array([1.5, 1.0, 3.5]))
    assert pair.d is pair.d and pair.d.tolist() == [0.5, -1.0, 0.5]
    assert not pair.d.flags.writeable


def test_a_comparisons_figures_are_its_rows_in_a_pass_of_several():
    """compare is compare_rows of one row, and a row's figures among several (a report's
    comparators, made in one pass) are the same floats as alone; its mde, t interval, effect
    size and margin test are those of the functions that make each alone (ci95 included)."""
    base, idea = [1.0, 1.2, 0.9, 1.1, 1.3], [0.9, 1.25, 0.8, 1.0, 1.1]
    got = paired.compare(base, idea, direction="lower", margin=0.1)
    others = [np.array([2.0, 1.1, 0.7, 1.4, 1.3]), np.array([1e3, -2.5, 0.1, 3.0, 7.0])]
    rows = paired.compare_rows([others[0], np.array(base), others[1]],
                               [np.array(idea)] * 3, direction="lower", margin=0.1,
                               p_values=[None, None, 0.25])
    assert rows[1] == got and rows[2] == paired.compare(others[1], idea, direction="lower",
                                                        margin=0.1, p_value=0.25)
    assert [r.to_json() for r in rows[:1]] == [paired.compare(
        others[0], idea, direction="lower", margin=0.1).to_json()]
    assert list(got.ci95) == paired.ci95(np.subtract(idea, base))
    assert got.mde == paired.mde(np.subtract(idea, base)) and got.effect_size == \
        paired.effect_size(np.subtract(idea, base))
    assert got.noninferiority == paired.noninferiority(base, idea, direction="lower",
                                                       margin=0.1)


def test_a_build_makes_each_configs_id_once_per_config_object(monkeypatch):
    made = []
    monkeypatch.setattr(build, "cfg_id", lambda cfg: made.append(dict(cfg)) or cfg_id(cfg))
    ids = build.CfgIds()
    one, same = {"lr": 0.1}, {"lr": 0.1}
    assert [ids(one), ids(one), ids(same), ids(one)] == ["lr=0.1"] * 4
    assert made == [one, same]   # by object: an equal config is another object


def test_a_build_makes_each_run_configs_id_once_per_value_where_equal_values_write_one(
        monkeypatch):
    """A run's config (an object of its own) gets its id once per value; values that are
    equal but write other ids (0.0 and -0.0, 1, 1.0 and True) each get their own, and a value
    of another type (a numpy float) is written each time."""
    made = []
    monkeypatch.setattr(build, "cfg_id", lambda cfg: made.append(dict(cfg)) or cfg_id(cfg))
    ids = build.CfgIds()
    cfgs = [{"lr": 0.1, "opt": "adam"}, {"lr": 0.1, "opt": "adam"}, {"opt": "adam", "lr": 0.1},
            {"lr": 0.0}, {"lr": -0.0}, {"lr": 1}, {"lr": 1.0}, {"lr": True}, {"lr": 1},
            {"lr": np.float64(0.1)}, {"lr": np.float64(0.1)}]
    got = [ids.by_value(c) for c in cfgs]
    assert got == [cfg_id(c) for c in cfgs]
    assert got[3:8] == ["lr=0.0", "lr=-0.0", "lr=1", "lr=1.0", "lr=True"]
    assert len(made) == 9   # one per value (the 2nd and 9th reused), numpy floats each time


def test_the_fast_finite_check_still_finds_numpy_floats_and_dict_subclasses():
    from collections import OrderedDict

    assert pipeline.has_non_finite([1, "a", (2.0, OrderedDict(x=np.float64(math.nan)))])
    assert not pipeline.has_non_finite([1, "a", (2.0, OrderedDict(x=np.float64(1.0)))])
    assert not pipeline.has_non_finite({"a": np.array([np.inf])})  # arrays: not walked, as before


def test_a_sides_intervals_made_together_are_each_ones_own_to_the_bit():
    """selection.interval takes every test's interval in one pass (pairtest.intervals): each
    is the float its test alone gives, whatever the tests beside it."""
    rng = np.random.default_rng(7)
    for n in (3, 6, 8, 12):
        pairs = [pairtest.Pair(rng.normal(size=n), rng.normal(size=n) + shift)
                 for shift in (-1.0, 0.0, 0.3, 2.0)]
        pairs.append(pairtest.Pair(np.ones(n), np.ones(n) + np.round(rng.normal(size=n), 1)))
        for level in (0.05, 0.2, 2.0 ** (1 - n)):
            together = pairtest.intervals(pairs, level)
            alone = [pairtest.intervals([pairtest.Pair(q.base, q.idea)], level)[0]
                     for q in pairs]
            assert [[None if v is None else float.hex(v) for v in e] for e in together] == \
                [[None if v is None else float.hex(v) for v in e] for e in alone]


def _hexes(values):
    return [None if v is None else float.hex(v) for v in values]


def test_a_comparisons_ps_and_margin_tests_made_together_are_each_ones_own_to_the_bit():
    """A side's two-sided ps (pairtest.p_values), its margin tests (one_sided_ps) and its
    non-inferiority bounds (ni_bounds) are made for all its tests in one pass: each is the
    float its test alone gives (a fresh pair, so nothing is shared), ties included."""
    rng = np.random.default_rng(11)
    for n in (3, 6, 8, 12, 17):
        pairs = [pairtest.Pair(1 + rng.random(n), 1 + rng.random(n) + shift)
                 for shift in (-1.0, 0.0, 0.3)]
        pairs.append(pairtest.Pair(np.ones(n), np.ones(n) + np.round(rng.normal(size=n), 1)))

        def alone(q):
            return pairtest.Pair(q.base, q.idea)

        assert _hexes(pairtest.p_values(pairs)) == _hexes(
            [pairtest.p_values([alone(q)])[0] for q in pairs])
        scales = [np.abs(q.base) for q in pairs]
        for alternative in ("less", "greater"):
            shifts = [0.05 * s for s in scales]
            assert _hexes(pairtest.one_sided_ps(pairs, shifts, alternative)) == _hexes(
                [pairtest.one_sided_ps([alone(q)], [s], alternative)[0]
                 for q, s in zip(pairs, shifts)])
        for direction, alpha, ni in (("lower", 0.05, True), ("higher", 0.2, False)):
            each = [len(pairs) * [v] for v in (alpha, ni, 0.05)]
            assert _hexes(pairtest.ni_bounds(pairs, direction, scales, *each)) == \
                _hexes([pairtest.ni_bounds([alone(q)], direction, [s], [alpha], [ni], [0.05])[0]
                        for q, s in zip(pairs, scales)])


def test_a_sides_ps_made_together_are_kept_with_each_pair(monkeypatch):
    """pairtest.p_values keeps each test's p with its pair: the interval and the verdict that
    ask again compute no flip sums of it."""
    rng = np.random.default_rng(5)
    pairs = [pairtest.Pair(rng.random(8), rng.random(8)) for _ in range(3)]
    ps = pairtest.p_values(pairs)
    monkeypatch.setattr(pairtest, "_sums", lambda d, seed: pytest.fail("summed again"))
    assert [pairtest.p_value(q) for q in pairs] == ps


def test_an_exact_tests_interval_from_half_its_flips_is_the_whole_ones_to_the_bit():
    """Row 2^n - 1 - r of the exact flips negates every sign of row r: its sum is -a_r, its
    count -k_r, its roots the same. So half the rows, each counted twice, give the interval
    of all of them (pairtest.intervals takes the half: half the arithmetic)."""
    from benchkit.stats import signflip

    rng = np.random.default_rng(13)
    for n in (1, 2, 3, 5, 8, 11):
        flips, _ = pairtest.flip_rows(n)
        signs, counts = pairtest._signs(n), pairtest._flip_counts(n)
        half = len(flips) // 2
        for _ in range(6):
            ds = [rng.normal(size=n), np.round(rng.normal(size=n), 1), rng.normal(size=n) + 1]
            sums = np.stack([signs @ d for d in ds])
            assert np.array_equal(sums[:, ::-1], -sums)   # the complement's sums, exactly
            for need in range(0, len(flips) + 2, max(1, len(flips) // 7)):
                args = ([float(d.sum()) for d in ds], n, need, [False, True, False])
                scale = [float(np.abs(d).max()) for d in ds]
                whole = signflip.intervals_of_rows(sums, counts, *args, scale=scale)
                halved = signflip.intervals_of_rows(sums[:, :half], counts[:half], *args,
                                                    scale=scale, twice=True)
                assert [_hexes(e) for e in halved] == [_hexes(e) for e in whole]


def test_a_reports_comparisons_are_tested_together_once_a_stage(monkeypatch):
    """Every comparator's selection-aware tests are made in one pass a stage: the build's ps
    (both sides of each comparison), the decision's intervals and its margin tests and bounds,
    each comparison at its own level. Before, once per comparison (and per side): 6, 3, 3, 3
    passes for a bench with 2 controls and a margin."""
    calls: dict[str, int] = {}

    def counting(module, name, when=lambda *a, **k: True):
        real = getattr(module, name)

        def counted(*args, **kwargs):
            if when(*args, **kwargs):
                calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)

    counting(pairtest, "p_values", lambda pairs, name="mean", *, seed=0: any(
        (name, seed) not in q._memo for q in pairs))   # the passes that compute a p
    counting(pairtest.signflip, "intervals_of_rows")
    counting(pairtest, "one_sided_ps")
    counting(pairtest, "ni_bounds")
    report, = pipeline.idea_reports(b.make_spec(GRID, 6, margin=0.05, arms=ARMS), _runs(ARMS),
                                    [], alpha=0.05)
    assert report.practical_verdict is not None and len(report.controls) == 2
    assert calls == {"p_values": 1, "intervals_of_rows": 1, "one_sided_ps": 1, "ni_bounds": 1}


def test_comparisons_tested_together_each_get_their_own_figures_to_the_bit():
    """selection.sides, intervals and noninferiorities over several comparators of one idea,
    each at its own level, give each comparison the floats it gets alone (fresh sweeps: nothing
    shared); a comparator without an eligible config has no test, and the others do."""
    rng = np.random.default_rng(7)
    for n, k, direction in ((6, 3, "lower"), (9, 2, "higher"), (17, 3, "lower")):
        idea = [rng.random((n, k)), rng.random((n, k))]
        arms = [[rng.random((n, k)), np.round(rng.random((n, k)), 1)] for _ in range(3)]
        arms.append([np.full((n, k), np.nan), rng.random((n, k))])

        def made(together: bool) -> list:
            first = selection.sweeps(*arms[0], *idea)
            sws = [first, *(selection.against(first, *arm) for arm in arms[1:])]
            levels = [0.05, 0.03, 0.011, 0.05]
            if together:
                selection.sides(sws, direction)
                selection.intervals(list(zip(sws[:3], levels)), direction)
                selection.noninferiorities([(sw, 0.02, lv) for sw, lv in zip(sws[:3], levels)],
                                           direction)
            out = [[selection.p_value(sw, direction), list(selection.binding(sw, direction).d),
                    selection.interval(sw, direction, lv),
                    selection.noninferiority(sw, direction, 0.02, lv)]
                   for sw, lv in zip(sws[:3], levels)]
            with pytest.raises(ValueError, match="no test"):
                selection.p_value(sws[3], direction)
            return [[v.hex() if isinstance(v, float) else v for v in _flat(o)] for o in out]

        assert made(True) == made(False)


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    if hasattr(value, "__dataclass_fields__"):
        return _flat([getattr(value, f) for f in value.__dataclass_fields__])
    return [value]


def test_an_arms_sweep_summarizes_its_configs_in_one_pass_each_ones_own_to_the_bit(monkeypatch):
    """build.arm_sweep makes every config's test and validation summaries in one
    paired.summaries pass (it was one summarize a row: 6 an arm here), each row's mean and std
    the floats summarize gives it alone."""
    rng = np.random.default_rng(2)
    rows = np.concatenate([rng.normal(0, 1, (20, 8)) * 10.0 ** rng.integers(-6, 6, (20, 1)),
                           np.round(rng.normal(0, 1, (5, 8)), 1)])
    assert [(s.mean.hex(), s.std.hex(), s.per_seed) for s in paired.summaries(rows)] == [
        (s.mean.hex(), s.std.hex(), s.per_seed) for s in map(paired.summarize, rows)]
    with pytest.raises(ValueError, match="non-finite"):
        paired.summaries([[1.0, 2.0], [1.0, math.nan]])
    calls = []
    real = paired.summaries
    monkeypatch.setattr(paired, "summaries", lambda rows: calls.append(len(rows)) or real(rows))
    runs = build.passed_runs(_runs(ARMS), b.TRACK)
    sweep = build.arm_sweep(runs, "control:a", GRID, list(range(6)))
    assert calls == [6] and all(r.result is not None for r in sweep)


def test_a_comparison_takes_its_binding_tests_p_and_its_arms_summaries_made_before(monkeypatch):
    """compare_arms takes the binding test's sign-flip p kept with its pair (paired.compare
    made it again, then decide_by_selection overwrote it: 2 a comparison; then the fixed
    configs' p alone; now the fixed configs' p of all three in one pass), and each arm's
    summary at its selected config is its sweep row's (the same values, summarized once): the
    same report."""
    spec, runs = b.make_spec(GRID, 6, margin=0.05, arms=ARMS), _runs(ARMS)
    before, = pipeline.idea_reports(spec, runs, [], alpha=0.05)
    calls = []
    real = paired.sign_flip_p_rows
    monkeypatch.setattr(paired, "sign_flip_p_rows",
                        lambda d, **k: calls.append(len(d)) or real(d, **k))
    report, = pipeline.idea_reports(spec, runs, [], alpha=0.05)
    assert calls == [3] and report.to_json() == before.to_json()
    rows = {row.cfg["lr"]: row for row in report.baseline.sweep}
    assert report.baseline.full is rows[report.baseline.best_cfg["lr"]].result
    for control in report.controls.values():
        assert control.full in [row.result for row in control.sweep]
    assert paired.compare([1.0, 2.0, 3.5], [1.5, 1.0, 4.0], direction="lower") == \
        paired.compare([1.0, 2.0, 3.5], [1.5, 1.0, 4.0], direction="lower",
                       p_value=paired.sign_flip_p_value([0.5, -1.0, 0.5]))


def test_an_arms_table_is_read_in_one_pass_as_cell_by_cell():
    """sweeps.arm_tables reads an arm's values into its table in one numpy pass (issue 52's
    controls figure): NaN where a run is missing or its value is not finite, the same floats as
    sweeps._value cell by cell, which still reads any value that is not a float, int or None."""
    from benchkit.verdict import sweeps

    runs = build.passed_runs(_runs(["idea"]), b.TRACK)
    seeds = list(range(6))
    ids = [cfg_id(c) for c in GRID]
    odd = {0: math.inf, 1: -math.inf, 2: math.nan, 3: 7, 4: 1e308, 5: -0.0}
    for s, v in odd.items():
        key = ("idea", ids[s % 3], s)
        runs[key] = b.make_run("idea", GRID[s % 3], s, v, v).record
    del runs[("idea", ids[1], 2)]
    val, test = sweeps.arm_tables(runs, ["idea"], GRID, seeds)["idea"]
    cells = [[runs.get(("idea", i, s)) for i in ids] for s in seeds]
    by_cell = np.array([[sweeps._value(r, sweeps._val) for r in row] for row in cells])
    assert val.tobytes() == by_cell.tobytes() and not val.flags.writeable
    assert np.isnan(val[0, 0]) and val[3, 0] == 7.0 and np.isnan(val[2, 1])
    flagged = {**runs, ("idea", ids[0], 0): b.make_run("idea", GRID[0], 0, True, True).record}
    assert sweeps.arm_tables(flagged, ["idea"], GRID, seeds)["idea"][1][0, 0] == 1.0


def test_a_build_reads_each_arms_runs_into_one_table_for_its_sweep_and_comparisons(
        monkeypatch):
    """build_report makes every arm's (val, test) table once and both the arm's sweep and the
    compare stage read it (the sweep read each run again: a control's runs read twice)."""
    from benchkit.verdict import sweeps

    spec, payloads = b.make_spec(GRID, 6, margin=0.05, arms=ARMS), _runs(ARMS)
    runs = build.passed_runs(payloads, b.TRACK)
    before, = pipeline.idea_reports(spec, payloads, [], alpha=0.05)
    for arm in ARMS:   # the sweep given the arm's table is the sweep read from its runs
        table = sweeps.arm_tables(runs, [arm], GRID, list(range(6)))[arm]
        assert build.arm_sweep(runs, arm, GRID, list(range(6)), table) == build.arm_sweep(
            runs, arm, GRID, list(range(6)))
    val, test = table   # and it reads the table, not the runs
    shifted = build.arm_sweep(runs, arm, GRID, list(range(6)), (val + 1.0, test))
    assert [r.val_mean for r in shifted] == [float(np.mean(val[:, k] + 1.0)) for k in range(3)]
    made = []
    real = sweeps.arm_tables
    monkeypatch.setattr(sweeps, "arm_tables", lambda *a: made.append(a[1]) or real(*a))
    report, = pipeline.idea_reports(spec, payloads, [], alpha=0.05)
    assert made == [ARMS] and report.to_json() == before.to_json()
