"""The shipped ideas as users run them: their claims alone, and a quick smoke bench."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


# benches of several idea modules per session: longer than the suite's 120 s default
pytestmark = [pytest.mark.timeout(600), pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[1]
IDEAS = {"task_visible_pruning": "tabular", "moment_preserving_rank2": "dynamics"}


def pytest_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_claims_run_alone_and_pass():
    result = pytest_run("ideas", "-m", "mechanism", "-q")
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and "deselected" in result.stdout
    assert "no report written" in result.stdout


def test_quick_smoke_bench_of_the_ideas(tmp_path):
    # not mnist1d_cnn: generating MNIST-1D costs ~1.5 s a seed in every process (two workers
    # and the controller's floors); its bench is recorded in benchmarks/results/tracks/bench/
    result = pytest_run("ideas", "--bench-seeds", "2", "--bench-epochs", "1", "-n", "2",
                        "--ignore", "ideas/test_mnist1d_cnn.py",
                        f"--bench-report-dir={tmp_path}", "-q")
    assert result.returncode == 0, result.stdout[-3000:]
    # the controller's progress under -n 2 (results through xdist), plain lines without a tty
    assert "benchkit: 1/108 runs trained | " in result.stdout
    assert "benchkit: 108/108 runs trained | " in result.stdout
    for name, track in IDEAS.items():
        report = json.loads((tmp_path / name / track / "bench_report.json").read_text())
        assert report["complete"] is True
        assert report["n_seeds"] == 2 and report["protocol"]["epochs"] == 1
        assert report["mechanism_ok"] in (0, 1)
        assert report["math_verification"]["passed"] is True
        assert report["mechanism_signature"]["signatures"], "the idea records its signature"
        assert any("only 2 seeds" in w for w in report["warnings"])
    # pruning is decided right after replacement against magnitude pruning and two controls,
    # on a frontier over the units replaced per layer
    pruning = json.loads((tmp_path / "task_visible_pruning/tabular/bench_report.json").read_text())
    assert set(pruning["controls"]) == {"magnitude_shortcut", "magnitude_lstsq"}
    assert pruning["frontier"]["values"] == [2, 4, 8]
    summary = (tmp_path / "task_visible_pruning/tabular/summary.md").read_text()
    assert "exempt on the frontier over `replaced`" in summary
    # fine-tuned vs from scratch: its own verdict, budgets matched without a waiver
    scratch = json.loads((tmp_path / "pruning_finetune_vs_scratch/tabular/bench_report.json"
                          ).read_text())
    assert scratch["complete"] is True and scratch["budgets"]["matched"] is True
    assert all(c["matched"] and not c["waived"] for c in scratch["budgets"]["checks"])
