"""Seconds a report takes to build from recorded run values, plots included (issue 51: <= 0.3 s
for 8 seeds x 3 configs). A committed report's run rows become the payloads the controller
receives (benchmarks/pipeline/compare_reports.py's reading), and the session's report writer
(:func:`benchkit.report.session.aggregate_session`: the verdict pipeline, the report JSON,
summary.md, paired.png and sweep.png) writes them into a fresh folder each time, as a session's
first report does. The first build in the process (matplotlib's and scipy's imports) is shown
apart; the figure is the median of the later ones, with the share of each part (cProfile of one
build).

    PYTHONPATH=. .venv/bin/python benchmarks/speed/report_build.py [--reps 7] \
        [--report reports/mnist1d_cnn/mnist1d/bench_report.json ...] [--against /tmp/old]

``--against PATH`` times another checkout of benchkit (an older commit exported with ``git
archive``) beside this one: one process a side, the two building in turn, build by build
(``--rounds`` x ``--reps`` builds of each report a side), so that both see the same load; it
gives each side's median over all builds, the ratio new/old of the medians and the median of
the rounds' own ratios, measured in this one run. Both modes give the least CPU time too: on a
shared machine a build's CPU time varies twofold with the other work (caches, memory
bandwidth), and the least is the build least disturbed, the nearest to a quiet machine's.

``--pipeline`` times the verdict pipeline alone (:func:`benchkit.verdict.pipeline.idea_reports`:
build, family, decision; no JSON, summary or plots): the part a frontier's build-once changed
(issue 51 item 3), which the plots' share hides in a whole build. Its default reports are the
two committed frontier benches.

Writes benchmarks/results/report_build.json (``--out -``: prints only; ``--pipeline``:
benchmarks/results/report_build_pipeline.json).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "report_build.json"
DEFAULT = ("reports/mnist1d_cnn/mnist1d/bench_report.json",  # 2 arms, 8 seeds x 3 configs
           "reports/task_visible_pruning/tabular/bench_report.json")  # 2 controls, 8 x 3
FRONTIERS = ("reports/task_visible_pruning/tabular/bench_report.json",   # a frontier, 2 controls
             "reports/pruning_finetune_vs_scratch/tabular/bench_report.json")
PARTS = {"pipeline": "benchkit/verdict/pipeline.py(idea_reports)",
         "plots": "benchkit/report/plots.py", "summary.md": "render_summary_md"}


def recorded_spec(path: Path):
    """(spec, run records, mechanism records, report) of the committed report at ``path``
    (benchmarks/pipeline/compare_reports.py's reading of its rows): what the verdict pipeline
    takes."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "pipeline"))
    import compare_reports as cr

    from benchkit.report import bench_report

    report = bench_report.load_report(path)
    spec = cr.spec_of(report)
    runs, mechanisms = cr.payloads_of(report, spec)
    return spec, cr.records_of(runs), cr.records_of(mechanisms), report


def recorded(path: Path):
    """(payloads, alpha, floors) of the committed report at ``path``: what the session's
    report writer takes."""
    _, runs, mechanisms, report = recorded_spec(path)
    return (runs + mechanisms, report["protocol"]["alpha"], dict(report.get("floors") or {}))


def recorded_verdicts(path: Path):
    """(spec, run records, mechanism records, alpha) of the committed report at ``path``."""
    spec, runs, mechanisms, report = recorded_spec(path)
    return spec, runs, mechanisms, report["protocol"]["alpha"]


def verdicts(spec, runs, mechanisms, alpha: float) -> tuple[float, float]:
    """(wall, CPU) seconds a report for the verdict pipeline alone to decide ``spec``'s
    reports from its runs."""
    from benchkit.verdict import pipeline

    t0, c0 = time.perf_counter(), time.process_time()
    reports = pipeline.idea_reports(spec, runs, mechanisms, alpha=alpha)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert reports and all(r.complete for r in reports)
    return wall / len(reports), cpu / len(reports)


def cases_of(reports: list[str], only_pipeline: bool):
    """Each report's case and the function that builds it once: the session's report writer,
    or with ``only_pipeline`` the verdict pipeline alone."""
    load, make = (recorded_verdicts, verdicts) if only_pipeline else (recorded, build)
    return {name: load(ROOT / name) for name in reports}, make


def build(payloads, alpha: float, floors: dict) -> tuple[float, float]:
    """(wall, CPU) seconds a report to write the reports of ``payloads`` into a fresh folder:
    the CPU time (one thread) is the work itself, steadier than the wall on a shared
    machine."""
    from benchkit.report.session import aggregate_session

    where = Path(tempfile.mkdtemp(prefix="benchkit-report-build-"))
    settings = SimpleNamespace(alpha=alpha, report_dir=where, gate="off")
    t0, c0 = time.perf_counter(), time.process_time()
    written, _ = aggregate_session(payloads, settings, rootpath=ROOT,
                                   floors=lambda track, seeds: floors)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert written and all((path.parent / "paired.png").is_file() for path, _ in written)
    shutil.rmtree(where, ignore_errors=True)
    return wall / len(written), cpu / len(written)


def parts(payloads, alpha: float, floors: dict) -> dict[str, float]:
    """Each part's share of one build's CPU time (cProfile on the process's CPU clock, so that
    other work on a loaded machine does not count; cumulative)."""
    prof = cProfile.Profile(time.process_time)
    prof.runcall(build, payloads, alpha, floors)
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in stats.values())
    share = {}
    for part, name in PARTS.items():
        share[part] = max((v[3] for (file, _, fn), v in stats.items()
                           if name in f"{file}({fn})" or name == fn), default=0.0) / total
    return share


def timings(reports: list[str], reps: int, shares: bool, only_pipeline: bool = False) -> dict:
    """Each report's build times in this process: the first (imports) apart, ``reps`` more
    interleaved across the reports, and with ``shares`` each part's share of one build."""
    cases, build = cases_of(reports, only_pipeline)
    shares = shares and not only_pipeline
    first = {name: build(*case) for name, case in cases.items()}  # imports: shown apart
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in cases}
    for _ in range(reps):  # interleaved
        for name, case in cases.items():
            wall, cpu = build(*case)
            times[name]["wall"].append(wall)
            times[name]["cpu"].append(cpu)
    return {name: {"first_in_process_s": dict(zip(("wall", "cpu"), first[name])),
                   "median_s": {c: statistics.median(v) for c, v in times[name].items()},
                   "min_s": {c: min(v) for c, v in times[name].items()},
                   "all_s": times[name], **({"share": parts(*case)} if shares else {})}
            for name, case in cases.items()}


def serve(reports: list[str], only_pipeline: bool) -> None:
    """``--serve``: build each report named on a line of stdin once (the first build of each
    in this process, its imports, apart) and answer its [wall, cpu] on a line of stdout."""
    cases, build = cases_of(reports, only_pipeline)
    for case in cases.values():
        build(*case)
    print("ready", flush=True)
    for line in sys.stdin:
        print(json.dumps(build(*cases[line.strip()])), flush=True)


def against(tree: Path, args) -> dict:
    """``tree``'s benchkit and this one's in two processes, build by build: each round builds
    every report once a side, the side that goes first alternating, so both see the same load
    to within a build. Each side's medians and least, the ratio of the medians and the median
    of the rounds' own ratios this/``tree``."""
    sides = {}
    for side, code in (("before", tree), ("after", ROOT)):
        sides[side] = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--report", *args.report,
             *(["--pipeline"] if args.pipeline else [])], cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(code)}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
    for proc in sides.values():
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    got = {name: {side: {"wall": [], "cpu": []} for side in sides} for name in args.report}
    for k in range(args.rounds * args.reps):
        for name in args.report:
            for side in (("before", "after") if k % 2 == 0 else ("after", "before")):
                proc = sides[side]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(name + "\n")
                proc.stdin.flush()
                wall, cpu = json.loads(proc.stdout.readline())
                got[name][side]["wall"].append(wall)
                got[name][side]["cpu"].append(cpu)
    for proc in sides.values():
        proc.communicate()
    out = {}
    for name, by_side in got.items():
        med = {side: {c: statistics.median(v) for c, v in clocks.items()}
               for side, clocks in by_side.items()}
        least = {side: {c: min(v) for c, v in clocks.items()} for side, clocks in by_side.items()}
        ratio = {c: med["after"][c] / med["before"][c] for c in ("wall", "cpu")}
        paired = {c: statistics.median(a / b for a, b in zip(by_side["after"][c],
                                                           by_side["before"][c]))
                  for c in ("wall", "cpu")}
        out[name] = {"median_s": med, "ratio_after_to_before": ratio, "min_s": least,
                     "median_of_paired_ratios": paired, "all_s": by_side}
        print(f"{name}: before {med['before']['cpu']:.3f} s CPU ({med['before']['wall']:.3f} "
              f"wall), after {med['after']['cpu']:.3f} s CPU ({med['after']['wall']:.3f} wall) "
              f"a report: {ratio['cpu']:.2f}x CPU, {ratio['wall']:.2f}x wall (medians of "
              f"{args.rounds * args.reps} builds a side; median paired ratio "
              f"{paired['cpu']:.2f}x CPU); least CPU before {least['before']['cpu']:.3f} s, "
              f"after {least['after']['cpu']:.3f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--report", nargs="+", default=None,
                    help="committed bench_report.json paths (default: two, by mode)")
    ap.add_argument("--pipeline", action="store_true",
                    help="time the verdict pipeline alone (no report files, no plots)")
    ap.add_argument("--against", default=None, help="time this benchkit checkout beside this one")
    ap.add_argument("--rounds", type=int, default=3,
                    help="with --against: rounds x reps builds a side, build by build")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-shares", dest="shares", action="store_false")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.report = args.report or list(FRONTIERS if args.pipeline else DEFAULT)
    args.out = args.out or str(OUT.with_name("report_build_pipeline.json") if args.pipeline
                               else OUT)
    if args.serve:
        serve(args.report, args.pipeline)
        return
    if args.against:
        out = against(Path(args.against).resolve(), args)
    else:
        out = timings(args.report, args.reps, args.shares, args.pipeline)
        for name, r in out.items():
            med, first = r["median_s"], r["first_in_process_s"]
            print(f"{name}: {med['wall']:.3f} s wall, {med['cpu']:.3f} s CPU a report (medians "
                  f"of {args.reps}; least {r['min_s']['cpu']:.3f} s CPU; the first in a process "
                  f"{first['wall']:.2f} s wall)"
                  + "".join(f", {k} {100 * v:.0f}%" for k, v in r.get("share", {}).items()))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.out != "-":
        Path(args.out).write_text(json.dumps({
            "command": "python benchmarks/speed/report_build.py " + " ".join(sys.argv[1:]),
            "python": platform.python_version(), "load_1min_after": os.getloadavg()[0],
            "reports": out}, indent=2) + "\n")


if __name__ == "__main__":
    main()
