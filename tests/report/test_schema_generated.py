"""The shipped schema is generated (benchkit.report.schema_gen): from the report's record types,
with schema_notes.json for what the types cannot say. The committed file is the generated one, a
note for a node the types lack is refused, and the types' rules come out as the schema says
them (required keys, null only where null is written)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import pytest

from benchkit.codec import JsonRecord, as_json
from benchkit.report import bench_report, schema_gen


def test_the_committed_schema_is_the_generated_one():
    text = bench_report.SCHEMA_PATH.read_text(encoding="utf-8")
    assert text == schema_gen.dumps(schema_gen.generate()), (
        f"regenerate: {schema_gen.COMMAND}")
    assert schema_gen.main(["--check"]) == 0


def test_a_note_for_a_node_the_types_lack_is_refused(tmp_path, monkeypatch):
    notes = json.loads(schema_gen.NOTES_PATH.read_text(encoding="utf-8"))
    notes["comparison/p_bonus"] = {"description": "a field no record declares"}
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(notes), encoding="utf-8")
    monkeypatch.setattr(schema_gen, "NOTES_PATH", path)
    with pytest.raises(ValueError, match=r"\['comparison/p_bonus'\]; valid: a path"):
        schema_gen.generate()


@dataclass(frozen=True)
class Part(JsonRecord):
    lo: float | None
    kind: Literal["a", "b"]


@dataclass(frozen=True)
class Whole(JsonRecord):
    count: int
    parts: tuple[Part, ...]
    by_name: dict[str, float | None]
    extra: str | None = field(default=None, metadata=as_json(omit=True))
    old: bool = field(default=False, metadata=as_json(absent=False))


def test_the_types_say_the_structure():
    assert schema_gen.record(Whole) == {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "parts": {"type": "array", "items": {
                "type": "object",
                "properties": {"lo": {"type": ["number", "null"]}, "kind": {"enum": ["a", "b"]}},
                "required": ["lo", "kind"], "additionalProperties": False}},
            "by_name": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
            "extra": {"type": "string"},           # left out, never null
            "old": {"type": "boolean"}},
        "required": ["count", "parts", "by_name"],   # not those an older JSON may lack
        "additionalProperties": False}


def test_the_reports_properties_are_its_fields_in_the_order_written():
    """A field added to Report gets its schema node from its type (the notes add only its
    description); the committed file must then be regenerated (the first test fails until)."""
    from benchkit.verdict import records

    assert list(schema_gen.skeleton()["properties"]) == list(records.ORDER)
