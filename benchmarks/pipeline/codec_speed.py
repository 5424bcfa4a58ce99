"""Time the records' JSON codecs (issue 52 item 2): every committed report read into its
``Report`` record and written back, and stored run records built, dumped and loaded, in the
benchkit of each tree given, interleaved, medians over repetitions.

    PYTHONPATH=$PWD python benchmarks/pipeline/codec_speed.py --trees OTHER_CHECKOUT $PWD \
        --out benchmarks/results/codec_speed.json

Each tree runs in its own interpreter (``PYTHONPATH`` = the tree); one round times every case
once in each tree, in turn, so that the machine's load falls on both alike. Times are the
process's CPU time (the machine is shared), the least over ``--reps`` passes.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def reports() -> list[dict]:
    paths = sorted(ROOT.glob("reports/*/*/bench_report.json")) + sorted(
        ROOT.glob("benchmarks/results/**/bench_report.json"))
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def one_round(reps: int) -> dict[str, float]:
    """Seconds per operation in this interpreter's benchkit (min over ``reps`` passes)."""
    from benchkit.spec.payloads import CurvePoint, RunPoint, RunResult, Signature
    from benchkit.store import records
    from benchkit.verdict.records import Report

    data = reports()
    out: dict[str, float] = {}

    def timed(name, fn, n):
        best = min(_once(fn) for _ in range(reps))
        out[name] = best / n

    read = [Report.from_json(d) for d in data]
    timed("report_from_json", lambda: [Report.from_json(d) for d in data], len(data))
    timed("report_to_json", lambda: [r.to_json() for r in read], len(read))
    result = RunResult(val=0.5, test=0.25, diverged=False, seconds=1.5,
                       signatures={"rank": Signature(has_null=True, null=2.0, observed=1.0,
                                                     predicted=1.0, tol=0.1, prediction="r",
                                                     confirmed=True)},
                       logs={"flops": 10.0}, budgets={"params": 100.0},
                       curve=tuple(CurvePoint(epoch=e, val=0.1 * e) for e in range(1, 21)))
    origin = records.StoredOrigin(module="m.py", nodeid="m.py::t", plan={"looks": [8]})
    points = [RunPoint(arm="idea", track="tabular", cfg={"lr": 0.01}, seed=s)
              for s in range(200)]
    built = [records.build("k" * 64, p, result, {"a|file|x": "h"}, origin, "cpu")
             for p in points]
    dumped = [records.dumps(r) for r in built]
    timed("record_build", lambda: [records.build("k" * 64, p, result, {"a|file|x": "h"},
                                                 origin, "cpu") for p in points], len(points))
    timed("record_load", lambda: [records.load(d, "k" * 64) for d in dumped], len(dumped))
    return out


def _once(fn) -> float:
    """CPU seconds of one call: the machine is shared, and CPU time is what the codec costs."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_round(args.reps)))
        return
    trees = [t.resolve() for t in args.trees]
    got: dict[str, list[dict[str, float]]] = {str(t): [] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            line = subprocess.run([sys.executable, __file__, "--one", "--reps", str(args.reps)],
                                  env=env, check=True, capture_output=True, text=True).stdout
            got[str(tree)].append(json.loads(line))
    medians = {tree: {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
               for tree, rounds in got.items()}
    first = str(trees[0])
    result = {"trees": [str(t) for t in trees], "rounds": args.rounds, "reps": args.reps,
              "median_seconds": medians,
              "ratio_to_first": {tree: {k: m[k] / medians[first][k] for k in m}
                                 for tree, m in medians.items()}}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
