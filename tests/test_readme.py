"""The README as a newcomer reads it: short, in the promised order, and its idea runs."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ORDER = ["## Quick start", "## An idea in 30 lines", "## The `run` argument", "## Tracks",
         "## Protocol and statistics", "## Options", "## The report",
         "## What benchkit refuses"]


def test_readme_is_short_and_in_order():
    assert len(README.splitlines()) <= 250
    positions = [README.index(heading) for heading in ORDER]
    assert positions == sorted(positions)
    for word in ("DESIGN.md", "this session", "issue "):
        assert word not in README


def test_the_readme_idea_runs_and_its_claim_passes(pytester, read_report):
    section = README[README.index("## An idea in 30 lines"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.splitlines()) <= 30
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_l2=code)
    result = pytester.runpytest("--bench-seeds", "2", "--bench-epochs", "1",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=23)  # 2 arms x 5 lrs x 2 seeds, and the mechanism tests
    report = read_report(pytester.path, "l2_decay")
    assert report["complete"] and report["mechanism_ok"] == 1
    sig = report["mechanism_signature"]["signatures"]["l2_step_gap"]
    assert sig["status"] == "confirmed" and sig["discriminating"] is True
