"""The records' JSON codec (benchkit.codec): generated from a record's fields and type hints, in
the fields' order, with the few rules a field states (another key, left out at its default,
written only after another field, read when absent, inline); and the records that still write
their JSON by hand are the listed ones, each for a stated reason."""
from __future__ import annotations

import ast
import enum
import math
from dataclasses import InitVar, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import pytest

from benchkit.codec import JsonRecord, as_json, plan, replaced

ROOT = Path(__file__).resolve().parents[1]


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Inner(JsonRecord):
    a: int
    b: float | None = field(default=None, metadata=as_json(omit=True))


@dataclass(frozen=True)
class Outer(JsonRecord):
    name: str
    items: tuple[Inner, ...]
    by_name: dict[str, Inner | None]
    pair: tuple[float | None, float | None]
    raw: dict[str, Any]
    colour: Colour
    kind: Literal["x", "y"]
    edge: Any = field(metadata=as_json(name="from"))
    decision: str | None = field(default=None, metadata=as_json(omit=True))
    level: float | None = field(default=None, metadata=as_json(after="decision"))
    legacy: bool = field(default=False, metadata=as_json(absent=True))
    inline: Inner | None = field(default=None, metadata=as_json(flatten=True))


OUTER = Outer(name="o", items=(Inner(1), Inner(2, 0.5)), by_name={"p": Inner(3), "q": None},
              pair=(None, 1.0), raw={"cfg": [1, {"lr": 0.1}]}, colour=Colour.RED, kind="x",
              edge=4)


def test_the_json_follows_the_fields_order_and_rules():
    data = OUTER.to_json()
    assert list(data) == ["name", "items", "by_name", "pair", "raw", "colour", "kind", "from",
                          "legacy"]
    assert data["items"] == [{"a": 1}, {"a": 2, "b": 0.5}]
    assert data["by_name"] == {"p": {"a": 3}, "q": None}
    assert (data["pair"], data["colour"], data["from"]) == ([None, 1.0], "red", 4)
    assert Outer.from_json(data) == OUTER


def test_a_field_after_another_is_written_once_that_one_is_set_and_inline_keys_sit_inline():
    decided = Outer(**{**OUTER.__dict__, "decision": "go", "inline": Inner(7, 1.5)})
    data = decided.to_json()
    assert list(data)[-5:] == ["decision", "level", "legacy", "a", "b"]
    assert data["level"] is None and Outer.from_json(data) == decided


def test_an_absent_key_reads_as_its_stated_value():
    data = OUTER.to_json()
    del data["legacy"], data["items"][1]["b"]
    read = Outer.from_json(data)
    assert read.legacy is True and read.items[1].b is None


def test_the_json_is_a_copy_and_numbers_pass_through_as_they_are():
    data = OUTER.to_json()
    data["raw"]["cfg"][1]["lr"] = 9.0
    assert OUTER.raw["cfg"][1]["lr"] == 0.1
    nan = Inner(1, math.nan).to_json()["b"]
    assert math.isnan(nan)          # writing refuses it (json.dumps allow_nan=False), not this
    assert type(Inner.from_json({"a": 1, "b": 2}).b) is int


@pytest.mark.parametrize("data, says", [
    ({"a": 1, "c": 2}, r"field\(s\) \['c'\] are not declared in test_codec.Inner; "
                       r"declared: \['a', 'b'\]"),
    ({"b": 1.0}, r"test_codec.Inner lacks the key\(s\) \['a'\]; declared: \['a', 'b'\]"),
    ([1], r"test_codec.Inner is a JSON object, got list"),
])
def test_a_json_object_of_another_shape_is_one_line_saying_what_is_valid(data, says):
    with pytest.raises(ValueError, match=says):
        Inner.from_json(data)


def test_a_nested_object_of_another_shape_is_refused_as_the_record_would():
    data = OUTER.to_json()
    data["items"] = [{"a": 1}, {"a": 2, "c": 3}]
    with pytest.raises(ValueError, match=r"field\(s\) \['c'\] are not declared in "
                                         r"test_codec.Inner"):
        Outer.from_json(data)
    data["items"] = [{"b": 1.0}]
    with pytest.raises(ValueError, match=r"Inner lacks the key\(s\) \['a'\]"):
        Outer.from_json(data)


@dataclass(frozen=True)
class Point(JsonRecord):     # every key its field's, required, taken as it is: built at once
    x: int
    y: float | None


@dataclass(frozen=True)
class Line(JsonRecord):
    points: tuple[Point, ...]


def test_records_built_at_once_are_checked_alike():
    line = Line((Point(1, 2.0), Point(3, None)))
    assert Line.from_json(line.to_json()) == line
    with pytest.raises(ValueError, match=r"\['z'\] are not declared in test_codec.Point"):
        Line.from_json({"points": [{"x": 1, "y": None, "z": 0}]})
    with pytest.raises(ValueError, match=r"Point lacks the key\(s\) \['y'\]"):
        Line.from_json({"points": [{"x": 1}]})


def test_a_type_json_cannot_hold_is_refused_when_the_codec_is_made():
    @dataclass(frozen=True)
    class Either(JsonRecord):
        value: int | str

    with pytest.raises(TypeError, match="must be X | None"):
        plan(Either)


# The records whose JSON is written by hand, and why (their fields cannot say the shape).
HAND_WRITTEN = {
    "benchkit.spec.run_record.Provenance": "flat in the payload; planned is written by origin",
    "benchkit.spec.payloads.RunPayload": "the worker's flat wire format (point, result, "
                                         "provenance inline; older payloads' defaults)",
    "benchkit.spec.payloads.MechanismPayload": "the payloads' wire format (kind, spec)",
    "benchkit.spec.run_record.RunRecord": "its JSON is the report's row (the report format, "
                                        "laid out by a generated record): no track, its "
                                        "place, result and origin interleaved, signatures "
                                        "as observed values",
    "benchkit.stats.planning.PlanningFigures": "its keys depend on the deciding test",
    "benchkit.verdict.sections.Convergence": "a report from before the budget check drops its "
                                             "arms' checks: a rule over two records",
}


def hand_written() -> dict[str, int]:
    """Each class of benchkit/ (but the codec) that defines to_json or from_json -> how many."""
    found: dict[str, int] = {}
    for path in sorted((ROOT / "benchkit").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if module == "benchkit.codec":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                n = sum(isinstance(f, ast.FunctionDef) and f.name in ("to_json", "from_json")
                        for f in node.body)
                if n:
                    found[f"{module}.{node.name}"] = n
    return found


def test_only_the_listed_records_write_their_json_by_hand():
    found = hand_written()
    assert set(found) == set(HAND_WRITTEN)
    assert sum(found.values()) <= 15


@dataclass(frozen=True)
class Plain(JsonRecord):
    a: int
    b: tuple[float, ...] = ()
    c: float | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Checked:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("a must be >= 0")


@dataclass(frozen=True)
class Derived:
    a: int
    twice: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "twice", 2 * self.a)


@dataclass(frozen=True)
class Given:
    a: int
    scale: InitVar[int] = 1


@dataclass(frozen=True, slots=True)
class Slotted:
    a: int
    b: int = 0


def test_replaced_is_dataclasses_replace():
    """The record dataclasses.replace makes, field for field and of the same type, the
    original unchanged and its values the same objects, for a record whose __init__ only
    assigns (kw_only fields included) and for each kind it leaves to dataclasses.replace:
    a __post_init__ that checks or derives, an init=False field, an InitVar, slots."""
    rec = Plain(1, (0.5,), c=2.0)
    new = replaced(rec, a=3)
    assert type(new) is Plain and new == replace(rec, a=3) == Plain(3, (0.5,), c=2.0)
    assert rec == Plain(1, (0.5,), c=2.0) and new.b is rec.b
    assert replaced(rec) == rec and replaced(rec) is not rec
    assert replaced(rec, c=None).to_json() == {"a": 1, "b": [0.5], "c": None}
    with pytest.raises(ValueError, match="a must be >= 0"):
        replaced(Checked(1), a=-1)
    assert replaced(Derived(2), a=5).twice == 10
    assert replaced(Given(1, 3), a=2, scale=4) == Given(2)
    assert replaced(Slotted(1, 2), b=3) == Slotted(1, 3)


def test_replaced_refuses_a_name_that_is_not_a_field():
    """A name the record does not have is refused as dataclasses.replace refuses it."""
    with pytest.raises(TypeError):
        replaced(Plain(1), d=2)
    with pytest.raises(TypeError):
        replaced(Slotted(1), c=2)
