"""Non-inferiority ("as good, but smaller") through the plugin, and atomic report writes."""
from __future__ import annotations

import json
import os

import pytest

from benchkit.atomic import write_atomic
from conftest import validate_report

IDEA = '''
import pytest
pytestmark = pytest.mark.bench(name="ni", track="tabular", grid={{"lr": [1e-2], "epochs": [1]}},
                               seeds=6,
                               margin=0.05)

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(){extra})
'''


@pytest.mark.parametrize("extra, verdict, exits", [
    ("", "non-inferior", {"non-inferior": 0, "helps": 1}),
    (", lr=1e-6", "harms", {"non-inferior": 1, "not-harms": 1}),   # an untrained idea
], ids=["same-as-baseline", "untrained"])
def test_margin_gives_a_non_inferior_verdict_and_gate(pytester, extra, verdict, exits):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_ni=IDEA.format(extra=extra))
    for gate, code in exits.items():
        # epochs in the grid, not --bench-epochs: an override session is exploratory
        result = pytester.runpytest_subprocess("--bench-gate", gate)
        assert result.ret == code, (gate, result.stdout.str()[-2000:])
        if code:
            result.stdout.fnmatch_lines([f"benchkit: FAIL ni tabular: gate '{gate}' not met*"])
    report = validate_report(pytester.path / "reports/ni/tabular/bench_report.json")
    assert report["practical_verdict"] == verdict
    ni = report["comparison"]["noninferiority"]
    assert ni["margin_rel"] == 0.05
    assert ni["non_inferior"] is (verdict == "non-inferior")


def test_a_failed_write_leaves_the_old_report_whole(tmp_path, monkeypatch):
    path = tmp_path / "bench_report.json"
    write_atomic(path, json.dumps({"old": True}))

    def killed(src, dst):
        raise KeyboardInterrupt  # the process dies between writing and renaming
    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, json.dumps({"new": True}) * 1000)
    assert json.loads(path.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["bench_report.json"]  # no temp file left
