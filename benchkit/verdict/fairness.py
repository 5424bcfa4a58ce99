"""Fair and falsifiable comparisons: budgets, control arms, signature nulls, claim types.

A verdict is only worth its comparison. This module holds the rules that keep it honest:

* **Budgets.** Every run records what it spent and kept (``run.fit``: trainable ``params`` of
  the last model and optimizer ``steps``; ``run.budget``: anything declared). The report
  compares the median per arm; an idea whose budget differs from a comparator's by more than
  the tolerance gets no verdict (``unmatched``) and fails every gate, unless the budget is
  waived with a stated reason or is the bench's frontier axis (``params`` on a frontier).
* **Controls.** ``pytest.mark.arm("control", name=...)`` arms are benched like the baseline;
  the idea is compared with each (Holm over every comparison of the idea) and its practical
  verdict is the worst of its verdicts against the baseline and every control.
* **Signature nulls.** A signature that passes but whose null (the same statistic where the
  mechanism is absent) passes too is ``non_discriminating``: it cannot count toward
  ``mechanism_ok = 1``. One without a null is confirmed with its discrimination unchecked.
* **Claim types.** ``claim_type="superiority"`` (default), ``"non-inferiority"`` or
  ``"equivalence"`` (both need ``margin=``; see :mod:`benchkit.stats.equivalence`), stated in the
  report and summary.

Pure Python over payloads and report dicts: the controller never imports torch.
"""
from __future__ import annotations

import ast
import inspect
import math
import numbers
import statistics
import textwrap

from benchkit.stats import equivalence, paired as stats
from benchkit.spec import CLAIM_TYPES, CONTROL, SpecError

DEFAULT_TOLERANCE = 0.05          # relative, for every budget unless declared otherwise
FRONTIER_BUDGET = "params"        # the budget a frontier trades against: reported, not matched
VERDICT_ORDER = ("harms", "inconclusive", "non-inferior", "helps", "equivalent")  # worst first


# -- the bench marker's fairness arguments -------------------------------------------------------
def parse_fairness(kw: dict, where: str, margin: float | None) -> dict:
    """claim_type, budget_tolerance, budget_waiver and frontier of ``pytest.mark.bench``."""
    claim_type = kw.get("claim_type", "superiority")
    if claim_type not in CLAIM_TYPES:
        raise SpecError(f"{where}: claim_type={claim_type!r}; valid: "
                        f"{', '.join(map(repr, CLAIM_TYPES))}")
    if claim_type != "superiority" and margin is None:
        raise SpecError(f"{where}: claim_type={claim_type!r} needs margin=<fraction of the "
                        "baseline mean in (0, 1)>: the largest " + (
                            "loss" if claim_type == "non-inferiority" else
                            "difference either way") + " the claim accepts")
    given = kw.get("budget_tolerance", {})
    tolerance = {"*": given} if _number(given) else given
    if not isinstance(tolerance, dict) or not all(
            isinstance(k, str) and _number(v) and 0 <= v < math.inf for k, v in tolerance.items()):
        raise SpecError(f"{where}: budget_tolerance={given!r} must be a number >= 0 (every "
                        "budget) or a dict of budget name -> number >= 0, e.g. "
                        "{'params': 0.1}: the largest relative difference that still matches")
    waiver = kw.get("budget_waiver", {})
    if not isinstance(waiver, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in waiver.items()):
        raise SpecError(f"{where}: budget_waiver={waiver!r} must be a dict of budget name -> "
                        "the reason it may differ, e.g. {'params': 'the claim is about ...'}")
    frontier = kw.get("frontier")
    if frontier is not None:
        valid = "valid: one axis and at least two values, e.g. {'keep': [0.125, 0.25, 0.5]}"
        if not isinstance(frontier, dict) or len(frontier) != 1:
            raise SpecError(f"{where}: frontier={frontier!r}; {valid}")
        (axis, values), = frontier.items()
        if (not isinstance(axis, str) or not axis or isinstance(values, (str, bytes))
                or not hasattr(values, "__iter__")):
            raise SpecError(f"{where}: frontier={frontier!r}; {valid}")
        values = list(values)
        if len(values) < 2 or not all(isinstance(v, (str, numbers.Real)) and not isinstance(
                v, bool) for v in values) or len(set(map(repr, values))) != len(values):
            raise SpecError(f"{where}: frontier values {values!r} must be two or more distinct "
                            f"numbers or strings; {valid}")
        frontier = {axis: tuple(float(v) if isinstance(v, float) else v for v in values)}
    return {"claim_type": claim_type, "budget_tolerance": {k: float(v) for k, v in
                                                           tolerance.items()},
            "budget_waiver": dict(waiver), "frontier": frontier}


def _number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def tolerance_of(spec: dict, budget: str) -> float:
    declared = spec.get("budget_tolerance") or {}
    return float(declared.get(budget, declared.get("*", DEFAULT_TOLERANCE)))


# -- budgets ------------------------------------------------------------------------------------
def median_figures(runs: list[dict], key: str) -> dict:
    """name -> median over ``runs`` of ``run[key][name]`` (runs lacking it are left out)."""
    names = sorted({n for r in runs for n in (r.get(key) or {})})
    out = {}
    for name in names:
        values = [r[key][name] for r in runs if (r.get(key) or {}).get(name) is not None]
        out[name] = float(statistics.median(values)) if values else None
    return out


def budget_section(selected: dict[str, list[dict]], spec: dict) -> dict:
    """Per arm the median of each budget over its selected-config runs, and the idea's budget
    checked against the baseline's and every control's."""
    axis_exempt = FRONTIER_BUDGET if spec.get("frontier") else None
    medians = {arm: median_figures(runs, "budgets") for arm, runs in selected.items()}
    waiver = spec.get("budget_waiver") or {}
    checks = []
    idea = medians.get("idea", {})
    for arm, figures in medians.items():
        if arm == "idea":
            continue
        for name in sorted(set(idea) | set(figures)):
            mine, theirs = idea.get(name), figures.get(name)
            tol = tolerance_of(spec, name)
            rel = (None if mine is None or theirs is None else
                   abs(mine - theirs) / abs(theirs) if theirs else
                   (0.0 if mine == theirs else math.inf))
            checks.append({
                "budget": name, "arm": arm, "idea": mine, "other": theirs,
                "rel_diff": None if rel is None or math.isinf(rel) else rel, "tolerance": tol,
                "matched": rel is not None and rel <= tol,
                "waived": waiver.get(name), "axis": name == axis_exempt})
    unmatched = [f"{c['budget']} idea {_fig(c['idea'])} vs {arm_name(c['arm'])} "
                 f"{_fig(c['other'])}" for c in checks
                 if not (c["matched"] or c["waived"] or c["axis"])]
    return {"arms": medians, "checks": checks, "matched": not unmatched, "unmatched": unmatched,
            "waivers": dict(waiver)}


def _fig(x) -> str:
    return "none" if x is None else f"{x:.6g}"


def arm_name(arm: str) -> str:
    return arm.removeprefix(CONTROL) + " (control)" if arm.startswith(CONTROL) else arm


# -- controls -----------------------------------------------------------------------------------
def control_section(arm: str, sweep: list[dict], best_cfg: dict, control: list, idea: list,
                    *, direction: str, alpha: float, margin: float | None) -> dict:
    """One control arm as the baseline is reported, plus the idea compared with it."""
    return {"arm": arm, "best_cfg": best_cfg, "sweep": sweep,
            "full": stats.summarize(control),
            "comparison": stats.compare(control, idea, direction=direction, alpha=alpha,
                                        margin=margin)}


def comparisons(report: dict) -> list[dict]:
    """Every comparison of the idea in a report, baseline first: the Holm family's members."""
    if report.get("comparison") is None:
        return []
    return [report["comparison"]] + [c["comparison"] for c in
                                     (report.get("controls") or {}).values()]


def finish_verdicts(report: dict, level: float) -> None:
    """The idea's practical verdict against every comparator (worst of them), then withheld as
    ``unmatched`` when a budget does not match; the system verdict follows."""
    report["decided_by"] = None
    if report.get("comparison") is None:
        return
    direction = "lower" if report["metric_direction"].startswith("lower") else "higher"
    verdicts = [(report["practical_verdict"], "baseline")]
    for control in (report.get("controls") or {}).values():
        control["verdict"] = equivalence.verdict(
            control["comparison"], control["full"]["per_seed"], report["idea"]["per_seed"],
            direction=direction, level=level,
            family_size=control["comparison"].get("family_size") or 1,
            claim_type=report["protocol"].get("claim_type", "superiority"))
        verdicts.append((control["verdict"], control["arm"]))
    # the worst verdict decides; on a tie the baseline comparison is the one named
    report["practical_verdict"], report["decided_by"] = min(
        verdicts, key=lambda v: VERDICT_ORDER.index(v[0]))
    report["system_verdict"] = stats.system_verdict(report["practical_verdict"],
                                                    report["mechanism_ok"])
    budgets = report.get("budgets")
    if budgets and not budgets["matched"]:
        report["practical_verdict"] = report["system_verdict"] = "unmatched"


def unmatched_reason(report: dict) -> str:
    return "unmatched (" + "; ".join(report["budgets"]["unmatched"]) + ")"


# -- signatures ---------------------------------------------------------------------------------
def signature_status(confirmed: bool, entries: list[dict | None], predicted: float,
                     tol: float) -> tuple[str, bool | None, list]:
    """(status, discriminating, null per seed) of one aggregated signature.

    ``discriminating`` is None without a null, True when every seed's null lies outside
    ``tol`` of the prediction, False when any seed's null is within it (that seed's check could
    not have failed). status: ``not confirmed``, ``non_discriminating``, ``confirmed``, or
    ``confirmed (discrimination unchecked)`` when no null was given."""
    nulls = [e.get("null") if e else None for e in entries]
    has_null = [bool(e and e.get("has_null")) for e in entries]
    if not any(has_null):
        discriminating = None
    else:
        discriminating = all(h and (n is None or abs(n - predicted) > tol)
                             for h, n in zip(has_null, nulls))
    if not confirmed:
        status = "not confirmed"
    elif discriminating is False:
        status = "non_discriminating"
    elif discriminating is None:
        status = "confirmed (discrimination unchecked)"
    else:
        status = "confirmed"
    return status, discriminating, nulls if any(has_null) else []


def mechanism_ok(signatures: dict, tests_passed: list[bool]) -> int | None:
    """stats.mechanism_ok, except that a non-discriminating signature is no evidence: with one,
    mechanism_ok is never 1 (0 when anything failed, null otherwise)."""
    ok = stats.mechanism_ok([s["confirmed"] for s in signatures.values()], tests_passed)
    if ok == 1 and any(s.get("status") == "non_discriminating" for s in signatures.values()):
        return None
    return ok


def non_discriminating(report: dict) -> list[str]:
    """Names of the report's signatures that pass, but whose null passes too."""
    sigs = (report.get("mechanism_signature") or {}).get("signatures") or {}
    return [name for name, s in sigs.items() if s.get("status") == "non_discriminating"]


def signatures_that_cannot_fail(function) -> list[str]:
    """What the source of an arm shows about its ``run.signature`` calls before anything runs:
    a literal null within ``tol`` of a literal prediction, or a literal observed value, is a
    check that cannot fail (a collection-time warning; the report judges the measured nulls)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "signature"):
            continue
        given = dict(zip(("name", "observed", "predicted", "tol", "prediction", "null"),
                         call.args))
        given.update({k.arg: k.value for k in call.keywords if k.arg})
        value = {k: _literal(v) for k, v in given.items()}
        name = value.get("name") if isinstance(value.get("name"), str) else "?"
        predicted, tol, null = value.get("predicted"), value.get("tol"), value.get("null")
        if isinstance(value.get("observed"), (int, float)):
            found.append(f"run.signature({name!r}): observed is the constant "
                         f"{value['observed']!r}, so the check cannot fail; pass the statistic "
                         "measured on the trained model")
        elif None not in (predicted, tol, null) and abs(null - predicted) <= tol:
            found.append(f"run.signature({name!r}): its null {null!r} is within tol {tol!r} of "
                         f"the prediction {predicted!r}, so the check cannot tell the mechanism "
                         "from its absence")
    return found


def _literal(node):
    """A number or string written literally in the call, else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None
