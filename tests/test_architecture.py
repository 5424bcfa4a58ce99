"""The claims docs/architecture.md makes that a test can check (issue 52, item 6): the layer
table is the rule tests/test_layers.py enforces, every reader takes the typed Report, no report
goes through JSON inside the process between its build and its file, and decision.py is where a
verdict word is decided."""
from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import pytest

from benchkit.cli import commands
from benchkit.report import advice, nextstep, plots, reading, sentences, session, summary
from benchkit.report import summary_checks, summary_stats, terminal
from benchkit.verdict.records import Report
from test_layers import ALLOWED

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
WORDS = {"helps", "harms", "inconclusive", "non-inferior", "equivalent"}


def test_the_layer_table_is_the_rule_the_layer_test_enforces():
    rows = re.findall(r"^\| `(\w+)(?:/|\.py)` \|.*\| ([^|]*) \|$", DOC, flags=re.M)
    assert {layer for layer, _ in rows} >= {"stats", "spec", "store", "verdict", "report", "cli"}
    for layer, imports in rows:
        if imports.startswith("everything"):   # plugin/: every layer, torch lazily
            continue
        said = set(re.findall(r"`(\w+)`", imports))
        assert said == ALLOWED.get(layer, set()), (layer, said, ALLOWED.get(layer))


@pytest.mark.parametrize("reader", [
    summary.render_summary_md, summary.floor_lines, summary_stats.comparison_lines,
    summary_checks.fairness_lines, sentences.practical_sentence, sentences.system_sentence,
    sentences.mechanism_sentence, advice.warnings_for_people, advice.warning_lines,
    reading.paired_values, reading.floor_gap, terminal.row, terminal.notes, plots.figure_paired,
    plots.figure_sweep, session.gate_failure, nextstep.what_completes],
    ids=lambda f: f"{f.__module__.rsplit('.', 1)[-1]}.{f.__name__}")
def test_every_reader_takes_the_report_record(reader):
    assert typing.get_type_hints(reader)["report" if "report" in typing.get_type_hints(reader)
                                         else "r"] is Report


def test_show_compare_and_render_read_a_file_as_its_record():
    assert typing.get_type_hints(commands.regressions)["old"] is Report
    source = Path(commands.__file__).read_text(encoding="utf-8")
    assert "read_report(" in source


def _calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]


@pytest.mark.parametrize("module", ["benchkit/verdict/pipeline.py", "benchkit/report/session.py",
                                    "benchkit/report/summary.py", "benchkit/report/plots.py",
                                    "benchkit/report/terminal.py"])
def test_no_report_is_parsed_back_inside_the_process(module):
    calls = _calls(ROOT / module)
    assert not [c for c in calls if c in ("json.loads", "json.dumps", "Report.from_json")]
    writes = [c for c in calls if c.endswith(".to_json")]
    # the one edge: the session writes the file
    # (the pipeline's finite checks walk a record that writes its own JSON through it)
    assert set(writes) == ({"r.to_json"} if module.endswith("session.py") else
                           {"value.to_json"} if module.endswith("pipeline.py") else set())


def test_a_verdict_word_is_returned_only_by_decision_py():
    found = []
    for path in sorted((ROOT / "benchkit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) \
                    and node.value.value in WORDS:
                found.append(str(path.relative_to(ROOT)))
    assert found and set(found) == {"benchkit/verdict/decision.py"}
