"""``python -m benchkit``: look at reports that already exist, without running anything.

    python -m benchkit show [PATH ...]      the terminal table of every bench_report.json found
    python -m benchkit compare OLD NEW      what changed between two reports; exit 1 if worse
    python -m benchkit render [PATH ...]    (re)write summary.md and the plots beside reports
    python -m benchkit verify REPORT        check a report's runs against the run store
    python -m benchkit leaderboard [PATH]   ideas benched against one baseline, ranked (Holm)

Exit status: 0 fine, 1 ``compare`` found a regression (or ``show`` found no report), 2 a usage
error or a file that is missing or is not a benchkit report. Never imports torch.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from benchkit.cli.output import error, say
from benchkit.cli.verify import add_parser
from benchkit.report.fmt import mechanism_word, num, rel_pct
from benchkit.report.bench_report import (REPORT_NAME, SUPPORTED_VERSIONS, ReportError, is_finite,  # noqa: F401
                                          read_report)
from benchkit.report.terminal import render_summary
from benchkit.spec.idea import cfg_id
from benchkit.verdict.decision import rank
from benchkit.verdict.records import Report

# the figures compare reads: a non-finite one (NaN written by hand) is a regression
_FIGURES: tuple[tuple[str, Callable[[Report], float | None]], ...] = (
    ("baseline mean", lambda r: None if r.baseline.full is None else r.baseline.full.mean),
    ("idea mean", lambda r: None if r.idea is None else r.idea.mean),
    ("delta_mean", lambda r: None if r.comparison is None else r.comparison.delta_mean),
    ("p_value", lambda r: None if r.comparison is None else r.comparison.p_value),
    ("mde", lambda r: None if r.comparison is None else r.comparison.mde))


def find_reports(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Report files under ``paths`` (files as given, folders searched recursively), and an
    error line for every path that does not exist."""
    found, errors = [], []
    for p in map(Path, paths):
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            found.extend(sorted(p.rglob(REPORT_NAME)))
        elif p.exists():  # a FIFO or a device: reading it could block
            errors.append(f"{p}: not a regular file; valid: a {REPORT_NAME} or a folder")
        else:
            errors.append(f"{p}: no such file or folder")
    unique = list(dict.fromkeys(found))
    return unique, errors


def _read(files: list[Path], errors: list[str]) -> list[tuple[Path, Report]]:
    """(file, report) for every readable report; a line in ``errors`` for each that is not."""
    read = []
    for f in files:
        try:
            read.append((f, read_report(f)))
        except ReportError as exc:
            errors.append(str(exc))
    return read


def _reading_status(found, errors, paths) -> int | None:
    """Print the reading errors; the exit status they make (2; 1 when nothing was found),
    None when the command goes on."""
    for e in errors:
        error(e)
    if errors:
        return 2
    if not found:
        error(f"no {REPORT_NAME} found under {', '.join(paths)}")
        return 1
    return None


# -- show -----------------------------------------------------------------------------------
def cmd_show(args) -> int:
    files, errors = find_reports(args.paths)
    written = _read(files, errors)
    if written:
        for line in render_summary(written, Path.cwd()):
            say(line)
    return _reading_status(written, errors, args.paths) or 0


# -- compare --------------------------------------------------------------------------------
def _change(old, new) -> str:
    if old is None or new is None:
        return ""
    d = new - old
    if d == 0:
        return "="
    rel = f" ({'+' if d > 0 else '-'}{rel_pct(d, old)})" if old else ""
    return f"{d:+.4g}{rel}"


def _fields(old: Report, new: Report) -> list[tuple[str, str, str, str]]:
    """(field, OLD, NEW, change) rows."""
    rows = []
    for label, cfg_a, cfg_b in (("baseline config", old.baseline.best_cfg, new.baseline.best_cfg),
                                ("idea config", old.idea_config, new.idea_config)):
        a, b = ("-" if cfg_a is None else cfg_id(cfg_a)), ("-" if cfg_b is None else cfg_id(cfg_b))
        rows.append((label, a, b, "" if a == b else "changed"))
    co, cn = old.comparison, new.comparison
    numbers = [(label, figure(old), figure(new)) for label, figure in _FIGURES[:4]]
    if (co and co.family_size or 1) > 1 or (cn and cn.family_size or 1) > 1:
        numbers.append(("p_adjusted", co.p_adjusted if co else None,
                        cn.p_adjusted if cn else None))
    numbers += [("mde", co.mde if co else None, cn.mde if cn else None),
                ("mde_rel_pct", co.mde_rel_pct if co else None, cn.mde_rel_pct if cn else None)]
    for label, x, y in numbers:
        rows.append((label, num(x), num(y), _change(x, y)))
    wins = [f"{c.idea_wins}/{c.n_pairs}" if c else "-" for c in (co, cn)]
    rows.append(("idea wins", wins[0], wins[1], "" if wins[0] == wins[1] else "changed"))
    mo, mn = old.mechanism_ok, new.mechanism_ok
    rows.append(("mechanism_ok", mechanism_word(mo), mechanism_word(mn),
                 "" if mo == mn else "changed"))
    for key, va, vb in (("practical_verdict", old.practical_verdict, new.practical_verdict),
                        ("system_verdict", old.system_verdict, new.system_verdict)):
        change = ""
        if va != vb:
            change = "changed"
            if key == "practical_verdict":
                change = "worse" if rank(vb) < rank(va) else "better"
        rows.append((key.replace("_", " "), str(va), str(vb), change))
    return rows


def _protocol_notes(old: Report, new: Report) -> list[str]:
    po, pn = old.protocol, new.protocol
    notes = []
    for key in ("seeds", "grid", "epochs", "alpha", "model", "margin"):
        a, b = po.get(key), pn.get(key)
        if a != b:
            if key == "seeds" and isinstance(a, list) and isinstance(b, list):
                a, b = f"{len(a)} seeds", f"{len(b)} seeds"
            elif key == "grid" and isinstance(a, list) and isinstance(b, list):
                a = ", ".join(cfg_id(c) for c in a)
                b = ", ".join(cfg_id(c) for c in b)
            notes.append(f"note: protocol {key} differs: {a} -> {b}")
    return notes


def regressions(old: Report, new: Report) -> tuple[list[str], list[str]]:
    """(why NEW is worse than OLD, notes). Worse: the practical verdict dropped in the order
    equivalent > helps > non-inferior > inconclusive > harms > incomplete, or the idea's
    metric moved the wrong way by more than OLD's MDE."""
    why, notes = [], []
    for label, figure in _FIGURES:
        for which, r in (("OLD", old), ("NEW", new)):
            value = figure(r)
            if value is not None and not is_finite(value):
                why.append(f"{which}'s {label} is {value}, not a finite number")
    vo, vn = old.practical_verdict, new.practical_verdict
    if rank(vn) < rank(vo):
        why.append(f"practical verdict got worse: {vo} -> {vn}")
    if old.comparison is None or new.comparison is None or old.idea is None \
            or new.idea is None:
        notes.append("note: the idea's metric cannot be compared: "
                     f"{'OLD' if old.comparison is None else 'NEW'} is incomplete")
        return why, notes
    mde = old.comparison.mde
    a, b = old.idea.mean, new.idea.mean
    worse_by = (b - a) if new.direction == "lower" else (a - b)
    if mde is None:
        notes.append("note: OLD has no MDE, so the idea's metric was not checked")
    elif worse_by > mde:
        why.append(f"the idea's {new.metric} regressed by {worse_by:.4g} ({a:.4g} -> {b:.4g}, "
                   f"{new.metric_direction}), more than OLD's MDE {mde:.4g}")
    return why, notes


def _render_rows(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def cmd_compare(args) -> int:
    try:
        old, new = read_report(args.old), read_report(args.new)
    except ReportError as exc:
        return error(str(exc))
    names = old.name, new.name
    if names[0] != names[1]:
        return error(f"the reports are of different ideas: {names[0]!r} (OLD {args.old}) vs "
                      f"{names[1]!r} (NEW {args.new})")
    if old.track != new.track:
        return error(f"the reports are of different tracks: {old.track!r} (OLD "
                      f"{args.old}) vs {new.track!r} (NEW {args.new})")
    for key, a, b in (("metric", old.metric, new.metric),   # else a figure's change means nothing
                      ("metric_direction", old.metric_direction, new.metric_direction)):
        if a != b:
            return error(f"the reports measure differently: {key} {a!r} (OLD {args.old}) vs "
                         f"{b!r} (NEW {args.new}): their figures cannot be compared")
    say(f"benchkit compare: {names[0]} on {old.track} ({new.metric_direction})")
    for label, p, r in (("OLD", args.old, old), ("NEW", args.new, new)):
        say(f"  {label} {p}" + (f"  ({r.created})" if r.created else ""))
    say()
    rows = [("field", "OLD", "NEW", "change"), *_fields(old, new)]
    lines = _render_rows(rows)
    say("\n".join([lines[0], "-" * len(lines[0]), *lines[1:]]))
    say()
    why, notes = regressions(old, new)
    for line in _protocol_notes(old, new) + notes:
        say(line)
    if why:
        for w in why:
            say(f"REGRESSION: {w}")
        return 1
    say("OK: no regression (verdict not worse, idea's metric within OLD's MDE)")
    return 0


# -- render ---------------------------------------------------------------------------------
def cmd_render(args) -> int:
    from benchkit.report.summary import not_written, write_companions

    files, errors = find_reports(args.paths)
    failed = False
    for f, report in _read(files, errors):
        notes = write_companions(f, report, echo=False)
        lost = [n for n in notes if n.startswith(not_written(f))]
        if lost:   # one line, and the status of a file that cannot be written
            error(lost[0])
            failed = True
            continue
        say(f"{f.parent}: summary.md" + ("".join(f"; {n}" for n in notes) if notes
                                           else ", paired.png, sweep.png"))
    return _reading_status(files, errors, args.paths) or (2 if failed else 0)


# -- leaderboard ----------------------------------------------------------------------------
def cmd_leaderboard(args) -> int:
    from benchkit.cli import leaderboard
    from benchkit.verdict.leaderboard import Entry, build

    files, errors = find_reports(args.paths)
    every = [Entry(r.name, f, r) for f, r in _read(files, errors)]
    entries = [e for e in every if args.track in (None, e.track)]
    status = _reading_status(files, errors, args.paths)
    if status:
        return status
    if not entries:
        tracks = ", ".join(sorted({e.track for e in every}))
        return error(f"no report of track {args.track!r}; the reports' tracks: {tracks}")
    result = build(entries, adjustment=args.adjust)
    for line in leaderboard.render(result):
        say(line)
    for flag, path, write in (("--json", args.json, leaderboard.write_json),
                              ("--plot", args.plot, leaderboard.plot)):
        if not path:
            continue
        try:
            note = write(result, path)
        except (OSError, ValueError) as exc:   # a folder, an unwritable place, a format
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            return error(f"{flag} {path}: cannot write it: {why}; valid: a file path in a "
                         "writable folder" + (" ending .png, .pdf or .svg" if flag == "--plot"
                                              else ""))
        say(f"plot: {note}" if note else f"wrote {path}")
    return 0


# -- entry ------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchkit",
        description="Look at benchkit reports (bench_report.json) that already exist. "
                    "To bench an idea, run pytest on its module.",
        epilog="exit status: 0 ok; 1 compare found a regression, or show/render found no "
               "report; 2 usage error, missing file, or not a benchkit report")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("show", help="print the summary table of existing reports",
                       description="Print the terminal summary table (as at the end of a bench "
                                   "session) for every bench_report.json in PATHs.")
    p.add_argument("paths", nargs="*", default=["reports"], metavar="PATH",
                   help="report files, or folders searched recursively for bench_report.json "
                        "(default: reports)")
    p.set_defaults(func=cmd_show)
    p = sub.add_parser(
        "compare", help="what changed between two reports of one idea and track",
        description="Per-field changes from OLD to NEW (selected configs, baseline and idea "
                    "means, delta_mean, p, MDE, wins, mechanism, verdicts). Exits 1 when NEW "
                    "is worse: its practical verdict is lower in the order equivalent > "
                    "helps > non-inferior > inconclusive > harms > incomplete, or the idea's "
                    "metric moved the wrong way (in the metric's direction) by more than OLD's "
                    "MDE.",
        epilog="exit status: 0 no regression; 1 regression; 2 missing/invalid report, or the "
               "reports are of different ideas or tracks, or measure another metric or "
               "direction")
    p.add_argument("old", metavar="OLD", help="the earlier bench_report.json (or its folder)")
    p.add_argument("new", metavar="NEW", help="the later bench_report.json (or its folder)")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("render", help="(re)write summary.md and plots beside existing reports",
                       description="Write summary.md (and paired.png, sweep.png when "
                                   "matplotlib is installed) beside every bench_report.json "
                                   "in PATHs.")
    p.add_argument("paths", nargs="*", default=["reports"], metavar="PATH",
                   help="report files or folders searched recursively (default: reports)")
    p.set_defaults(func=cmd_render)
    p = sub.add_parser(
        "leaderboard", help="ideas benched against the same baseline runs, ranked",
        description="Group the ideas whose reports share the same baseline runs (track, "
                    "config, and per seed the stored run's digest) into boards; rank each "
                    "board's ideas by mean paired improvement, with sign-flip p-values "
                    "Holm-adjusted across the board's ideas and a verdict per idea at the "
                    "reports' alpha (docs/leaderboard.md).",
        epilog="exit status: 0 ok; 1 no report found; 2 missing path, unreadable or invalid "
               "report, or no report of --track")
    p.add_argument("paths", nargs="*", default=["reports"], metavar="PATH",
                   help="report files or folders searched recursively (default: reports)")
    p.add_argument("--track", help="only the reports of this track")
    p.add_argument("--adjust", choices=("holm", "bh"), default="holm",
                   help="across a board's ideas: holm (family-wise error, default) or bh "
                        "(Benjamini-Hochberg: false discovery rate, for boards of many ideas)")
    p.add_argument("--json", metavar="PATH", help="also write the boards as JSON to PATH")
    p.add_argument("--plot", metavar="PATH",
                   help="also draw per-idea intervals to PATH (needs matplotlib: benchkit[plot])")
    p.set_defaults(func=cmd_leaderboard)
    add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `python -m benchkit show | head`
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
