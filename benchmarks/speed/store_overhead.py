"""What the run store's dependency recording costs, and what sharing a baseline saves.

A script, not a test (timings are noisy: ratios measured in one run, interleaved). Writes
benchmarks/results/store_overhead.json.

1. Recording: tabular runs trained in-process with and without :class:`benchkit.store.trace.
   Recording` around ``run.fit`` (interleaved; median seconds per run and the ratio).
2. Sharing: N idea modules with the same baseline arm on tabular, benched in one session
   (``-n 0``). "Before" is the same session with one run store per module (nothing shared,
   as when the key held the module's source); "after" shares one store. Runs trained and wall
   time of each.

    .venv/bin/python benchmarks/speed/store_overhead.py [--reps 5] [--modules 5] [--seeds 8]
        [--epochs 30] [--record-epochs 30]
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
MODULE = '''
import pytest
pytestmark = pytest.mark.bench(name="idea{i}", track="tabular")

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), weight_decay={wd})
'''


def recording_overhead(reps: int, epochs: int) -> dict:
    from benchkit import tracks
    from benchkit.store.trace import Recording
    from benchkit.training.run import Run, seed_everything, set_threads

    set_threads(1)
    track = tracks.get("tabular")

    def one(seed: int, record: bool) -> float:
        seed_everything(seed)
        run = Run(arm="baseline", track=track, cfg={"lr": 2e-3}, seed=seed, epochs=epochs)
        rec = Recording() if record else None
        start = time.perf_counter()
        if rec:
            rec.start()
        try:
            run.fit(track.model())
        finally:
            if rec:
                rec.stop()
        return time.perf_counter() - start

    one(0, False)
    plain, traced = [], []
    for _rep in range(reps):
        for seed in range(4):
            plain.append(one(seed, False))
            traced.append(one(seed, True))
    p, t = statistics.median(plain), statistics.median(traced)
    return {"epochs": epochs, "runs_each": len(plain), "plain_s_per_run": round(p, 5),
            "recorded_s_per_run": round(t, 5), "ratio": round(t / p, 4)}


def session(root: Path, modules: int, seeds: int, epochs: int, shared: bool) -> dict:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "tox.ini").write_text("[pytest]\n")
    for i in range(modules):
        (root / f"test_idea{i}.py").write_text(MODULE.format(i=i, wd=1e-4 * (i + 1)))
    trained, start = 0, time.perf_counter()
    groups = [[f"test_idea{i}.py" for i in range(modules)]] if shared else \
        [[f"test_idea{i}.py"] for i in range(modules)]
    for n, files in enumerate(groups):
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-n", "0",
                "--bench-seeds", str(seeds), "--bench-epochs", str(epochs),
                "-o", f"cache_dir=.cache{n}", *files]
        done = subprocess.run(args, cwd=root, capture_output=True, text=True)
        match = re.search(r"benchkit: (\d+) run\(s\) trained", done.stdout)
        if done.returncode not in (0, 1) or match is None:
            raise SystemExit(done.stdout[-3000:] + done.stderr[-3000:])
        trained += int(match.group(1))
    return {"runs_trained": trained, "wall_s": round(time.perf_counter() - start, 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--modules", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=30, help="of the sharing sessions")
    parser.add_argument("--record-epochs", type=int, default=30, help="of the recording runs")
    args = parser.parse_args()
    out = {"machine": platform.platform(), "command": " ".join(sys.argv),
           "recording": recording_overhead(args.reps, args.record_epochs)}
    print(json.dumps(out["recording"]))
    with tempfile.TemporaryDirectory() as tmp:
        before = session(Path(tmp, "before"), args.modules, args.seeds, args.epochs, False)
        print("before", before)
        after = session(Path(tmp, "after"), args.modules, args.seeds, args.epochs, True)
        print("after", after)
    out["sharing"] = {"modules": args.modules, "seeds": args.seeds, "epochs": args.epochs,
                      "before_one_store_per_module": before, "after_one_shared_store": after}
    (RESULTS / "store_overhead.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
