"""The sections of ``summary.md`` that say whether the comparison was fair and the mechanism
check could fail: the claim tested, budgets, logged figures, control arms, the frontier, and
the mechanism evidence with each signature's null.

Pure Python: reads the report's record only.
"""
from __future__ import annotations

from benchkit.report.fmt import (cfg_text, interval_text, markdown_table, mechanism_word, num,
                                 pct, signed)
from benchkit.report.sentences import deciding_interval
from benchkit.verdict.controls import arm_name
from benchkit.verdict.records import Report
from benchkit.verdict.sections import Budgets, SignatureEvidence


def fairness_lines(report: Report) -> list[str]:
    return (_claim_lines(report) + _budget_lines(report) + _log_lines(report)
            + _control_lines(report) + _frontier_lines(report))


def _claim_lines(report: Report) -> list[str]:
    proto = report.protocol
    kind = proto.get("claim_type", "superiority")
    if kind == "non-inferiority":
        text = (f"non-inferiority: the idea may be worse than the baseline and every control by "
                f"less than the margin of {pct(100 * (proto.get('margin') or 0))} of their mean")
    elif kind == "equivalence":
        text = (f"equivalence: the idea must be within the margin of "
                f"{pct(100 * (proto.get('margin') or 0))} of the baseline's and every control's "
                "mean, either way (two one-sided sign-flip tests)")
    else:
        text = "superiority: the idea must beat the baseline and every control"
    return ["## Claim tested", "", f"- {text}.", ""]


def _arms(report: Report) -> list[str]:
    return ["baseline", "idea"] + [c.arm for c in report.controls.values()]


def _budget_lines(report: Report) -> list[str]:
    budgets = report.budgets
    if not budgets:
        return []
    arms = [a for a in _arms(report) if a in budgets.arms]
    names = sorted({n for a in arms for n in budgets.arms[a]})
    lines = ["## Budgets (median per arm over its selected-config runs)", ""]
    if not names:
        return lines + ["No budget recorded.", ""]
    rows = [[f"`{n}`"] + [num(budgets.arms[a].get(n)) for a in arms] for n in names]
    lines += markdown_table(["budget"] + [arm_name(a) for a in arms], rows) + [""]
    lines += _per_point_budget_lines(report, arms)
    for check in budgets.checks:
        at = "".join(f" at {k}={num(v)}" for k, v in (check.point or {}).items())
        if check.waived:
            lines.append(f"- `{check.budget}` vs {arm_name(check.arm)}{at} waived: "
                         f"{check.waived}")
        elif check.axis:
            lines.append(f"- `{check.budget}` vs {arm_name(check.arm)}{at}: "
                         f"{_exempt_on_frontier(report)}")
    for text in budgets.unmatched:
        lines.append(f"- **unmatched: {text}** (tolerance "
                     f"{pct(100 * _tolerance(budgets, text))}): no verdict")
    if budgets.matched:
        lines.append("- every budget matches within tolerance, is waived or is exempt on the "
                     "frontier")
    return lines + [""]


def _per_point_budget_lines(report: Report, arms: list[str]) -> list[str]:
    """On a frontier, each budget matched point by point (not exempt on the axis, not waived):
    its median per arm at every point, so that the report shows what each arm spends where
    (a median over the points would hide an arm that saves nothing). A budget every arm spends
    alike at every point says nothing more and is left out."""
    frontier = report.frontier
    if not frontier or not report.budgets:
        return []
    names = sorted({c.budget for c in report.budgets.checks if not c.axis and not c.waived})
    lines = []
    for name in names:
        rows = [[num(point.value)] + [num(point.budgets.arms.get(a, {}).get(name))
                                      if point.budgets else "-" for a in arms]
                for point in frontier.points]
        if len({cell for row in rows for cell in row[1:]}) == 1:
            continue
        lines += [f"`{name}` at each `{frontier.axis}` point (median per arm over its seeds; "
                  "checked between the arms at every point):", ""]
        lines += markdown_table([frontier.axis] + [arm_name(a) for a in arms], rows) + [""]
    return lines


def _exempt_on_frontier(report: Report) -> str:
    """Why a budget is not matched on a frontier: the sizes it trades vary along the frontier's
    declared axis (a config key such as ``keep``), which the budget itself is not."""
    axis = report.frontier.axis if report.frontier else None
    over = f" over `{axis}`" if axis else ""
    return f"exempt on the frontier{over} (model size varies along it): reported, not matched"


def _tolerance(budgets: Budgets, text: str) -> float:
    name = text.split(" ", 1)[0]
    return next(c.tolerance for c in budgets.checks if c.budget == name)


def _log_lines(report: Report) -> list[str]:
    logs = report.log_medians or {}
    arms = [a for a in _arms(report) if a in logs]
    names = sorted({n for a in arms for n in logs[a]})
    if not names:
        return []
    rows = [[f"`{n}`"] + [num(logs[a].get(n)) for a in arms] for n in names]
    return (["## Logged figures (run.log, median per arm over its selected-config runs)", ""]
            + markdown_table(["figure"] + [arm_name(a) for a in arms], rows) + [""])


def _control_lines(report: Report) -> list[str]:
    if not report.controls:
        return []
    rows = []
    for name, c in report.controls.items():
        comp = c.comparison
        selected = ("per point (see Frontier)" if report.frontier
                    else f"`{cfg_text(c.best_cfg)}`")
        rows.append([name, selected, num(c.full.mean),
                     signed(comp.delta_mean), f"{comp.idea_wins}/{comp.n_pairs}",
                     num(comp.p_adjusted, ".3g"), num(comp.p_adjusted_harms, ".3g"),
                     "-" if c.verdict is None else c.verdict])
    return (["## Control arms", "",
             "The idea against each control (delta = idea - control). helps rests on "
             "p_adjusted, the track's intersection-union p (the largest over its comparators, "
             "Holm across tracks); harms on p_adjusted_harms, Holm over every comparison of the "
             "idea. The practical verdict is the worst of the idea's verdicts against the "
             "baseline and every control.", ""]
            + markdown_table(["control", "selected", "test mean", "delta", "idea wins",
                              "p_adjusted", "p_adjusted_harms", "idea vs control"], rows) + [""])


def _frontier_lines(report: Report) -> list[str]:
    frontier = report.frontier
    if not frontier:
        return []
    controls = sorted({name for point in frontier.points for name in point.controls})
    rows = []
    for point in frontier.points:
        comp = point.comparison
        if comp is None or point.baseline is None or point.idea is None:
            rows.append([point.value, "-", "-", "-", "-", "incomplete", "-"]
                        + ["-"] * len(controls))
            continue
        vs = [point.controls.get(name) for name in controls]
        own = deciding_interval(comp)  # None in reports written before points carried one
        rows.append([point.value, num(point.baseline.mean), num(point.idea.mean),
                     signed(comp.delta_mean), f"{comp.idea_wins}/{comp.n_pairs}",
                     num(comp.p_value, ".3g"),
                     "-" if own is None else
                     f"{interval_text(own)} ({pct(100 * own.confidence)}, {own.of})"]
                    + [f"{signed(c.delta_mean)} ({c.idea_wins}/{c.n_pairs}, p "
                       f"{num(c.p_value, '.3g')})" if c else "-" for c in vs])
    return ([f"## Frontier over `{frontier.axis}`", "",
             "Each point benched alone (each arm selects its config there; p unadjusted, and "
             "the interval is its test's at alpha: it excludes 0 exactly when p < alpha). The "
             "comparison above pairs, seed by seed, each arm's mean over the points.", ""]
            + markdown_table([frontier.axis, "baseline", "idea", "delta", "idea wins", "p",
                              "interval of idea - baseline"]
                     + [f"idea - {name} (wins, p)" for name in controls], rows)
            + [""])


def mechanism_lines(report: Report, sentence: str) -> list[str]:
    """Signatures (with their nulls), mechanism tests and mechanism_ok in words."""
    lines = ["## Mechanism evidence", ""]
    sigs = report.mechanism_signature.signatures
    if sigs:
        rows = [[f"`{name}`", s.prediction or "-", num(s.predicted),
                 num(s.observed), num(s.tol), _within(s, s.per_seed),
                 _within(s, s.null_per_seed) if s.null_per_seed else "no null",
                 s.status or ("confirmed" if s.confirmed else "not confirmed")]
                for name, s in sigs.items()]
        lines += ["Signatures measured on the trained idea models (observed = the seed farthest "
                  "from the prediction; a null is the same statistic where the mechanism is "
                  "absent, and a check only discriminates when every null is outside tol):", ""]
        lines += markdown_table(["signature", "prediction", "predicted", "observed", "tol",
                         "seeds within tol", "nulls within tol", "status"], rows) + [""]
    else:
        lines += ["No signature recorded" + (" (no comparison: the selected runs are missing)."
                                             if report.comparison is None else "."), ""]
    tests = report.math_verification.tests
    if tests:
        lines += ["Mechanism tests:", ""]
        lines += markdown_table(["test", "outcome", "message"],
                        [[f"`{t.test}`", t.outcome, t.message or ""] for t in tests]) + [""]
    else:
        lines += ["No mechanism test ran.", ""]
    lines += [f"mechanism_ok = {mechanism_word(report.mechanism_ok)}: {sentence}.", ""]
    return lines


def _within(sig: SignatureEvidence, per_seed: tuple[float | None, ...]) -> str:
    """How many of ``per_seed`` (the signature's values, or its nulls) are within tol of the
    prediction (missing ones are not)."""
    if not per_seed or sig.predicted is None or sig.tol is None:
        return "-"
    ok = sum(1 for v in per_seed if v is not None and abs(v - sig.predicted) <= sig.tol)
    return f"{ok}/{len(per_seed)}"
