"""A panel of real techniques: ideas researchers use, each with a published effect, benched
through the plugin at a track's default protocol (its seeds, grid and epochs), their verdicts,
effects in MDEs and sources in a section of docs/panel.md (issue 53, item 3).

Unlike the known answers (benchmarks/panel/panel.py), the verdict here is not known in
advance: ``published`` is the direction the source reports, on its models and data; whether
the track sees it is the question. Each module in benchmarks/panel/techniques/ declares
``published`` (helps / harms / inconclusive), ``source`` and a ``pytest.mark.bench`` with a
literal ``name`` and ``track``; modules with identical baseline arms share their runs (the run
store).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py   # train, then the docs
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py --docs-only

Training runs in sessions of at most ``--limit`` wall seconds (Ctrl-C, then the next session
resumes from the stored runs), each session's CPU (its processes' user + system time) kept in
<report-dir>/techniques.json. The section replaces docs/panel.md from :data:`MARKER` to the end
and leaves the known answers above it as they are (panel.py keeps this section likewise).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from panel import DOCS, ROOT, TECHNIQUES_MARKER as MARKER, VERDICTS, fmt, module_literals

TECHNIQUES = Path(__file__).resolve().parent / "techniques"
REPORT_DIR = "benchmarks/results/panel"  # beside the known answers: bench names differ
COMMAND = "PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py"
SESSIONS = 14


def declared(path: Path) -> dict:
    """A technique module's ``published``, ``source``, bench ``name`` and ``track`` and the
    first paragraph of its docstring (:func:`panel.module_literals`)."""
    found, summary = module_literals(path, ("published", "source"))
    missing = [k for k in ("published", "source", "name", "track")
               if not isinstance(found.get(k), str)]
    if missing or found.get("published") not in VERDICTS:
        raise ValueError(f"{path.name}: a technique module states published = one of "
                         f"{list(VERDICTS)}, source = '...' and pytest.mark.bench(name=..., "
                         f"track=...) as literals; missing or invalid: {missing or 'published'}")
    return {**found, "stem": path.stem, "summary": summary}


def modules() -> list[dict]:
    return [declared(p) for p in sorted(TECHNIQUES.glob("test_*.py"))]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def session(report_dir: str, limit: float, extra: list[str], workers: int = 2) -> dict:
    """One plugin session over every technique module, Ctrl-C after ``limit`` wall seconds
    (benchkit keeps the finished runs): its command, CPU, wall, exit status, last line."""
    command = [sys.executable, "-m", "pytest", str(TECHNIQUES.relative_to(ROOT)), "-n",
               str(workers), "-q", "-p", "no:randomly", f"--bench-report-dir={report_dir}", *extra]
    cpu, wall, load = children_cpu(), time.perf_counter(), os.getloadavg()[0]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=limit)
            stopped = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)
            out, _ = proc.communicate()
            stopped = True
    lines = out.strip().splitlines()
    return {"command": "python " + " ".join(command[1:]),
            "cpu_seconds": round(children_cpu() - cpu, 1),
            "wall_seconds": round(time.perf_counter() - wall, 1),
            "load_average_1min": [round(load, 1), round(os.getloadavg()[0], 1)],
            "rc": proc.returncode, "stopped_at_limit": stopped,
            "last_line": lines[-1] if lines else ""}


def report_of(report_dir: Path, module: dict) -> dict | None:
    path = report_dir / module["name"] / module["track"] / "bench_report.json"
    return json.loads(path.read_text()) if path.is_file() else None


def row(module: dict, report: dict | None) -> str:
    """One technique's line: verdict, delta, p, MDE80, the effect in MDE80s, wins, seconds."""
    head = f"| `{module['stem']}` | {module['track']} | {module['published']} |"
    if report is None or not report.get("complete"):
        return head + (" not run |" if report is None else " incomplete |") + " n/a |" * 6 \
            + f" {module['source']} |"
    c = report["comparison"]
    mde80 = c.get("mde_power80")
    ratio = None if c.get("delta_mean") is None or not mde80 else c["delta_mean"] / mde80
    verdict = report["practical_verdict"] + (" (exploratory)" if report.get("exploratory")
                                             else "")
    seconds = sum(r.get("seconds") or 0.0 for r in report["runs"])
    return (f"{head} {verdict} | {fmt(c.get('delta_mean'))} | {fmt(c.get('p_value'), 2)} | "
            f"{fmt(mde80)} | {fmt(ratio, 2)} | {c.get('idea_wins')}/{c.get('n_pairs')} | "
            f"{seconds:.0f} | {module['source']} |")


def section(report_dir: Path, meta: dict) -> str:
    """The docs section: what it is, the table, the sessions' CPU, what each module asks."""
    found = modules()
    tracks = sorted({m["track"] for m in found})
    lines = [MARKER, "", "## Real techniques", "",
             ("Techniques researchers use, each with a published effect on other models and "
              "data, benched through the plugin at the track's default protocol (no "
              "`--bench-seeds` or `--bench-epochs`). Nothing here is known in advance: "
              "`published` is the source's direction, the verdict is the track's. delta is idea "
              "minus baseline (seed mean of test accuracy, higher is better), MDE80 the report's "
              "`mde_power80` (the effect its test finds with 80% power), delta/MDE80 the effect "
              "in those units, s the training wall seconds of the report's runs (a baseline "
              "shared by modules trains once and counts in each)."),
             "", f"Regenerate: `{COMMAND}` (trains what the run store lacks); from the committed "
             f"reports: `{COMMAND} --docs-only`. Modules: `benchmarks/panel/techniques/`; "
             f"reports: `{REPORT_DIR}/<name>/<track>/`. Tracks: {', '.join(tracks)}.", "",
             "| module | track | published | verdict | delta | p | MDE80 | delta/MDE80 | wins "
             "| s | source |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    reports = [report_of(report_dir, m) for m in found]
    lines += [row(m, r) for m, r in zip(found, reports)]
    if not any(reports):
        lines += ["", "No technique here has a report yet: run the command above."]
    sessions = meta.get("sessions") or []
    if sessions:
        loads = [x for s in sessions for x in s["load_average_1min"]]
        lines += ["", f"{len(sessions)} session(s): {sum(s['cpu_seconds'] for s in sessions):.0f}"
                  f" CPU s ({sum(s['cpu_seconds'] for s in sessions) / 60:.1f} CPU-min: "
                  f"training, floors, start-ups and reports), "
                  f"{sum(s['wall_seconds'] for s in sessions):.0f} s wall, on a 2-core "
                  f"machine shared with other work (load {min(loads):.0f}-{max(loads):.0f})."]
    lines += ["", "What each module asks:", ""]
    lines += [f"- `{m['stem']}` (published: {m['published']}): {m['summary']}" for m in found]
    return "\n".join(lines) + "\n"


def with_section(page: str, text: str) -> str:
    """``page`` with everything from :data:`MARKER` on replaced by ``text`` (appended when
    the page has no marker yet)."""
    head = page.split(MARKER, 1)[0].rstrip("\n")
    return head + "\n\n" + text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report-dir", default=REPORT_DIR)
    ap.add_argument("--docs", default=DOCS)
    ap.add_argument("--docs-only", action="store_true")
    ap.add_argument("--limit", type=float, default=540, help="wall seconds a session")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = ap.parse_args(argv)
    try:
        modules()
    except ValueError as exc:
        print(f"techniques: {exc}", file=sys.stderr)
        return 1
    record = ROOT / args.report_dir / "techniques.json"
    meta = json.loads(record.read_text()) if record.is_file() else {"sessions": []}
    if not args.docs_only:
        record.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(SESSIONS):
            meta["sessions"].append(session(args.report_dir, args.limit, args.pytest_args,
                                            args.workers))
            record.write_text(json.dumps(meta, indent=1) + "\n")
            print(json.dumps(meta["sessions"][-1]))
            if not meta["sessions"][-1]["stopped_at_limit"]:
                break
    docs = ROOT / args.docs
    docs.write_text(with_section(docs.read_text() if docs.is_file() else "",
                                 section(ROOT / args.report_dir, meta)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
