"""JSON codecs generated from the record types: a frozen dataclass that subclasses
:class:`JsonRecord` gets ``to_json`` and ``from_json`` from its fields and their type hints,
so that a field is declared once, on its record, and its JSON follows.

The JSON object has the fields' keys in the fields' order (a subclass's after its base's);
:func:`as_json` (a field's metadata) says where a key differs from the plain rule: another name
(``name``), left out while at its default (``omit``), written only once another field is set
(``after``), read as a value when absent (``absent``), or a record whose keys sit inline in its
parent's object (``flatten``). Types: records, ``X | None``, ``tuple[X, ...]``, ``tuple[X, Y]``,
``list[X]``, ``dict[str, X]``/``Mapping``, ``Literal``, enums, ``str``/``int``/``float``/``bool``
(numbers pass through as they are, non-finite ones included: writing the JSON refuses those),
``Any`` (a copy of the JSON value). A record that defines ``decoded`` (a method) is handed to it
once made from its JSON, to complete what its parts' JSON leaves to it. A record that keeps a
hand-written ``to_json``/``from_json`` (a shape its fields cannot say) is a leaf here, its keys
in ``JSON_KEYS`` where it is flattened. The type hints are resolved once per record, on first
use. Imports nothing of benchkit.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass
from typing import Any, Literal, NamedTuple, Union

_META = "benchkit.codec"
Encode = Callable[[Any], Any]


class Key(NamedTuple):
    """How one field is written: ``name`` its JSON key, ``omit`` left out at ``empty`` (its
    default, or ``absent``), ``after`` written only once that field is not at its default,
    ``absent`` what a missing key reads as (MISSING: the key is required unless the field has a
    default), ``flatten`` its record's keys inline."""

    name: str | None = None
    omit: bool = False
    after: str | None = None
    absent: Any = MISSING
    flatten: bool = False


def as_json(*, name: str | None = None, omit: bool = False, after: str | None = None,
            absent: Any = MISSING, flatten: bool = False) -> dict[str, Key]:
    """A field's ``metadata`` where its JSON differs from the plain rule (see :class:`Key`):
    ``field(default=None, metadata=as_json(omit=True))``."""
    return {_META: Key(name, omit, after, absent, flatten)}


def copy_json(value: Any) -> Any:
    """A copy of a JSON-like value (dicts and lists new, all the way down)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    if isinstance(value, tuple):
        return tuple(copy_json(v) for v in value)
    return value


@dataclass(frozen=True)
class _Field:
    attr: str
    key: str
    encode: Encode | None           # None: the value as it is
    decode: Encode | None
    omit: bool
    empty: Any                      # the value it is unset at (for ``omit`` and ``after``)
    after: str | None
    absent: Callable[[], Any] | None   # what a missing key reads as; None: required
    flatten: frozenset[str] | None  # the flattened record's keys


@dataclass(frozen=True)
class _Plan:
    fields: tuple[_Field, ...]
    keys: tuple[str, ...]           # every JSON key it reads, flattened ones included, in order
    known: frozenset[str]
    plain: bool                     # no field with a rule: the fast path
    direct: bool                    # plain, every key its field's name, required, as it is
    empties: dict[str, Any]
    completes: bool                 # the record has ``decoded``: called once it is made


_PLANS: dict[type, _Plan] = {}


def _absent(f: dataclasses.Field, meta: Key) -> Callable[[], Any] | None:
    if meta.absent is not MISSING:
        return lambda: meta.absent
    if f.default is not MISSING:
        return lambda: f.default
    if f.default_factory is not MISSING:
        return f.default_factory   # type: ignore[return-value]  # a new value each time
    return None


def plan(cls: type) -> _Plan:
    """``cls``'s codec, made from its fields and type hints the first time it is asked for."""
    found = _PLANS.get(cls)
    if found is not None:
        return found
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        meta: Key = f.metadata.get(_META, Key())
        hint = hints[f.name]
        enc, dec = codec_of(hint)
        absent = _absent(f, meta)
        sub = frozenset(json_keys(_record_type(hint))) if meta.flatten else None
        out.append(_Field(f.name, meta.name or f.name, enc, dec, meta.omit,
                          None if absent is None else absent(), meta.after, absent, sub))
    keys = tuple(k for f in out for k in (json_keys(_record_type(hints[f.attr])) if f.flatten
                                          else (f.key,)))
    plain = not any(f.omit or f.after or f.flatten is not None for f in out)
    completes = callable(getattr(cls, "decoded", None))
    direct = plain and not completes and all(
        f.key == f.attr and f.decode is None and f.absent is None for f in out)
    made = _Plan(tuple(out), keys, frozenset(keys), plain, direct,
                 {f.attr: f.empty for f in out}, completes)
    _PLANS[cls] = made
    return made


def json_keys(cls: type) -> tuple[str, ...]:
    """The keys a record's JSON may have: its ``JSON_KEYS`` where it writes its own JSON."""
    own = getattr(cls, "JSON_KEYS", None)
    return tuple(own) if own is not None else plan(cls).keys


def _record_type(hint: Any) -> type:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint


def is_record(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "to_json") and hasattr(tp, "from_json")


def generated(tp: type) -> bool:
    """Whether the record ``tp`` writes and reads its JSON as generated here (no override)."""
    return (issubclass(tp, JsonRecord) and tp.to_json is JsonRecord.to_json
            and getattr(tp.from_json, "__func__", None) is _FROM_JSON)


def codec_of(hint: Any) -> tuple[Encode | None, Encode | None]:
    """The (encode, decode) pair of a type hint, None for a value taken as it is; TypeError for
    a type JSON cannot hold."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return copy_json, copy_json
    if hint in (str, int, float, bool, type(None)) or origin is Literal:
        return None, None
    if is_record(hint):
        if generated(hint):
            return encode, _decoder(hint)
        return (lambda v: v.to_json()), hint.from_json   # its own: a subclass may write its own
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return (lambda v: v.value), hint
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(args) != 2:
            raise TypeError(f"a record field's union must be X | None, got {hint}")
        enc, dec = codec_of(rest[0])
        return _optional(enc), _optional(dec)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            enc, dec = codec_of(args[0])
            return _items(enc, list), _items(dec, tuple)
        pairs = [codec_of(a) for a in args]
        return (lambda v: [x if e is None else e(x) for (e, _), x in zip(pairs, v)]), (
            lambda v: _fixed(pairs, v, hint))
    if origin in (list, Sequence):
        enc, dec = codec_of(args[0])
        return _items(enc, list), _items(dec, list)
    if origin in (dict, Mapping):
        if args[0] is not str:
            raise TypeError(f"a record field's mapping must have str keys, got {hint}")
        enc, dec = codec_of(args[1])
        return _values(enc), _values(dec)
    raise TypeError(f"no JSON codec for the type {hint!r}")


def _optional(fn: Encode | None) -> Encode | None:
    if fn is None:
        return None
    one: Encode = fn
    return lambda v: None if v is None else one(v)


def _decoder(cls: type) -> Encode:
    """``decode`` of ``cls``; for a record whose keys are exactly its fields, each as it is,
    its constructor wherever the JSON has exactly those keys (its plan is made on first use)."""
    def first(value: Any) -> Any:
        made = _PLANS.get(cls) or plan(cls)
        known = made.known
        if made.direct:
            def direct(v: Any) -> Any:
                return cls(**v) if type(v) is dict and v.keys() == known else decode(cls, v)
            cell[0] = direct
        else:
            cell[0] = functools.partial(decode, cls)
        return cell[0](value)

    cell: list[Encode] = [first]
    return lambda v: cell[0](v)


def _items(fn: Encode | None, kind: type) -> Encode:
    if fn is None:
        return kind
    one: Encode = fn
    return lambda v: kind([one(x) for x in v])


def _values(fn: Encode | None) -> Encode:
    if fn is None:
        return dict
    one: Encode = fn
    return lambda v: {k: one(x) for k, x in v.items()}


def _fixed(pairs: list[tuple[Encode | None, Encode | None]], value: Any, hint: Any) -> tuple:
    if len(value) != len(pairs):
        raise ValueError(f"a {hint} has {len(pairs)} items, got {len(value)}")
    return tuple(x if d is None else d(x) for (_, d), x in zip(pairs, value))


def encode(record: Any) -> dict[str, Any]:
    """``record``'s JSON object: its fields' keys in their order, as its :class:`Key`\\ s say."""
    made = _PLANS.get(type(record)) or plan(type(record))
    out: dict[str, Any] = {}
    if made.plain:
        for f in made.fields:
            value = getattr(record, f.attr)
            out[f.key] = value if f.encode is None else f.encode(value)
        return out
    for f in made.fields:
        value = getattr(record, f.attr)
        if f.omit and value == f.empty and type(value) is type(f.empty):
            continue
        if f.after is not None and getattr(record, f.after) == made.empties[f.after]:
            continue
        if f.flatten is not None:
            if value is not None and f.encode is not None:
                out.update(f.encode(value))
            continue
        out[f.key] = value if f.encode is None else f.encode(value)
    return out


def decode(cls: type, data: Mapping[str, Any]) -> Any:
    """The record ``cls`` of its JSON object ``data``: a key it does not declare or a required
    key it lacks is a ValueError naming them and the declared keys."""
    made = _PLANS.get(cls) or plan(cls)
    if type(data) is not dict and not isinstance(data, Mapping):
        raise ValueError(f"{cls.__module__}.{cls.__qualname__} is a JSON object, got "
                         f"{type(data).__name__}")
    if made.direct and data.keys() == made.known:   # every key, each taken as it is
        return cls(**data)
    if not made.known.issuperset(data):
        unknown = sorted(k for k in data if k not in made.known)
        raise ValueError(f"field(s) {unknown} are not declared in {cls.__module__}."
                         f"{cls.__qualname__}; declared: {list(made.keys)}")
    values = {}
    for f in made.fields:
        if f.key in data and f.flatten is None:
            value = data[f.key]
            values[f.attr] = value if f.decode is None else f.decode(value)
        elif f.flatten is not None:
            inner = {k: v for k, v in data.items() if k in f.flatten}
            if (inner or f.absent is None) and f.decode is not None:
                values[f.attr] = f.decode(inner)
            elif f.absent is not None:
                values[f.attr] = f.absent()
        elif f.absent is not None:
            values[f.attr] = f.absent()
        else:
            missing = [g.key for g in made.fields if g.flatten is None and g.key not in data
                       and g.absent is None]
            raise ValueError(f"{cls.__module__}.{cls.__qualname__} lacks the key(s) {missing}; "
                             f"declared: {list(made.keys)}")
    return cls(**values).decoded() if made.completes else cls(**values)


_R = typing.TypeVar("_R")


def replaced(record: _R, /, **changes: Any) -> _R:
    """``dataclasses.replace(record, **changes)``: a new record, the given fields changed.
    Where the record's ``__init__`` only assigns its fields (every field an init field, no
    ``__post_init__``, nothing held beside the fields), the new record is its fields copied,
    without calling ``__init__`` (a report's comparison is made again at each of a dozen
    stages, ~30 fields each: most of their cost); otherwise, and for a name that is not a
    field (refused), ``dataclasses.replace`` itself."""
    cls = type(record)
    names = _COPIED.get(cls)
    if names is None:
        names = _COPIED[cls] = _copied_fields(cls)
    if not names or len(record.__dict__) != len(names) or not changes.keys() <= names:
        return dataclasses.replace(record, **changes)   # type: ignore[type-var]
    new = object.__new__(cls)
    new.__dict__.update(record.__dict__)
    new.__dict__.update(changes)
    return new


_COPIED: dict[type, frozenset[str]] = {}   # by record type: the fields replaced copies


def _copied_fields(cls: type) -> frozenset[str]:
    """The fields :func:`replaced` may copy for a record of ``cls``: all of them when its
    ``__init__`` takes exactly its fields (no ``InitVar``, none ``init=False``) and nothing
    runs after it (no ``__post_init__``), else none (empty: ``dataclasses.replace``)."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") \
            or not cls.__dictoffset__:   # its fields in slots, not in a __dict__
        return frozenset()
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    if len(names) != len(dataclasses.fields(cls)) or sorted(
            inspect.signature(cls).parameters) != sorted(names):
        return frozenset()
    return frozenset(names)


class JsonRecord:
    """A frozen dataclass whose ``to_json``/``from_json`` are generated from its fields."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        """The record's JSON object (a copy: changing it changes no record)."""
        return encode(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> typing.Self:
        """The record of its JSON object; a key it does not declare is refused."""
        return decode(cls, data)


_FROM_JSON = JsonRecord.__dict__["from_json"].__func__
