"""The JSON Schema of bench_report.json and the Report record describe one thing: every field the
record declares is a property the schema documents, and no property is one the record lacks, so
that neither can grow a field the other does not know (the schema allows unknown top-level keys,
for reports of older versions, so validating a report would not catch it)."""
from __future__ import annotations

import dataclasses
import json
from importlib import resources

from benchkit.verdict.records import LATER, ORDER, Report


def schema() -> dict:
    return json.loads(resources.files("benchkit.report").joinpath(
        "bench_report.schema.json").read_text())


def test_the_schema_documents_exactly_the_record_s_fields():
    declared = {f.name for f in dataclasses.fields(Report)}
    documented = set(schema()["properties"])
    assert documented - declared == set(), "the schema documents a field Report lacks"
    assert declared - documented == set(), "Report declares a field the schema does not document"
    assert set(ORDER) == declared  # the order the JSON is written in names every field


def test_a_required_key_is_one_the_record_always_writes():
    """to_json leaves out only the session's later fields while they are unset; every other
    required key is a field without a default, so a report record cannot lack it."""
    no_default = {f.name for f in dataclasses.fields(Report)
                  if f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING}
    required = set(schema()["required"])
    assert required - set(LATER) <= no_default
    assert required & set(LATER) == {"created"}  # a written report always says when
