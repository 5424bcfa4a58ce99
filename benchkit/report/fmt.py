"""How numbers are written for people (terminal table, summary.md, ``benchkit compare``, plots).

One place, so that every view writes a missing or non-finite value the same way and a
percentage never comes out in scientific notation.
"""
from __future__ import annotations

import math
import re
from typing import Any

MISSING = "n/a"


def _finite(x) -> bool:
    return x is not None and not isinstance(x, bool) and math.isfinite(x)


def num(x, spec: str = ".4g") -> str:
    """``x`` formatted with ``spec``; ``n/a`` for None, NaN or infinity."""
    return format(x, spec) if _finite(x) else MISSING


def signed(x, spec: str = "+.4g") -> str:
    """A difference: always with its sign, and exactly ``0`` when it is zero."""
    if not _finite(x):
        return MISSING
    return "0" if x == 0 else format(x, spec)


def interval_text(ci: Any) -> str:
    """[lo, hi] of an interval (a record with ``lo`` and ``hi``) whose unbounded ends are
    None."""
    return (f"[{signed(ci.lo) if ci.lo is not None else '-inf'}, "
            f"{signed(ci.hi) if ci.hi is not None else '+inf'}]")


def sig(x, digits: int = 3, *, sign: bool = False) -> str:
    """``x`` with ``digits`` significant digits, for people: ``0.0146``, ``1.04``, ``3.33e-4``,
    ``1.2e+5`` (scientific below 1e-3 and from 1e5, with a short exponent); ``sign`` writes
    ``+`` on a positive number. ``n/a`` for None, NaN or infinity; exactly ``0`` for zero."""
    if not _finite(x):
        return MISSING
    if x == 0:
        return "0"
    plus = "+" if sign else ""
    fixed = format(x, f"{plus}.{digits}g")
    if abs(x) >= 1e-3 and "e" not in fixed:
        return fixed
    mantissa, exponent = format(x, f"{plus}.{digits - 1}e").split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent)}" if int(exponent) < 0 else f"{mantissa}e+{int(exponent)}"


LONG_FLOAT = re.compile(r"(?<==)-?\d+\.\d{7,}(?:e-?\d+)?")


def readable(text: str) -> str:
    """``text`` with config values of many digits in 3 significant digits (lr=3.33e-4); run
    ids keep theirs (they are what -k matches)."""
    return LONG_FLOAT.sub(lambda m: sig(float(m.group())), text)


def cfg_text(cfg: dict | None) -> str:
    """A grid config for people: ``lr=3.33e-4, keep=0.25`` (its id, ``benchkit.spec.cfg_id``,
    keeps every digit: it names runs)."""
    if cfg is None:
        return "-"
    def value(v) -> str:
        return sig(v) if isinstance(v, float) else repr(v) if isinstance(v, str) else str(v)
    return ", ".join(f"{k}={value(v)}" for k, v in cfg.items())


def pct(x) -> str:
    """A percentage with about three significant digits, never in scientific notation:
    ``4,690%``, ``12.3%``, ``0.05%``, ``<0.01%``."""
    if not _finite(x):
        return MISSING
    a = abs(x)
    if a == 0:
        return "0%"
    if a >= 100:
        return f"{x:,.0f}%"
    if a >= 0.01:
        return f"{x:.3g}%"
    return ("-" if x < 0 else "") + "<0.01%"


def rel_pct(x, base) -> str:
    """``|x|`` as a percentage of ``|base|`` (``n/a`` without a nonzero finite base)."""
    if not (_finite(x) and _finite(base)) or base == 0:
        return MISSING
    return pct(100 * abs(x) / abs(base))


def mechanism_word(ok) -> str:
    """``mechanism_ok`` as the report's JSON writes it: ``1``, ``0`` or ``null`` (no evidence
    either way), so that every output uses the README's words."""
    return "null" if ok is None else ("1" if ok else "0")


# -- Markdown (summary.md) ---------------------------------------------------------------------
def markdown_cell(text) -> str:
    """One markdown table cell: a single line, pipes escaped."""
    s = "-" if text is None else str(text)
    s = s.strip().splitlines()[0] if s.strip() else "-"
    if len(s) > 160:
        s = s[:157] + "..."
    return s.replace("|", "\\|")


def markdown_table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in rows]
    return lines
