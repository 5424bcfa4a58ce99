"""The fine-tune vs scratch module's lr grid brackets both arms' validation optimum at every
point of its frontier, as benchmarks/ideas/pruning.py measured it on seeds disjoint from the
bench's (issue 54: the fine-tune had selected its grid's lowest lr), and the frontier measured
is the one the pruning modules bench."""
from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def assigned(path: Path, name: str):
    """The literal value a module assigns to ``name`` at its top level."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets
                                             if isinstance(t, ast.Name)] == [name]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} assigns no {name}")


def test_the_fine_tune_grid_brackets_both_arms_measured_optima():
    measured = json.loads((ROOT / "benchmarks/results/ideas/pruning.json").read_text())
    grid = sorted(assigned(ROOT / "ideas/test_pruning_finetune_vs_scratch.py", "GRID"))
    assert measured["budgets"] == assigned(ROOT / "ideas/mlp_surgery.py", "MACS")
    assert len(measured["seeds"]) >= 3 and all(int(s) >= 100 for s in measured["seeds"])
    for budget, arms in measured["finetune_optima"].items():
        for arm, found in arms.items():
            assert found["inside"], (budget, arm)  # the sweep itself was wide enough
            assert grid[0] < found["optimum_lr"] < grid[-1], (budget, arm, found, grid)
