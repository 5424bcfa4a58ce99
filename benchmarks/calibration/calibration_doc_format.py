"""Number and rate formatting shared by the sections of docs/calibration.md
(benchmarks/calibration/calibration_doc.py and its section modules)."""
from __future__ import annotations

import simstats


def num(x: float, digits: int = 3) -> str:
    """x with `digits` decimals, or one more when that shows it exactly (0.0275, 0.035)."""
    s = f"{x:.{digits + 1}f}"
    return s if abs(float(s) - x) < 1e-12 and not s.endswith("0") else f"{x:.{digits}f}"


def ci(lo: float, hi: float, digits: int = 3) -> str:
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def rate_text(k: int, n: int, digits: int = 3) -> str:
    lo, hi = simstats.clopper_pearson(k, n)
    return f"{k}/{n} = {num(k / n, digits)} {ci(lo, hi, digits)}"


def blocks_label(run: dict) -> str:
    a = run["protocol"]["first_block"]
    return f"blocks {a}-{a + run['protocol']['blocks'] - 1}"


def rt(r: dict, digits: int = 3) -> str:
    """A rate dict of simstats.rate as 'k/n = rate [lo, hi]'."""
    return rate_text(r["k"], r["n"], digits)


def lv(level: float) -> str:
    return f"{level:.4g}"


def yes(flag: bool) -> str:
    return "yes" if flag else "**no**"
