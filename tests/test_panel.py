"""The panel of known answers (benchmarks/panel/): every module states its expected verdict, and
docs/panel.md is what benchmarks/panel/panel.py renders from the committed reports. Reads
sources and JSON only: nothing trains."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from idea_modules import idea_module

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "panel" / "panel.py"


@pytest.fixture(scope="module")
def panel():
    spec = importlib.util.spec_from_file_location("panel_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_every_module_declares_an_expected_verdict_its_file_name_repeats(panel):
    modules = panel.modules()
    assert len(modules) >= 8
    for module in modules:
        assert module.expected in ("helps", "harms", "inconclusive")
        assert module.stem.startswith(f"test_{module.expected}_"), module.stem
        assert module.track in ("tabular", "mnist1d", "dynamics"), module.stem
        assert module.summary, f"{module.stem}: no docstring (the source of its expectation)"
    assert {m.expected for m in modules} == {"helps", "harms", "inconclusive"}
    assert len({m.name for m in modules}) == len(modules)


def test_a_module_without_a_literal_expectation_is_refused(panel, tmp_path):
    path = tmp_path / "test_helps_x.py"
    path.write_text(idea_module("x", grid=None, seeds=None))
    with pytest.raises(ValueError, match="no literal expected"):
        panel.declared(path)
    path.write_text(idea_module("x", imports='expected = "better"\nimport pytest', grid=None,
                                seeds=None))
    with pytest.raises(ValueError, match="valid: \\['helps', 'harms', 'inconclusive'\\]"):
        panel.declared(path)


def test_the_docs_table_is_the_one_the_committed_reports_give(panel):
    report_dir = ROOT / panel.REPORT_DIR
    meta = json.loads((report_dir / "panel.json").read_text())
    expected = panel.render(panel.rows(report_dir), meta)  # raises on an unexplained miss
    assert panel.section(ROOT / panel.DOCS) == expected, (
        f"docs/panel.md is stale: run {panel.COMMAND} --docs-only")


def test_every_verdict_in_the_table_comes_from_the_default_protocol(panel):
    table = panel.rows(ROOT / panel.REPORT_DIR)  # raises on an exploratory report
    decided = [r for r in table if r.obtained in panel.VERDICTS]
    assert len(decided) >= 8
    for row in decided:
        assert not row.exploratory and row.pairs == 8, row.module.stem


def test_a_module_without_a_report_is_a_miss_that_needs_a_reason(panel, tmp_path, monkeypatch):
    monkeypatch.setattr(panel, "MISSES", {})
    table = panel.rows(tmp_path)
    assert {r.obtained for r in table} == {panel.NOT_RUN}
    with pytest.raises(ValueError, match="explain"):
        panel.render(table, {})


def _row(panel, expected, obtained, stem="test_helps_x"):
    module = panel.Module(stem, "x", "tabular", expected, "")
    return panel.Row(module, obtained, 0.0, 1.0, 0.1, 4, 8, 1.0, False)


def test_a_miss_needs_an_explanation_and_an_explanation_a_miss(panel, monkeypatch):
    monkeypatch.setattr(panel, "MISSES", {})
    panel.check_misses([_row(panel, "helps", "helps")])
    with pytest.raises(ValueError, match="explain \\['test_helps_x'\\]"):
        panel.check_misses([_row(panel, "helps", "inconclusive")])
    monkeypatch.setattr(panel, "MISSES", {"test_helps_x": "why"})
    panel.check_misses([_row(panel, "helps", "inconclusive")])
    with pytest.raises(ValueError, match="did not miss"):
        panel.check_misses([_row(panel, "helps", "helps")])
    page = panel.render([_row(panel, "helps", "inconclusive")], {})
    assert "**(miss)**" in page and "obtained inconclusive. why" in page


def test_the_docs_section_keeps_the_rest_of_the_page(panel, tmp_path):
    """Another script's section of docs/panel.md survives panel.py rewriting its own (fails
    when the whole page is written)."""
    page = panel.render([_row(panel, "helps", "helps")], {})
    path = tmp_path / "panel.md"
    panel.write_section(path, page)
    assert path.read_text() == page
    path.write_text(path.read_text() + "\n## Another section\n\nkept\n")
    again = panel.render([_row(panel, "helps", "helps", stem="test_helps_y")], {})
    panel.write_section(path, again)
    assert panel.section(path) == again
    assert path.read_text().endswith("## Another section\n\nkept\n")


def test_a_report_of_an_earlier_protocol_is_marked_stale(panel):
    from benchkit import tracks

    protocol = tracks.get("tabular").protocol()
    assert panel.stale({"track": "tabular", "protocol": protocol}) is None
    old = {"track": "tabular", "protocol": {**protocol, "n_test": 1000}}
    assert panel.stale(old) == f"n_test 1000 → {protocol['n_test']}"
    row = panel.dataclasses.replace(_row(panel, "helps", "helps"), stale="n_test 1000 → 10000")
    page = panel.render([row], {})
    assert "| helps (stale) |" in page and "- `test_helps_x`: n_test 1000 → 10000" in page
