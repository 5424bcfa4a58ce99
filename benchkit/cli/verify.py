"""``python -m benchkit verify REPORT``: check a report's runs against the run store.

Every run row that names a key and a digest must have a valid record in the store under that
key whose ``run_digest`` is the row's digest and whose val/test are the row's, bit for bit. A
run the store lacks, holds differently, or holds in a record that fails its checks is named.
This is what lets a reviewer trust a verdict taken from a shared store; ``--bench-audit`` is
the stronger check (it retrains). Never imports torch.
"""
from __future__ import annotations

from pathlib import Path

from benchkit.cli.output import error
from benchkit.report.bench_report import ReportError, load_report
from benchkit.spec.idea import cfg_id
from benchkit.store import records
from benchkit.store.backends import open_storage
from benchkit.store.runs import RunStore

DEFAULT_STORE = ".pytest_cache/d/benchkit-runs"


def verify(report: dict, storage) -> tuple[int, list[str]]:
    """(runs verified, one line per run that is not)."""
    ok, problems = 0, []
    for row in report.get("runs") or []:
        key, digest = row.get("key"), row.get("digest")
        if not key or not digest:
            continue
        name = f"{row['arm']}[{report.get('track')}-{cfg_id(row['cfg'])}-seed{row['seed']}]"
        folder = RunStore.folder(key)
        try:
            names = storage.names(folder)
        except OSError as exc:
            problems.append(f"{name}: the store cannot be read ({exc})")
            continue
        found, why = None, "not in the store"
        for entry in names:
            try:
                record = records.load(storage.read(entry) or b"", key)
            except (OSError, records.InvalidRecord) as exc:
                why = f"its record {entry} is invalid ({exc})"
                continue
            if record["run_digest"] == digest:
                found = record
                break
            why = "the store holds other bits under its key"
        if found is None:
            problems.append(f"{name}: {why}")
        elif [found["result"]["val"], found["result"]["test"]] != [row.get("val"), row.get("test")]:
            problems.append(f"{name}: the report's val/test are not its record's")
        else:
            ok += 1
    return ok, problems


def cmd_verify(args) -> int:
    try:
        report = load_report(args.report)
    except ReportError as exc:
        return error(str(exc))
    try:
        storage = open_storage(args.store, Path.cwd())
    except ValueError as exc:
        return error(f"--store {exc}")
    ok, problems = verify(report, storage)
    for line in problems:
        print(f"benchkit: verify: FAIL {line}")
    print(f"benchkit: verify: {ok} run(s) match the store at {storage.location}, "
          f"{len(problems)} do not")
    return 1 if problems or not ok else 0


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="check a report's runs against the run store",
                       description="Check every run of REPORT that names a key and digest "
                                   "against the run store: the record must be there, valid, "
                                   "with the same digest and val/test bits.",
                       epilog="exit status: 0 every run matches; 1 a run is missing or differs "
                              "(or no run names a digest); 2 missing/invalid report or store")
    p.add_argument("report", metavar="REPORT", help="a bench_report.json (or its folder)")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="LOCATION",
                   help=f"the run store: a directory or fsspec URL (default: {DEFAULT_STORE})")
    p.set_defaults(func=cmd_verify)
