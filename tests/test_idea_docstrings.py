"""The shipped ideas' docstrings say what their committed reports say (issue 44 item 6): a
docstring that names a verdict ('the system verdict reads "partial"') names the report's."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAID = re.compile(r'(system|practical) verdict (?:reads|is) "(\w[\w-]*)"')


def ideas_with_reports():
    for path in sorted((ROOT / "ideas").glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        name = re.search(r'name="([\w.-]+)"', source)
        track = re.search(r'track="([\w.-]+)"', source)
        if name and track:
            report = ROOT / "reports" / name[1] / track[1] / "bench_report.json"
            if report.is_file():
                yield pytest.param(path, report, id=path.stem)


@pytest.mark.parametrize("module, report_path", list(ideas_with_reports()))
def test_a_docstring_names_the_verdicts_its_report_has(module, report_path):
    doc = " ".join((ast.get_docstring(ast.parse(module.read_text(encoding="utf-8"))) or "")
                   .split())
    report = json.loads(report_path.read_text(encoding="utf-8"))
    for kind, word in SAID.findall(doc):
        assert report[f"{kind}_verdict"] == word, (module.name, kind, word)
