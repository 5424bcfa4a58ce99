"""The panel of known answers: bench every module of benchmarks/panel/ through the plugin at the
default protocol, then write its section of docs/panel.md (between BEGIN and END; the rest of
the page is kept), each module's expected verdict against the one obtained, every miss
explained (MISSES), every report of an earlier protocol than its track's today marked stale.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/panel.py   # train what is missing, docs
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/panel.py --docs-only  # docs from reports
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/panel.py --report-dir scratch/panel \\
        --docs scratch/panel.md --allow-exploratory -- --bench-seeds 2 --bench-epochs 1  # smoke

The modules train track by track, cheapest runs first. Like scripts/bench, a session whose
reports call for a grid extension or a budget check is followed by another (up to five): runs
are stored, so each trains only what is pending. The sessions' wall time goes to
<report-dir>/panel.json as each ends, which the docs read.
"""
from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import time
import dataclasses
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PANEL = Path(__file__).resolve().parent
REPORT_DIR = "benchmarks/results/panel"
DOCS = "docs/panel.md"
VERDICTS = ("helps", "harms", "inconclusive")
TRACK_ORDER = ("tabular", "dynamics", "mnist1d")  # seconds per run, fewest first
COSTLIEST_LAST = ("test_harms_mlp_vs_cnn", "test_harms_shuffled_cnn")  # the CNN's runs
SESSIONS = 5  # the grid, its extension, and the budget check's two looks (3, then 5 seeds)
NOT_RUN, INCOMPLETE = "not run", "incomplete"  # obtained, where no verdict was reached
COMMAND = "PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/panel.py"
# panel.py's section of docs/panel.md: the rest of the page is another script's, kept as it is
BEGIN, END = "<!-- panel.py: begin -->", "<!-- panel.py: end -->"
# where docs/panel.md's section of real techniques begins: benchmarks/panel/techniques.py writes
# from it to the end of the page, after this script's section
TECHNIQUES_MARKER = "<!-- section: benchmarks/panel/techniques.py -->"

# module stem -> why its obtained verdict is not the expected one (docs/panel.md prints it;
# a miss without an explanation, or an explanation of a module that did not miss, is an error)
MISSES: dict[str, str] = {}


@dataclass(frozen=True)
class Module:
    """What a panel module declares: its file, bench name and track, expected verdict and the
    first line of its docstring (what it asks)."""

    stem: str
    name: str
    track: str
    expected: str
    summary: str


@dataclass(frozen=True)
class Row:
    """One module's line of the table, from its report."""

    module: Module
    obtained: str
    delta: float | None
    p: float | None
    mde: float | None
    wins: int | None
    pairs: int | None
    seconds: float
    exploratory: bool
    stale: str | None = None  # what changed in the track's protocol since the report, if any


def module_literals(path: Path, names: tuple[str, ...]) -> tuple[dict, str]:
    """A panel module's module-level literals among ``names`` and its bench mark's literal
    ``name`` and ``track``, and the first paragraph of its docstring, read from its source
    (nothing is imported: no torch, no training)."""
    tree = ast.parse(path.read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 \
                or not isinstance(node.targets[0], ast.Name):
            continue
        target = node.targets[0].id
        if target in names and isinstance(node.value, ast.Constant):
            found[target] = node.value.value
        elif target == "pytestmark" and isinstance(node.value, ast.Call):
            for keyword in node.value.keywords:
                if keyword.arg in ("name", "track") and isinstance(keyword.value, ast.Constant):
                    found[keyword.arg] = keyword.value.value
    doc = ast.get_docstring(tree) or ""
    return found, " ".join(doc.split("\n\n")[0].split())


def declared(path: Path) -> Module:
    """The module's ``expected``, bench ``name`` and ``track`` (:func:`module_literals`)."""
    found, summary = module_literals(path, ("expected",))
    missing = [k for k in ("expected", "name", "track") if not isinstance(found.get(k), str)]
    if missing:
        raise ValueError(f"{path.name}: no literal {', '.join(missing)} (a panel module states "
                         f"expected = one of {list(VERDICTS)} and pytest.mark.bench(name=..., "
                         "track=...))")
    if found["expected"] not in VERDICTS:
        raise ValueError(f"{path.name}: expected = {found['expected']!r}; valid: "
                         f"{list(VERDICTS)}")
    return Module(path.stem, found["name"], found["track"], found["expected"], summary)


def modules() -> list[Module]:
    """Every panel module, positives first, then negatives, then nulls."""
    found = [declared(p) for p in sorted(PANEL.glob("test_*.py"))]
    return sorted(found, key=lambda m: (VERDICTS.index(m.expected), m.stem))


def report_path(report_dir: Path, module: Module) -> Path:
    return report_dir / module.name / module.track / "bench_report.json"


def row(module: Module, report: dict) -> Row:
    comparison = report.get("comparison") or {}
    p = comparison.get("p_adjusted", comparison.get("p_value"))
    return Row(module, report.get("practical_verdict") or INCOMPLETE,
               comparison.get("delta_mean"), p, comparison.get("mde"),
               comparison.get("idea_wins"), comparison.get("n_pairs"),
               sum(r.get("seconds") or 0.0 for r in report["runs"]),
               bool(report.get("exploratory")))


def stale(report: dict) -> str | None:
    """The keys of the track's protocol today that ``report``'s protocol differs in, as
    ``key before → now``; None when there are none (or the track is not registered)."""
    from benchkit import tracks

    if report.get("track") not in tracks.names():
        return None
    now = tracks.get(report["track"]).protocol()
    before = report.get("protocol") or {}
    changed = [f"{k} {before.get(k)} → {v}" for k, v in now.items() if before.get(k) != v]
    return ", ".join(changed) or None


def rows(report_dir: Path, *, allow_exploratory: bool = False) -> list[Row]:
    """Each module's row from its report. A module without a report is NOT_RUN and one whose
    report is incomplete INCOMPLETE (misses: MISSES must say why); an exploratory report is
    an error naming the module unless allowed."""
    out = []
    for module in modules():
        path = report_path(report_dir, module)
        if not path.is_file():
            out.append(Row(module, NOT_RUN, None, None, None, None, None, 0.0, False))
            continue
        report = json.loads(path.read_text())
        result = dataclasses.replace(row(module, report), stale=stale(report))
        if not report.get("complete"):
            result = Row(module, INCOMPLETE, None, None, None, None, None, result.seconds,
                         result.exploratory, result.stale)
        if result.exploratory and not allow_exploratory:
            raise ValueError(f"{module.stem}: its report {path} is exploratory (not the "
                             f"default protocol): run {COMMAND}")
        out.append(result)
    return out


def check_misses(table: list[Row]) -> None:
    """Every miss has an explanation in MISSES and every explanation a miss."""
    missed = {r.module.stem for r in table if r.obtained != r.module.expected}
    unexplained, stale = missed - set(MISSES), set(MISSES) - missed
    if unexplained or stale:
        raise ValueError("MISSES in benchmarks/panel/panel.py: "
                         + "; ".join(filter(None, (
                             unexplained and f"explain {sorted(unexplained)}",
                             stale and f"{sorted(stale)} did not miss: remove them"))))


def fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def fmt_wins(r: Row) -> str:
    return "n/a" if r.wins is None else f"{r.wins}/{r.pairs}"


def render(table: list[Row], meta: dict) -> str:
    """docs/panel.md from the rows and the sessions' record (panel.json). Exploratory rows
    (a smoke run) are marked so, and their misses need no explanation."""
    smoke = any(r.exploratory for r in table)
    if not smoke:
        check_misses(table)
    hits = sum(r.obtained == r.module.expected for r in table)
    old = [r for r in table if r.stale]
    lines = [BEGIN,
        "# A panel of known answers",
        "",
        ("Modules whose verdict is known before they run, from a paper or by construction, "
        "benched through the plugin at the default protocol (each track's seeds, grid and "
        "epochs; no `--bench-seeds` or `--bench-epochs`): large effects each way, small "
        "positives near the track's MDE, and nulls. A panel that gets these right is evidence "
        "that a track resolves a real effect, and that a real null stays a null, on real "
        "training. Each module's docstring gives the source of its expectation."),
        "",
        (f"Regenerate (trains only what the run store lacks, then rewrites this page): `{COMMAND}`;"
        f" from the committed reports alone: `{COMMAND} --docs-only`. Reports: "
        f"`{REPORT_DIR}/<name>/<track>/`."),
        "",
        (f"**{hits} of {len(table)} as expected"
         + (f"; {len(old)} of the reports are of an earlier protocol than their track's today "
            "(stale, below)" if old else "") + ".** delta is idea minus baseline on the test "
        "metric (seed mean; accuracy higher is better, MSE lower), p the report's (one track: "
        "no adjustment), |delta|/MDE the effect in units of the smallest significant one, wins "
        "the seeds where the idea is better, s the training seconds of the report's runs "
        "(grid, extensions and budget checks; a baseline shared by two modules trains once and "
        "counts in both)."),
        "",
        "| module | track | expected | obtained | delta | p | MDE | \\|delta\\|/MDE | wins | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        mark = (" (exploratory)" if r.exploratory else
                "" if r.obtained == r.module.expected else " **(miss)**")
        mark += " (stale)" if r.stale else ""
        ratio = (None if r.delta is None or not r.mde else abs(r.delta) / r.mde)
        lines.append(
            f"| `{r.module.stem}` | {r.module.track} | {r.module.expected} | {r.obtained}{mark}"
            f" | {fmt(r.delta)} | {fmt(r.p, 2)} | {fmt(r.mde)} | {fmt(ratio, 2)} | "
            f"{fmt_wins(r)} | {r.seconds:.0f} |")
    lines += ["", "## Sessions", ""]
    sessions = meta.get("sessions") or []
    if sessions:
        by_track: dict[str, list[dict]] = {}
        for session in sessions:
            by_track.setdefault(session.get("track", "all"), []).append(session)
        parts = []
        for track, group in by_track.items():
            walls = ", ".join(f"{s['seconds']:.0f}" for s in group)
            commits = ", ".join(sorted({s.get("commit", "n/a") for s in group}))
            parts.append(f"{track}: {len(group)} ({walls} s) at commit {commits}")
        lines.append(f"{len(sessions)} session(s), {sum(s['seconds'] for s in sessions):.0f} s "
                     f"wall in all, {meta.get('workers', 'n/a')} workers on a 2-core machine "
                     f"shared with other work (load 10-22); {'; '.join(parts)}. Training seconds "
                     f"summed over the reports: {sum(r.seconds for r in table):.0f}.")
    else:
        lines.append("No session record (panel.json): the reports were not made by panel.py.")
    lines += ["", "## What each module asks", ""]
    lines += [f"- `{r.module.stem}` ({r.module.expected}): {r.module.summary}" for r in table]
    lines += ["", "## Misses", ""]
    missed = [r for r in table if r.obtained != r.module.expected]
    lines += ([f"- `{r.module.stem}`: expected {r.module.expected}, obtained {r.obtained}. "
               f"{MISSES.get(r.module.stem, '(a smoke run: not explained)')}" for r in missed]
              or ["None."])
    if old:
        lines += ["", "## Stale reports", "",
                  "Benched at an earlier protocol of their track; their verdicts are not "
                  "evidence about the track today until re-benched:", ""]
        lines += [f"- `{r.module.stem}`: {r.stale}" for r in old]
    return "\n".join([*lines, END]) + "\n"


def write_section(path: Path, page: str) -> None:
    """Put ``page`` (BEGIN .. END) in ``path`` in place of its own earlier section, keeping
    whatever else the file holds (another script's section); the whole file if it has none."""
    text = path.read_text() if path.is_file() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        page = head + page.rstrip("\n") + rest.split(END, 1)[1]
    path.write_text(page)


def section(path: Path) -> str:
    """panel.py's section of ``path`` (BEGIN .. END and a newline), as render gives it."""
    text = path.read_text()
    return BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END + "\n"


def pending(report: dict) -> bool:
    """A grid extension or budget check still to train (the next session trains it)."""
    checks = [(a or {}).get("budget_check") or {}
              for a in ((report.get("convergence") or {}).get("arms") or {}).values()]
    return bool((report.get("incomplete") or {}).get("pending")
                or any(c.get("pending") for c in checks))


def stages() -> list[tuple[str, list[str]]]:
    """The modules grouped by track, cheapest runs first (TRACK_ORDER), each group's files in
    COSTLIEST_LAST order: the cheap answers are in the store before the costly ones train."""
    groups: dict[str, list[str]] = {}
    for module in sorted(modules(), key=lambda m: (m.stem in COSTLIEST_LAST,
                                                   COSTLIEST_LAST.index(m.stem)
                                                   if m.stem in COSTLIEST_LAST else 0)):
        groups.setdefault(module.track, []).append(
            str((PANEL / f"{module.stem}.py").relative_to(ROOT)))
    return [(track, groups[track]) for track in sorted(groups, key=TRACK_ORDER.index)]


def bench(files: list[str], report_dir: str, extra: list[str], workers: int,
          record) -> list[dict]:
    """Up to SESSIONS sessions of the plugin over ``files``, until nothing is pending; each
    session's command, wall seconds and exit status, also handed to ``record`` as it ends."""
    sessions: list[dict] = []
    for _ in range(SESSIONS):
        command = [sys.executable, "-m", "pytest", *files, "-n", str(workers), "-p",
                   "no:randomly", f"--bench-report-dir={report_dir}", *extra]
        start, wall = time.time(), time.perf_counter()
        rc = subprocess.call(command, cwd=ROOT)
        sessions.append({"command": " ".join(command[1:]), "seconds": round(
            time.perf_counter() - wall, 1), "rc": rc})
        record(sessions[-1])
        written = [json.loads(p.read_text()) for p in (ROOT / report_dir).glob(
            "*/*/bench_report.json") if p.stat().st_mtime >= start]
        if not any(pending(r) for r in written):
            return sessions
        extra = [a for a in extra if a != "--bench-fresh"]
    print(f"panel: still pending after {SESSIONS} sessions: run {COMMAND} again",
          file=sys.stderr)
    return sessions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report-dir", default=REPORT_DIR)
    parser.add_argument("--docs", default=DOCS)
    parser.add_argument("--docs-only", action="store_true",
                        help="train nothing: rewrite the docs from the reports")
    parser.add_argument("--allow-exploratory", action="store_true",
                        help="accept exploratory reports (a smoke run; never for the docs)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tracks", nargs="+", choices=TRACK_ORDER, metavar="TRACK",
                        help="bench only these tracks' modules, replacing their sessions in the "
                             "record (after a change that retrains only them)")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    record = ROOT / args.report_dir / "panel.json"
    if not args.docs_only:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=False,
                                capture_output=True, text=True).stdout.strip()
        meta: dict = {"sessions": [], "workers": args.workers}
        if args.tracks and record.is_file():
            meta = json.loads(record.read_text())
            meta["sessions"] = [s for s in meta["sessions"] if s.get("track") not in args.tracks]
        record.parent.mkdir(parents=True, exist_ok=True)
        for track, files in stages():
            if args.tracks and track not in args.tracks:
                continue

            def keep(session: dict, track: str = track) -> None:
                meta["sessions"].append({**session, "track": track, "commit": commit})
                record.write_text(json.dumps(meta, indent=1) + "\n")

            bench(files, args.report_dir, args.pytest_args, args.workers, keep)
    meta = json.loads(record.read_text()) if record.is_file() else {}
    try:
        page = render(rows(ROOT / args.report_dir, allow_exploratory=args.allow_exploratory),
                      meta)
    except ValueError as exc:
        print(f"panel: {exc}", file=sys.stderr)
        return 1
    write_section(ROOT / args.docs, page)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
