"""The statistics section of ``summary.md`` (``## Comparison``): the idea against the baseline in
words, each figure with the test and level it comes from.

Pure Python: reads the report's record only.
"""
from __future__ import annotations

from benchkit.report.fmt import interval_text, num, pct, rel_pct, signed
from benchkit.report.reading import tested_level
from benchkit.report.sentences import deciding_interval
from benchkit.verdict.records import Report


def better(delta: float, direction: str) -> bool:
    """Whether an idea - comparator difference ``delta`` favours the idea."""
    return delta < 0 if direction == "lower" else delta > 0


def seed_word(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def comparison_lines(report: Report) -> list[str]:
    """The ``## Comparison`` section: the difference, the deciding interval and p, the family
    adjustment, the futility stop, the margin tests and, for an inconclusive or non-inferior
    verdict, the power and the seeds a decision would need."""
    comp, base = report.comparison, report.baseline.full
    assert comp is not None and base is not None   # a complete report's section
    base_mean = base.mean
    direction = report.direction
    n = comp.n_pairs
    lines = ["## Comparison", ""]
    delta = comp.delta_mean
    word = ("the idea is better" if better(delta, direction) else
            "the idea is worse" if delta else "the arms are equal")
    lines.append(f"- delta (idea - baseline): {signed(delta)} ({rel_pct(delta, base_mean)} of the "
                 f"baseline mean {num(base_mean)}; {word} on average)")
    if comp.verdict:
        lines.append(f"- `comparison.verdict` \"{comp.verdict}\" is the reference format's "
                     "words for the verdict against the baseline: helps is \"idea better "
                     "(significant)\", harms \"idea worse (significant)\", any other verdict "
                     "\"no significant win\"; `practical_verdict` above is the verdict")
    own = deciding_interval(comp)
    if own:
        test = "sign test" if own.of == "median" else "sign-flip test"
        lines.append(f"- {pct(100 * own.confidence)} interval of the {own.of} difference "
                     f"(idea - baseline): {interval_text(own)}; it inverts the {test} at the level "
                     f"the verdict was decided at ({num(1 - own.confidence)}), so it excludes "
                     "0 exactly when the result is significant (`comparison.ci95`)")
    if comp.test == "sign":
        lines.append(f"- p = {comp.p_value:.4g} (two-sided exact sign test; its null: on a "
                     "seed the idea is as likely better as worse, i.e. the median difference is "
                     f"0), tested at level {num(tested_level(comp))}; the mean sign-flip test "
                     f"gives p = {comp.p_mean:.4g}")
    else:
        lines.append(f"- p = {comp.p_value:.4g} (two-sided paired sign-flip permutation "
                     "test; its null: each seed's difference is as likely to have either sign, "
                     f"i.e. the differences are symmetric about 0), tested at level "
                     f"{num(tested_level(comp))}")
    if comp.selection_aware and comp.p_fixed_configs is not None:
        lines.append(f"- the p above counts the selection: the idea, each seed at the configs "
                     f"selected on the other seeds, against every config of the comparator; "
                     f"with the selected configs held fixed it would be "
                     f"{comp.p_fixed_configs:.4g}")
    if (comp.family_size or 1) > 1 and comp.p_adjusted is not None:
        lines.append(f"- p_adjusted = {comp.p_adjusted:.4g} (Holm over the idea's "
                     f"{comp.family_size} tracks; the verdict uses this one)")
    fut = report.sequential.futility
    if fut and fut.conditional_power is not None:
        lines.append(f"- futility (non-binding, futility={fut.threshold:g}): the last look "
                     f"({report.sequential.max_seeds} seeds) finds the idea better with "
                     f"probability {fut.conditional_power:.3g} if the effect so far is the "
                     f"true one: {'stop' if fut.stop else 'continue'}")
    if comp.effect_size is not None:
        lines.append(f"- effect size (Cohen's dz): {comp.effect_size:.3g}")
    lines.append(f"- MDE: {num(comp.mde)} absolute, {pct(comp.mde_rel_pct)} of the "
                 "baseline mean (paired t, reference format: the smallest mean difference a "
                 "t-test on these seeds would call significant)")
    ni = comp.noninferiority
    if ni:
        lines.append(f"- non-inferiority (margin {pct(100 * ni.margin_rel)} = "
                     f"{num(ni.margin_abs)}): one-sided bound of the delta "
                     f"{signed(ni.bound)}, p = {num(ni.p_value, '.3g')}, "
                     f"{'non-inferior' if ni.non_inferior else 'not shown non-inferior'}")
    eq = comp.equivalence
    if eq:
        lines.append(f"- equivalence (margin {pct(100 * eq.margin_rel)} either way = "
                     f"{num(eq.margin_abs)}): one-sided sign-flip p = "
                     f"{num(eq.p_worse, '.3g')} (worse), {num(eq.p_better, '.3g')}"
                     f" (better) at level {num(eq.level)}, "
                     f"{'equivalent' if eq.equivalent else 'not shown equivalent'}")
    if report.practical_verdict in ("inconclusive", "non-inferior"):
        figures = comp.planning_figures
        plan = None if figures is None else figures.basis
        at = (f"the {str(plan and plan.test or 'sign-flip test').split(' (')[0]} at level "
              f"{num(plan and plan.level)}")
        p80 = None if figures is None else figures.mde_power80
        if p80:
            lines.append(f"- power: a true effect of {num(p80)} ({rel_pct(p80, base_mean)} of the "
                         f"baseline) would be detected 80% of the time by {at} with "
                         f"{seed_word(n)}; smaller true effects are usually missed")
        elif plan and n < plan.min_seeds:
            lines.append(f"- power: none: {at} needs {plan.min_seeds} seeds or more before "
                         "any p can be below it")
        needed = None if figures is None else figures.seeds_needed
        if needed is not None:
            lines.append(f"- seeds needed (post hoc): detecting a true effect as large as the "
                         f"observed delta ({signed(delta)}) with 80% power by {at} would take "
                         f"about {needed} seeds (this bench used {n}); a planning figure: "
                         f"{str(plan and plan.assumption).removeprefix('planning figure: ')}. "
                         "Seeds are declared before the first look (seeds= or looks= in "
                         "pytest.mark.bench): raising seeds= now makes the next session "
                         "exploratory until --bench-fresh retrains every run under the new plan")
        elif delta == 0:
            lines.append("- seeds needed: the observed delta is exactly 0, so no number of "
                         "seeds would make it significant")
        else:
            lines.append("- seeds needed: more than 10000 seeds (or undefined: zero spread) to "
                         "detect the observed delta with 80% power")
        if plan and plan.remedy:
            lines.append(f"- what would let this bench decide: {plan.remedy}")
    return lines + [""]
