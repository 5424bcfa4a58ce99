"""Where the test suite's CPU goes: runs ``pytest <args>`` with cpu_plugin.py and writes a
table (each test's CPU, its own plus its subprocesses'; per file; collection per process) to
``--out``. CPU, not wall: the machine is shared, and CPU ranks tests the same under any load.

    PYTHONPATH=. nice -n 15 .venv/bin/python benchmarks/suite/cpu_table.py \
        --out benchmarks/results/suite/cpu_table_after.json -- tests -n 2 --dist worksteal
    .venv/bin/python benchmarks/suite/cpu_table.py --summarise OUT.json   # print a saved table
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def run(args: list[str], keep: Path | None, count: bool) -> tuple[list[dict], dict]:
    """Run the suite with the plugin; its lines and the session's CPU, wall and exit status.
    With ``keep``, the plugin's lines are written there (read back by ``--lines``)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = str(keep or scratch)
        Path(out).mkdir(parents=True, exist_ok=True)
        first = [str(HERE / "count")] if count else []  # its sitecustomize.py counts processes
        env = dict(os.environ, CPU_PLUGIN_OUT=out, PYTHONPATH=os.pathsep.join(
            p for p in (*first, str(HERE), os.environ.get("PYTHONPATH")) if p))
        command = [sys.executable, "-m", "pytest", "-p", "cpu_plugin", "-q", *args]
        start, before = time.perf_counter(), os.times()
        rc = subprocess.run(command, cwd=ROOT, env=env).returncode
        after = os.times()
        session = {"command": " ".join(command[1:]), "rc": rc,
                   "wall_s": round(time.perf_counter() - start, 1),
                   "cpu_s": round(after.children_user - before.children_user
                                  + after.children_system - before.children_system, 1),
                   "load_before": os.getloadavg()}
        session["processes"] = processes(Path(out))
        return read_lines(Path(out)), session


def read_lines(folder: Path) -> list[dict]:
    return [dict(json.loads(line), process=path.stem) for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text().splitlines() if path.stem != "processes"]


def kind_of(argv: list[str]) -> str:
    """``-m pytest`` (pytester writes ``-mpytest``), ``-c`` (an xdist worker: execnet), or the
    script's name."""
    for i, a in enumerate(argv[1:], 1):
        if a == "-c":
            return a
        if a.startswith("-m"):
            return f"-m {a[2:] or (argv[i + 1] if i + 1 < len(argv) else '?')}"
        if not a.startswith("-"):
            return Path(a).name
    return "?"


def processes(folder: Path) -> dict:
    """The Python processes a --count-processes run started, by kind, with the CPU of those
    that exited normally (an xdist worker or a killed process records none)."""
    path = folder / "processes.jsonl"
    if not path.exists():
        return {}
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    started = {line["pid"]: line["argv"] for line in lines if line["phase"] == "start"}
    cpu = {line["pid"]: line["cpu"] for line in lines if line["phase"] == "exit"}
    kinds: dict[str, list] = defaultdict(lambda: [0, 0, 0.0])
    for pid, argv in started.items():
        kind = kind_of(argv)
        kinds[kind][0] += 1
        if pid in cpu:
            kinds[kind][1] += 1
            kinds[kind][2] += cpu[pid]
    return {"started": len(started),
            "by_kind": {k: {"started": n, "exited_normally": e, "their_cpu_s": round(c, 1)}
                        for k, (n, e, c) in sorted(kinds.items(), key=lambda kv: -kv[1][0])}}


def table(lines: list[dict], session: dict, top: int) -> dict:
    """Totals, per file, per marker set, and the ``top`` tests by CPU."""
    tests = [dict(line, cpu=round(line["own"] + line["children"], 3))
             for line in lines if line["phase"] == "test"]
    tests.sort(key=lambda t: -t["cpu"])
    files: dict[str, float] = defaultdict(float)
    kinds: dict[str, float] = defaultdict(float)
    for t in tests:
        files[t["nodeid"].split("::")[0]] += t["cpu"]
        kinds["+".join(t["markers"]) or "plain"] += t["cpu"]
    total = sum(t["cpu"] for t in tests)
    ends: dict[str, float] = {}  # each worker's last end: a gap is a core left idle
    for t in tests:
        if "end" in t:
            ends[t["process"]] = max(ends.get(t["process"], 0.0), t["end"])
    collection = {line["process"]: round(line["own"], 1) for line in lines
                  if line["phase"] == "collection"}
    return {
        "session": session,
        "tests": len(tests),
        "failed": sorted({line["nodeid"] for line in lines if line["phase"] == "failed"}),
        "tests_cpu_s": round(total, 1),
        "collection_cpu_s": collection,
        "last_test_ends_s_before_the_final_one": {p: round(max(ends.values()) - e, 1)
                                                   for p, e in ends.items()},
        "at_least_2_5_s": {"tests": sum(t["cpu"] >= 2.5 for t in tests),
                           "cpu_s": round(sum(t["cpu"] for t in tests if t["cpu"] >= 2.5), 1)},
        "by_markers": {k: round(v, 1) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])},
        "by_file": {k: round(v, 1) for k, v in sorted(files.items(), key=lambda kv: -kv[1])[:40]},
        "top": [{"nodeid": t["nodeid"], "cpu": t["cpu"], "own": round(t["own"], 2),
                 "children": round(t["children"], 2), "wall": round(t["wall"], 1),
                 "markers": t["markers"]} for t in tests[:top]],
    }


def summarise(result: dict) -> None:
    print(f"{result['tests']} tests, {result['tests_cpu_s']} CPU s in tests; collection "
          f"{result['collection_cpu_s']}; >= 2.5 s: {result['at_least_2_5_s']}; "
          f"session {result['session']}")
    print("by markers:", result["by_markers"])
    for t in result["top"]:
        print(f"{t['cpu']:7.2f} {t['own']:6.2f} {t['children']:6.2f} {t['wall']:6.1f}  "
              f"{t['nodeid']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--top", type=int, default=80)
    parser.add_argument("--summarise", type=Path, help="print a saved table, run nothing")
    parser.add_argument("--keep", type=Path, help="the folder the plugin writes its lines to")
    parser.add_argument("--lines", type=Path, help="tabulate the lines of an earlier --keep")
    parser.add_argument("--count-processes", action="store_true",
                        help="count the Python processes started (count/sitecustomize.py)")
    parser.add_argument("pytest_args", nargs="*")
    options = parser.parse_args()
    if options.summarise:
        summarise(json.loads(options.summarise.read_text()))
        return
    if options.lines:
        result = table(read_lines(options.lines), {"command": "partial: lines of an earlier run",
                                                   "processes": processes(options.lines)},
                       top=options.top)
    else:
        result = table(*run(options.pytest_args, options.keep, options.count_processes),
                       top=options.top)
    if options.out:
        options.out.parent.mkdir(parents=True, exist_ok=True)
        options.out.write_text(json.dumps(result, indent=1) + "\n")
    summarise(result)


if __name__ == "__main__":
    main()
