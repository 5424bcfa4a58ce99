"""``python -m benchkit verify REPORT``: check a report's runs against the run store, and its
statistics and verdicts against its runs.

Every run row that entered the comparison (outcome passed) must name a key and a digest, and
have a valid record in the store under that key whose ``run_digest`` is the row's digest, whose
run is the row's (arm, track, config, seed) and whose val/test are the row's, bit for bit; with
``BENCHKIT_STORE_KEY`` set, the record must also carry a MAC that verifies under it (without
it, anyone who can write the store can write a record that matches). Then the selection,
p-values, Holm adjustment and verdicts are recomputed from the rows (:mod:`.recheck`). Every
row or figure that cannot be checked is named and fails the command. ``--bench-audit`` is the
stronger check of the rows (it retrains). Never imports torch.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchkit.cli import recheck
from benchkit.cli.output import error, say
from benchkit.report.bench_report import ASIDE, REPORT_NAME, ReportError, read_report
from benchkit.spec.idea import run_id
from benchkit.store import records
from benchkit.store.backends import Storage, open_storage
from benchkit.store.runs import RunStore, load_stored
from benchkit.verdict.records import Report

DEFAULT_STORE = ".pytest_cache/d/benchkit-runs"


def verify(report: Report, storage: Storage, secret: bytes | None = None
           ) -> tuple[int, list[str]]:
    """(runs verified, one line per run that is not): every passed row against the store
    (records signed under ``secret`` only, when given)."""
    ok, problems = 0, []
    for row in report.runs:
        key, digest = (None, None) if row.origin is None else (row.origin.key,
                                                                row.origin.digest)
        name = run_name(row.arm, report.track, row.cfg, row.seed)
        if row.outcome != "passed":
            continue  # a failed run has no result: it entered no comparison
        if not key or not digest:
            problems.append(f"{name}: names no key or digest, so it cannot be checked")
            continue
        folder = RunStore.folder(key)
        try:
            names = storage.names(folder)
        except OSError as exc:
            problems.append(f"{name}: the store cannot be read ({exc})")
            continue
        found, why = None, "not in the store"
        for entry in names:
            try:
                record = load_stored(storage, entry, key, secret)
                if record is None:
                    continue
            except (OSError, records.InvalidRecord) as exc:
                why = f"its record {entry} is invalid ({exc})"
                continue
            if record.run_digest == digest:
                found = record
                break
            why = "the store holds other bits under its key"
        if found is None:
            problems.append(f"{name}: {why}")
        elif (found.point.arm, found.point.track, dict(found.point.cfg), found.point.seed) != (
                row.arm, report.track, dict(row.cfg), row.seed):
            other = found.point
            problems.append(f"{name}: its record is the run "
                            f"{run_name(other.arm, other.track, other.cfg, other.seed)}, not "
                            "this row's")
        elif [found.result.val, found.result.test] != [row.val, row.test]:
            problems.append(f"{name}: the report's val/test are not its record's")
        else:
            ok += 1
    return ok, problems


def run_name(arm: str, track: str | None, cfg: Mapping[str, Any], seed: int) -> str:
    """A run as the command's lines name it: ``arm[track-config-seedN]``."""
    return f"{arm}[{run_id(str(track), cfg, seed)}]"


def family(path: str | Path, report: Report) -> list[Report]:
    """The reports of ``report``'s idea, itself included: those in the folders beside its own
    (``reports/<idea>/<track>/``) that name the same idea; an unreadable one is left out. A
    report written aside (``<track>/exploratory/``) has its session's others aside too."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    members = [report]
    aside = folder.name if folder.name in ASIDE else None
    pattern = f"*/{aside}/{REPORT_NAME}" if aside else f"*/{REPORT_NAME}"
    for other in sorted((folder.parent.parent if aside else folder.parent).glob(pattern)):
        if other.parent.resolve() == folder.resolve():
            continue
        try:
            loaded = read_report(other)
        except ReportError:
            continue
        if loaded.name == report.name and loaded.track != report.track:
            members.append(loaded)
    return members


def cmd_verify(args: argparse.Namespace) -> int:
    try:
        report = read_report(args.report)
    except ReportError as exc:
        return error(str(exc))
    location = args.store if args.store is not None else default_store(args.report)
    if location is None:
        return error(f"no run store at {DEFAULT_STORE} in {Path(args.report).resolve().parent} "
                     "or a folder above it (pytest keeps it in its rootdir's cache); give "
                     "--store LOCATION")
    try:
        storage = open_storage(location, Path.cwd())
    except ValueError as exc:
        return error(f"--store {exc}")
    directory = getattr(storage, "directory", None)
    if directory is not None and not directory.is_dir():
        return error(f"--store {location}: no run store at {directory}; valid: the directory "
                     "a session stored its runs in (--bench-store), or an fsspec URL")
    secret = records.store_secret()
    ok, problems = verify(report, storage, secret)
    figures = recheck.verdicts(report, family(args.report, report))
    for line in problems + figures:
        say(f"benchkit: verify: FAIL {line}")
    for line in recheck.unredone(report):
        say(f"benchkit: verify: not rechecked: {line}")
    keyed = f"signed under {records.KEY_VARIABLE}" if secret else \
        f"unsigned: {records.KEY_VARIABLE} is not set, so anyone who can write the store could " \
        "have written them"
    say(f"benchkit: verify: {ok} run(s) match the store at {storage.location} ({keyed}), "
        f"{len(problems)} do not; statistics and verdicts "
        + ("recomputed from the rows: the same" if not figures else
           f"recomputed from the rows: {len(figures)} differ"))
    return 1 if problems or figures or not ok else 0


def default_store(report: str | Path) -> Path | None:
    """The store a session used by default for ``report``: pytest's cache in its rootdir, the
    nearest folder at or above the report's that holds :data:`DEFAULT_STORE` (the command may
    run from anywhere); None when there is none."""
    start = Path(report).resolve()
    for folder in (start, *start.parents):
        if (folder / DEFAULT_STORE).is_dir():
            return folder / DEFAULT_STORE
    return None


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="check a report's runs against the run store",
                       description="Check every run of REPORT against the run store (the "
                                   "record must be there, valid, the same run with the same "
                                   "digest and val/test bits, and signed when "
                                   "BENCHKIT_STORE_KEY is set), then recompute its p-values "
                                   "and verdicts from those runs (the idea's other tracks' "
                                   "reports beside it complete the Holm family).",
                       epilog="exit status: 0 every run matches and every figure follows; 1 a "
                              "run is missing, differs, cannot be checked, or a figure "
                              "differs; 2 missing/invalid report or store")
    p.add_argument("report", metavar="REPORT", help="a bench_report.json (or its folder)")
    p.add_argument("--store", default=None, metavar="LOCATION",
                   help="the run store: a directory (relative to the current folder) or an "
                        f"fsspec URL (default: {DEFAULT_STORE} in the nearest folder at or "
                        "above REPORT's that has one: the pytest rootdir's cache)")
    p.set_defaults(func=cmd_verify)
