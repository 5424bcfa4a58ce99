"""Generate ``bench_report.schema.json`` from the report's record types:
``python -m benchkit.report.schema_gen`` (``--check``: exit 1 when the shipped file differs).

The structure comes from :class:`benchkit.verdict.records.Report` and the records it holds,
through the same field plans that write the JSON (:func:`benchkit.codec.plan`): each record an
object with its keys (in the fields' order, a flattened record's inline), closed
(``additionalProperties: false``), the keys it always writes required; ``X | None`` nullable
(not where the key is left out instead of null); tuples and lists arrays, ``dict[str, X]`` maps,
``Literal`` enums; the records named in :data:`DEFS` shared under ``$defs``. What the types
cannot say (each field's description, bounds, enums of plain strings, the shape of the JSON the
user declared or the machine gave, rules across fields, the required keys older reports allow)
is in ``schema_notes.json``: per schema node (its path: property names, ``[]`` for items,
``{}`` for a map's values, ``$defs/<name>``), keywords that are added or replace the derived
ones (``"$drop"`` lists derived keywords that go). Pure stdlib and benchkit; deterministic.
"""
from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union

from benchkit.codec import json_keys, plan
from benchkit.report.bench_report import SCHEMA_PATH
from benchkit.spec.run_record import RunRecord
from benchkit.stats.paired import Summary
from benchkit.verdict.records import Report
from benchkit.verdict.sections import MechanismTest, SignatureEvidence, SweepRow

NOTES_PATH = Path(__file__).with_name("schema_notes.json")
COMMAND = "python -m benchkit.report.schema_gen"
# records shared under $defs (referenced, not inlined), in the order $defs lists them; "cfg"
# (a grid config, a plain dict in the types) is all notes
DEFS: dict[str, type | None] = {"arm_summary": Summary, "cfg": None, "sweep_entry": SweepRow,
                                "run": RunRecord, "signature": SignatureEvidence,
                                "mechanism_test": MechanismTest}
# the order of keywords in every node of the written schema
KEYWORDS = ("$schema", "$id", "title", "description", "type", "const", "enum", "format",
            "pattern", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "minItems",
            "maxItems", "minProperties", "maxProperties", "$ref", "anyOf", "not", "properties",
            "items", "required", "additionalProperties", "allOf", "if", "then", "else", "$defs")
_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _record_type(hint: Any) -> type:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint


def _ref(cls: type) -> str | None:
    return next((f"#/$defs/{name}" for name, c in DEFS.items() if c is cls), None)


def derived(hint: Any) -> dict[str, Any]:
    """The schema node the type ``hint`` says (empty where it says nothing: ``Any``, a dict of
    ``Any``, a record that writes its own JSON)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin is Literal:
        return {"enum": list(args)}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [m.value for m in hint]}
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in args if a is not type(None)]
        node = derived(inner)
        if "$ref" in node:
            return {"anyOf": [node, {"type": "null"}]}
        if isinstance(node.get("type"), str):
            return {**node, "type": [node["type"], "null"]}
        return node
    if origin is tuple:
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else None
        return {"type": "array", **({"items": derived(item)} if item is not None else {})}
    if origin in (list, Sequence):
        return {"type": "array", "items": derived(args[0])}
    if origin in (dict, Mapping):
        value = derived(args[1])
        return {"type": "object", **({"additionalProperties": value} if value else {})}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        ref = _ref(hint)
        if ref:
            return {"$ref": ref}
        return {} if hint in _OPEN else record(hint)   # a record inside itself: notes say it
    return {}


def record(cls: type) -> dict[str, Any]:
    """A record's object: its keys, those it always writes required, no other key."""
    layout = getattr(cls, "JSON_LAYOUT", None)          # writes its JSON in that record's
    if layout is not None:                              # layout: that record's schema
        return record(layout)
    if getattr(cls, "JSON_KEYS", None) is not None:      # writes its own JSON: notes say it
        return {"type": "object"}
    _OPEN.append(cls)
    try:
        return _record(cls)
    finally:
        _OPEN.pop()


_OPEN: list[type] = []   # the records being derived, outermost first


def _record(cls: type) -> dict[str, Any]:
    made = plan(cls)
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required = []
    for f in made.fields:
        node = derived(hints[f.attr])
        if f.flatten is not None:
            inner = _record_type(hints[f.attr])
            props.update(derived(inner).get("properties", {k: {} for k in json_keys(inner)}))
            continue
        if f.omit and f.empty is None:                  # left out, never null
            node = _not_null(node)
        props[f.key] = node
        if not (f.omit or f.after or f.absent is not None):
            required.append(f.key)
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def _not_null(node: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in node:
        return node["anyOf"][0]
    kinds = node.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        rest = [k for k in kinds if k != "null"]
        return {**node, "type": rest[0] if len(rest) == 1 else rest}
    return node


def merged(node: dict[str, Any], notes: Mapping[str, dict[str, Any]], path: str,
           used: set[str]) -> dict:
    """``node`` with the notes of ``path`` and of every node below it applied (their paths
    added to ``used``)."""
    note = notes.get(path, {})
    used.add(path)
    out = {k: v for k, v in node.items() if k not in note.get("$drop", ())}
    out.update({k: v for k, v in note.items() if k != "$drop"})
    prefix = f"{path}/" if path else ""
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: merged(sub, notes, prefix + name, used)
                             for name, sub in out["properties"].items()}
    for key, step in (("items", "[]"), ("additionalProperties", "{}")):
        if isinstance(out.get(key), dict):
            out[key] = merged(out[key], notes, prefix + step, used)
    if isinstance(out.get("$defs"), dict):
        out["$defs"] = {name: merged(sub, notes, f"$defs/{name}", used)
                        for name, sub in out["$defs"].items()}
    return _ordered(out)


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    rank = {k: i for i, k in enumerate(KEYWORDS)}
    return dict(sorted(node.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def skeleton() -> dict[str, Any]:
    """The schema the types say, before the notes: the report and its shared records."""
    top = record(Report)
    top["$defs"] = {name: ({} if cls is None else record(cls)) for name, cls in DEFS.items()}
    return top


def generate() -> dict[str, Any]:
    """The shipped schema: :func:`skeleton` with ``schema_notes.json`` applied; a note whose
    node the types no longer have is a ValueError naming it (a field renamed or removed)."""
    notes = json.loads(NOTES_PATH.read_text(encoding="utf-8"))
    used: set[str] = set()
    schema = merged(skeleton(), notes, "", used)
    stale = [path for path in notes if path not in used]
    if stale:
        raise ValueError(f"schema_notes.json has notes for nodes the report's types do not "
                         f"have: {stale}; valid: a path of the generated schema")
    return schema


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the shipped schema is not the generated one")
    args = parser.parse_args(argv)
    text = dumps(generate())
    if args.check:
        same = SCHEMA_PATH.read_text(encoding="utf-8") == text
        if not same:
            print(f"{SCHEMA_PATH} is not what the types and schema_notes.json give: run "
                  f"{COMMAND}", file=sys.stderr)
        return 0 if same else 1
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
