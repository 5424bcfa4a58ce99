"""What a bench's controls and margin cost its aggregation (issue 52's "done when": a bench with
2 controls and a margin aggregates in <= 1.5x the time of the same bench without controls).

    PYTHONPATH=$PWD python benchmarks/pipeline/controls_cost.py [--write] [--against DIR]

Times ``pipeline.idea_reports`` (build, adjust, decide; no floors, no files) on hand-made runs
(tests/builders.py: 3 configs x 8 seeds per arm), CPU seconds, the median (and the least) of 41
after one warm-up, the benches interleaved: the plain bench and the same bench with two
controls and a margin (the target's ratio), and, to say where the difference goes, the plain
bench with the margin alone, with one control and the margin, and with the two controls and no
margin (the margin's share: the plain bench has none). Prints them and the ratio;
``--write`` saves them to benchmarks/results/controls_cost.json. ``--against DIR`` measures
another tree's benchkit (``git archive main benchkit | tar -x -C DIR``: before a change) in the
same run: ``--rounds`` rounds, each a process of this tree and one of DIR's, interleaved, and
records both trees' figures, each the median over the rounds.
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
sys.path.insert(0, str(ROOT / "tests"))

import builders as b  # noqa: E402

from benchkit.verdict import pipeline  # noqa: E402

GRID = [{"lr": lr} for lr in (0.001, 0.003, 0.01)]
REPS = 41


def runs(arms: list[str], seeds: int = 8) -> list:
    """Every arm's runs over the grid, values apart by arm, config and seed."""
    out = []
    for a, arm in enumerate(arms):
        for k, cfg in enumerate(GRID):
            for s in range(seeds):
                v = 1.0 + 0.1 * s + 0.2 * k + 0.05 * a + 0.03 * ((s * 31 + k * 7 + a) % 5 - 2)
                out.append(b.make_run(arm, cfg, s, v, v + 0.01 * (s % 3)))
    return out


def cpu_seconds(cases: dict) -> dict[str, list[float]]:
    """Each case's CPU seconds per aggregation, the cases interleaved (a load change hits
    both alike)."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for spec, rows in cases.values():
        pipeline.idea_reports(spec, rows, [], alpha=0.05)
    for _ in range(REPS):
        for name, (spec, rows) in cases.items():
            start = time.process_time()
            pipeline.idea_reports(spec, rows, [], alpha=0.05)
            times[name].append(time.process_time() - start)
    return times


def measured() -> dict:
    """This process's figures (its benchkit's)."""
    arms = ["baseline", "idea", "control:a", "control:b"]
    times = cpu_seconds({
        "plain": (b.make_spec(GRID, 8), runs(arms[:2])),
        "controls": (b.make_spec(GRID, 8, margin=0.05, arms=arms), runs(arms)),
        "margin": (b.make_spec(GRID, 8, margin=0.05), runs(arms[:2])),
        "one_control": (b.make_spec(GRID, 8, margin=0.05, arms=arms[:3]), runs(arms[:3])),
        "two_controls": (b.make_spec(GRID, 8, arms=arms), runs(arms))})
    plain, controls = (statistics.median(times[k]) for k in ("plain", "controls"))
    least = {k: min(v) for k, v in times.items()}
    return {"plain_cpu_s": round(plain, 5), "two_controls_and_margin_cpu_s": round(controls, 5),
            "ratio": round(controls / plain, 2),
            "ratio_of_least": round(least["controls"] / least["plain"], 2), "reps": REPS,
            "target_ratio": 1.5,
            "margin_only_cpu_s": round(statistics.median(times["margin"]), 5),
            "one_control_and_margin_cpu_s": round(statistics.median(times["one_control"]), 5),
            "two_controls_no_margin_cpu_s": round(statistics.median(times["two_controls"]), 5),
            "ratio_to_margin_only": round(controls / statistics.median(times["margin"]), 2)}


def interleaved(against: Path, rounds: int) -> dict:
    """Both trees' figures, each the median over ``rounds`` processes, the trees' processes
    interleaved (a change of the machine's load hits both alike)."""
    out: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(rounds):
        for name, tree in (("before", against), ("after", ROOT)):
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, __file__], env=env, capture_output=True,
                                  text=True, check=True)
            out[name].append(json.loads(done.stdout))
    return {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            | {"rounds": rounds} for name, rs in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="save the results JSON")
    parser.add_argument("--against", type=Path, help="another tree's benchkit, measured too")
    parser.add_argument("--rounds", type=int, default=5, help="processes per tree (--against)")
    args = parser.parse_args()
    result = measured() if args.against is None else interleaved(args.against, args.rounds)
    print(json.dumps(result, indent=1))
    if args.write:
        (ROOT / "benchmarks" / "results" / "controls_cost.json").write_text(
            json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
