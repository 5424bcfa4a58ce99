"""dynamics is retired as a yardstick (issue 54): its baseline loses to its own window MLP floor
trained like it. The track still runs; the registry declares the reason, every report of a bench
on it carries it as a warning, and the docs say it with the measured numbers."""
from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path

from benchkit import tracks
from builders import BASE8, IDEA8, recorded

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "tracks"


def margin_means(tag: str) -> tuple[float, float]:
    """(GRU baseline, window MLP floor) test MSE means of dynamics_floor_margin_<tag>.json."""
    size = json.loads((RESULTS / f"dynamics_floor_margin_{tag}.json").read_text())["sizes"][0]
    return statistics.mean(size["baseline_test"]), statistics.mean(size["mlp_test"])


def test_dynamics_is_retired_because_its_bar_fails_as_measured():
    """The reason is declared, and it quotes the measurements that fail the bar: at the track's
    protocol and with 4x the training windows, the window MLP floor beats the GRU."""
    why = tracks.get("dynamics").retired
    assert why and "window MLP" in why and "docs/tracks.md" in why
    for tag in ("today", "n4000_val1000_test10000"):
        baseline, floor = margin_means(tag)
        assert floor < baseline, tag  # the bar fails: the floor is better (lower MSE)
        assert f"{floor:.4f} against {baseline:.4f}" in why, (tag, floor, baseline)
    assert not tracks.get("tabular").retired and not tracks.get("mnist1d").retired


def test_the_registry_words_the_warning_only_for_a_retired_track(monkeypatch):
    monkeypatch.setattr(tracks, "_REGISTRY", dict(tracks._REGISTRY))  # restored afterwards
    warning = tracks.retirement("dynamics")
    assert warning is not None
    assert warning.startswith("track 'dynamics' is retired as a yardstick: ")
    assert tracks.get("dynamics").retired in warning
    assert tracks.retirement("tabular") is None and tracks.retirement("nope") is None
    tracks.register(dataclasses.replace(tracks.get("tabular"), retired="too easy"), replace=True)
    assert str(tracks.retirement("tabular")).startswith(
        "track 'tabular' is retired as a yardstick: too easy")


def test_a_bench_on_a_retired_track_runs_and_every_report_says_why(pytester, read_report):
    """A user selecting dynamics gets the warning (report, summary.md, terminal), not an
    error."""
    pytester.makepyfile(test_rec=recorded("rec", BASE8, IDEA8, track="dynamics"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = read_report(pytester.path, "rec", "dynamics")
    warning = tracks.retirement("dynamics")
    assert report["complete"] is True and report["practical_verdict"] == "helps"
    assert warning in report["warnings"]
    summary = (pytester.path / "reports/rec/dynamics/summary.md").read_text()
    assert "is retired as a yardstick" in summary and "window MLP floor" in summary
    result.stdout.fnmatch_lines(["benchkit: WARNING rec dynamics: track 'dynamics' is retired*"])


def test_the_docs_say_dynamics_is_retired_and_why():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `dynamics` |"))
    assert "**retired**" in row
    doc = (ROOT / "docs" / "tracks.md").read_text(encoding="utf-8")
    section = doc.split("\n## dynamics", 1)[1].split("\n## ", 1)[0]
    assert "retired" in section.split("\n\n", 2)[0] + section.split("\n\n", 2)[1]
    baseline, floor = margin_means("today")
    assert f"{floor:.4f}" in section and f"{baseline:.4f}" in section
