"""Family-wise false positives of the leaderboard: 20 null ideas benched against one shared
baseline. Per simulated board, every seed draws one baseline result and one result per idea
from the same distribution (a seed effect shared by all arms plus independent run noise), so no
idea differs from the baseline; the board's decision (benchkit.verdict.leaderboard.board_p_values
and verdict: sign-flip p per idea, Holm over the board) is a false positive when any idea gets
helps or harms. Reports that rate, and the unadjusted one (any idea's own p < alpha), with
Clopper-Pearson 95% intervals, per seed count and noise shape.

    PYTHONPATH=. python benchmarks/stats/leaderboard_fwer.py [--reps 2000] [--seed 11] [--smoke]

Writes benchmarks/results/leaderboard_fwer.json and the table in benchmarks/README.md (not with
--smoke).
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
from scipy import stats as sps

from benchkit.verdict import leaderboard

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"  # every benchmark's recorded numbers
NOISE = {
    "normal": lambda r, size: r.normal(0.0, 1.0, size),
    "lognormal (skewed)": lambda r, size: r.lognormal(0.0, 1.0, size),
}


def simulate(n_ideas: int, n_seeds: int, noise: str, reps: int, seed: int,
             alpha: float = 0.05) -> dict:
    """Counts of boards with any adjusted / any unadjusted false positive."""
    rng = np.random.default_rng(seed)
    adjusted = unadjusted = 0
    for _ in range(reps):
        runs = rng.normal(0.0, 1.0, (n_seeds, 1)) + NOISE[noise](rng, (n_seeds, n_ideas + 1))
        improvements = [(runs[:, 0] - runs[:, k]).tolist() for k in range(1, n_ideas + 1)]
        ps, adj = leaderboard.board_p_values(improvements)
        means = [float(np.mean(d)) for d in improvements]
        adjusted += any(leaderboard.verdict(a, m, alpha) != "inconclusive"
                        for a, m in zip(adj, means))
        unadjusted += any(p < alpha for p in ps)
    return {"n_ideas": n_ideas, "n_seeds": n_seeds, "noise": noise, "reps": reps, "seed": seed,
            "alpha": alpha, "fwer_holm": adjusted / reps, "ci_holm": interval(adjusted, reps),
            "fwer_unadjusted": unadjusted / reps, "ci_unadjusted": interval(unadjusted, reps)}


def interval(k: int, n: int) -> list[float]:
    """Clopper-Pearson 95% interval of a binomial proportion k/n."""
    lo = 0.0 if k == 0 else float(sps.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(sps.beta.ppf(0.975, k + 1, n - k))
    return [lo, hi]


def table(rows: list[dict]) -> str:
    out = ["| ideas | seeds | run noise | boards | FWER, Holm (leaderboard) | 95% CI | "
           "FWER, unadjusted | 95% CI |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['n_ideas']} | {r['n_seeds']} | {r['noise']} | {r['reps']} | "
                   f"{r['fwer_holm']:.4f} | [{r['ci_holm'][0]:.4f}, {r['ci_holm'][1]:.4f}] | "
                   f"{r['fwer_unadjusted']:.3f} | [{r['ci_unadjusted'][0]:.3f}, "
                   f"{r['ci_unadjusted'][1]:.3f}] |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--smoke", action="store_true", help="20 boards per row; writes nothing")
    args = ap.parse_args()
    reps = 20 if args.smoke else args.reps
    rows = [simulate(20, n, noise, reps, args.seed + i)
            for i, (n, noise) in enumerate((n, z) for n in (8, 10, 12) for z in NOISE)]
    text = table(rows)
    print(text)
    if args.smoke:
        return
    (RESULTS / "leaderboard_fwer.json").write_text(json.dumps(rows, indent=2) + "\n")
    readme = HERE.parent / "README.md"
    start = "<!-- leaderboard fwer table: written by benchmarks/stats/leaderboard_fwer.py -->"
    end = "<!-- end of leaderboard fwer table -->"
    body = readme.read_text()
    block = f"{start}\n{text}\n{end}"
    if start in body:
        body = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, body, flags=re.S)
    else:
        body += f"\n## Leaderboard family-wise error: `leaderboard_fwer.py`\n\n" \
                f"{__doc__.split(chr(10) + chr(10))[0]}\n\n{block}\n"
    readme.write_text(body)


if __name__ == "__main__":
    main()
