"""The verdict pipeline, in one place: an idea's runs and declared plan in, its decided reports
out. The plugin's aggregation, ``verify`` and ``recheck`` all go through it, so that a report's
figures follow from its runs by the one order that made them:

1. **build** each track's report (:mod:`.build`, :mod:`.frontier`): select each arm's config
   on validation, **compare** the idea with each comparator on test (:mod:`.comparison`);
2. **adjust** the family of the idea's comparisons over its tracks
   (:func:`benchkit.verdict.controls.adjusted`);
3. **decide** each report's verdicts at the planned level
   (:func:`benchkit.verdict.decision.decision_of`).

From its build on, each report is a frozen :class:`benchkit.verdict.records.Report`: each stage
makes a new record, none changes one. Pure: nothing is read or written here; the track's
floors, which come from outside the runs, enter through a function the caller gives.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import operator
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Union

import numpy as np

from benchkit import codec
from benchkit.codec import JsonRecord, is_record, replaced

from benchkit.spec.idea import IdeaSpec
from benchkit.spec.payloads import MechanismPayload, RunPayload
from benchkit.spec.run_record import RunRecord
from benchkit.verdict import build, controls, decision
from benchkit.verdict.frontier import build_frontier_report
from benchkit.verdict.records import Report

Floors = Callable[[Report], Report]  # a report -> it with its track's floors on its seeds


def idea_reports(spec: IdeaSpec, run_payloads: Sequence[RunPayload],
                 mechanism_payloads: Sequence[MechanismPayload], *, alpha: float,
                 floors: Floors | None = None) -> list[Report]:
    """One decided report per track ``spec`` declares, in its order, from the runs (the
    payloads of every track, as records) and the mechanism tests' outcomes; ``floors``, when
    given, fills each report's ``floors`` before its verdicts are decided (without it, none:
    ``{}``)."""
    make = build_frontier_report if spec.frontier else build.build_report
    reports = [build_finite(make, spec, track, run_payloads, mechanism_payloads, alpha)
               for track in spec.tracks]
    return decide_family(reports, floors)


Build = Callable[..., Report]  # build.build_report or frontier.build_frontier_report


def build_finite(make: Build, spec: IdeaSpec, track: str, run_payloads: Sequence[RunPayload],
                 mechanism_payloads: Sequence[MechanismPayload], alpha: float) -> Report:
    """``make``'s report of ``track``, unless finite metrics give a statistic that is not
    finite (values near the float range overflow in sums and squares): then an incomplete
    report whose runs of that track all failed for that reason, never a traceback or a
    report that JSON cannot hold."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            report = make(spec, track, run_payloads, mechanism_payloads, alpha=alpha)
            bad = non_finite(report) if has_non_finite(report) else []
        except ValueError as exc:  # a statistic refused its non-finite differences
            if "non-finite" not in str(exc):
                raise
            bad = ["the paired differences"]
    if not bad:
        return report
    why = (f"the statistics of these finite metrics are not finite ({', '.join(bad[:3])}"
           f"{', ...' if len(bad) > 3 else ''} overflow float range): no comparison; record "
           "the metric in units that keep it well inside float range")
    message = "benchkit: the statistics of the track's metrics are not finite (the report says why)"
    refused = [p.failed(message) if p.track == track and p.outcome == "passed" else p
               for p in run_payloads]
    report = make(spec, track, refused, mechanism_payloads, alpha=alpha)
    if report.incomplete is None:  # every run of the track refused: it cannot be complete
        raise ValueError(f"{spec.name} {track}: every run was refused, yet the report is complete")
    return replaced(report, incomplete=replaced(
        report.incomplete, reasons=(why, *report.incomplete.reasons)))


def non_finite(value: object, where: str = "") -> list[str]:
    """The places (``a.b[2]``, named by the report's JSON keys) in a record or a JSON-like
    ``value`` that hold a float that is not finite: the record is walked as it is, never
    written out to look (:func:`benchkit.codec.plan` names each field's key)."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [where or "the value"]
    if isinstance(value, JsonRecord) and codec.generated(type(value)):
        return [p for f in codec.plan(type(value)).fields
                for p in non_finite(getattr(value, f.attr), where if f.flatten is not None
                                    else f"{where}.{f.key}".lstrip("."))]
    if is_record(type(value)):   # one that writes its own JSON (a shape its fields cannot say)
        return non_finite(value.to_json(), where)  # type: ignore[attr-defined]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in non_finite(v, f"{where}.{k}".lstrip("."))]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in non_finite(v, f"{where}[{i}]")]
    return []


def has_non_finite(record: object) -> bool:
    """Whether :func:`non_finite` can find a place in ``record``: the same walk, without
    naming places and without recursion, each type's way in found once (:func:`_inside`), so
    that a report of finite figures (nearly every one) is checked fast."""
    todo: list[Any] = [record]
    pop, extend = todo.pop, todo.extend
    while todo:
        value = pop()
        inside = _INSIDE.get(type(value)) or _inside(type(value))
        if inside is _FLOAT:
            if not math.isfinite(value):
                return True
        elif inside is not _TEXT:
            extend(inside(value))
    return False


def _nothing(value: Any) -> tuple[()]:
    """Inside text, ints, flags, None and a type the walk does not know: no float."""
    return ()


def _float(value: Any) -> tuple[()]:
    """A float: the walk checks the value itself."""
    return ()


def _own_json(value: Any) -> list[Any]:
    """A record that writes its own JSON (a shape its fields cannot say): that JSON."""
    return [value.to_json()]


def _run_inside(run: RunRecord) -> Iterable[Any]:
    """Inside a run record (most of a report's floats: its rows), what the generic walk of its
    fields reaches, read directly: its config, origin and result's containers, its result's
    scalars checked here (a sign that one is not finite: a nan), so that a row costs a few steps
    of the walk, not one per field (its result's fields: ``RUN_RESULT_FIELDS``)."""
    r = run.result
    if r is None:
        return (run.point.cfg, run.origin)
    for x in (r.val, r.test, r.seconds):
        if isinstance(x, float) and not math.isfinite(x):
            return (math.nan,)
    return [run.point.cfg, run.origin,
            *(m for m in (r.signatures, r.logs, r.budgets, r.curve) if m)]


# the fields of a run's result that _run_inside reads (a test holds it to RunResult's fields)
RUN_RESULT_FIELDS = ("val", "test", "seconds", "signatures", "logs", "budgets", "curve")
_TEXT, _FLOAT = _nothing, _float
_INSIDE: dict[type, Callable[[Any], Iterable[Any]]] = {RunRecord: _run_inside}
_TEXT_TYPES = {str, int, bool, type(None)}


def _inside(cls: type) -> Callable[[Any], Iterable[Any]]:
    """What the walk reads inside a value of type ``cls``, found once per type: a dict's values,
    a list's or tuple's items (:func:`_items`), the fields of a record whose JSON is written
    from its fields' values (generated, or in another record's layout: ``JSON_LAYOUT``) whose
    type may hold a float (not text, ints, flags or tuples of those), the JSON of any other
    record; a float is _FLOAT; nothing (_TEXT) for text and any other type. A field the JSON
    leaves out (a run record's signature predictions) may make the walk say yes where
    :func:`non_finite`, which decides, finds nothing."""
    if cls not in _INSIDE:
        inside: Callable[[Any], Iterable[Any]] = _TEXT
        if issubclass(cls, float):
            inside = _FLOAT
        elif cls in _TEXT_TYPES:
            inside = _TEXT
        elif issubclass(cls, dict):
            inside = dict.values
        elif issubclass(cls, (list, tuple)):
            inside = _items
        elif (issubclass(cls, JsonRecord) and codec.generated(cls)) or (
                dataclasses.is_dataclass(cls) and hasattr(cls, "JSON_LAYOUT")):
            hints = typing.get_type_hints(cls)
            attrs = [f.name for f in dataclasses.fields(typing.cast(Any, cls))
                     if not _holds_text(hints[f.name])]
            inside = operator.attrgetter(*attrs) if len(attrs) > 1 else functools.partial(
                _fields, tuple(attrs))
        elif is_record(cls):
            inside = _own_json
        _INSIDE[cls] = inside
    return _INSIDE[cls]


def _items(value: Sequence[Any]) -> Sequence[Any]:
    """A list's or tuple's items, or none when they are numbers whose sum is finite (a NaN or
    an infinity among them makes the sum so; a finite sum that overflows walks them all):
    an arm's per-seed values checked in one step."""
    try:
        if math.isfinite(sum(value, 0.0)):
            return ()
    except (TypeError, OverflowError):   # not all numbers (text, None, records, an int past float)
        pass
    return value


def _fields(attrs: tuple[str, ...], value: Any) -> list[Any]:
    return [getattr(value, a) for a in attrs]


def _holds_text(hint: Any) -> bool:
    """Whether a field of type ``hint`` never holds a float."""
    args = typing.get_args(hint)
    if hint in _TEXT_TYPES:
        return True
    if typing.get_origin(hint) in (Union, types.UnionType):
        return all(_holds_text(a) for a in args)
    return typing.get_origin(hint) is tuple and args[-1:] == (...,) and _holds_text(args[0])


def decide_family(reports: list[Report], floors: Floors | None = None) -> list[Report]:
    """One idea's reports (every track it declares), in their order, each with its track's
    floors (``floors``; without it, none: ``{}``), the family of their comparisons adjusted
    and its verdicts decided (:meth:`benchkit.verdict.decision.Decision.applied`); an
    incomplete report enters the family at p = 1 and is decided ``incomplete``."""
    family = controls.adjusted([report.comparisons() for report in reports])
    with_floors = [replaced(report, floors={}) if floors is None else floors(report)
                   for report in reports]
    return [decision.decision_of(report, comps, family_size=len(reports)).applied(report)
            for report, comps in zip(with_floors, family)]
