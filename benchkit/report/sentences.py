"""The verdicts of a report in plain words, each naming the level it was tested at: the
sentences summary.md opens with. Pure Python: reads the report's record only."""
from __future__ import annotations

from typing import NamedTuple

from benchkit.report.fmt import num, pct, rel_pct, signed
from benchkit.report.reading import non_discriminating, tested_level, unmatched_reason
from benchkit.verdict.decision import verdict_of_words
from benchkit.verdict.records import Comparison, ControlArm, Report
from benchkit.verdict.sections import SignatureEvidence


def _seed_word(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def deciding(report: Report) -> tuple[str, Comparison | None, ControlArm | None]:
    """(the name of the arm whose comparison decided the verdict, that comparison, the control's
    report section or None for the baseline): the control the idea did worst against when one
    decided, else the baseline."""
    arm = report.decided_by or "baseline"
    control = report.controls.get(arm.removeprefix("control:"))
    if arm.startswith("control:") and control is not None:
        return arm.removeprefix("control:"), control.comparison, control
    return "baseline", report.comparison, None


def verdict_against(report: Report, arm: str) -> str | None:
    """The verdict against one comparator: a control's section holds it; the baseline's
    comparison carries it in the reference format's words (helps and harms only)."""
    if arm != "baseline":
        control = report.controls.get(arm.removeprefix("control:"))
        return None if control is None else control.verdict
    return verdict_of_words(None if report.comparison is None else report.comparison.verdict)


def decided_p(comp: Comparison, verdict: str | None) -> float:
    """The p a verdict against this comparison rests on: harms on ``p_adjusted_harms`` (Holm
    over every comparison of the idea), any other on ``p_adjusted`` (the track's
    intersection-union p, Holm across tracks); ``p_value`` where nothing was adjusted."""
    p = comp.p_adjusted_harms if verdict == "harms" else comp.p_adjusted
    return comp.p_value if p is None else p


def not_run(report: Report) -> list[str]:
    """The runs an incomplete report lacks that did not run and fail (its ``missing`` less its
    ``failed``): not run in any session, or not in the store; a failed run is listed apart."""
    if report.incomplete is None:
        return []
    failed = {f.run for f in report.incomplete.failed}
    return [m for m in report.incomplete.missing if m not in failed]


class Shown(NamedTuple):
    """The interval a comparison reports: its ends (None: unbounded), its confidence, and
    whether it is of the ``"mean"`` or the ``"median"`` difference."""

    lo: float | None
    hi: float | None
    confidence: float
    of: str


def deciding_interval(comp: Comparison) -> Shown | None:
    """The one interval a comparison reports: the deciding test's inversion at the level the
    verdict was decided at (``sign_ci`` under the sign test, of the median difference; else
    ``signflip_ci``, of the mean); None for a comparison without one (a control's, or a report
    written before)."""
    own = comp.sign_ci if comp.test == "sign" else comp.signflip_ci
    if own is None:
        return None
    return Shown(own.lo, own.hi, own.confidence, "median" if comp.test == "sign" else "mean")


def practical_sentence(report: Report) -> str:
    """The practical verdict in plain words, with the numbers that decided it."""
    comp = report.comparison
    verdict = report.practical_verdict
    if verdict == "unmatched":
        return ("no verdict: " + unmatched_reason(report) + "; match the budgets, "
                "waive one with its reason (budget_waiver=) or bench it as a frontier")
    if comp is None or verdict == "incomplete":
        reasons = "; ".join(report.incomplete.reasons if report.incomplete else ()) \
            or "runs missing"
        return f"{reasons}: no verdict"
    _, _, control = deciding(report)
    if control is not None:  # a control's comparison is the worst: it decides the verdict
        return (_decision(verdict, control.comparison, control.full.mean,
                          f"than the control {control.arm.removeprefix('control:')}")
                + "; against the baseline: " + _decision(comp.verdict, comp, None, "",
                                                         brief=True))
    base_mean = report.baseline.full.mean if report.baseline.full is not None else None
    return _decision(verdict, comp, base_mean, "")


def _decision(verdict: str | None, comp: Comparison, other_mean: float | None,
              than: str, *, brief: bool = False) -> str:
    """One comparison in words: the idea against the baseline (``than`` empty) or a control.
    ``brief``: the numbers only (the baseline comparison beside a control's verdict)."""
    n = comp.n_pairs
    level = tested_level(comp)
    p_used = decided_p(comp, verdict)
    adjusted = ("Holm over every comparison of the idea" if verdict == "harms"
                else "Holm across tracks" if (comp.family_size or 1) > 1 else None)
    p_txt = (("sign-test " if comp.test == "sign" else "") + f"p = {p_used:.3g}"
             + (f" ({adjusted})" if adjusted and p_used != comp.p_value else ""))
    # the sign test: the median
    delta = comp.median_delta if comp.median_delta is not None else comp.delta_mean
    if brief:
        better = (delta < 0) == comp.direction.startswith("lower")
        return (f"{'better' if better else 'worse'} by {abs(delta):.4g}, {p_txt} at level "
                f"{num(level)}")
    of = "the control" if than else "the baseline"
    size = ("a median of " if comp.median_delta is not None else "") + (
        f"{abs(delta):.4g} ({rel_pct(delta, other_mean)} of {of})")
    than = f" {than}" if than else ""
    if verdict == "helps":
        return f"the idea is significantly better{than} by {size}, {p_txt} < level {num(level)}"
    if verdict == "harms":
        return f"the idea is significantly worse{than} by {size}, {p_txt} < level {num(level)}"
    diffs = comp.per_seed_diffs
    if diffs and all(d == 0 for d in diffs):
        mde_txt = (f"the two arms gave identical results on all {_seed_word(n)} (every diff is "
                   "0), so there is no difference to detect")
    elif comp.mde == 0:
        mde_txt = (f"the per-seed diffs have no spread (all {signed(diffs[0])}), so the MDE is "
                   f"0 and only the number of seeds limits p (smallest reachable with "
                   f"{_seed_word(n)}: {2.0 ** (1 - n):.3g})")
    else:
        mde_txt = (f"with {_seed_word(n)} this bench cannot see effects smaller than "
                   f"{pct(comp.mde_rel_pct)} of {of} (MDE {num(comp.mde)})")
    if verdict == "equivalent":
        eq = comp.equivalence
        eq_level = None if eq is None else eq.level
        return (f"shown equivalent to {of} within the margin of "
                f"{pct(100 * (eq.margin_rel if eq else 0))} either way (two one-sided sign-flip "
                f"tests, p = {num(eq and eq.p_worse, '.3g')} against worse and "
                f"{num(eq and eq.p_better, '.3g')} against better, both < level "
                f"{num(eq_level, '.4g')}"
                + ("" if eq_level == level else f": the look's level {num(level)} over "
                   f"{comp.family_size} track(s)") + f"); the difference is "
                f"{signed(delta)} ({rel_pct(delta, other_mean)} of {of}), {p_txt}")
    if verdict == "non-inferior":
        ni = comp.noninferiority
        within = (f"shown to be worse by less than the margin of "
                  f"{pct(100 * (ni.margin_rel if ni else 0))} of {of} (one-sided sign-flip "
                  f"p = {num(ni and ni.p_value, '.3g')}); {mde_txt}")
        # a harm within the margin: non-inferior, and the harm is stated
        if level is not None and p_used < level:
            return (f"significantly worse{than} by {size}, {p_txt} < level {num(level)}, but "
                    + within)
        return (f"not significantly better{than} at level {num(level)} ({p_txt}), but "
                + within)
    return f"not significant{than} at level {num(level)} ({p_txt}): {mde_txt}"



def mechanism_sentence(report: Report) -> str:
    ok = report.mechanism_ok
    if ok is None and non_discriminating(report):
        return ("mechanism not shown: signature(s) "
                + ", ".join(non_discriminating(report))
                + " pass, but so does their null (non-discriminating)")
    if ok is None:
        return _no_evidence(report)
    if ok == 1:
        return "mechanism confirmed: every signature within tolerance, every mechanism test passed"
    bad = [failing_signature(name, s, report.n_seeds)
           for name, s in report.mechanism_signature.signatures.items() if not s.confirmed]
    failed = [t.test for t in report.math_verification.tests if t.outcome != "passed"]
    parts = []
    if bad:
        parts.append("signature(s) not confirmed: " + "; ".join(bad))
    if failed:
        parts.append("mechanism test(s) not passed: " + ", ".join(failed))
    return "mechanism not confirmed: " + ("; ".join(parts) or "see below")


def failing_signature(name: str, sig: SignatureEvidence, n_seeds: int) -> str:
    """A signature that was not confirmed, in words: its name, the range of its values over the
    idea's selected runs (seeds; on a frontier, seeds times points) against the predicted value
    and tolerance, how many were within, and the prediction that does not hold, so that the
    verdict says what failed and by how much."""
    values = [v for v in sig.per_seed if v is not None]
    unit = "seed" if len(sig.per_seed) == n_seeds else "run"
    if not values:
        return f"{name} (not recorded on any {unit})"
    low, high = min(values), max(values)
    spread = num(low) if low == high else f"{num(low)} to {num(high)}"
    within = sum(1 for v in values if abs(v - sig.predicted) <= sig.tol)
    missing = len(sig.per_seed) - len(values)
    said = (f"{name} {spread} over {len(values)} {unit}s where {num(sig.predicted)} ± "
            f"{num(sig.tol)} was predicted ({within} of {len(values)} within"
            + (f"; not recorded on {missing}" if missing else "") + ")")
    if sig.prediction:
        said += (f": \"{sig.prediction}\" does not hold"
                 + (f" on every {unit}" if within else ""))
    return said


def _no_evidence(report: Report) -> str:
    """Why ``mechanism_ok`` is null: only a signature measured on the trained runs, against a
    discriminating null, is evidence that the mechanism works in the trained model."""
    tests = [t for t in report.math_verification.tests if t.outcome != "skipped"]
    signatures = sorted(report.mechanism_signature.signatures)
    if signatures:
        return ("no mechanism evidence from the trained runs: signature(s) "
                + ", ".join(signatures) + " have no null to discriminate against")
    if tests:
        passed = sum(t.outcome == "passed" for t in tests)
        return (f"no mechanism evidence from the trained runs: {passed} of {len(tests)} "
                "mechanism test(s) passed, which check the method, not the trained model "
                "(a signature measured on the runs, with a discriminating null, confirms it)")
    return "no mechanism evidence: the idea states no signature and no mechanism test"


def system_word(report: Report) -> str:
    """``system_verdict`` for people: ``not shown`` where the reference format's ``failed``
    only means the evidence is missing (no significant effect either way and no mechanism
    evidence, ``mechanism_ok`` null), not evidence against the idea; else the verdict."""
    verdict = str(report.system_verdict)
    if verdict == "failed" and missing_evidence(report):
        return "not shown"
    return verdict


def missing_evidence(report: Report) -> bool:
    """A ``failed`` system verdict that rests on no evidence against the idea: its practical
    verdict is not harms and its mechanism was neither confirmed nor refuted."""
    return (report.system_verdict == "failed" and report.mechanism_ok is None
            and report.practical_verdict not in ("harms", "incomplete", "unmatched"))


def system_sentence(report: Report) -> str:
    verdict = report.system_verdict
    practical = report.practical_verdict
    ok = report.mechanism_ok
    if verdict == "incomplete" or report.comparison is None:
        return "no verdict without a complete comparison"
    if verdict == "unmatched":
        return "no verdict: the arms' budgets differ (see Budgets)"
    if verdict == "worked":
        return "the idea helps and its mechanism is confirmed"
    if verdict == "partial":
        if practical == "helps":
            return "the idea helps, but its mechanism is not confirmed"
        return (f"the mechanism evidence holds, but the idea does not significantly help "
                f"({practical})")
    if practical == "harms":
        return "the idea significantly harms"
    why = ("its mechanism is not confirmed" if ok is not None else
           "no mechanism evidence was stated" if _no_evidence(report).startswith(
               "no mechanism evidence: the idea states") else
           "there is no mechanism evidence from the trained runs")
    return f"the idea does not significantly help ({practical}) and {why}"
