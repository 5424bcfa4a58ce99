"""Render the report schema as Markdown: ``python -m benchkit.report.schema_doc > docs/report.md``.

The schema (``benchkit/report/bench_report.schema.json``, generated from the report's record types
and ``schema_notes.json`` by :mod:`benchkit.report.schema_gen`) is the documentation: every field's
description says what it means. This renders it as one Markdown table per object (field, type,
required, meaning): the top level first, each object followed by the objects nested in it, then the
shared ``$defs`` in order of first use. Pure stdlib; the output is deterministic, so a test checks
that the committed ``docs/report.md`` is up to date.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from benchkit.report.bench_report import SCHEMA_PATH

COMMAND = "python -m benchkit.report.schema_doc > docs/report.md"


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _def_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise ValueError(f"schema_doc: only local $defs references are supported, got {ref!r}")
    return ref[len(prefix):]


def _anchor(key: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in key).strip("-").lower()
    return "report-" + (slug or "top")


def _code(value) -> str:
    return "`" + json.dumps(value, ensure_ascii=False) + "`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class _Renderer:
    def __init__(self, schema: dict):
        self.schema = schema
        self.defs = schema.get("$defs", {})
        self.defs_queue: list[tuple[str, str, dict]] = []  # (key, heading, schema) of $defs
        self.children: list[tuple[str, str, dict]] = []    # inline objects of this section
        self.seen: set[str] = set()
        self.toc: list[tuple[str, str]] = []

    # -- what a schema node is ----------------------------------------------------------------
    def _ref_of(self, node: dict) -> str | None:
        """The $defs name a node stands for (directly or as the non-null branch of anyOf)."""
        if "$ref" in node:
            return _def_name(node["$ref"])
        for branch in node.get("anyOf", []):
            if "$ref" in branch:
                return _def_name(branch["$ref"])
        return None

    @staticmethod
    def _types(node: dict) -> list[str]:
        t = node.get("type", [])
        return [t] if isinstance(t, str) else list(t)

    @staticmethod
    def _is_section(node: dict) -> bool:
        return "properties" in node

    def _queue(self, key: str, heading: str, node: dict, *, is_def: bool) -> None:
        if key not in self.seen:
            self.seen.add(key)
            (self.defs_queue if is_def else self.children).append((key, heading, node))

    def _def_link(self, name: str) -> str:
        node, key = self.defs[name], f"$defs/{name}"
        title = node.get("title", name)
        self._queue(key, f"{title} (`$defs/{name}`)", node, is_def=True)
        return f"[{title}](#{_anchor(key)})"

    # -- type column ----------------------------------------------------------------------------
    @staticmethod
    def _bounds(node: dict) -> str:
        lo, hi = node.get("minimum"), node.get("maximum")
        xlo, xhi = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
        if lo is not None and hi is not None:
            return f" in [{lo}, {hi}]"
        if xlo is not None and xhi is not None:
            return f" in ({xlo}, {xhi})"
        parts = []
        if lo is not None:
            parts.append(f" ≥ {lo}")
        if xlo is not None:
            parts.append(f" > {xlo}")
        if hi is not None:
            parts.append(f" ≤ {hi}")
        if xhi is not None:
            parts.append(f" < {xhi}")
        return ",".join(parts)

    def type_text(self, node: dict, path: str) -> str:
        types = self._types(node)
        nullable = "null" in types
        ref = self._ref_of(node)
        if ref is not None:
            text = "object: " + self._def_link(ref)
        elif self._is_section(node):
            self._queue(path, f"`{path}`", node, is_def=False)
            text = f"object: [`{path}`](#{_anchor(path)})"
        elif "array" in types:
            items = node.get("items", {})
            n_min, n_max = node.get("minItems"), node.get("maxItems")
            if n_min is not None and n_min == n_max:
                size = f"{n_min}-element array"
            elif n_min:
                size = f"array (≥ {n_min})"
            else:
                size = "array"
            item = self.type_text(items, path + "[]")
            text = f"{size} of " + (f"({item})" if " or " in item else item)
        elif "object" in types:
            extra = node.get("additionalProperties", True)
            if isinstance(extra, dict):
                text = "object: name → " + self.type_text(extra, path + "{}")
            else:
                text = "object (open)" if extra is not False else "object"
        else:
            main = [t for t in types if t != "null"] or ["any"]
            text = " or ".join(main) + self._bounds(node)
            if "format" in node:
                text += f" ({node['format']})"
        if "const" in node:
            text += f", always {_code(node['const'])}"
        if nullable and not text.endswith(" or null"):
            text += " or null"
        return text

    # -- sections -------------------------------------------------------------------------------
    @staticmethod
    def _extra_text(node: dict) -> str:
        extra = node.get("additionalProperties", True)
        if extra is False:
            return "Other keys: not allowed."
        if isinstance(extra, dict):
            what = extra.get("description", "")
            kinds = extra.get("type", "any")
            kinds = " or ".join(kinds) if isinstance(kinds, list) else kinds
            return f"Other keys: allowed, each {kinds}" + (f": {what}" if what else ".")
        return "Other keys: allowed (open object)."

    def table(self, key: str, node: dict) -> list[str]:
        props = node.get("properties", {})
        required = set(node.get("required", []))
        lines = ["| Field | Type | Required | Meaning |", "|---|---|---|---|"]
        for name, sub in props.items():
            path = name if key == "" else f"{key}.{name}"
            meaning = sub.get("description", "")
            if "enum" in sub:
                meaning += " Values: " + ", ".join(_code(v) for v in sub["enum"]) + "."
            if "pattern" in sub and "format" not in sub:
                meaning += f" Pattern: `{sub['pattern']}`."
            lines.append("| " + " | ".join([
                f"`{name}`", _cell(self.type_text(sub, path)),
                "yes" if name in required else "no", _cell(meaning)]) + " |")
        return lines

    def section(self, key: str, heading: str, node: dict) -> list[str]:
        """The section of one object, followed by those of its inline nested objects."""
        self.toc.append((key, heading))
        outer, self.children = self.children, []
        out = [f'<a id="{_anchor(key)}"></a>', "", f"## {heading}", ""]
        desc = node.get("description")
        if desc:
            out += [desc, ""]
        if "null" in self._types(node):
            out += ["May be `null` (see its field's meaning).", ""]
        if self._is_section(node):
            out += self.table(key, node) + [""]
            out += [self._extra_text(node), ""]
        else:
            extra = node.get("additionalProperties", True)
            if isinstance(extra, dict):
                out += ["Each key is a name; each value: " + self.type_text(extra, key) + "."
                        + (f" {extra['description']}" if extra.get("description") else ""), ""]
            if "minProperties" in node:
                out += [f"At least {node['minProperties']} key(s).", ""]
        rules = [r["description"] for r in node.get("allOf", []) if r.get("description")]
        if rules:
            out += ["Rules:", ""] + [f"- {r}" for r in rules] + [""]
        children, self.children = self.children, outer
        for child in children:
            out += self.section(*child)
        return out

    def render(self) -> str:
        s = self.schema
        body = self.section("", "Top level", s)
        i = 0
        while i < len(self.defs_queue):  # a $defs section may queue further $defs
            body += self.section(*self.defs_queue[i])
            i += 1
        head = [
            f"# {s.get('title', 'Report schema')}",
            "",
            f"<!-- Generated from benchkit/report/bench_report.schema.json by `{COMMAND}`. "
            "Do not edit by hand: the schema is generated from the report's record types and "
            "benchkit/report/schema_notes.json (descriptions, bounds) by `python -m "
            "benchkit.report.schema_gen`; edit those and regenerate both. -->",
            "",
            "Schema: [`benchkit/report/bench_report.schema.json`]"
            "(../benchkit/report/bench_report.schema.json) "
            f"(JSON Schema draft 2020-12, `$id` `{s.get('$id', '')}`). "
            "Validate a report with "
            "`jsonschema.Draft202012Validator(schema).validate(report)`.",
            "",
            "In the tables, *Type* says `or null` where the field may be `null`; *Required* "
            "says whether every report has the key (a nullable required key is present with "
            "value `null`).",
            "",
            "Contents:",
            "",
        ] + [f"- [{h.replace('`', '')}](#{_anchor(k)})" for k, h in self.toc] + [""]
        text = "\n".join(head + body)
        return text.rstrip("\n") + "\n"


def render(schema: dict | None = None) -> str:
    """The Markdown documentation of ``schema`` (default: the shipped report schema)."""
    return _Renderer(load_schema() if schema is None else schema).render()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print(f"usage: {COMMAND}", file=sys.stderr)
        return 2
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
