"""What the sign-flip test's null is: symmetry of the paired differences about 0, not a zero
mean. Differences with mean exactly 0 but a skewed distribution are rejected more often than
alpha; symmetric ones (normal) are not. Prints the rejection rate at alpha = 0.05 with its
normal-approximation 95% interval, per seed count and distribution (seeded, about a minute).

    PYTHONPATH=. python benchmarks/stats/null_shape.py [--reps 4000]
"""
from __future__ import annotations

import argparse

import numpy as np

from benchkit.stats import paired

DISTRIBUTIONS = {
    "normal (symmetric)": lambda r, n: r.normal(0.0, 1.0, n),
    "exponential - 1 (skewed, mean 0)": lambda r, n: r.exponential(1.0, n) - 1.0,
    "lognormal(0, 1) - e^0.5 (skewed, mean 0)": lambda r, n: r.lognormal(0.0, 1.0, n) - np.exp(0.5),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000)
    args = ap.parse_args()
    print("| pairs | differences | rejected at 0.05 | 95% interval | benches |")
    print("|---|---|---|---|---|")
    for n in (6, 8, 12):
        for name, draw in DISTRIBUTIONS.items():
            rng = np.random.default_rng(17)
            hits = sum(paired.sign_flip_p_value(draw(rng, n)) < 0.05 for _ in range(args.reps))
            p = hits / args.reps
            half = 1.96 * (p * (1 - p) / args.reps) ** 0.5
            print(f"| {n} | {name} | {p:.3f} | [{p - half:.3f}, {p + half:.3f}] | {args.reps} |")


if __name__ == "__main__":
    main()
