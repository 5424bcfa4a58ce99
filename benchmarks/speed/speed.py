"""Speed of benchkit on this machine: harness cost against plain torch, -n scaling, rerun.

A script, not a test: timings here are noisy, so every figure is a median of REPS repetitions
run interleaved, and comparisons are ratios measured in this one run. Writes
benchmarks/results/speed.json and the table in benchmarks/README.md (between its speed-table
markers).

    .venv/bin/python benchmarks/speed/speed.py [--reps 3] [--tracks tabular dynamics]
    .venv/bin/python benchmarks/speed/speed.py --smoke     # 1 rep, 2 seeds, 1 epoch; writes nothing
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
PY = sys.executable
START = "<!-- speed table: written by benchmarks/speed/speed.py -->"
END = "<!-- end of speed table -->"

# seeds=8 (benchkit's DEFAULT_SEEDS, which the plain loop below runs): the 48 trainings the
# figures were measured on, whatever seeds the track asks for by default (Track.seeds)
AA_MODULE = '''
import pytest
pytestmark = pytest.mark.bench(name="aa_{track}", track="{track}", seeds=8)

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model())
'''

# The same 48 trainings as the A/A bench (2 arms x the grid x the seeds, the track's model, data
# and protocol), written plainly: torch.optim.Adam and a minibatch loop, no pytest, no benchkit
# training code. This is what a person would write without benchkit.
PLAIN_LOOP = '''
import random, sys
import numpy as np
import torch
torch.set_num_threads(1)
from benchkit import tracks
track = tracks.get(sys.argv[1])
seeds, epochs = int(sys.argv[2]), int(sys.argv[3])
for arm in ("baseline", "idea"):
    for cfg in track.grid:
        for seed in range(seeds):
            random.seed(seed); np.random.seed(seed); torch.manual_seed(seed)
            data = track.data(seed)
            model = track.model()
            opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
            gen = torch.Generator().manual_seed(seed)
            x, y = data.train.x, data.train.y
            for _ in range(epochs):
                order = torch.randperm(len(x), generator=gen)
                for start in range(0, len(x), track.batch_size):
                    idx = order[start:start + track.batch_size]
                    loss = track.loss(model(x[idx]), y[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            with torch.no_grad():
                model.eval()
                val = float(track.metric(model(data.val.x), data.val.y))
                test = float(track.metric(model(data.test.x), data.test.y))
'''


def timed(cmd, cwd, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def aa_dir(track: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix=f"benchkit-speed-{track}-"))
    (d / f"test_aa_{track}.py").write_text(AA_MODULE.format(track=track))
    (d / "pytest.ini").write_text("[pytest]\n")
    return d


def pytest_cmd(track: str, *extra: str) -> list[str]:
    return [PY, "-m", "pytest", f"test_aa_{track}.py", "-q", *extra]


def flops_per_run(track_name: str) -> float:
    """FLOPs of one default run, counted by torch's FlopCounterMode on one training step
    (forward + backward) and one evaluation forward, scaled by the protocol's step count."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from benchkit import tracks
    track = tracks.get(track_name)
    data = track.data(0)
    model = track.model()
    xb, yb = data.train.x[:track.batch_size], data.train.y[:track.batch_size]
    with FlopCounterMode(display=False) as counter:
        track.loss(model(xb), yb).backward()
    per_batch = counter.get_total_flops()
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(data.val.x)
        model(data.test.x)
    evals = counter.get_total_flops()
    n = len(data.train)
    batches = -(-n // track.batch_size)
    return float(per_batch * batches * track.epochs + evals)


def matmul_peak(threads: int) -> float:
    import torch
    torch.set_num_threads(threads)
    a = torch.randn(2048, 2048)
    b = torch.randn(2048, 2048)
    a @ b
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    return 2 * 2048 ** 3 / statistics.median(times) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tracks", nargs="+", default=["tabular", "dynamics"])
    ap.add_argument("--smoke", action="store_true",
                    help="check the script runs: 1 rep, 2 seeds, 1 epoch, tabular; writes nothing")
    ap.add_argument("--as-is-bytecode", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE from the environment")
    args = ap.parse_args()
    if args.smoke:
        args.reps, args.tracks = 1, ["tabular"]
    env = dict(os.environ)
    if not args.as_is_bytecode:
        # Python's default: compiled (and pytest-rewritten) modules are cached between sessions.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    results = {"machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                           "platform": platform.platform(), "cpu": cpu_name(),
                           "bytecode_cache": "PYTHONDONTWRITEBYTECODE" not in env},
               "reps": args.reps, "tracks": {}}
    for track in args.tracks:
        results["tracks"][track] = measure(track, args, env)
    results["matmul_peak_gflops"] = {"1_thread": matmul_peak(1), "2_threads": matmul_peak(2)}
    text = table(results)
    print(text)
    if args.smoke:
        return
    (RESULTS / "speed.json").write_text(json.dumps(results, indent=2) + "\n")
    readme = HERE.parent / "README.md"
    old = readme.read_text()
    head, rest = old.split(START, 1)
    readme.write_text(f"{head}{START}\n{text}\n{END}{rest.split(END, 1)[1]}")


def cpu_name() -> str:
    from benchkit.store import hardware
    return hardware.cpu()


def measure(track: str, args, env) -> dict:
    d = aa_dir(track)
    from benchkit import tracks
    from benchkit.spec import DEFAULT_SEEDS
    if args.smoke:
        seeds, epochs = "2", "1"
        size = ["--bench-seeds", seeds, "--bench-epochs", epochs]
    else:  # the idea's own protocol: DEFAULT_SEEDS seeds, the track's epochs
        seeds, epochs, size = str(DEFAULT_SEEDS), str(tracks.get(track).epochs), []
    (d / "plain.py").write_text(PLAIN_LOOP)
    commands = {
        "plain_torch": [PY, "plain.py", track, seeds, epochs],
        "pytest_n0": pytest_cmd(track, "-n", "0", "--bench-fresh", *size),
        "pytest_n2": pytest_cmd(track, "-n", "2", "--bench-fresh", *size),
    }
    times = {label: [] for label in commands}
    for cmd in commands.values():  # warm-up, not timed: page cache and bytecode cache
        timed(cmd, d, env)
    for _ in range(args.reps):  # interleaved, so that the machine's drift hits all alike
        for label, cmd in commands.items():
            times[label].append(timed(cmd, d, env))
    row = {label: {"median_s": statistics.median(t), "all_s": t} for label, t in times.items()}
    # Rerun with the store: a first session (empty cache), then the same command again.
    first, again, identical = [], [], []
    for _ in range(args.reps):
        shutil.rmtree(d / ".pytest_cache", ignore_errors=True)
        shutil.rmtree(d / "reports", ignore_errors=True)
        first.append(timed(pytest_cmd(track, *size), d, env))
        path = d / "reports" / f"aa_{track}" / track / "bench_report.json"
        before = strip_times(json.loads(path.read_text()))
        again.append(timed(pytest_cmd(track, *size), d, env))
        after = strip_times(json.loads(path.read_text()))
        for r in after["runs"]:
            r["reused"] = False  # the one field that must differ
        identical.append(before == after)
    row["first_with_store"] = {"median_s": statistics.median(first), "all_s": first}
    row["rerun"] = {"median_s": statistics.median(again), "all_s": again,
                    "report_identical_except_created_and_reused": all(identical)}
    row["ratio_vs_plain"] = row["pytest_n0"]["median_s"] / row["plain_torch"]["median_s"]
    row["n2_speedup"] = row["pytest_n0"]["median_s"] / row["pytest_n2"]["median_s"]
    row["rerun_fraction"] = row["rerun"]["median_s"] / row["first_with_store"]["median_s"]
    flops = flops_per_run(track)
    row["gflop_per_run"] = flops / 1e9
    row["gflops_n0"] = 48 * flops / row["pytest_n0"]["median_s"] / 1e9
    shutil.rmtree(d, ignore_errors=True)
    return row


def strip_times(report: dict) -> dict:
    report = dict(report)
    report.pop("created", None)
    return report


def table(results: dict) -> str:
    m, peak = results["machine"], results["matmul_peak_gflops"]
    lines = [f"Machine: {m['cpu']}, {m['cores']} cores, python {m['python']}, {m['platform']}; "
             f"float32 matmul peak {peak['1_thread']:.1f} GFLOP/s (1 thread), "
             f"{peak['2_threads']:.1f} (2 threads). Medians of {results['reps']}, interleaved.",
             "",
             "| track | plain torch loop, torch.optim.Adam | pytest -n 0 --bench-fresh "
             "| ratio | pytest -n 2 --bench-fresh (cold workers) | -n 2 speedup "
             "| rerun (all stored) | rerun/first | GFLOP/run | GFLOP/s -n 0 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for track, r in results["tracks"].items():
        lines.append(
            f"| {track} | {r['plain_torch']['median_s']:.2f} s | "
            f"{r['pytest_n0']['median_s']:.2f} s | {r['ratio_vs_plain']:.2f}x | "
            f"{r['pytest_n2']['median_s']:.2f} s | {r['n2_speedup']:.2f}x | "
            f"{r['rerun']['median_s']:.2f} s | {100 * r['rerun_fraction']:.1f}% | "
            f"{r['gflop_per_run']:.3f} | {r['gflops_n0']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
