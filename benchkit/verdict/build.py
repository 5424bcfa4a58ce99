"""Assemble one idea x track report (schema v1 superset): select and compare; the verdicts are
:mod:`benchkit.verdict.decision`'s.

Pure Python + numpy via :mod:`benchkit.stats`: the controller never imports torch. Writing it
is :mod:`benchkit.report.bench_report`'s.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from benchkit import tracks
from benchkit.spec.idea import Config, IdeaSpec, cfg_id, run_id, unreachable_family
from benchkit.spec.payloads import MechanismPayload, RunPayload
from benchkit.spec.run_record import JsonDict, Measured, RunRecord, RunResult
from benchkit.stats import paired, signtest
from benchkit.verdict import (comparison, convergence, extension, mechanism,
                             plan, sweeps)
from benchkit.verdict.records import Frontier, Report, better_side
from benchkit.verdict.sections import (Baseline, Convergence, FailedRun, Incomplete,
                                      SweepRow)

BENCH_VERSION = 1
SELECTION_RULE = ("each arm's config is the one with the best validation mean over seeds "
                  "(ties: first in grid order; configs with a diverged seed are not eligible); "
                  "the test split is never used to choose")
TEST_NAME = ("two-sided intersection-union of paired sign-flip permutation tests of the mean "
             "difference: estimand, the idea's best config's expected test metric minus the "
             "comparator's best config's; null, that difference is 0. helps needs the idea, each "
             "seed measured at the configs it selects on the other seeds, to beat every "
             "comparator config; harms the mirror; each paired test's null is that each seed's "
             "difference is symmetric about 0 (exact up to 16 seeds, seeded Monte Carlo above)")


def direction_of(report: Mapping[str, Any]) -> str:
    """``"lower"`` or ``"higher"``, from ``metric_direction`` ("lower is better", ...) of a
    report or a protocol."""
    return better_side(str(report.get("metric_direction", "lower")))


RunKey = tuple[str, str, int]   # (arm, cfg id, seed): where a run sits in its comparison


def arm_sweep(runs: Mapping[RunKey, Measured], arm: str, grid: list[Config],
              seeds: list[int], table: tuple[np.ndarray, np.ndarray] | None = None
              ) -> list[SweepRow]:
    """Per grid config: the val and test values over seeds, and whether it may be selected.

    Eligibility is decided on the validation split alone (every seed present with a finite
    validation value): a non-finite *test* value must not change which config is selected,
    or the test split would take part in the choice. Read from the arm's (val, test)
    ``table`` (:func:`benchkit.verdict.sweeps.arm_tables`, made here when not given), so that
    a build reads each arm's runs once for its sweep and its comparisons."""
    val_t, test_t = table if table is not None else sweeps.arm_tables(
        runs, [arm], grid, seeds)[arm]
    val_ok, test_ok = np.isfinite(val_t), np.isfinite(test_t)
    eligible, tested = val_ok.all(axis=0).tolist(), test_ok.all(axis=0).tolist()
    none: tuple[int, ...] = ()
    diverged = test_diverged = [none] * len(grid)   # the seeds of each config that diverged
    if not (all(eligible) and all(tested)):   # a run there whose value is not finite: diverged
        ids = [cfg_id(cfg) for cfg in grid]
        here = np.array([[runs.get((arm, i, s)) is not None for i in ids] for s in seeds],
                        dtype=bool).reshape(len(seeds), len(ids))
        diverged, test_diverged = ([tuple(s for s, d in zip(seeds, row) if d) for row in m.T]
                                   for m in (here & ~val_ok, here & ~test_ok))
    # every config's summaries in one pass (each row's figures its own): test, then val
    summed = [t[:, k] for k in range(len(grid)) if eligible[k]
              for t in ((test_t, val_t) if tested[k] else (val_t,))]
    made = iter(paired.summaries(summed) if summed else [])
    sweep = []
    for k, cfg in enumerate(grid):
        result = next(made) if eligible[k] and tested[k] else None
        val_result = next(made) if eligible[k] else None
        sweep.append(SweepRow(
            cfg=cfg,
            mean=None if result is None else result.mean,
            val_mean=None if val_result is None else val_result.mean,
            eligible=eligible[k],
            diverged_seeds=diverged[k],
            result=result,
            val_result=val_result,
            test_diverged_seeds=test_diverged[k]))
    return sweep


def grid_vals(val_table: np.ndarray) -> tuple[tuple[float | None, ...], ...]:
    """An arm's validation values config by config, seed by seed (None: missing or not
    finite), from its validation table (:func:`benchkit.verdict.sweeps.arm_tables`)."""
    return tuple(tuple(None if math.isnan(v) else v for v in col) for col in val_table.T.tolist())


def every_value(values: Sequence[float | None]) -> list[float] | None:
    """``values`` when none of them is None (every seed has its value), else None."""
    present = [v for v in values if v is not None]
    return present if len(present) == len(values) else None


def selected_index(sweep: Sequence[SweepRow], direction: str) -> int | None:
    """Which config of an arm's ``sweep`` it selects on validation (the best mean over seeds,
    eligible configs only; :func:`benchkit.stats.paired.select_config`); None when none is
    eligible."""
    return paired.select_config([row.val_result.per_seed if row.eligible and row.val_result
                                 else [None] for row in sweep], direction)


def finite_or_none(x: object) -> float | None:
    """``x`` as a float when it is a finite number, else None (missing, diverged, not a number)."""
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def build_report(spec: IdeaSpec, track: str, run_payloads: Sequence[RunPayload],
                 mechanism_payloads: Sequence[MechanismPayload], *, alpha: float,
                 budget_checks: bool = True, compare: comparison.Compare | None = None,
                 frontier: Frontier | None = None) -> Report:
    """Everything about one idea on one track except the family-wise adjustment and verdicts
    (:func:`benchkit.verdict.decision.decision_of`): the report built once, its verdict
    fields None until the pipeline decides them. ``budget_checks`` False: no budget check is
    asked for (``verify``'s recheck of rows whose checks it cannot redo). ``compare`` is the
    compare stage run on the whole grid's selection (None: a bench's,
    :func:`benchkit.verdict.comparison.tested`), and ``frontier`` the report's frontier
    section: a frontier's own (:func:`benchkit.verdict.frontier.build_frontier_report`), so
    that a frontier's report is built once."""
    seeds = list(spec.seeds)
    protocol = dict(spec.protocols[track])
    direction, test = direction_of(protocol), spec.test
    runs = passed_runs(run_payloads, track)
    named = [(f"{r.point.arm}[{run_id(track, dict(r.point.cfg), r.point.seed)}]", r.message,
              r.outcome) for r in run_payloads
             if r.point is not None and r.point.track == track and r.outcome != "passed"]
    # a skipped run (a conftest's skip, a merge's run not in the store) did not fail: missing
    failed = tuple(FailedRun(run=name, message=message)
                   for name, message, outcome in sorted(named) if outcome != "skipped")
    skipped = sorted((name, message) for name, message, outcome in named if outcome == "skipped")
    arms = list(spec.arms)
    limit = spec.extend
    # the declared grid is where the rule starts; without extension, the grid the runs ran on
    declared = [dict(c) for c in ((spec.declared_grids if limit else None) or spec.grids)[track]]
    ids = CfgIds()
    resolved = extension.resolve(
        declared, lambda arm, cfg, s: _val(runs.get((arm, ids(cfg), s))), seeds, direction,
        limit, arms, fixed=spec.frontier or {})
    grid = list(resolved.grid)
    missing = [f"{arm}[{run_id(track, cfg, s)}]" for arm in arms
               for cfg in grid for s in seeds if (arm, ids(cfg), s) not in runs]
    tables = sweeps.arm_tables(runs, arms, grid, seeds)   # each arm's runs read once
    arm_sweeps = {arm: arm_sweep(runs, arm, grid, seeds, tables[arm]) for arm in arms}
    best = {arm: None if missing else selected_index(arm_sweeps[arm], direction)
            for arm in arms}
    problems: list[str] = []
    collected = {cfg_id(c) for c in spec.grids[track]}
    new_cfgs = [cfg_id(c) for c in grid if cfg_id(c) not in collected]
    if new_cfgs:
        problems.append(f"the selection sat at the edge of the grid, which extends to "
                        f"{', '.join(new_cfgs)} for both arms: run the same command again to "
                        "train the extension (stored runs are reused)")
    if missing:
        problems.append(f"{len(missing)} of {len(arms) * len(grid) * len(seeds)} runs missing "
                        "or failed")
    if skipped:
        name, message = skipped[0]
        problems.append(f"{len(skipped)} run(s) skipped, so missing: {name}"
                        + (f" ({message})" if message else "")
                        + (f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""))
    for arm in arms:
        chosen = best[arm]
        if not missing and chosen is None:
            problems.append(f"every config of the {arm} arm diverged: no config is eligible")
        elif chosen is not None and arm_sweeps[arm][chosen].test_diverged_seeds:
            bad = arm_sweeps[arm][chosen].test_diverged_seeds
            problems.append(
                f"the {arm} arm's config {cfg_id(grid[chosen])}, selected on validation, "
                f"has a non-finite test metric on seed(s) {', '.join(map(str, bad))}: no paired "
                "test on non-finite values (the test split never changes the selection)")
    complete = not problems
    n = len(seeds)
    retired = tracks.retirement(track)  # a track no yardstick any more runs, and says why
    warnings: list[str] = [retired] if retired else []
    unreachable = unreachable_family(n, len(spec.tracks), alpha)
    if unreachable:  # at the session's alpha; decide() adds the look's level when lower
        warnings.append(unreachable)
    ran = {p.nodeid.rsplit("::", 1)[-1].split("[", 1)[0] for p in mechanism_payloads}
    not_run = [name for name in spec.mechanism_tests if name not in ran]
    if not_run:  # deselected (-k/-m): the evidence below leaves them out, so say it
        warnings.append(f"mechanism test(s) {', '.join(not_run)} did not run in this session "
                        "(-k/-m?): mechanism_ok and the system verdict leave them out")
    n_div = sum(1 for r in runs.values() if r.diverged)
    if n_div:
        warnings.append(f"{n_div} run(s) diverged (non-finite loss or metric); their configs "
                        "were not eligible")
    unselected = Baseline(None, tuple(arm_sweeps["baseline"]), None)   # no comparison
    stage: comparison.Tested | None = None
    if not complete:
        converged = convergence.section(track, {}, direction)[0]
    else:  # every arm has its selected config
        picked = {arm: index for arm, index in best.items() if index is not None}
        selected = comparison.select(runs, grid, seeds, picked)
        stage = (compare or comparison.tested)(spec, runs, grid, seeds, selected, arm_sweeps,
                                               tables, direction=direction, alpha=alpha)
        # exploratory or a budget axis: none
        checks = budget_checks and not (spec.frontier or spec.overrides)
        converged, flags = convergence.section(
            track, {arm: convergence.SelectedRuns(selected.configs[arm], rs,
                                                  grid_vals(tables[arm][0]))
                    for arm, rs in selected.results.items()},
            direction, epochs=spec.epochs[track], schedule=protocol.get("schedule"),
            longer=(lambda arm, cfg: [_result(runs.get((arm, cfg_id(cfg), s))) for s in seeds])
            if checks else None, configs=len(grid), seeds=seeds, bench=spec.name)
        warnings += flags
        waiting, check_runs = pending_checks(converged, track, seeds, runs)
        if waiting:   # pending work is no result: incomplete, as a grid extension is
            problems.append(waiting)
            missing += check_runs
            complete, stage = False, None
        b_cfg = cfg_id(grid[picked["baseline"]])
        split = split_pairs(seeds, [runs[("baseline", b_cfg, s)] for s in seeds],
                            list(selected.runs["idea"]) if stage else [])
        if split:
            warnings.append(split)
        for edge in resolved.at_edge:
            steps = sum(1 for e in resolved.extensions
                        if (e.axis, e.side) == (edge.axis, edge.side))
            warnings.append(f"the {edge.arm}'s selected config {cfg_id(grid[picked[edge.arm]])} is "
                            f"at the {edge.side} edge of {edge.axis} after {steps} extension(s) "
                            f"(extend={limit}): a wider grid may tune it better")
    mech_tests = mechanism.math_verification(mechanism_payloads)
    mech_sig = mechanism.mechanism_signature(list(stage.idea_runs) if stage else [])
    planned = plan.plan_of(spec, n, run_payloads)
    if planned.exploratory_reasons:
        warnings.append("exploratory: " + "; ".join(planned.exploratory_reasons)
                        + ". Not a look of the plan: no verdict of this session counts and "
                        "every gate fails")
    report = Report(
        bench_version=BENCH_VERSION, name=spec.name, claim=spec.claim, module=spec.module,
        track=track, model=protocol["model"], metric=protocol["metric"],
        metric_direction=protocol["metric_direction"], n_seeds=n, complete=complete,
        incomplete=None if complete else Incomplete(
            reasons=tuple(problems), missing=tuple(missing), failed=failed,
            pending=tuple(new_cfgs)),
        baseline=unselected if stage is None else stage.baseline,
        idea=None if stage is None else stage.idea,
        idea_config=None if stage is None else stage.idea_config,
        idea_sweep=tuple(arm_sweeps["idea"]),
        comparison=None if stage is None else stage.comparison, frontier=frontier,
        controls={} if stage is None else stage.controls,
        budgets=None if stage is None else stage.budgets,
        log_medians=None if stage is None else stage.log_medians,
        convergence=converged, mechanism_signature=mech_sig, math_verification=mech_tests,
        mechanism_ok=mechanism.mechanism_ok(mech_sig.signatures, mech_tests.outcomes()),
        grid_extensions=extension.section(declared, limit, resolved),
        protocol={**protocol, "grid": grid, "seeds": seeds, "alpha": alpha, "extend": limit,
                  "selection": SELECTION_RULE, "test": signtest.NAMES.get(test, TEST_NAME),
                  "margin": spec.margin, "margin_reference": spec.margin_reference,
                  "claim_type": spec.claim_type},
        warnings=tuple(warnings),
        runs=tuple(sorted((r.record for r in run_payloads
                           if r.record is not None and r.record.point.track == track),
                          key=_row_order(arms, grid))),
        environment=_environment(run_payloads), sequential=planned.sequential,
        exploratory=planned.exploratory,
        practical_verdict=None, system_verdict=None)  # decided later, by the pipeline
    for arm, sw in (stage.sweeps if stage else {}).items():   # the decision's (of_record's)
        sweeps.remember(report, arm, sw)
    return report


class CfgIds:
    """:func:`benchkit.spec.idea.cfg_id` of each config object one build looks runs up by,
    made once per object (a build looks up each config once per arm and seed), which is
    held so that its ``id`` is never another config's; a build changes no config."""

    def __init__(self) -> None:
        self._held: dict[int, tuple[Config, str]] = {}
        self._by_value: dict[tuple[tuple[str, type, Any], ...], str] = {}

    def __call__(self, cfg: Config) -> str:
        held = self._held.get(id(cfg))
        if held is None:
            held = self._held[id(cfg)] = (cfg, cfg_id(cfg))
        return held[1]

    def by_value(self, cfg: Mapping[str, Any]) -> str:
        """The id of a config met once per object (each run has its own), made once per
        value where its values are text, ints, flags or floats other than zero, whose equal
        values (of one type) write one id: 0.0 and -0.0 are equal but write two."""
        key = []
        for k, v in cfg.items():
            kind = type(v)
            if kind not in _PLAIN or (kind is float and v == 0.0) or type(k) is not str:
                return cfg_id(cfg)
            key.append((k, kind, v))
        found = self._by_value.get(tuple(key))
        if found is None:
            found = self._by_value[tuple(key)] = cfg_id(cfg)
        return found


_PLAIN = {str, int, bool, float}   # config values whose equal values write one id (not 0.0)


def pending_checks(converged: Convergence, track: str, seeds: Sequence[int],
                   runs: Mapping[RunKey, Measured]) -> tuple[str | None, list[str]]:
    """Why the report waits for a budget check (None: it does not), and the check's runs
    not trained yet (``arm[run id]``): a check's look is trained by the next session."""
    waiting = {arm: a.budget_check for arm, a in converged.arms.items()
               if a.budget_check is not None and a.budget_check.pending}
    if not waiting:
        return None, []
    missing = [f"{arm}[{run_id(track, check.cfg, s)}]" for arm, check in waiting.items()
               for s in (check.checked or seeds)[:check.called_seeds or len(seeds)]
               if (arm, cfg_id(check.cfg), s) not in runs]
    which = "; ".join(f"the {arm}'s selected config at {check.epochs} epochs on "
                      f"{check.called_seeds} seeds" for arm, check in waiting.items())
    return (f"budget check pending ({which}): the next session trains it (stored runs are "
            "reused)"), missing


def split_pairs(seeds: Sequence[int], base_runs: Sequence[RunRecord],
                idea_runs: Sequence[RunRecord]) -> str | None:
    """A warning when the two runs of a seed's pair trained on different CPU types (sharded
    over unlike machines): kernels differ in their rounding there, so that pair's difference
    is not the arms' alone."""
    split = [(s, b.cpu, i.cpu) for s, b, i in zip(seeds, base_runs, idea_runs)
             if b.cpu and i.cpu and b.cpu != i.cpu]
    if not split:
        return None
    cpus = sorted({c for _, b, i in split for c in (b, i)})
    return (f"the paired runs of seed(s) {', '.join(str(s) for s, _, _ in split)} trained on "
            f"different CPU types ({'; '.join(cpus)}): their differences mix the CPUs' "
            "rounding; train every shard on one CPU type (docs/scale-out.md)")


def _result(run: RunRecord | None) -> RunResult | None:
    return None if run is None else run.result


def passed_runs(run_payloads: Sequence[RunPayload], track: str) -> dict[RunKey, RunRecord]:
    """The records of ``track``'s passed runs that carry a result, keyed by where they sit:
    (arm, cfg id, seed)."""
    records = (p.record for p in run_payloads if p.record is not None)
    ids = CfgIds()
    return {(r.point.arm, ids.by_value(r.point.cfg), r.point.seed): r for r in records
            if r.point.track == track and r.outcome == "passed" and r.result is not None}


def _val(run: RunRecord | None) -> float | None:
    """A run's validation value for the extension rule: None when missing, nan if diverged."""
    result = None if run is None else run.result
    if result is None:
        return None if run is None else float("nan")
    return float("nan") if result.diverged or result.val is None else result.val


def _row_order(arms: list[str], grid: list[Config]) -> Callable[[RunRecord], tuple[int, int, int]]:
    """The sort key of rows: by arm (declared order), then grid order (configs beyond it
    last), then seed."""
    arm_at = {arm: k for k, arm in reversed(list(enumerate(arms)))}   # each arm's first

    def order(run: RunRecord) -> tuple[int, int, int]:
        point = run.point
        cfg = point.cfg if type(point.cfg) is dict else dict(point.cfg)
        try:
            at = grid.index(cfg)
        except ValueError:   # beyond the grid
            at = len(grid)
        return arm_at.get(point.arm, len(arms)), at, point.seed
    return order


def _environment(run_payloads: Sequence[RunPayload]) -> JsonDict:
    """The first run's environment (runs without a result carry none)."""
    envs = [r.env for r in run_payloads if r.result is not None and r.env]
    return dict(envs[0]) if envs else {}
