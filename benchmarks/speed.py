"""Speed of benchkit on this machine: harness overhead, -n scaling, rerun, throughput.

A script, not a test: timings here are noisy, so every figure is a median of REPS repetitions
and comparisons are ratios measured in this one run. Prints a table and writes
benchmarks/speed.json.

    .venv/bin/python benchmarks/speed.py [--reps 3] [--tracks tabular dynamics]
"""
from __future__ import annotations

import argparse
import contextlib
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
PY = sys.executable

AA_MODULE = '''
import pytest
pytestmark = pytest.mark.bench(name="aa_{track}", track="{track}")

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model())
'''

BARE_LOOP = '''
import sys, time
t0 = time.perf_counter()
import torch
torch.set_num_threads(1)
from benchkit import tracks
from benchkit.run import seed_everything
from benchkit.train import fit
track = tracks.get(sys.argv[1])
for arm in ("baseline", "idea"):
    for cfg in track.grid:
        for seed in range(8):
            seed_everything(seed)
            fit(track.model(), track.data(seed), track, lr=cfg["lr"], epochs=track.epochs,
                batch_size=track.batch_size, seed=seed)
'''


# The same loop with benchkit's heap treatment (benchkit.heap: torch imported with the cyclic
# GC paused and frozen, no collections at exit): the strict baseline for the harness overhead,
# since that treatment is not the harness's to claim.
BARE_LOOP_FROZEN = BARE_LOOP.replace("import torch\n", """from benchkit import heap
torch = heap.import_frozen("torch")
heap.skip_exit_collection()
""", 1)


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


def strip_times(report: dict) -> dict:
    report = dict(report)
    report.pop("created", None)
    return report


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tracks", nargs="+", default=["tabular", "dynamics"])
    ap.add_argument("--as-is-bytecode", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE from the environment")
    args = ap.parse_args()
    env = dict(os.environ)
    with private_warm_pools(env):
        run_all(args, env)


@contextlib.contextmanager
def private_warm_pools(env):
    """--bench-warm sessions run with env use a pool directory of their own, stopped at the
    end: a measurement neither finds nor leaves a pool of the user's."""
    pools = tempfile.mkdtemp(prefix="bkw-speed-", dir="/tmp")
    env["BENCHKIT_WARM_DIR"] = pools
    try:
        yield
    finally:
        subprocess.run([PY, "-m", "benchkit", "warm", "--stop"], env=env,
                       stdout=subprocess.DEVNULL, check=False)
        shutil.rmtree(pools, ignore_errors=True)


def wait_for_pool(env, timeout=120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run([PY, "-m", "benchkit", "warm"], env=env, capture_output=True,
                             text=True).stdout
        if out.startswith("running:"):
            return
        time.sleep(0.5)
    raise SystemExit("speed.py: the warm pool did not start within 2 minutes")


def run_all(args, env) -> None:
    if not args.as_is_bytecode:
        # Python's default: compiled (and pytest-rewritten) modules are cached between sessions.
        # With PYTHONDONTWRITEBYTECODE=1 (set on this machine) pytest re-rewrites every plugin
        # package it imports (all of Hypothesis) in every process of every session.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    results = {"machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                           "platform": platform.platform(),
                           "bytecode_cache": "PYTHONDONTWRITEBYTECODE" not in env}, "tracks": {}}
    for track in args.tracks:
        d = aa_dir(track)
        bare_file = d / "bare.py"
        bare_file.write_text(BARE_LOOP)
        (d / "bare_frozen.py").write_text(BARE_LOOP_FROZEN)
        commands = {
            "bare_loop": [PY, str(bare_file), track],
            "bare_loop_frozen": [PY, str(d / "bare_frozen.py"), track],
            "pytest_n0": pytest_cmd(track, "-p", "no:cacheprovider"),
            "pytest_n2": pytest_cmd(track, "-p", "no:cacheprovider", "-n", "2"),
            "pytest_n2_warm": pytest_cmd(track, "-p", "no:cacheprovider", "-n", "2",
                                         "--bench-warm"),
        }
        times = {label: [] for label in commands}
        for cmd in commands.values():  # warm-up, not timed: page cache and bytecode cache
            timed(cmd, d, env)
        wait_for_pool(env)  # the warm-up's --bench-warm session started it, in the background
        for _ in range(args.reps):  # interleaved, so that the machine's drift hits all alike
            for label, cmd in commands.items():
                times[label].append(timed(cmd, d, env))
        row = {label: {"median_s": statistics.median(t), "all_s": t}
               for label, t in times.items()}
        # Rerun with the store: first run (fresh cache) then the same command again.
        first, again, identical = [], [], []
        for _ in range(args.reps):
            shutil.rmtree(d / ".pytest_cache", ignore_errors=True)
            shutil.rmtree(d / "reports", ignore_errors=True)
            first.append(timed(pytest_cmd(track), d, env))
            path = d / "reports" / f"aa_{track}" / track / "bench_report.json"
            before = strip_times(json.loads(path.read_text()))
            again.append(timed(pytest_cmd(track), d, env))
            after = strip_times(json.loads(path.read_text()))
            for r in after["runs"]:
                r["reused"] = False  # the one field that must differ
            identical.append(before == after)
        row["first_with_store"] = {"median_s": statistics.median(first), "all_s": first}
        row["rerun"] = {"median_s": statistics.median(again), "all_s": again,
                        "report_identical_except_created_and_reused": all(identical)}
        row["overhead_ratio"] = row["pytest_n0"]["median_s"] / row["bare_loop"]["median_s"]
        row["overhead_ratio_vs_frozen"] = (row["pytest_n0"]["median_s"]
                                           / row["bare_loop_frozen"]["median_s"])
        row["n2_speedup"] = row["pytest_n0"]["median_s"] / row["pytest_n2"]["median_s"]
        row["n2_warm_speedup"] = (row["pytest_n0"]["median_s"]
                                  / row["pytest_n2_warm"]["median_s"])
        row["rerun_fraction"] = row["rerun"]["median_s"] / row["first_with_store"]["median_s"]
        flops = flops_per_run(track)
        row["gflop_per_run"] = flops / 1e9
        row["gflops_n0"] = 48 * flops / row["pytest_n0"]["median_s"] / 1e9
        row["gflops_n2"] = 48 * flops / row["pytest_n2"]["median_s"] / 1e9
        results["tracks"][track] = row
        shutil.rmtree(d, ignore_errors=True)
    results["matmul_peak_gflops"] = {"1_thread": matmul_peak(1), "2_threads": matmul_peak(2)}
    (HERE / "speed.json").write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


def table(results: dict) -> str:
    peak = results["matmul_peak_gflops"]
    lines = [f"machine: {results['machine']['cores']} cores; float32 matmul 2048^2 peak "
             f"{peak['1_thread']:.1f} GFLOP/s (1 thread), {peak['2_threads']:.1f} (2 threads); "
             f"bytecode cache {'on' if results['machine'].get('bytecode_cache') else 'off'}",
             "A/A bench, 48 runs (2 arms x 3 lrs x 8 seeds), default protocol, medians:",
             "| track | bare loop | bare loop, heap frozen | pytest -n 0 | overhead (vs frozen) "
             "| pytest -n 2 | -n 2 speedup | -n 2 --bench-warm | speedup | rerun (stored) "
             "| rerun/first | GFLOP/run | GFLOP/s -n 0 | GFLOP/s -n 2 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for track, r in results["tracks"].items():
        lines.append(
            f"| {track} | {r['bare_loop']['median_s']:.2f} s | "
            f"{r['bare_loop_frozen']['median_s']:.2f} s | {r['pytest_n0']['median_s']:.2f} s"
            f" | {r['overhead_ratio']:.2f}x ({r['overhead_ratio_vs_frozen']:.2f}x) | "
            f"{r['pytest_n2']['median_s']:.2f} s | "
            f"{r['n2_speedup']:.2f}x | {r['pytest_n2_warm']['median_s']:.2f} s | "
            f"{r['n2_warm_speedup']:.2f}x | {r['rerun']['median_s']:.2f} s | "
            f"{100 * r['rerun_fraction']:.1f}% | {r['gflop_per_run']:.3f} | "
            f"{r['gflops_n0']:.2f} | {r['gflops_n2']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
