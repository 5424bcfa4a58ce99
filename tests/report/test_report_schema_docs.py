"""Tests of the report schema's documentation: docs/report.md is exactly what
``python -m benchkit.report.schema_doc`` renders, and it documents every field of the schema.
"""
from __future__ import annotations

import subprocess
import sys

from benchkit.report import schema_doc

from test_report_schema import ROOT, SCHEMA, field_nodes


# ------------------------------------------------------------------------------------ the docs

def test_docs_are_generated_from_the_schema():
    doc = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    assert doc == schema_doc.render(), (
        "docs/report.md is out of date: run `python -m benchkit.report.schema_doc > docs/report.md`")


def test_docs_document_every_field():
    doc = schema_doc.render()
    for where, sub in field_nodes(SCHEMA):
        *_, kind, name = where.split("/")
        if kind == "properties":
            assert f"| `{name}` |" in doc and sub["description"] in doc.replace("\\|", "|"), where


def test_schema_doc_command_prints_the_docs():
    out = subprocess.run([sys.executable, "-m", "benchkit.report.schema_doc"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert out == schema_doc.render()
