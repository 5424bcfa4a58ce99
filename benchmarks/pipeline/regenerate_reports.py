"""Rebuild committed reports from their run rows through today's pipeline and write them back.

A committed report carries every run's row, its spec as far as the report states it, and its
mechanism tests' outcomes: compare_reports.py's ``spec_of`` and ``payloads_of`` turn them into
the payloads the plugin aggregates, and :func:`benchkit.verdict.pipeline.idea_reports` builds
and decides the report as a session would (the idea's other tracks' reports beside it form its
family). What comes from outside the runs is kept from the written report: its floors (the
track's reference models, on its seeds), its creation time, provenance and store.
``python -m benchkit render`` then rewrites summary.md and the plots.

    PYTHONPATH=$PWD python benchmarks/pipeline/regenerate_reports.py reports/<idea> ...
    PYTHONPATH=$PWD python -m benchkit render reports/<idea> ...
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from benchkit.report import bench_report
from benchkit.verdict import pipeline

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_reports import VOLATILE, payloads_of, records_of, spec_of  # noqa: E402


def regenerate(path: Path) -> dict:
    """The report at ``path`` rebuilt from its rows (see the module doc), as JSON."""
    report = bench_report.load_report(path)
    spec = spec_of(report)
    runs, mechanisms = payloads_of(report, spec)
    _with_nulls(runs, report)

    def floors(rebuilt):
        return dataclasses.replace(rebuilt, floors=report.get("floors") or {})
    (rebuilt,) = pipeline.idea_reports(spec, records_of(runs), records_of(mechanisms),
                                       alpha=report["protocol"]["alpha"], floors=floors)
    out = rebuilt.to_json()
    out.update({k: report[k] for k in VOLATILE if k in report and k != "floors"})
    return out


def _with_nulls(runs: list[dict], report: dict) -> None:
    """Give the idea's runs the signatures' nulls the report's mechanism section lists per
    seed (per point, then seed, over a frontier): payloads_of leaves them out, the rows hold
    the observed values only. Only the selected configs' runs enter the section."""
    described = report["mechanism_signature"]["signatures"]
    seeds = report["protocol"]["seeds"]
    frontier = report.get("frontier")
    points = frontier["values"] if frontier else [None]
    for run in runs:
        point = points.index(run["cfg"].get(frontier["axis"])) if frontier else 0
        for name, sig in (run.get("signatures") or {}).items():
            nulls = (described.get(name) or {}).get("null_per_seed") or []
            if (run["arm"] == "idea" and len(nulls) == len(seeds) * len(points)
                    and run["seed"] in seeds):
                sig.update(has_null=True,
                           null=nulls[point * len(seeds) + seeds.index(run["seed"])])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="reports/<idea> folders (one track each)")
    args = parser.parse_args()
    for folder in args.folders:
        for path in sorted(Path(folder).glob("*/bench_report.json")):
            new = regenerate(path)
            problem = bench_report.schema_problem(new)
            if problem:
                print(f"{path}: not written: {problem}")
                return 1
            path.write_text(bench_report.dumps(new), encoding="utf-8")
            print(f"{path}: {new['practical_verdict']} "
                  f"(p {new['comparison'] and new['comparison']['p_value']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
