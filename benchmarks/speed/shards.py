"""Wall time of one bench split over N concurrent shard sessions, and of the final session.

A script, not a test. For each N it starts N ``pytest --bench-shard K/N`` processes at once on
a fresh store (as N machines of a CI matrix would, here all on this machine's cores), waits for
all of them, then times the final ``--bench-shard merge`` session that trains nothing and
writes the reports. It checks that every N gives the per-seed numbers of N = 1 bit for bit.
Reports go to a temporary folder (the committed reports are left alone). Writes
benchmarks/results/shards.json.

    .venv/bin/python benchmarks/speed/shards.py [--shards 1 2 4] [--seeds 8] [--idea PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IDEA = "ideas/test_moment_preserving_compression.py"


def pytest_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
            "-W", "ignore", *args]


def run_all(commands: list[list[str]]) -> float:
    """Start every command at once in the repository root; seconds until the last ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    start = time.perf_counter()
    procs = [subprocess.Popen(c, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for c in commands]
    outs = [p.communicate()[0] for p in procs]
    seconds = time.perf_counter() - start
    for p, out in zip(procs, outs):
        if p.returncode != 0:
            raise SystemExit(f"failed ({p.returncode}): {' '.join(p.args)}\n{out[-3000:]}")
    return seconds


def per_seed(report_dir: Path) -> list:
    found = []
    for path in sorted(report_dir.rglob("bench_report.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        assert report["complete"], path
        found += [(report["track"], r["arm"], r["seed"], json.dumps(r["cfg"]), r["val"], r["test"])
                  for r in report["runs"]]
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seeds", type=int, default=None, help="default: the idea's own (8)")
    ap.add_argument("--idea", default=IDEA)
    args = ap.parse_args()
    extra = ["--bench-seeds", str(args.seeds)] if args.seeds else []
    rows, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.shards:
            store, reports = Path(tmp, f"store-{n}"), Path(tmp, f"reports-{n}")
            common = [args.idea, f"--bench-store={store}", f"--bench-report-dir={reports}", *extra]
            load = os.getloadavg()[0]
            shards = run_all([pytest_cmd(*common, f"--bench-shard={k}/{n}")
                              for k in range(1, n + 1)])
            final = run_all([pytest_cmd(*common, "--bench-shard=merge")])
            numbers = per_seed(reports)
            reference = reference if reference is not None else numbers
            rows.append({"shards": n, "shard_wall_s": round(shards, 2),
                         "final_session_s": round(final, 2),
                         "total_s": round(shards + final, 2),
                         "same_numbers_as_first": numbers == reference,
                         "load_avg_1min_before": round(load, 2)})
            print(json.dumps(rows[-1]), flush=True)
    base = rows[0]["shard_wall_s"]
    for row in rows:
        row["speedup_vs_first"] = round(base / row["shard_wall_s"], 2)
    out = {"idea": args.idea, "seeds": args.seeds or "the idea's own", "cpus": os.cpu_count(),
           "machine": platform.platform(), "python": platform.python_version(),
           "command": "python benchmarks/speed/shards.py " + " ".join(sys.argv[1:]), "rows": rows}
    (ROOT / "benchmarks" / "results" / "shards.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
