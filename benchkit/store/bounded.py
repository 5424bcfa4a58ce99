"""JSON that others may have written (stored runs, reports), read within bounds: a size
checked before the bytes are read, no integer longer than :data:`MAX_INT_DIGITS` digits (Python
would spend quadratic time on it, or refuse it with a traceback), no key given twice in an
object (JSON's last-one-wins would let a file say two things), and no nesting so deep that the
parser recurses out. Each refusal is :class:`Refused`, one line saying what is wrong and what
is valid. Pure Python.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from benchkit.spec.idea import MAX_INT_DIGITS  # the one bound: spec refuses input beyond it


class Refused(ValueError):
    """Input outside the bounds; the message says why in one line."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise Refused(f"key {key!r:.60} is given twice in one object; valid: each key once")
        found[key] = value
    return found


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise Refused(f"an integer of {digits} digits; valid: at most {MAX_INT_DIGITS} digits")
    return int(text)


def loads(data: bytes | str) -> Any:
    """The JSON value in ``data`` (UTF-8 when bytes), or :class:`Refused` saying why not."""
    try:
        return json.loads(data, object_pairs_hook=_unique, parse_int=_integer)
    except Refused:
        raise
    except json.JSONDecodeError as exc:
        raise Refused(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError:
        raise Refused("not JSON (not UTF-8 text)") from None
    except RecursionError:
        raise Refused("not JSON benchkit writes (nested too deeply)") from None
    except ValueError as exc:   # anything else json refuses
        raise Refused(f"not JSON ({exc})") from None


def read_file(path: Path | str, limit: int) -> bytes | None:
    """The bytes of the regular file at ``path`` (None when there is none), refused
    (:class:`Refused`) when it holds more than ``limit`` bytes: its size is checked before it is
    read, and no more than ``limit + 1`` bytes are ever read (it may grow meanwhile)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise Refused(f"{size} bytes; valid: at most {limit}")
            data = f.read(limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if len(data) > limit:
        raise Refused(f"over {limit} bytes; valid: at most {limit}")
    return data
