"""What ``python -m benchkit verify`` recomputes: a report's selection, p-values, family-wise
adjustment and verdicts, from its run rows, with the functions that made them.

The rows themselves are checked against the store by :mod:`benchkit.cli.verify`; this module
checks that the report's figures follow from those rows, so that a report cannot say more than
its runs do. The Holm family spans the idea's tracks: the reports beside this one in the idea's
folder (``reports/<idea>/<track>/``) are its other members. Mechanism evidence (tests and
signatures) and the declared plan are taken from the report as written. A frontier report's
pooled comparisons are recomputed (each point's selection, then each seed's mean over the
points, as :mod:`benchkit.verdict.frontier` pools them); its points' own comparisons, listed
unadjusted beside the verdict, are not.
"""
from __future__ import annotations

import copy
import statistics

from benchkit.spec.idea import cfg_id
from benchkit.stats import paired, signtest
from benchkit.verdict import build, comparison, controls, pipeline, sweeps


def _arms(report: dict) -> list[tuple[str, dict | None]]:
    """(arm, its section's selected config) of every comparator and the idea."""
    arms = [("baseline", (report.get("baseline") or {}).get("best_cfg")),
            ("idea", report.get("idea_config"))]
    return arms + [(c["arm"], c.get("best_cfg")) for c in (report.get("controls") or {}).values()]


def _test(report: dict) -> str:
    named = report["protocol"].get("test")
    return next((test for test, name in signtest.NAMES.items() if name == named), "mean")


def _selected(runs: dict, arm: str, grid: list[dict], seeds: list, direction: str):
    """The config ``arm`` selects on validation over ``grid``, as the plugin selects."""
    sweep = build.arm_sweep(runs, arm, grid, seeds)
    best = paired.select_config([sw["val_result"]["per_seed"] if sw["eligible"] else [None]
                                for sw in sweep], direction)
    return None if best is None else grid[best]


def _selected_tests(report: dict, runs: dict, arm: str, said, direction: str,
                    problems: list[str]) -> list[float] | None:
    """``arm``'s test metric per seed at the configs its rows select (over a frontier, each
    seed's mean over the points); None, with the reason in ``problems``, where the rows select
    otherwise than the report says."""
    protocol, frontier = report["protocol"], report.get("frontier")
    grid, seeds = protocol["grid"], protocol["seeds"]
    points = ([(None, grid, said)] if not frontier else
              [(p["value"], [c for c in grid if c.get(frontier["axis"]) == p["value"]],
                {"baseline": p.get("baseline_cfg"), "idea": p.get("idea_cfg")}.get(arm, "any"))
               for p in frontier["points"]])
    rows = []
    for value, sub, claimed in points:
        got = _selected(runs, arm, sub, seeds, direction)
        if got is None or claimed not in ("any", got):
            where = "" if value is None else f" at {frontier['axis']}={value}"
            problems.append(f"{arm}: the rows select {got}{where}, the report {claimed}")
            return None
        rows.append([runs[(arm, cfg_id(got), s)].test for s in seeds])
    return rows[0] if not frontier else [statistics.fmean(seed) for seed in zip(*rows)]


def comparisons(report: dict) -> tuple[list[dict] | None, list[str]]:
    """The report's comparisons (baseline first, then each control, as
    :func:`benchkit.verdict.controls.comparisons` orders them) recomputed from its rows, and
    one line per figure that differs; None when the report is incomplete."""
    protocol = report["protocol"]
    seeds, grid, alpha = protocol["seeds"], protocol["grid"], protocol["alpha"]
    runs = sweeps.runs_of(report)
    if report.get("comparison") is None:
        lacking = [arm for arm, _ in _arms(report) for cfg in grid for s in seeds
                   if (arm, cfg_id(cfg), s) not in runs]
        return None, [] if lacking or not report["complete"] else [
            "it says incomplete, but its rows hold every run"]
    direction, problems, per_arm = build.direction_of(report), [], {}
    for arm, said in _arms(report):
        if any((arm, cfg_id(cfg), s) not in runs for cfg in grid for s in seeds):
            problems.append(f"{arm}: its rows lack runs of the grid, yet the report compares")
            return None, problems
        per_arm[arm] = _selected_tests(report, runs, arm, said, direction, problems)
        if per_arm[arm] is None:
            return None, problems
    margin, groups = protocol.get("margin"), sweeps.groups_of(grid, report.get("frontier"))
    comps = [comparison.compare_arms(  # as the pipeline compares, with the same function
        per_arm[arm], per_arm["idea"], direction=direction, alpha=alpha, margin=margin,
        test=_test(report), sweeps=sweeps.from_runs(runs, arm, grid, seeds, groups))
        for arm, _ in _arms(report) if arm != "idea"]
    labels = [f"{arm} comparison" if arm != "baseline" else "comparison"
              for arm, _ in _arms(report) if arm != "idea"]
    redone = [comp.to_json() for comp in comps]  # the report's JSON, as the pipeline writes it
    for label, got, said in zip(labels, redone, controls.comparisons(report)):
        for field in ("per_seed_diffs", "delta_mean", "p_value"):
            if got[field] != said.get(field):
                problems.append(f"{label} {field} is {said.get(field)!r} in the report, "
                                f"{got[field]!r} from its rows")
    return redone, problems


def verdicts(report: dict, family: list[dict]) -> list[str]:
    """One line per p-value or verdict of ``report`` that its rows (and those of the other
    reports of its idea, ``family``, for the family-wise adjustment) do not give."""
    comps, problems = comparisons(report)
    if comps is None:
        if not problems and (report["practical_verdict"], report["system_verdict"]) != (
                "incomplete", "incomplete"):
            problems.append("an incomplete report with a verdict")
        return problems
    if problems:
        return problems
    family_size = report["comparison"].get("family_size")
    if family_size != len(family):
        return [(f"its family has {family_size} track(s), but {len(family)} report(s) of the "
                 "idea are beside it: give the idea's folder, with every track's report")]
    redone = [_redone(member, comps if member is report else comparisons(member)[0])
              for member in family]
    mine = pipeline.decide_family(redone)[family.index(report)]  # as the plugin decides
    for field in ("p_adjusted", "p_adjusted_harms", "verdict"):
        if mine["comparison"].get(field) != report["comparison"].get(field):
            problems.append(f"comparison {field} is {report['comparison'].get(field)!r} in the "
                            f"report, {mine['comparison'].get(field)!r} from its rows")
    for name, control in (mine.get("controls") or {}).items():
        said = report["controls"][name]
        for field in ("p_adjusted", "verdict"):
            got = control["comparison"][field] if field == "p_adjusted" else control[field]
            was = said["comparison"].get(field) if field == "p_adjusted" else said.get(field)
            if got != was:
                problems.append(f"control {name} {field} is {was!r} in the report, {got!r} "
                                "from its rows")
    for field in ("practical_verdict", "system_verdict"):
        if mine[field] != report[field]:
            problems.append(f"{field} is {report[field]!r} in the report, {mine[field]!r} "
                            "from its rows")
    return problems


def _redone(report: dict, comps: list[dict] | None) -> dict:
    """A copy of ``report`` whose comparisons are ``comps`` (None: an incomplete member, which
    enters the family at p = 1), ready for the family's adjustment and the decision."""
    redone = copy.deepcopy(report)
    redone["warnings"] = []
    if comps is None:
        redone["comparison"], redone["controls"] = None, {}
        return redone
    redone["comparison"] = comps[0]
    for control, comp in zip((redone.get("controls") or {}).values(), comps[1:]):
        control["comparison"] = comp
    return redone
