"""Control arms and the family of the idea's comparisons.

``pytest.mark.arm("control", name=...)`` arms are benched like the baseline; the idea is compared
with each (Holm over every comparison of the idea, :func:`adjusted`) and its practical
verdict is the worst of its verdicts against the baseline and every control, under the bench's
claim type (decided in :mod:`benchkit.verdict.decision`).

Pure Python over comparison and control-arm records: the controller never imports torch."""
from __future__ import annotations

from collections.abc import Sequence

from benchkit.codec import replaced
from benchkit.stats import paired
from benchkit.spec.idea import CONTROL, Config
from benchkit.verdict.records import Comparison, ControlArm
from benchkit.verdict.sections import SweepRow


def arm_name(arm: str) -> str:
    return arm.removeprefix(CONTROL) + " (control)" if arm.startswith(CONTROL) else arm


def control_section(arm: str, sweep: Sequence[SweepRow], best_cfg: Config,
                    full: paired.Summary, comparison: Comparison) -> ControlArm:
    """One control arm as the baseline is reported (``full``: its summary at ``best_cfg``),
    plus the idea's ``comparison`` with it (:func:`benchkit.verdict.comparison.compare_arms`)."""
    return ControlArm(arm=arm, best_cfg=best_cfg, sweep=tuple(sweep), full=full,
                      comparison=comparison)


def adjusted(per_track: Sequence[Sequence[Comparison]]) -> list[list[Comparison]]:
    """The family-wise adjustments of one idea's comparisons (docs/statistics.md), each
    track's comparisons baseline first. helps (and the margin claims) hold against every
    comparator of a track: an intersection-union test whose p is the track's largest, Holm
    across the declared tracks (``p_adjusted``, ``family_size`` tracks). harms follows from any
    one comparison: Holm over every comparison on every track (``p_adjusted_harms``). An
    incomplete track (no comparisons) enters both at p = 1, so a crashed track can never make
    the others' verdicts easier to reach."""
    tracks = paired.holm([max(c.p_value for c in cs) if cs else 1.0 for cs in per_track])
    family = [c.p_value for cs in per_track for c in cs]
    harms = iter(paired.holm(family + [1.0 for cs in per_track if not cs]))
    return [[replaced(c, p_adjusted_harms=next(harms), p_adjusted=p,
                                 family_size=len(per_track)) for c in cs]
            for cs, p in zip(per_track, tracks)]
