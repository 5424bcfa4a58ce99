"""The typed records at the pipeline's stage boundaries: what stats returns for a comparison
(benchkit.stats.paired.PairedComparison) and the report (benchkit.verdict.records.Report),
built once by the pipeline and then frozen; plain dicts only at the JSON edge."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchkit import tracks
from benchkit.report import bench_report
from benchkit.stats import paired
from benchkit.store import records
from benchkit.verdict import pipeline
from benchkit.verdict.records import ORDER, Comparison, ControlArm, Report
from builders import BASE8, GRID, IDEA8, TRACK, make_run, one_config_runs
from builders import make_spec as make_rule_spec

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = {TRACK: tracks.get(TRACK).protocol(30)}  # the schema asks for a track's protocol


def make_spec(grid, seeds, **fields):
    return make_rule_spec(grid, seeds, protocols=PROTOCOLS, **fields)


def _reports() -> dict[str, Report]:
    """Reports the pipeline builds: complete (a control, the sign test, a margin), incomplete,
    and a frontier."""
    out = {}
    (out["paired"],) = pipeline.idea_reports(make_spec(GRID[:1], 8), one_config_runs(BASE8, IDEA8),
                                             [], alpha=0.05)
    spec = make_spec(GRID[:2], 6, margin=0.05, test="sign",
                     arms=["baseline", "idea", "control:c"])
    runs = [make_run(arm, cfg, s, 1.0 + 0.1 * s + 0.2 * k - 0.3 * (arm == "idea"),
                     1.0 + 0.1 * s + 0.2 * k - 0.3 * (arm == "idea"))
            for arm in ("baseline", "idea", "control:c") for k, cfg in enumerate(GRID[:2])
            for s in range(6)]
    (out["controls"],) = pipeline.idea_reports(spec, runs, [], alpha=0.05)
    (out["incomplete"],) = pipeline.idea_reports(spec, runs[:-1], [], alpha=0.05)
    grid = [{"lr": lr, "width": w} for w in (8, 16) for lr in (0.001, 0.01)]
    runs = [make_run(arm, cfg, s, 1.0 + 0.01 * s + 0.1 * k, 1.0 + 0.01 * s - 0.1 * (arm == "idea"))
            for arm in ("baseline", "idea") for k, cfg in enumerate(grid) for s in range(6)]
    (out["frontier"],) = pipeline.idea_reports(make_spec(grid, 6, frontier={"width": [8, 16]}),
                                               runs, [], alpha=0.05)
    return out


REPORTS = _reports()


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_the_shipped_schema_accepts_every_built_report(name):
    report = bench_report.stamp(dataclasses.replace(
        REPORTS[name], floors={}, provenance={"module_digest": None, "git": None},
        store={**records.trust(None), "audited": []}))
    data = report.to_json()
    assert bench_report.schema_problem(data) is None
    assert list(data) == [k for k in ORDER if k in data]  # bench_report.json's order of keys


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_a_report_round_trips_through_its_json(name):
    report = REPORTS[name]
    assert Report.from_json(report.to_json()) == report
    assert "created" not in report.to_json()  # the fields a session adds: absent until given


def test_a_report_is_frozen_and_its_json_is_a_copy():
    report = REPORTS["controls"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.practical_verdict = "helps"  # type: ignore[misc]
    data = report.to_json()
    data["comparison"]["p_value"] = 0.0
    data["warnings"].append("edited")
    assert report.comparison is not None and report.comparison.p_value != 0.0
    assert "edited" not in report.warnings


def test_a_field_the_record_does_not_declare_is_refused():
    data = REPORTS["paired"].to_json()
    with pytest.raises(ValueError, match=r"field\(s\) \['surprise'\] are not declared in "
                                         r"benchkit.verdict.records.Report; declared: "):
        Report.from_json({**data, "surprise": 1})


def test_the_record_declares_every_key_of_the_order():
    assert set(ORDER) == {f.name for f in dataclasses.fields(Report)}


def test_stats_returns_a_frozen_comparison_whose_json_round_trips():
    figures = paired.compare(BASE8, IDEA8, direction="lower", margin=0.1)
    assert isinstance(figures, paired.PairedComparison)
    assert figures.p_value == pytest.approx(4 / 256) and figures.n_pairs == 8
    assert paired.PairedComparison.from_json(figures.to_json()) == figures
    with pytest.raises(dataclasses.FrozenInstanceError):
        figures.p_value = 0.0  # type: ignore[misc]
    assert list(figures.to_json())[:4] == ["delta_mean", "idea_wins", "n_pairs",
                                           "per_seed_diffs"]


def test_a_control_arm_is_a_record_whose_json_is_the_reports_entry():
    """A report's controls are ControlArm records (their comparison a Comparison), decided
    with a verdict; the JSON keeps the report's keys and order, and an undecided arm (before
    the decision) has no verdict key."""
    report = REPORTS["controls"]
    arm = report.controls["c"]
    assert isinstance(arm, ControlArm) and isinstance(arm.comparison, Comparison)
    assert arm.verdict in ("helps", "harms", "non-inferior", "inconclusive", "equivalent")
    data = arm.to_json()
    assert list(data) == ["arm", "best_cfg", "sweep", "full", "comparison", "verdict"]
    assert report.to_json()["controls"]["c"] == data and ControlArm.from_json(data) == arm
    undecided = dataclasses.replace(arm, verdict=None).to_json()
    assert "verdict" not in undecided and list(undecided)[-1] == "comparison"
    with pytest.raises(ValueError, match=r"field\(s\) \['surprise'\] are not declared in "
                                         r"benchkit.verdict.records.ControlArm"):
        ControlArm.from_json({**data, "surprise": 1})
    assert report.comparisons() == [report.comparison, arm.comparison]


def test_the_floors_are_given_on_the_record_and_a_failing_one_is_a_warning():
    """The caller's floors function takes the report's record and returns it with its floors;
    a floor that cannot be computed is a warning on that record, never a lost report."""
    from benchkit.report.session import floors_of

    spec, runs = make_spec(GRID[:1], 8), one_config_runs(BASE8, IDEA8)
    asked = []

    def compute(track, seeds):
        asked.append((track, list(seeds)))
        return {"ridge": {"per_seed": [1.0] * len(seeds)}}

    def fails(track, seeds):
        raise RuntimeError("no data")

    (given,) = pipeline.idea_reports(spec, runs, [], alpha=0.05,
                                     floors=lambda report: floors_of(report, compute))
    assert asked == [(TRACK, list(range(8)))] and given.floors == compute(TRACK, range(8))
    (failed,) = pipeline.idea_reports(spec, runs, [], alpha=0.05,
                                      floors=lambda report: floors_of(report, fails))
    assert failed.floors == {} and failed.practical_verdict == given.practical_verdict
    assert [w for w in failed.warnings if w not in given.warnings] == [
        f"floors of track {TRACK!r} not computed: RuntimeError: no data"]
    (without,) = pipeline.idea_reports(spec, runs, [], alpha=0.05)
    assert without.floors == {}


def test_an_interrupted_sessions_incomplete_report_computes_no_floors():
    """Ctrl-C: the incomplete report of an interrupted session gets no floors (computing them
    kept the interrupt waiting minutes), and says so; a complete one still gets them."""
    from benchkit.report.session import floors_of

    spec = make_spec(GRID[:1], 8)
    asked = []

    def compute(track, seeds):
        asked.append(list(seeds))
        return {"ridge": {"per_seed": [1.0] * len(seeds)}}

    def floors(report):
        return floors_of(report, compute, complete_session=False)

    (part,) = pipeline.idea_reports(spec, one_config_runs(BASE8, IDEA8)[:-1], [], alpha=0.05,
                                    floors=floors)
    assert not part.complete and part.floors == {} and asked == []
    assert "floors not computed: the session was interrupted (a session that completes the " \
           "report computes them)" in part.warnings
    (whole,) = pipeline.idea_reports(spec, one_config_runs(BASE8, IDEA8), [], alpha=0.05,
                                     floors=floors)
    assert whole.complete and whole.floors and asked == [list(range(8))]


COMMITTED = sorted(ROOT.glob("reports/*/*/bench_report.json")) + sorted(
    ROOT.glob("benchmarks/results/**/bench_report.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.parent.relative_to(ROOT)))
def test_every_committed_report_reads_back_as_a_record(path):
    """verify's recheck reads a written report as a Report: every committed one, those written
    before the budget check and its sequential decision among them, reads back and gives back
    the same JSON data."""
    data = json.loads(path.read_text(encoding="utf-8"))
    assert Report.from_json(data).to_json() == data
