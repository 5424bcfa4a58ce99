"""The panel of real techniques (benchmarks/panel/techniques/, issue 53 item 3): every module
declares its published direction and source, docs/panel.md's section is what
benchmarks/panel/techniques.py renders from the committed reports, and each of the two panel
scripts rewrites its own part of the page and keeps the other's. Reads sources and JSON only:
nothing trains."""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from idea_modules import idea_module

ROOT = Path(__file__).resolve().parents[1]
PANEL = ROOT / "benchmarks" / "panel"


@pytest.fixture(scope="module")
def techniques():
    sys.path.insert(0, str(PANEL))
    try:
        yield importlib.import_module("techniques")
    finally:
        sys.path.remove(str(PANEL))


def test_every_technique_declares_its_published_direction_and_source(techniques):
    found = techniques.modules()
    assert len(found) >= 3
    for module in found:
        assert module["published"] in ("helps", "harms", "inconclusive")
        assert module["source"] and module["summary"], module["stem"]
    assert len({m["name"] for m in found}) == len(found)


def test_a_technique_without_a_source_is_refused_by_name(techniques, tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text(idea_module("x", imports='published = "helps"\nimport pytest',
                                track="mnist1d", grid=None, seeds=None))
    with pytest.raises(ValueError, match="test_x.py: .*missing or invalid: \\['source'\\]"):
        techniques.declared(path)


def test_the_docs_section_is_the_one_the_committed_reports_give(techniques):
    report_dir = ROOT / techniques.REPORT_DIR
    record = report_dir / "techniques.json"
    meta = json.loads(record.read_text()) if record.is_file() else {"sessions": []}
    page = (ROOT / techniques.DOCS).read_text()
    assert techniques.MARKER in page
    assert page.split(techniques.MARKER, 1)[0].endswith("\n\n")
    assert techniques.MARKER + page.split(techniques.MARKER, 1)[1] == techniques.section(
        report_dir, meta), f"docs/panel.md is stale: run {techniques.COMMAND} --docs-only"


def test_each_script_rewrites_its_part_of_the_page_and_keeps_the_other(techniques, tmp_path,
                                                                        monkeypatch):
    import panel

    page = f"{panel.BEGIN}\n# A panel of known answers\n\nold table\n{panel.END}\n"
    with_tail = techniques.with_section(page, techniques.MARKER + "\ntechniques v1\n")
    assert with_tail == page + "\n" + techniques.MARKER + "\ntechniques v1\n"
    assert techniques.with_section(with_tail, techniques.MARKER + "\nv2\n") == (
        page + "\n" + techniques.MARKER + "\nv2\n")
    docs = tmp_path / "panel.md"
    docs.write_text(with_tail)
    monkeypatch.setattr(panel, "ROOT", tmp_path)
    known = f"{panel.BEGIN}\n# new known answers\n{panel.END}\n"
    monkeypatch.setattr(panel, "render", lambda table, meta: known)
    monkeypatch.setattr(panel, "rows", lambda *a, **k: [])
    assert panel.main(["--docs-only", "--docs", "panel.md", "--report-dir", "r"]) == 0
    assert docs.read_text() == known + "\n" + techniques.MARKER + "\ntechniques v1\n"


def test_an_expected_direction_that_is_no_verdict_is_refused_by_name(techniques, tmp_path):
    path = tmp_path / "test_y.py"
    path.write_text(idea_module(
        "y", imports='published = "helps"\nexpected = "better"\nsource = "s"\nimport pytest',
        grid=None, seeds=None))
    with pytest.raises(ValueError, match="test_y.py: .*missing or invalid: \\['expected'\\]"):
        techniques.declared(path)


def test_an_unknown_module_is_one_line_naming_the_valid_ones(techniques, capsys):
    assert techniques.main(["--docs-only", "--modules", "test_nope"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "no technique module ['test_nope']; valid: [" in err and "test_tabular_dropout" in err


def test_a_case_cpu_is_its_sessions_sum_starred_when_one_ran_other_modules(techniques):
    sessions = [{"modules": ["a"], "cpu_seconds": 10.0}, {"modules": ["a"], "cpu_seconds": 5.4},
                {"modules": ["b", "c"], "cpu_seconds": 7.0}]
    assert techniques.cpu_of("a", sessions) == "15"
    assert techniques.cpu_of("b", sessions) == "7*"
    assert techniques.cpu_of("d", sessions) == "n/a"


@pytest.mark.parametrize("direction, delta, effect", [("lower", -0.02, "2"),
                                                      ("higher", -0.02, "-2")])
def test_the_effect_in_mdes_is_positive_when_the_idea_is_better(techniques, direction, delta,
                                                                  effect):
    module = {"stem": "test_x", "track": "t", "published": "helps", "source": "s"}
    report = {"complete": True, "metric_direction": f"{direction} is better",
              "practical_verdict": "helps", "baseline": {"full": {"mean": 0.5}},
              "comparison": {"direction": direction, "delta_mean": delta, "mde_power80": 0.01,
                             "p_value": 0.01,
                             "idea_wins": 3, "n_pairs": 4}}
    cells = [c.strip() for c in techniques.row(module, report, []).split("|")[1:-1]]
    assert cells[3] == "—"  # no expected direction stated
    assert cells[6] == "-4" and cells[9] == effect  # delta as % of the baseline, then MDE80s


def test_an_arm_still_improving_at_the_budget_check_is_said_beside_the_verdict(techniques):
    report = {"convergence": {"arms": {"baseline": {"budget_check": {"decision": "trained out"}},
                                       "idea": {"budget_check": {"decision": "still improving"}}}}}
    assert techniques.improving(report) == " (idea still improving at 1.5x epochs)"
    assert techniques.improving({"convergence": {"arms": {"idea": {"budget_check": None}}}}) == ""


def test_the_committed_verdicts_and_effect_signs_agree(techniques):
    report_dir = ROOT / techniques.REPORT_DIR
    for module in techniques.modules():
        report = techniques.report_of(report_dir, module)
        if not report or report["practical_verdict"] not in ("helps", "harms"):
            continue
        effect = float(techniques.row(module, report, []).split("|")[10])
        assert (effect > 0) == (report["practical_verdict"] == "helps"), module["stem"]


def test_a_pending_check_in_the_report_written_aside_at_a_later_look_trains_on(techniques,
                                                                               tmp_path):
    module = {"name": "technique_x", "track": "tabular"}
    where = tmp_path / "technique_x" / "tabular"
    (where / "incomplete").mkdir(parents=True)
    look1 = {"created": "2026-12-06T11:32:27Z", "complete": True}
    look2 = {"created": "2026-12-06T17:11:24Z", "complete": False, "convergence": {
        "arms": {"idea": {"budget_check": {"pending": True}}}}}
    (where / "bench_report.json").write_text(json.dumps(look1))
    (where / "incomplete" / "bench_report.json").write_text(json.dumps(look2))
    assert techniques.to_train(tmp_path, [module])  # the look-1 report alone says nothing
    (where / "bench_report.json").write_text(json.dumps({**look1, "created": "2026-12-07"}))
    assert not techniques.to_train(tmp_path, [module])  # the aside one is older: done
