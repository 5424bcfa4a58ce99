"""benchkit on an accelerator: A/A zero diffs, rerun bit-identity and wall time against the CPU.

A script, not a test (the test suite runs on CPU machines). On a machine with a GPU:

    .venv/bin/python benchmarks/device/device_check.py --quick   # 2 seeds, 1 epoch: a few minutes
    .venv/bin/python benchmarks/device/device_check.py           # the default protocol

It benches, each in a fresh temporary project with no run store (every run trains):
1. an A/A idea per built-in track (baseline ``run.fit``; idea its own loop over ``run.batches()``
   with ``torch.optim.Adam(fused=True)``) on ``--device``, twice: every per-seed difference must
   be 0 and the second session's numbers the first's, bit for bit;
2. the shipped ideas (``ideas/``) on ``--device`` twice (bit-identity of every run) and once on
   the CPU (wall time; the CPU's numbers are not expected to equal the GPU's).
It writes ``benchmarks/results/device.json`` (``--out``) and exits 1 when a check fails.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACKS = ("tabular", "dynamics")
AA_MODULE = '''
import pytest
import torch

pytestmark = pytest.mark.bench(name="aa_{track}", track="{track}")


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model(), schedule="constant")  # the idea's own loop has no schedule


@pytest.mark.arm("idea")
def test_idea(run):
    model = run.track.model().to(run.device)
    opt = torch.optim.Adam(model.parameters(), lr=run.cfg["lr"], fused=True)
    for x, y in run.batches():
        loss = run.track.loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    run.record(val=run.evaluate(model, "val"), test=run.evaluate(model, "test"))
'''


def bench(project: Path, device: str, quick: bool, workers: int) -> tuple[float, dict]:
    """One fresh session in ``project``: (wall seconds, {report path: report})."""
    reports = project / "reports"
    shutil.rmtree(reports, ignore_errors=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
           "--bench-device", device, "-n", str(workers)]
    cmd += ["--bench-seeds", "2", "--bench-epochs", "1"] if quick else []
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} in {project} failed:\n{done.stdout[-3000:]}{done.stderr}")
    return seconds, {str(p.relative_to(reports)): json.loads(p.read_text())
                     for p in sorted(reports.rglob("bench_report.json"))}


def per_run(reports: dict) -> dict:
    """Every run's numbers as exact hex floats: what bit-identity compares."""
    return {f"{path}:{r['arm']}:{json.dumps(r['cfg'], sort_keys=True)}:{r['seed']}":
            [None if v is None else float.hex(v) for v in (r["val"], r["test"])]
            for path, report in reports.items() for r in report["runs"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 1 epoch")
    parser.add_argument("-n", "--workers", type=int, default=0, help="pytest -n (default 0)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "device.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="benchkit-device-"))
    aa, ideas = work / "aa", work / "ideas"
    aa.mkdir()
    (aa / "pytest.ini").write_text("[pytest]\n")
    for track in TRACKS:
        (aa / f"test_aa_{track}.py").write_text(AA_MODULE.format(track=track))
    shutil.copytree(ROOT / "ideas", ideas / "ideas")
    (ideas / "pytest.ini").write_text("[pytest]\n")

    result: dict = {"command": " ".join(sys.argv), "device": args.device, "quick": args.quick,
                    "workers": args.workers, "checks": {}, "seconds": {}}
    aa_time, aa_first = bench(aa, args.device, args.quick, args.workers)
    _, aa_second = bench(aa, args.device, args.quick, args.workers)
    diffs = {p: r["comparison"]["per_seed_diffs"] for p, r in aa_first.items()}
    result["checks"]["aa_zero_diffs"] = all(all(d == 0 for d in v) for v in diffs.values())
    result["checks"]["aa_rerun_bit_identical"] = per_run(aa_first) == per_run(aa_second)
    result["aa_per_seed_diffs"] = diffs
    device_time, first = bench(ideas, args.device, args.quick, args.workers)
    _, second = bench(ideas, args.device, args.quick, args.workers)
    cpu_time, _ = bench(ideas, "cpu", args.quick, args.workers)
    result["checks"]["ideas_rerun_bit_identical"] = per_run(first) == per_run(second)
    result["seconds"] = {"aa_on_device": round(aa_time, 2),
                         "ideas_on_device": round(device_time, 2),
                         "ideas_on_cpu": round(cpu_time, 2)}
    result["verdicts_on_device"] = {p: r["practical_verdict"] for p, r in first.items()}
    result["environment"] = next(iter(first.values()))["environment"] if first else {}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if all(result["checks"].values()) else 1)


if __name__ == "__main__":
    main()
