"""The distribution functions benchkit's statistics need, from scipy.special, remembered.

The statistics call four of scipy.special's ufuncs (the ones scipy.stats calls itself): the t
quantile and cdf, the noncentral t upper tail and the inverse regularized beta. Importing
scipy.special costs 0.14 s, a fifth of a rerun of an unchanged bench (measured), while a rerun
asks for exactly the values the first session computed. So every value is remembered under
its exact arguments: :func:`remember_in` loads the values of earlier sessions from a file and
:func:`save` writes them back. A remembered value is the float scipy returned for the same
arguments under the same scipy and numpy versions, so results are bit-identical with and
without the memo; anything else is computed (and scipy imported) on first use.
"""
from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from pathlib import Path

MEMO_VERSION = 1
MAX_VALUES = 20_000  # the memo keeps the values used last; a report needs ~100

_lock = threading.Lock()
_values: OrderedDict[str, float] = OrderedDict()
_memo_file: Path | None = None
_changed = False


def _versions() -> dict:
    from importlib import metadata

    out = {"memo": MEMO_VERSION}
    for package in ("scipy", "numpy"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


def remember_in(path: Path) -> None:
    """Use ``path`` as the memo: take the values it holds (when written by the same scipy and
    numpy versions), and let :func:`save` write to it. An unreadable file is an empty memo."""
    global _memo_file
    with _lock:
        _memo_file = Path(path)
        try:
            stored = json.loads(_memo_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(stored, dict) or stored.get("versions") != _versions():
            return
        for key, value in (stored.get("values") or {}).items():
            if isinstance(value, float) or isinstance(value, int):
                _values.setdefault(key, float(value))


def save() -> None:
    """Write the memo (the values used last, at most MAX_VALUES) when it gained any."""
    global _changed
    with _lock:
        if _memo_file is None or not _changed:
            return
        while len(_values) > MAX_VALUES:
            _values.popitem(last=False)
        text = json.dumps({"versions": _versions(), "values": dict(_values)})
        _changed = False
    from benchkit.atomic import write_atomic

    try:
        write_atomic(_memo_file, text)
    except OSError:  # only a head start for the next session: never fail this one for it
        pass


def _remembered(name: str, compute, *args: float) -> float:
    global _changed
    key = name + repr(tuple(float(a) for a in args))
    with _lock:
        value = _values.get(key)
        if value is not None:
            _values.move_to_end(key)
            return value
    value = float(compute(*args))
    if math.isfinite(value):  # JSON holds finite numbers only; others are computed again
        with _lock:
            _values[key] = value
            _changed = True
    return value


def _special():
    from scipy import special

    return special


def t_ppf(q: float, df: float) -> float:
    """Student-t quantile (``scipy.stats.t.ppf(q, df)``)."""
    return _remembered("t_ppf", lambda q, df: _special().stdtrit(df, q), q, df)


def t_cdf(x: float, df: float) -> float:
    """Student-t cdf (``scipy.stats.t.cdf(x, df)``)."""
    return _remembered("t_cdf", lambda x, df: _special().stdtr(df, x), x, df)


def _nct_sf(x: float, df: float, nc: float) -> float:
    import numpy as np

    try:  # the noncentral t upper tail that scipy.stats.nct.sf evaluates (Boost)
        from scipy.special._ufuncs import _nct_sf as ufunc
    except ImportError:  # pragma: no cover - a scipy that moved it: the public, slower path
        from scipy import stats
        ufunc = stats.nct.sf
    with np.errstate(over="ignore"):
        return float(np.clip(ufunc(x, df, nc), 0.0, 1.0))


def nct_upper(x: float, df: float, nc: float) -> float:
    """Noncentral-t upper tail ``P(T > x)`` (``scipy.stats.nct.sf``), clipped to [0, 1]."""
    return _remembered("nct_upper", _nct_sf, x, df, nc)


def beta_ppf(a: float, b: float, q: float) -> float:
    """Inverse regularized incomplete beta (``scipy.stats.beta.ppf(q, a, b)``)."""
    return _remembered("beta_ppf", lambda a, b, q: _special().betaincinv(a, b, q), a, b, q)
