"""The decide stage, the one home of the verdict words and rules: a report's comparisons (their
figures from :mod:`benchkit.stats`, adjusted over the family) in, its verdicts out, once.

The verdict pipeline (:mod:`benchkit.verdict.pipeline`) reads top to bottom: **select** each
arm's config on validation and **compare** the idea with each comparator on test
(:mod:`benchkit.verdict.build`, :mod:`benchkit.verdict.comparison`), adjust the family (Holm,
:func:`benchkit.verdict.controls.adjusted`), **decide** (here, :func:`decision_of`, on the
:class:`benchkit.verdict.records.Comparison` records: the look's level, the planning figures,
the margin tests, the idea's verdict against each comparator under its claim, the worst of
them, and the futility advice, as a frozen :class:`Decision` that :meth:`Decision.applied`
puts in the report's record), then **gate** (:func:`benchkit.report.session.gate_failure`
reads it). The report is a :class:`benchkit.verdict.records.Report` throughout.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from benchkit.codec import replaced
from benchkit.stats import (equivalence, futility, paired, planning, selection, sequential,
                            signflip, signtest)
from benchkit.stats.pairtest import worse_sign
from benchkit.stats.values import checked_direction
from benchkit.verdict import margins, sweeps
from benchkit.verdict.plan import Futility
from benchkit.verdict.records import Comparison, ControlArm, Interval, Report
from benchkit.verdict.sections import Budgets

PRACTICAL = ("helps", "harms", "non-inferior", "inconclusive", "equivalent")
VERDICT_ORDER = ("harms", "inconclusive", "non-inferior", "helps", "equivalent")  # worst first
REFERENCE_WORDS = {"helps": "idea better (significant)", "harms": "idea worse (significant)"}
EQUIVALENCE_CLAIM = "equivalence"


def reference_words(verdict: str) -> str:
    """The reference format's words (a comparison's ``verdict``) for a practical verdict."""
    return REFERENCE_WORDS.get(verdict, "no significant win")


def rank(verdict: str | None) -> int:
    """Where a practical verdict stands, worst lowest (:data:`VERDICT_ORDER`): harms 0 up to
    equivalent 4; a report with none (incomplete, unmatched) is -1, below all."""
    return VERDICT_ORDER.index(verdict) if verdict in VERDICT_ORDER else -1


def meets(gate: str, practical: str | None, system: str | None) -> bool:
    """Whether a complete report's verdicts meet ``--bench-gate`` ``gate`` (other than off):
    not-harms, non-inferior (helps, non-inferior or equivalent), equivalent, helps, or worked
    (the system verdict)."""
    return {"not-harms": practical != "harms",
            "non-inferior": practical in ("helps", "non-inferior", "equivalent"),
            "equivalent": practical == "equivalent",
            "helps": practical == "helps",
            "worked": system == "worked"}[gate]


def verdict_of_words(words: str | None) -> str | None:
    """The practical verdict a comparison's reference-format ``verdict`` words name (helps or
    harms); None for "no significant win", which several verdicts share, and for none."""
    return next((v for v, w in REFERENCE_WORDS.items() if w == words), None)


def with_reference_words(comp: Comparison, verdict: str) -> Comparison:
    """``comp`` with its reference-format fields (``verdict``, ``system_worked``), set once
    from the verdict decided against that comparator at the planned level."""
    return replaced(comp, verdict=reference_words(verdict),
                               system_worked=verdict == "helps")


def practical_verdict(p: float, delta_mean: float, direction: str, alpha: float,
                      non_inferior: bool | None = None, p_harms: float | None = None) -> str:
    """helps (significantly better) > non-inferior (shown within the margin, even when also
    significantly worse: a harm smaller than the margin is what non-inferiority allows) >
    harms (significantly worse, on ``p_harms`` when given: its own family adjustment) >
    inconclusive."""
    if p < alpha and better(delta_mean, direction):
        return "helps"
    if non_inferior is True:
        return "non-inferior"
    if (p if p_harms is None else p_harms) < alpha and better(-delta_mean, direction):
        return "harms"
    return "inconclusive"


def better(delta: float, direction: str) -> bool:
    """Whether a difference (idea - comparator) is strictly better in the metric's
    ``direction`` ("lower" or "higher")."""
    return delta < 0 if checked_direction(direction) == "lower" else delta > 0


def system_verdict(practical: str, mechanism_ok: int | None) -> str:
    """worked: helps with its mechanism confirmed; failed: harms, or no help and no confirmed
    mechanism; partial: the rest (helps without mechanism, or mechanism without help)."""
    if practical not in PRACTICAL:
        raise ValueError(f"practical must be one of {PRACTICAL}, got {practical!r}")
    if practical == "helps" and mechanism_ok == 1:
        return "worked"
    if practical == "harms" or (practical != "helps" and mechanism_ok != 1):
        return "failed"
    return "partial"


@dataclass(frozen=True)
class Decision:
    """The idea's verdicts: ``practical`` (helps, harms, non-inferior, equivalent,
    inconclusive, unmatched or incomplete), ``system`` (worked, partial, failed, or the
    practical verdict when none is given) and the comparator whose verdict decided; and what
    the decision made of the report's comparisons: the baseline's and each control's,
    decided (``controls``: each control's arm by name, with its verdict and comparison), the
    warnings it adds and the futility advice it assessed."""

    practical: str
    system: str
    decided_by: str | None = None
    comparison: Comparison | None = None
    controls: dict[str, ControlArm] = field(default_factory=dict)   # by name, decided
    warnings: tuple[str, ...] = ()
    futility: Futility | None = None   # the declared futility advice, assessed at this look

    @classmethod
    def from_verdicts(cls, against: list[tuple[str, str]], mechanism_ok: int | None,
                      budgets: Budgets | None) -> Decision:
        """The idea's verdicts from its verdict against each comparator, ``(verdict, arm)``,
        baseline first: the worst of them decides (on a tie, the first named), and the system
        verdict adds the mechanism. Withheld as ``unmatched`` when a budget does not match."""
        practical, decided_by = min(against, key=lambda v: VERDICT_ORDER.index(v[0]))
        if budgets is not None and not budgets.matched:
            return cls("unmatched", "unmatched", decided_by)
        return cls(practical, system_verdict(practical, mechanism_ok), decided_by)

    def applied(self, report: Report) -> Report:
        """``report`` decided: a new record with this decision's comparisons, controls'
        verdicts, warnings (after the report's), futility advice and verdicts."""
        return replaced(
            report, comparison=report.comparison if self.comparison is None else self.comparison,
            controls={**report.controls, **self.controls}, warnings=report.warnings + self.warnings,
            sequential=report.sequential if self.futility is None else
            replaced(report.sequential, futility=self.futility),
            practical_verdict=self.practical, system_verdict=self.system,
            decided_by=self.decided_by)


def claim_verdict(comp: Comparison, baseline: Sequence[float], idea: Sequence[float], *,
                  direction: str, level: float, family_size: int, claim_type: str,
                  margin_level: float | None = None,
                  sweeps: selection.Sweeps | None = None) -> tuple[str, Comparison]:
    """The practical verdict of one comparison at this look's ``level``, and the comparison
    with its margin tests (non-inferiority when a margin is declared, TOST under an
    equivalence claim) redone at ``margin_level`` (default ``level``; the union-bound level
    under an exact boundary, which is calibrated for the two-sided test only) / family_size
    (Holm's first step); selection-aware (:mod:`benchkit.stats.selection`) when the arms'
    ``sweeps`` are given, else on the selected configs' per-seed values. Under an equivalence
    claim a shown equivalence outranks a significant difference."""
    test_level = margin_test_level(level, margin_level, family_size)
    ni = comp.noninferiority
    if ni is not None and sweeps is not None:
        ni = selection.noninferiority(sweeps, direction, ni.margin_rel, test_level)
    elif ni is not None:
        ni = paired.noninferiority(baseline, idea, direction=direction, margin=ni.margin_rel,
                                   alpha=test_level)
    comp = replaced(comp, noninferiority=ni)
    if claim_type == EQUIVALENCE_CLAIM and ni is not None:
        comp = replaced(comp, equivalence=(
            equivalence.tost(baseline, idea, direction=direction, margin=ni.margin_rel,
                             level=test_level)
            if sweeps is None else selection.tost(sweeps, direction, ni.margin_rel,
                                                  test_level)))
        if comp.equivalence is not None and comp.equivalence.equivalent:
            return "equivalent", comp
    p = comp.p_adjusted
    return practical_verdict(p if p is not None else comp.p_value,
                             signtest.verdict_delta(comp.test, comp.delta_mean,
                                                    comp.per_seed_diffs), direction, level,
                             non_inferior=None if ni is None else ni.non_inferior,
                             p_harms=comp.p_adjusted_harms), comp


def margin_test_level(level: float, margin_level: float | None, family_size: int) -> float:
    """The level a comparison's margin tests are at: ``margin_level`` (default ``level``) over
    ``family_size`` (Holm's first step)."""
    return (level if margin_level is None else margin_level) / family_size


def deciding_p(comp: Comparison, p_adjusted: float | None, direction: str) -> float | None:
    """The adjusted p a significant result of ``comp`` would be decided on, by the side its
    result favours: ``p_adjusted_harms`` (Holm over every comparison) when it favours the
    comparator, where a verdict is harms (:func:`practical_verdict`), else ``p_adjusted``."""
    harms = comp.p_adjusted_harms
    if harms is not None and sweeps.favoured_arm(comp, direction) == "comparator":
        return float(harms)
    return p_adjusted


def interval_level(comp: Comparison, level: float, direction: str) -> float:
    """The level of ``comp``'s interval at a look at ``level`` (:func:`decided_level`)."""
    return decided_level(level, comp.p_value, deciding_p(comp, comp.p_adjusted, direction))


def decided_level(level: float, p_value: float, p_adjusted: float | None) -> float:
    """The level this comparison's own p was in effect tested at: ``level`` scaled by
    p_value / p_adjusted (Holm's step level for the j-th smallest p, lower where an earlier
    step's adjusted p is larger), so that the test's interval at it excludes 0 exactly when
    p_adjusted < level, the rule the verdict was decided by."""
    if p_adjusted is None or not p_adjusted > p_value:
        return level
    return level * p_value / p_adjusted


def planning_figures(comp: Comparison, level: float, *, significant: bool,
                     sw: selection.Sweeps | None = None, direction: str = "lower"
                     ) -> planning.PlanningFigures:
    """The figures of the deciding test at the level its first Holm step uses (the look's
    level over the family size; :func:`benchkit.stats.planning.figures`): the effect it
    detects 80% of the time and, when not significant, the seeds that would detect the
    observed effect (post hoc); with the arms' sweeps ``sw``, with each side's tuning loss
    (the idea's on the helps side, the comparator's on the harms side:
    :func:`benchkit.stats.selection.idea_tuning_loss`, ``comparator_tuning_loss``)."""
    losses = ((None, None) if sw is None else
              (selection.idea_tuning_loss(sw, direction),
               selection.comparator_tuning_loss(sw, direction)))
    return planning.figures(list(comp.per_seed_diffs), comp.delta_mean, level,
                            significant=significant, test=comp.test or "mean",
                            tuning_loss=losses[0], comparator_loss=losses[1],
                            idea_better=worse_sign(direction) * comp.delta_mean <= 0)


def mean_interval(comp: Comparison, level: float, sw: selection.Sweeps | None,
                  direction: str) -> Interval:
    """The interval of the mean difference that inverts the test of ``comp`` at ``level``
    (the selection-aware test's over the arms' sweeps ``sw`` when given, else the fixed-config
    sign-flip test's), as a comparison's ``signflip_ci``."""
    lo, hi = (signflip.sign_flip_ci(list(comp.per_seed_diffs), level) if sw is None
              else selection.interval(sw, direction, level))
    return Interval(1.0 - level, lo, hi)


def own_interval(comp: Comparison, level: float, sw: selection.Sweeps | None,
                 direction: str) -> Comparison:
    """``comp`` with the one interval of the test that decides it, at ``level``:
    ``signflip_ci`` (:func:`mean_interval`), ``sign_ci`` under the sign test, and ``ci95``,
    the deciding test's of the two, in place of the t interval the paired figures carry."""
    signflip_ci = mean_interval(comp, level, sw, direction)
    sign_ci = sign_interval(comp, level)
    own = sign_ci or signflip_ci
    return replaced(comp, signflip_ci=signflip_ci, sign_ci=sign_ci,
                               ci95=(own.lo, own.hi))


def sign_interval(comp: Comparison, level: float) -> Interval | None:
    """Under test="sign", the interval that inverts the sign test at ``level`` (the level the
    verdict was decided at, :func:`decided_level`), the comparison's ``sign_ci``; else None."""
    if comp.test != "sign":
        return None
    lo, hi = signtest.sign_test_ci(list(comp.per_seed_diffs), level)
    return Interval(1.0 - level, lo, hi)


def control_interval(report: Report, arm: str, comp: Comparison, level: float,
                     direction: str) -> Comparison:
    """A control's comparison with the one interval the baseline's has: the deciding test's
    (selection-aware over the control's and the idea's sweeps where its p is) at the level
    its verdict was decided at (:func:`own_interval`)."""
    sw = sweeps.of_record(report, arm) if comp.selection_aware else None
    return own_interval(comp, interval_level(comp, level, direction), sw, direction)


def decision_of(report: Report, comps: Sequence[Comparison], family_size: int) -> Decision:
    """The decision on a built report, given its comparisons adjusted over the family
    (``comps``: the baseline's, then each control's in the report's order; none when the
    report is incomplete): the baseline's comparison decided at this look's level, each
    control's, and the verdicts. Reads ``report``, changes nothing."""
    if not comps or report.idea is None:
        return Decision("incomplete", "incomplete")
    comp = comps[0]
    p_adjusted = comp.p_adjusted
    alpha, plan, n, direction = report.alpha, report.sequential, report.n_seeds, report.direction
    warnings = []
    sw = sweeps.of_record(report) if comp.selection_aware else None
    level, margin_level = sequential.levels(  # exact boundaries for one comparison only
        plan.looks, plan.look, plan.boundary, list(comp.per_seed_diffs), alpha,
        family_size * len(comps), sweeps=sw, direction=direction)
    if plan.look is not None and len(plan.looks) > 1:
        warnings.append(
            f"look {plan.look} of {len(plan.looks)} declared "
            f"(looks={plan.looks}): tested at level {level:.4g}, not "
            f"{alpha:g}, so that all looks together stay within alpha")
    if 0 < level < alpha and paired.min_p_value(n) * family_size >= level:
        warnings.append(  # (the full-alpha case is warned by build_report)
            f"this look is tested at level {level:.4g}, but with {n} seeds the smallest "
            f"possible p is {paired.min_p_value(n):.4g}"
            + (f" ({family_size} x that after Holm)" if family_size > 1 else "")
            + ": it cannot be significant")
    comp = replaced(comp, p_adjusted=p_adjusted, family_size=family_size,
                               level=level)
    significant = p_adjusted is not None and p_adjusted < level
    tested_together(report, [comp, *comps[1:]], level, margin_level)
    comp = replaced(
        own_interval(comp, interval_level(comp, level, direction), sw, direction),
        planning_figures=planning_figures(comp, level / family_size, significant=significant,
                                          sw=sw, direction=direction))
    claim_type = report.claim_type
    full = report.baseline.full
    assert full is not None  # a report with a comparison has its baseline's summary
    base = list(full.per_seed)
    against_baseline, comp = claim_verdict(  # margin tests at this look's level
        comp, base, report.idea.per_seed, direction=direction, level=level,
        family_size=family_size, margin_level=margin_level, claim_type=claim_type, sweeps=sw)
    unresolved = margins.unresolved_margin(comp, base, margin_level / family_size)
    warnings += [unresolved] if unresolved else []
    comp = with_reference_words(comp, against_baseline)
    compared = [control_interval(report, control.arm, control_comp, level, direction)
                for control, control_comp in zip(report.controls.values(), comps[1:])]
    decided = decide_against_all(report.with_comparisons([comp, *compared]), against_baseline,
                                 level)
    advice, stop = futility_advice(report, comp, decided.practical, family_size)
    warnings += [stop] if stop else []
    return replaced(decided, comparison=comp, warnings=tuple(warnings),
                               futility=advice)


def tested_together(report: Report, comps: Sequence[Comparison], level: float,
                    margin_level: float) -> None:
    """The selection-aware intervals and margin tests deciding ``report`` at ``level`` asks for
    (``comps``: the baseline's, then each control's), made in one pass and kept with each
    one's sweeps (:func:`benchkit.stats.selection.intervals`, ``noninferiorities``)."""
    direction, intervals, tests = report.direction, [], []
    arms = ["baseline", *(control.arm for control in report.controls.values())]
    for k, (arm, comp) in enumerate(zip(arms, comps)):
        if comp.selection_aware:
            sw = sweeps.of_record(report, arm)
            intervals.append((sw, interval_level(comp, level, direction)))
            if comp.noninferiority is not None:
                tests.append((sw, comp.noninferiority.margin_rel, margin_test_level(
                    level, None if k else margin_level, comp.family_size or 1)))
    selection.intervals(intervals, direction)
    selection.noninferiorities(tests, direction)


def verdicts_against(report: Report, baseline_verdict: str, level: float
                     ) -> tuple[list[tuple[str, str]], dict[str, ControlArm]]:
    """The idea's verdict against each comparator, ``(verdict, arm)``, baseline first, and
    each control's arm by name, decided: its comparison (the report's) with its margin tests at
    this look's level and its verdict, in the reference format's words too."""
    direction = report.direction
    claim_type = report.claim_type
    if report.idea is None:
        raise ValueError("an incomplete report (no idea summary) has no verdicts against its "
                         "comparators")
    idea = report.idea.per_seed
    verdicts = [(baseline_verdict, "baseline")]
    decided = {}
    for name, control in report.controls.items():
        comp = control.comparison
        verdict, comp = claim_verdict(
            comp, control.full.per_seed, idea, direction=direction, level=level,
            family_size=comp.family_size or 1, claim_type=claim_type,
            sweeps=sweeps.of_record(report, control.arm) if comp.selection_aware else None)
        decided[name] = replaced(
            control, comparison=with_reference_words(comp, verdict), verdict=verdict)
        verdicts.append((verdict, control.arm))
    return verdicts, decided


def decide_against_all(report: Report, against_baseline: str, level: float) -> Decision:
    """The idea's decision from its verdict against the baseline and its verdicts against
    every control (the report's comparisons with them: :func:`decision_of` gives it those
    adjusted and with their intervals), taken here at this look's ``level``; without a
    comparison (a run is missing) nothing is decided: ``incomplete``."""
    if report.comparison is None or report.idea is None:
        return Decision("incomplete", "incomplete")
    against, decided = verdicts_against(report, against_baseline, level)
    return replaced(
        Decision.from_verdicts(against, report.mechanism_ok, report.budgets),
        controls=decided)


def futility_advice(report: Report, comp: Comparison, practical: str,
                   family_size: int) -> tuple[Futility | None, str | None]:
    """The report's declared futility advice (its ``sequential``'s ``futility``) filled in
    with the conditional power (:func:`benchkit.stats.futility.conditional_power`) and whether
    to stop, and, when it recommends stopping, the warning that says so; (None, None) where
    it is left unassessed: no advice declared, the last look, a verdict other than
    inconclusive, an exploratory session. Non-binding: it changes no level and no verdict."""
    plan = report.sequential
    advice, look, looks = plan.futility, plan.look, list(plan.looks)
    if advice is None or look is None or look == len(looks) or report.exploratory \
            or practical != "inconclusive":
        return None, None
    threshold = advice.threshold
    alpha = report.alpha
    last_level = paired.look_levels(looks, looks[-1], alpha)[-1] / family_size
    z = futility.improvement_z(list(comp.per_seed_diffs), comp.direction, comp.test or "mean")
    power = futility.conditional_power(z, report.n_seeds, looks[-1], last_level)
    stop = power < threshold
    warning = (f"futility: if the effect so far is the true one, the last look ({looks[-1]} "
               f"seeds) finds the idea better with probability {power:.3g} < "
               f"futility={threshold:g}: stopping here is recommended (non-binding: no level "
               "or verdict changes)") if stop else None
    return replaced(advice, conditional_power=power, stop=stop,
                               last_level=last_level), warning
