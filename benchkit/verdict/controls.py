"""Control arms and the family of the idea's comparisons.

``pytest.mark.arm("control", name=...)`` arms are benched like the baseline; the idea is compared
with each (Holm over every comparison of the idea, :func:`adjust_family`) and its practical
verdict is the worst of its verdicts against the baseline and every control, under the bench's
claim type (decided in :mod:`benchkit.verdict.decision`).

Pure Python over payloads and report dicts: the controller never imports torch."""
from __future__ import annotations

from benchkit.stats import paired
from benchkit.spec.idea import CONTROL
from benchkit.verdict.records import JsonDict


def arm_name(arm: str) -> str:
    return arm.removeprefix(CONTROL) + " (control)" if arm.startswith(CONTROL) else arm


def control_section(arm: str, sweep: list[JsonDict], best_cfg: JsonDict, control: list[float],
                    comparison: JsonDict) -> JsonDict:
    """One control arm as the baseline is reported, plus the idea's ``comparison`` with it
    (:func:`benchkit.verdict.comparison.compare_arms`)."""
    return {"arm": arm, "best_cfg": best_cfg, "sweep": sweep,
            "full": paired.summarize(control), "comparison": comparison}


def comparisons(report: JsonDict) -> list[JsonDict]:
    """Every comparison of the idea in a report, baseline first: the Holm family's members."""
    if report.get("comparison") is None:
        return []
    return [report["comparison"]] + [c["comparison"] for c in
                                     (report.get("controls") or {}).values()]


def adjust_family(reports: list[JsonDict]) -> None:
    """The family-wise adjustments of one idea's comparisons (docs/statistics.md). helps (and
    the margin claims) hold against every comparator of a track: an intersection-union test
    whose p is the track's largest, Holm across the declared tracks (``p_adjusted``,
    ``family_size`` tracks). harms follows from any one comparison: Holm over every comparison
    on every track (``p_adjusted_harms``). An incomplete track enters both at p = 1, so a
    crashed track can never make the others' verdicts easier to reach."""
    per_track = [comparisons(r) for r in reports]
    tracks = paired.holm([max(c["p_value"] for c in cs) if cs else 1.0 for cs in per_track])
    family = [c for cs in per_track for c in cs]
    ps = [c["p_value"] for c in family] + [1.0 for cs in per_track if not cs]
    for comp, p in zip(family, paired.holm(ps)):
        comp["p_adjusted_harms"] = p
    for cs, p in zip(per_track, tracks):
        for comp in cs:
            comp["p_adjusted"], comp["family_size"] = p, len(reports)
