"""The hand-written mutants of issue 49 item 8 that the fast tier did not kill: each is applied
to a copy of the checkout (tracked files, as they are in the working tree), the fast tier's
tests of its module run against it, and a mutant is killed when one of them fails. Mutants of
code that is gone (selection's ``_constant`` with the effective-grid rule, planning's
``figures()`` branch over groups with the bootstrap of sweeps) are listed as such: the string
they change is checked to be absent.

    PYTHONPATH=. nice -n 15 python benchmarks/mutation/hand_mutants.py

writes benchmarks/results/mutation/hand_mutants.json.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "mutation" / "hand_mutants.json"
FAST = "not slow and not e2e"
# (name, file, original text, mutated text, the tests run against it)
MUTANTS = [
    ("convergence trains_the_epochs: all -> any over the runs' curves",
     "benchkit/verdict/convergence.py",
     "return bool(ends) and all(e == epochs for e in ends)",
     "return bool(ends) and any(e == epochs for e in ends)",
     ["tests/training/test_budget_check.py"]),
    ("grids: a diverged stored run's validation read as None instead of nan",
     "benchkit/verdict/grids.py",
     'return float("nan") if res.diverged else res.val',
     "return None if res.diverged else res.val",
     ["tests/verdict/test_rule_survivors.py"]),
    ("decision: planning figures' significant read from the unadjusted p",
     "benchkit/verdict/decision.py",
     "significant = p_adjusted is not None and p_adjusted < level",
     "significant = comp.p_value < level",
     ["tests/verdict/test_report_levels.py"]),
    ("decision: levels() given family_size, not family_size x the comparisons with controls",
     "benchkit/verdict/decision.py",
     "family_size * len(comps), sweeps=sw",
     "family_size, sweeps=sw",
     ["tests/verdict/test_report_levels.py"]),
    ("planning: seeds_needed given when already significant",
     "benchkit/stats/planning.py",
     "if not significant and abs(delta) > loss",
     "if abs(delta) > loss",
     ["tests/stats/test_planning_branches.py"]),
]
GONE = [
    ("selection _constant: validation only, or equal_nan=False", "benchkit/stats/selection.py",
     "def _constant("),
    ("planning figures(): any -> all over groups", "benchkit/stats/planning.py", "groups"),
    # (planning.py no longer reads groups at all: its figures are of the binding pair's
    # differences whatever the groups)
]


def tracked_copy(dest: Path) -> None:
    """The checkout's tracked files as they are in the working tree, without the results."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in files:
        if name and not name.startswith(("reports/", "benchmarks/results/")):
            src = ROOT / name
            if src.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)


def run_mutant(file: str, old: str, new: str, tests: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        tracked_copy(tree)
        text = (tree / file).read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{file}: the mutated text is there {text.count(old)} times")
        (tree / file).write_text(text.replace(old, new))
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                               "-p", "no:randomly", "-n", "0", "-q", "-m", FAST, *tests],
                              cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True)
        failed = [line.split(" ", 1)[1].split(" - ")[0] for line in done.stdout.splitlines()
                  if line.startswith("FAILED ")]
        return {"killed": done.returncode == 1 and bool(failed), "failed": failed,
                "tests": tests, "rc": done.returncode,
                "last_line": done.stdout.strip().splitlines()[-1] if done.stdout else ""}


def main() -> None:
    rows = []
    for name, file, old, new, tests in MUTANTS:
        row = {"mutant": name, "file": file, **run_mutant(file, old, new, tests)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    for name, file, text in GONE:
        source = (ROOT / file).read_text()
        gone = text not in source
        rows.append({"mutant": name, "file": file, "killed": None, "code_gone": gone})
    OUT.write_text(json.dumps({"rows": rows,
                               "killed": sum(r["killed"] is True for r in rows),
                               "applicable": sum(r["killed"] is not None for r in rows)},
                              indent=1) + "\n")


if __name__ == "__main__":
    main()
