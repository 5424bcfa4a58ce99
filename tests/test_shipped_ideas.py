"""The shipped ideas as users run them: their claims alone, and a quick smoke bench in which
every shipped idea collects, trains and reports. The full smoke bench (every run at 2 seeds and
1 epoch, 108 runs) is ``scripts/bench --bench-seeds 2 --bench-epochs 1``, the README's."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sessions import child_environment

# benches of several idea modules per session: longer than the suite's 120 s default
pytestmark = [pytest.mark.timeout(600), pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[1]
# whole modules: their 90 runs at 1 epoch cost seconds, and only complete reports carry the
# frontier's comparisons, the controls and the budget checks
WHOLE = {"task_visible_pruning": "ideas/test_task_visible_pruning.py",
         "pruning_finetune_vs_scratch": "ideas/test_pruning_finetune_vs_scratch.py"}
# one seed of one config of the idea arm of a GRU idea (seconds a run) and of the CNN on
# MNIST-1D (its data costs seconds a seed in each process); their reports are incomplete and say
# which runs. Their other arms are the tracks' default models (or the GRU at another width),
# benched end to end by tests/tracks/test_tracks_real.py and tests/training/test_determinism.py
ONE_EACH = {("moment_preserving_rank2", "dynamics"): [
                "ideas/test_moment_preserving_compression.py::test_idea[dynamics-lr=0.04-seed0]"],
            ("mnist1d_cnn", "mnist1d"): [
                "ideas/test_mnist1d_cnn.py::test_idea[mnist1d-lr=0.01-seed0]"]}


def pytest_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=child_environment())


def test_claims_run_alone_and_pass():
    result = pytest_run("ideas", "-m", "mechanism", "-q")
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and "deselected" in result.stdout
    assert "no report written" in result.stdout


def report(folder: Path, name: str, track: str) -> dict:
    return json.loads((folder / name / track / "bench_report.json").read_text())


@pytest.mark.plots
def test_quick_smoke_bench_of_the_ideas(tmp_path):
    """Each shipped idea collects, trains and writes its report and plots, through two xdist
    workers."""
    picked = [node for nodes in ONE_EACH.values() for node in nodes]
    result = pytest_run(*WHOLE.values(), *picked, "--bench-seeds", "2", "--bench-epochs", "1",
                        "-n", "2", f"--bench-report-dir={tmp_path}", "-q")
    assert result.returncode == 0, result.stdout[-3000:]
    # the controller's progress under -n 2 (results through xdist), plain lines without a tty
    assert "benchkit: 1/92 runs trained | " in result.stdout
    assert "benchkit: 92/92 runs trained | " in result.stdout
    for name in WHOLE:
        whole = report(tmp_path, name, "tabular")
        assert whole["complete"] is True
        assert whole["n_seeds"] == 2 and whole["protocol"]["epochs"] == 1
        assert any("only 2 seeds" in w for w in whole["warnings"])
    # pruning is decided right after replacement against magnitude pruning and three controls
    # (random ranking among them), on a frontier over the multiply-adds kept; its claims feed
    # the report
    pruning = report(tmp_path, "task_visible_pruning", "tabular")
    assert pruning["mechanism_ok"] in (0, 1)
    assert pruning["math_verification"]["passed"] is True
    assert pruning["mechanism_signature"]["signatures"], "the idea records its signature"
    assert set(pruning["controls"]) == {"magnitude_shortcut", "magnitude_lstsq",
                                        "random_ranking"}
    assert pruning["frontier"]["axis"] == "macs"
    assert pruning["frontier"]["values"] == [0.95, 0.9, 0.8]
    # each arm's multiply-adds within the point's budget, checked between the arms (not exempt)
    for value, point in zip(pruning["frontier"]["values"], pruning["frontier"]["points"]):
        ratios = {arm: figures["multiply_adds_ratio"]
                  for arm, figures in point["budgets"]["arms"].items()}
        assert set(ratios) == {"baseline", "idea", "control:magnitude_shortcut",
                               "control:magnitude_lstsq", "control:random_ranking"}
        assert all(value - 0.05 < r <= value for r in ratios.values()), (value, ratios)
    checked = [c for c in pruning["budgets"]["checks"] if c["budget"] == "multiply_adds_ratio"]
    assert len(checked) == 3 * 4 and all(c["matched"] and not c["axis"] for c in checked)
    summary = (tmp_path / "task_visible_pruning/tabular/summary.md").read_text()
    assert "![paired seeds](paired.png)" in summary
    assert (tmp_path / "task_visible_pruning/tabular/paired.png").read_bytes()[:4] == b"\x89PNG"
    assert "exempt on the frontier over `macs`" in summary
    assert "left out: on the frontier over `macs`" in summary  # no floor compared with it
    # fine-tuned vs from scratch: its own verdict, budgets matched without a waiver
    scratch = report(tmp_path, "pruning_finetune_vs_scratch", "tabular")
    assert scratch["budgets"]["matched"] is True
    assert all(c["matched"] and not c["waived"] for c in scratch["budgets"]["checks"])
    assert {c["budget"] for c in scratch["budgets"]["checks"]} >= {"multiply_adds_ratio"}
    # the others: every arm trained its one run, and the report names the runs not run
    for (name, track), nodes in ONE_EACH.items():
        partial = report(tmp_path, name, track)
        assert partial["complete"] is False and partial["protocol"]["epochs"] == 1
        trained = partial["runs"]
        assert len({r["arm"] for r in trained}) == len(trained) == len(nodes)
        assert all(r["seed"] == 0 for r in trained)
        assert all(r["outcome"] == "passed" and r["test"] is not None for r in trained)
        assert f"INCOMPLETE {name} {track}: " in result.stdout
    moments = report(tmp_path, "moment_preserving_rank2", "dynamics")["runs"]
    assert any(r["signatures"] for r in moments if r["arm"] == "idea"), "its signature recorded"
