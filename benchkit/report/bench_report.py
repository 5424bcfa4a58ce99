"""``bench_report.json``: where it is written and how (:func:`report_path`, :func:`dumps`,
:func:`stamp`), and reading one that anyone may have written or edited, for
``python -m benchkit``.

A report is checked against the JSON Schema benchkit ships (``bench_report.schema.json``)
before any command uses it, so that a damaged or crafted file is one line saying what is wrong,
never a traceback. Reports written by hand before benchkit (``bench_version`` 1 without the
``module`` key benchkit always writes) lack fields benchkit added: for those, only the fields'
types, values and rules are checked, not their presence, and :func:`migrate` gives them the
fields' empty values before they become a :class:`Report` (:func:`read_report`). Every string
is made printable (control characters escaped), so that a name cannot drive the terminal.
Never imports torch.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from pathlib import Path
from typing import Any

from benchkit.codec import json_keys
from benchkit.store import bounded
from benchkit.verdict.records import Report

REPORT_NAME = "bench_report.json"
# where a report that must not replace a complete one goes: reports/<idea>/<track>/<kind>/
ASIDE = ("exploratory", "incomplete")
SCHEMA_PATH = Path(__file__).with_name("bench_report.schema.json")
# = benchkit.verdict.build.BENCH_VERSION (a test checks): not imported, so that the commands that
# only read reports do not load numpy and the statistics
SUPPORTED_VERSIONS = (1,)
_COMPARISON_KEYS = ("delta_mean", "p_value", "mde", "idea_wins", "n_pairs")


class ReportError(Exception):
    """A path that cannot be read as a benchkit report; the message says why, in one line."""


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\x1b``, ``\\u202e``, ...)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _printable_all(value):
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k): _printable_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable_all(v) for v in value]
    return value


def _versions() -> str:
    return ", ".join(map(str, SUPPORTED_VERSIONS))


MAX_REPORT_BYTES = 32 * 1024 * 1024   # ~70x the largest reference report (450 kB)


def load_report(path) -> dict:
    """Read and check one report. A folder holding a bench_report.json stands for that file."""
    path = Path(path)
    if path.is_dir() and (path / REPORT_NAME).is_file():
        path = path / REPORT_NAME
    return load_report_file(path)


def load_report_file(path: Path, *, schema: bool = True) -> dict:
    """Read and check the report at ``path`` (a folder is refused): :class:`ReportError` says
    in one line why it is none. A FIFO or a device is refused before it is opened. Without
    ``schema``, only a JSON object of a supported ``bench_version`` with a list of run objects
    (what a session compares with the report it writes)."""
    if not path.exists():
        raise ReportError(f"{path}: no such file")
    if path.is_dir():
        raise ReportError(f"{path}: is a folder without a {REPORT_NAME}")
    if not path.is_file():  # a FIFO or a device would block or never end
        raise ReportError(f"{path}: not a regular file; valid: a {REPORT_NAME} or its folder")
    size = path.stat().st_size
    if size > MAX_REPORT_BYTES:
        raise ReportError(f"{path}: {size} bytes; valid: a report of at most "
                          f"{MAX_REPORT_BYTES} bytes (benchkit's are well under 1 MB)")
    try:   # never more than the limit read, should it grow meanwhile
        text = bounded.read_file(path, MAX_REPORT_BYTES)
    except (OSError, bounded.Refused) as exc:
        raise ReportError(f"{path}: cannot be read ({exc})") from None
    try:   # no integer of more than 20 digits, no key twice, not nested too deeply
        report = bounded.loads(text or b"")
    except bounded.Refused as exc:
        raise ReportError(f"{path}: {exc}") from None
    if not isinstance(report, dict) or "bench_version" not in report:
        raise ReportError(f"{path}: not a benchkit report (no bench_version); supported "
                          f"bench_version: {_versions()}")
    version = report["bench_version"]
    if isinstance(version, bool) or version not in SUPPORTED_VERSIONS:
        raise ReportError(f"{path}: bench_version {version!r:.40} is not supported; this "
                          f"benchkit reads bench_version {_versions()}")
    if not schema:
        runs = report.get("runs", [])
        if isinstance(runs, list) and all(isinstance(r, dict) for r in runs):
            return report
        raise ReportError(f"{path}: not a valid benchkit report (runs: not a list of objects)")
    problem = schema_problem(report)
    if problem is None:
        problem = _structure_problem(report)
    if problem is not None:
        raise ReportError(f"{path}: not a valid benchkit report ({problem})")
    return _printable_all(report)


def read_report(path) -> Report:
    """The checked report at ``path`` (or in that folder) as its record, however old
    (:func:`migrate`): what every command reads. :class:`ReportError` says why it is none."""
    path = Path(path)
    if path.is_dir() and (path / REPORT_NAME).is_file():
        path = path / REPORT_NAME
    try:
        return Report.from_json(migrate(load_report_file(path), path))
    except (ValueError, TypeError, AttributeError) as exc:
        raise ReportError(f"{path}: not a valid benchkit report ({printable(str(exc))[:300]})"
                          ) from None


def idea_name(report: dict, path: Path) -> str:
    """The idea's name; hand-made v1 reports have none: reports/<name>/<track>/ gives it."""
    if isinstance(report.get("name"), str):
        return report["name"]
    folder = path.parent if path.name == REPORT_NAME else path
    return folder.parent.name if folder.name == report["track"] else folder.name


def migrate(report: dict, path: Path) -> dict:
    """A checked report's JSON as :class:`Report` reads it: the one place that knows older
    reports. Those benchkit wrote read as they are (the record's optional fields say what each
    version lacks); a hand-made v1 report (no ``module``) gets its name from its folder and
    every field benchkit added as its empty value, and its own extra keys are left out."""
    if "module" in report:
        return report
    empty: dict[str, Any] = {"name": idea_name(report, path), "claim": None, "module": "",
             "complete": report.get("comparison") is not None, "incomplete": None,
             "idea_sweep": [], "frontier": None, "controls": {}, "budgets": None,
             "log_medians": None, "convergence": {"budget": None, "budget_reason": None,
                                                  "threshold": None, "arms": {}},
             "mechanism_signature": {"signatures": {}, "confirmed": None},
             "math_verification": {"tests": [], "passed": None}, "mechanism_ok": None,
             "grid_extensions": {"limit": 0, "declared_grid": [], "extensions": [],
                                 "at_edge": []},
             "protocol": {}, "warnings": [], "runs": [], "environment": {},
             "sequential": {"looks": [], "max_seeds": report.get("n_seeds"), "declared": False,
                            "look": None, "boundary": "", "futility": None, "rule": ""},
             "exploratory": None, "metric": "metric", "model": "?"}
    known = json_keys(Report)
    return {**{k: v for k, v in empty.items() if k not in report},
            **{k: v for k, v in report.items() if k in known}}


@functools.lru_cache(maxsize=1)
def _validator():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def schema_problem(report: dict) -> str | None:
    """The first way ``report`` breaks the shipped schema, in words, or None. A hand-made v1
    report (no ``module``) is not asked for the fields benchkit added."""
    hand_made = "module" not in report
    try:
        for error in _validator().iter_errors(report):
            if hand_made and error.validator == "required":
                continue
            return _describe(error)
    except RecursionError:
        return "nested too deeply"
    return None


def _describe(error) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    where = where.lstrip(".") or "the report"
    return printable(f"{where}: {error.message}")[:300]


def _structure_problem(report: dict) -> str | None:
    """What show/compare need beyond the schema's types (hand-made reports may lack it)."""
    for key in ("track", "metric_direction", "comparison", "practical_verdict",
                "system_verdict"):
        if key not in report:
            return f"missing key {key!r}"
    comp = report["comparison"]
    if comp is None:
        return (None if report["practical_verdict"] == "incomplete"
                else "no comparison but a verdict other than 'incomplete'")
    for key in _COMPARISON_KEYS:
        if key not in comp:
            return f"comparison has no {key!r}"
    base, idea = report.get("baseline"), report.get("idea")
    if not (isinstance(base, dict) and isinstance(base.get("full"), dict)
            and is_number(base["full"].get("mean"))):
        return "baseline.full.mean missing"
    if not (isinstance(idea, dict) and is_number(idea.get("mean"))):
        return "idea.mean missing"
    if not (isinstance(base.get("best_cfg"), dict)
            and isinstance(report.get("idea_config"), dict)):
        return "selected configs missing"
    return None


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_finite(x) -> bool:
    return is_number(x) and math.isfinite(x)


# -- writing ----------------------------------------------------------------------------------
def report_path(report_dir: Path, name: str, track: str) -> Path:
    return Path(report_dir) / name / track / "bench_report.json"


def dumps(report: dict) -> str:
    """Deterministic JSON: sorted keys are avoided to keep the v1 reading order; NaN refused."""
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def stamp(report: Report) -> Report:
    """``report`` as written now: the same record with its ``created`` time (UTC)."""
    return dataclasses.replace(report, created=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                             time.gmtime()))
