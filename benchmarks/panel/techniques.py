"""A panel of real techniques: ideas researchers use, each with a published effect, benched
through the plugin at a track's default protocol (its seeds, grid and epochs), their verdicts,
effects in MDEs and sources in a section of docs/panel.md (issue 53, item 3).

Unlike the known answers (benchmarks/panel/panel.py), the verdict here is not known in
advance: ``published`` is the direction the source reports, on its models and data; whether
the track sees it is the question. Each module in benchmarks/panel/techniques/ declares
``published`` (helps / harms / inconclusive), ``source`` and a ``pytest.mark.bench`` with a
literal ``name`` and ``track``, and may declare ``expected`` (the direction foreseen on the
track, written before its first bench); modules with identical baseline arms share their runs
(the run store).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py   # train, then the docs
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py --modules test_x test_y
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py --docs-only

Training runs in sessions of at most ``--limit`` wall seconds (SIGTERM, then the next session
resumes from the stored runs), repeated while a report of the session's modules has a grid
extension or budget check pending; each session's modules and CPU (its processes' user +
system time) are kept in <report-dir>/techniques.json, and a case's CPU in the docs is the sum
of the sessions that ran it. The section replaces docs/panel.md from :data:`MARKER` to the end
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

from panel import (DOCS, ROOT, TECHNIQUES_MARKER as MARKER, VERDICTS, fmt,
                   module_literals, pending)

TECHNIQUES = Path(__file__).resolve().parent / "techniques"
REPORT_DIR = "benchmarks/results/panel"  # beside the known answers: bench names differ
COMMAND = "PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/techniques.py"
SESSIONS = 14


def declared(path: Path) -> dict:
    """A technique module's ``published``, ``source``, bench ``name`` and ``track``, its
    ``expected`` when stated, and the first paragraph of its docstring
    (:func:`panel.module_literals`)."""
    found, summary = module_literals(path, ("published", "expected", "source"))
    missing = [k for k in ("published", "source", "name", "track")
               if not isinstance(found.get(k), str)]
    invalid = [k for k in ("published", "expected")
               if k in found and found[k] not in VERDICTS]
    if missing or "published" in invalid or "expected" in invalid:
        raise ValueError(f"{path.name}: a technique module states published = one of "
                         f"{list(VERDICTS)}, source = '...' and pytest.mark.bench(name=..., "
                         f"track=...) as literals (expected = one of {list(VERDICTS)}, if "
                         f"stated); missing or invalid: {missing or invalid}")
    return {**found, "stem": path.stem, "summary": summary}


def modules() -> list[dict]:
    return [declared(p) for p in sorted(TECHNIQUES.glob("test_*.py"))]


def chosen(stems: list[str] | None) -> list[dict]:
    """The modules named by ``stems`` (all of them without), or a ValueError naming those
    that are not technique modules."""
    found = modules()
    unknown = sorted(set(stems or []) - {m["stem"] for m in found})
    if unknown:
        raise ValueError(f"no technique module {unknown}; valid: {[m['stem'] for m in found]}")
    return [m for m in found if stems is None or m["stem"] in stems]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def session(report_dir: str, limit: float, extra: list[str], workers: int = 2,
            stems: list[str] | None = None) -> dict:
    """One plugin session over the technique modules ``stems`` (all without), SIGTERM after
    ``limit`` wall seconds (benchkit keeps the finished runs): its modules, command, CPU, wall,
    exit status, last line."""
    where = TECHNIQUES.relative_to(ROOT)
    files = [str(where / f"{stem}.py") for stem in stems] if stems else [str(where)]
    command = [sys.executable, "-m", "pytest", *files, "-n",
               str(workers), "-q", "-p", "no:randomly", f"--bench-report-dir={report_dir}", *extra]
    cpu, wall, load = children_cpu(), time.perf_counter(), os.getloadavg()[0]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=limit)
            stopped = False
        except subprocess.TimeoutExpired:
            # SIGTERM, not SIGINT: a shell starts a background job with SIGINT ignored, and
            # this script's children inherit that, so a SIGINT stopped nothing
            os.killpg(proc.pid, signal.SIGTERM)
            out, _ = proc.communicate()
            stopped = True
    lines = out.strip().splitlines()
    return {"modules": stems or [m["stem"] for m in modules()],
            "command": "python " + " ".join(command[1:]),
            "cpu_seconds": round(children_cpu() - cpu, 1),
            "wall_seconds": round(time.perf_counter() - wall, 1),
            "load_average_1min": [round(load, 1), round(os.getloadavg()[0], 1)],
            "rc": proc.returncode, "stopped_at_limit": stopped,
            "last_line": lines[-1] if lines else ""}


def report_of(report_dir: Path, module: dict, kind: str = "") -> dict | None:
    """The module's complete report, or with ``kind`` the one benchkit wrote aside
    (``incomplete``: it does not replace a complete one); None where there is none."""
    path = report_dir / module["name"] / module["track"] / kind / "bench_report.json"
    return json.loads(path.read_text()) if path.is_file() else None


def to_train(report_dir: Path, selected: list[dict]) -> bool:
    """Whether a report of ``selected`` has a grid extension or budget check pending. A
    module's newest report decides: at a later look its incomplete report is written aside
    and the complete one of the earlier look, which has nothing pending, stays in place."""
    for module in selected:
        found = [r for r in (report_of(report_dir, module),
                             report_of(report_dir, module, "incomplete")) if r is not None]
        if found and pending(max(found, key=lambda r: r.get("created") or "")):
            return True
    return False


def cpu_of(stem: str, sessions: list[dict]) -> str:
    """The CPU seconds of the sessions that ran ``stem``; marked * when one of them ran other
    modules too (its CPU then counts in each of them)."""
    mine = [s for s in sessions if stem in s.get("modules", ())]
    if not mine:
        return "n/a"
    shared = any(len(s["modules"]) > 1 for s in mine)
    return f"{sum(s['cpu_seconds'] for s in mine):.0f}" + ("*" if shared else "")


def look(report: dict) -> str:
    """``look k of n`` of the report's declared looks, or '' without looks."""
    seq = report.get("sequential") or {}
    looks = seq.get("looks") or []
    return f", look {seq.get('look')} of {len(looks)}" if len(looks) > 1 else ""


def improving(report: dict) -> str:
    """Which arms the budget check found still improving at its longer epochs (their
    verdict may move with more training), as a note; '' when none."""
    arms = ((report.get("convergence") or {}).get("arms") or {})
    still = [arm for arm, a in arms.items()
             if ((a or {}).get("budget_check") or {}).get("decision") == "still improving"]
    return f" ({' and '.join(still)} still improving at 1.5x epochs)" if still else ""


def row(module: dict, report: dict | None, sessions: list[dict]) -> str:
    """One technique's line: what the source and the module foresaw, the verdict, delta (also
    as a % of the baseline's mean), p, MDE80, the effect in MDE80s signed so that + is the
    idea better, wins, the CPU of the sessions that ran it, the source."""
    head = (f"| `{module['stem']}` | {module['track']} | {module['published']} | "
            f"{module.get('expected', '—')} |")
    if report is None or not report.get("complete"):
        return head + (" not run |" if report is None else " incomplete |") + " n/a |" * 6 \
            + f" {cpu_of(module['stem'], sessions)} | {module['source']} |"
    c = report["comparison"]
    delta, mde80 = c.get("delta_mean"), c.get("mde_power80")
    sign = 1 if c.get("direction") == "higher" else -1  # the report's 'higher'/'lower'
    better = None if delta is None or not mde80 else sign * delta / mde80
    base = (report.get("baseline") or {}).get("full") or {}
    pct = None if delta is None or not base.get("mean") else 100 * delta / base["mean"]
    verdict = report["practical_verdict"] + look(report) + improving(report) + (
        " (exploratory)" if report.get("exploratory") else "")
    return (f"{head} {verdict} | {fmt(delta)} | {fmt(pct, 2)} | {fmt(c.get('p_value'), 2)} | "
            f"{fmt(mde80)} | {fmt(better, 2)} | {c.get('idea_wins')}/{c.get('n_pairs')} | "
            f"{cpu_of(module['stem'], sessions)} | {module['source']} |")


def section(report_dir: Path, meta: dict) -> str:
    """The docs section: what it is, the table, each session's modules and CPU, what each
    module asks."""
    found = modules()
    tracks = sorted({m["track"] for m in found})
    sessions = meta.get("sessions") or []
    lines = [MARKER, "", "## Real techniques", "",
             ("Techniques researchers use, each with a published effect on other models and "
              "data, benched through the plugin at the track's default protocol (its grid and "
              "epochs; no `--bench-seeds` or `--bench-epochs`), with looks so that a decided "
              "bench stops early. Nothing here is known in advance: `published` is the source's "
              "direction on its models and data, `expected` the direction the module foresaw on "
              "the track before its first bench (— where it stated none), the verdict is the "
              "track's at the look it has reached. delta is idea minus baseline in the track's "
              "metric (seed mean: tabular test MSE, lower is better; mnist1d test accuracy, "
              "higher is better), % its share of the baseline's mean, MDE80 the report's "
              "`mde_power80` (the effect its test finds with 80% power), effect the delta in "
              "MDE80s signed so that + is the idea better, CPU s the user + system seconds of "
              "the sessions that ran the module (training, floors, start-ups and reports; * a "
              "session shared with other modules, its CPU counted in each; baseline runs "
              "already in the run store from an earlier module's sessions are reused, and "
              "their CPU counts there)."),
             "", f"Regenerate: `{COMMAND}` (trains what the run store lacks; `--modules` "
             f"for some); from the committed reports: `{COMMAND} --docs-only`. Modules: "
             f"`benchmarks/panel/techniques/`; reports: `{REPORT_DIR}/<name>/<track>/`. "
             f"Tracks: {', '.join(tracks)}.", "",
             "| module | track | published | expected | verdict | delta | % | p | MDE80 | "
             "effect (MDE80) | wins | CPU s | source |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    reports = [report_of(report_dir, m) for m in found]
    lines += [row(m, r, sessions) for m, r in zip(found, reports)]
    if not any(reports):
        lines += ["", "No technique here has a report yet: run the command above."]
    if sessions:
        loads = [x for s in sessions for x in s["load_average_1min"]]
        total = sum(s["cpu_seconds"] for s in sessions)
        lines += ["", f"{len(sessions)} session(s): {total:.0f} CPU s ({total / 60:.1f} "
                  f"CPU-min), {sum(s['wall_seconds'] for s in sessions):.0f} s wall, on a "
                  f"2-core machine shared with other work (load {min(loads):.0f}-"
                  f"{max(loads):.0f}):", "", "| # | modules | CPU s | wall s | last line |",
                  "|---|---|---|---|---|"]
        lines += [f"| {i} | {', '.join(s.get('modules', ['?']))} | {s['cpu_seconds']:.0f} | "
                  f"{s['wall_seconds']:.0f} | {s['last_line']} |"
                  for i, s in enumerate(sessions, 1)]
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
    ap.add_argument("--modules", nargs="+", metavar="STEM",
                    help="bench only these modules (e.g. test_tabular_dropout)")
    ap.add_argument("--limit", type=float, default=540, help="wall seconds a session")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = ap.parse_args(argv)
    try:
        selected = chosen(args.modules)
    except ValueError as exc:
        print(f"techniques: {exc}", file=sys.stderr)
        return 1
    record = ROOT / args.report_dir / "techniques.json"
    meta = json.loads(record.read_text()) if record.is_file() else {"sessions": []}
    if not args.docs_only:
        record.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(SESSIONS):
            meta["sessions"].append(session(args.report_dir, args.limit, args.pytest_args,
                                            args.workers, args.modules))
            record.write_text(json.dumps(meta, indent=1) + "\n")
            print(json.dumps(meta["sessions"][-1]))
            if not meta["sessions"][-1]["stopped_at_limit"] and not to_train(
                    ROOT / args.report_dir, selected):
                break
    docs = ROOT / args.docs
    docs.write_text(with_section(docs.read_text() if docs.is_file() else "",
                                 section(ROOT / args.report_dir, meta)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
