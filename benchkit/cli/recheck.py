"""What ``python -m benchkit verify`` recomputes: a report's selection, p-values, Holm
adjustment and verdicts, from its run rows, with the functions that made them.

The rows themselves are checked against the store by :mod:`benchkit.cli.verify`; this module
checks that the report's figures follow from those rows, so that a report cannot say more than
its runs do. The Holm family spans the idea's tracks: the reports beside this one in the idea's
folder (``reports/<idea>/<track>/``) are its other members. Mechanism evidence (tests and
signatures) and the declared plan are taken from the report as written; a frontier report's
verdict is not recomputed (verify says so and fails).
"""
from __future__ import annotations

import copy

from benchkit.spec.idea import cfg_id
from benchkit.stats import paired as stats
from benchkit.stats import signtest as robust
from benchkit.verdict import build as rep
from benchkit.verdict import controls


def _arms(report: dict) -> list[tuple[str, dict | None]]:
    """(arm, its section's selected config) of every comparator and the idea."""
    arms = [("baseline", (report.get("baseline") or {}).get("best_cfg")),
            ("idea", report.get("idea_config"))]
    return arms + [(c["arm"], c.get("best_cfg")) for c in (report.get("controls") or {}).values()]


def _test(report: dict) -> str:
    return "sign" if report["protocol"].get("test") == robust.SIGN_TEST_NAME else "mean"


def comparisons(report: dict) -> tuple[list[dict] | None, list[str]]:
    """The report's comparisons (baseline first, then each control, as
    :func:`benchkit.verdict.controls.comparisons` orders them) recomputed from its rows, and
    one line per figure that differs; None when the report is incomplete."""
    if report.get("frontier"):
        return None, ["its verdict cannot be recomputed from the rows (a frontier report); "
                      "check it by retraining (--bench-audit)"]
    protocol = report["protocol"]
    seeds, grid, alpha = protocol["seeds"], protocol["grid"], protocol["alpha"]
    runs = {(r["arm"], cfg_id(r["cfg"]), r["seed"]): r for r in report["runs"]
            if r["outcome"] == "passed"}
    if report.get("comparison") is None:
        lacking = [arm for arm, _ in _arms(report) for cfg in grid for s in seeds
                   if (arm, cfg_id(cfg), s) not in runs]
        return None, [] if lacking or not report["complete"] else [
            "it says incomplete, but its rows hold every run"]
    direction, problems, per_arm = rep.direction_of(report), [], {}
    for arm, said in _arms(report):
        sweep = rep.arm_sweep(runs, arm, grid, seeds)
        if any((arm, cfg_id(cfg), s) not in runs for cfg in grid for s in seeds):
            problems.append(f"{arm}: its rows lack runs of the grid, yet the report compares")
            return None, problems
        best = stats.select_config([sw["val_result"]["per_seed"] if sw["eligible"] else [None]
                                    for sw in sweep], direction)
        if best is None or grid[best] != said:
            problems.append(f"{arm}: the rows select {None if best is None else grid[best]}, "
                            f"the report {said}")
            return None, problems
        per_arm[arm] = [runs[(arm, cfg_id(grid[best]), s)]["test"] for s in seeds]
    margin = protocol.get("margin")
    comps = [robust.apply(stats.compare(per_arm[arm], per_arm["idea"], direction=direction,
                                        alpha=alpha, margin=margin), _test(report))
             for arm, _ in _arms(report) if arm != "idea"]
    labels = [f"{arm} comparison" if arm != "baseline" else "comparison"
              for arm, _ in _arms(report) if arm != "idea"]
    for label, got, said in zip(labels, comps, controls.comparisons(report)):
        for field in ("per_seed_diffs", "delta_mean", "p_value"):
            if got[field] != said.get(field):
                problems.append(f"{label} {field} is {said.get(field)!r} in the report, "
                                f"{got[field]!r} from its rows")
    return comps, problems


def verdicts(report: dict, family: list[dict]) -> list[str]:
    """One line per p-value or verdict of ``report`` that its rows (and those of the other
    reports of its idea, ``family``, for Holm) do not give."""
    comps, problems = comparisons(report)
    if comps is None:
        if not problems and (report["practical_verdict"], report["system_verdict"]) != (
                "incomplete", "incomplete"):
            problems.append("an incomplete report with a verdict")
        return problems
    if problems:
        return problems
    ps, mine = [], None
    for member in family:
        member_comps = comps if member is report else comparisons(member)[0]
        if member is report:
            mine = len(ps)
        ps += [c["p_value"] for c in member_comps] if member_comps else [1.0]
    family_size = report["comparison"].get("family_size")
    if family_size != len(ps):
        return [f"its Holm family has {family_size} comparison(s), but {len(ps)} are in the "
                "reports beside it: give the idea's folder, with every track's report"]
    adjusted = stats.holm(ps)
    redone = copy.deepcopy(report)
    redone["comparison"], redone["warnings"] = comps[0], []
    for control, comp, p in zip((redone.get("controls") or {}).values(), comps[1:],
                                adjusted[mine + 1:]):
        control["comparison"] = {**comp, "p_adjusted": p, "family_size": family_size}
    rep.decide(redone, adjusted[mine], family_size)
    for field in ("p_adjusted", "verdict"):
        if redone["comparison"][field] != report["comparison"].get(field):
            problems.append(f"comparison {field} is {report['comparison'].get(field)!r} in the "
                            f"report, {redone['comparison'][field]!r} from its rows")
    for name, control in (redone.get("controls") or {}).items():
        said = report["controls"][name]
        for field in ("p_adjusted", "verdict"):
            got = control["comparison"][field] if field == "p_adjusted" else control[field]
            was = said["comparison"].get(field) if field == "p_adjusted" else said.get(field)
            if got != was:
                problems.append(f"control {name} {field} is {was!r} in the report, {got!r} "
                                "from its rows")
    for field in ("practical_verdict", "system_verdict"):
        if redone[field] != report[field]:
            problems.append(f"{field} is {report[field]!r} in the report, {redone[field]!r} "
                            "from its rows")
    return problems
