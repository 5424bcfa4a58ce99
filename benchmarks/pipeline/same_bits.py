"""Whether a change of the selection-aware statistics keeps their floats to the bit: the figures
a comparison takes from :mod:`benchkit.stats.selection` (both sides' p of each statistic, the
binding test's values, the interval, the margin tests, non-inferiority with its bounds, TOST)
and :func:`benchkit.stats.paired.compare`, on random sweeps, computed by this tree's benchkit
and by another's (``--against DIR``: ``git archive main benchkit | tar -x -C DIR``).

    PYTHONPATH=$PWD python benchmarks/pipeline/same_bits.py --against DIR [--cases 540]

Cases are seeded: n 3..20 seeds (above 16 the tests draw their flips), 1..4 configs an arm,
ties (values rounded to a grid), both directions, three levels, margins relative to each seed
or to a reference, one group or one per config; and 2..5 comparators against one idea (a
report's controls, each at its own level, one at times without an eligible config), their
tests made together where this tree makes them so. Prints the count of cases and of
differing ones (the first few named); exit status 1 when any differs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _floats(value: object) -> object:
    """``value`` with every float as its hex (bits, NaN and signed zeros kept), for JSON."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_floats(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _floats(getattr(value, k)) for k in value.__dataclass_fields__}
    if hasattr(value, "tolist"):
        return _floats(value.tolist())
    return value


def figures(case: int) -> dict:
    """One random case's figures (this process's benchkit)."""
    import numpy as np

    from benchkit.stats import paired, selection

    rng = np.random.default_rng(case)
    n, k = int(rng.integers(3, 21)), int(rng.integers(1, 5))
    tables = [1.0 + rng.normal(0, 0.1, (n, k)) + rng.normal(0, 0.05, (1, k)) for _ in range(4)]
    if case % 3 == 0:   # ties: values on a coarse grid
        tables = [np.round(t, 1) for t in tables]
    tables[3] = tables[3] + rng.choice([-0.1, 0.0, 0.05])   # the idea's shift
    groups = [[j] for j in range(k)] if case % 5 == 0 and k > 1 else None
    reference = 1.0 if case % 4 == 0 else None
    direction = ("lower", "higher")[case % 2]
    level, margin = (0.05, 0.01, 0.2)[case % 3], float(rng.choice([0.0, 0.02, 0.1]))
    out: dict = {"case": case, "n": n, "k": k}
    sw = selection.sweeps(*tables, groups=groups, margin_reference=reference)
    try:
        for statistic in ("mean", "sign", "wilcoxon"):
            out[f"p_{statistic}"] = selection.p_value(sw, direction, statistic=statistic)
            pair = selection.binding(sw, direction, statistic)
            out[f"binding_{statistic}"] = [pair.base, pair.idea]
        out["interval"] = selection.interval(sw, direction, level)
        for side in ("worse", "better"):
            test = selection.margin_test(sw, direction, margin, side=side)
            out[f"margin_{side}"] = [test.p_value, test.scale, test.pair.base, test.pair.idea]
        out["noninferiority"] = selection.noninferiority(sw, direction, margin, level)
        out["tost"] = selection.tost(sw, direction, margin, level)
    except ValueError as exc:   # no test (an arm without an eligible config)
        out["refused"] = str(exc)
    base, idea = tables[1][:, 0], tables[3][:, 0]
    out["compare"] = paired.compare(base, idea, direction=direction, alpha=level, margin=margin)
    out["together"] = together(case, sw, direction, level, margin, rng)
    return _floats(out)  # type: ignore[return-value]


def together(case: int, sw, direction: str, level: float, margin: float, rng) -> list:
    """The figures of the case's comparator and of 1..3 more against its idea (a report's
    controls), each at its own level, made as a report's build and decision make them: where
    this tree's selection makes a report's comparisons' tests together (``sides``,
    ``intervals``, ``noninferiorities``: one pass), they are asked for that way first, so
    that each comparison's figures, read after, are the batched ones."""
    import numpy as np

    from benchkit.stats import selection

    first = selection.sweeps(sw.base_val, sw.base_test, sw.idea_val, sw.idea_test, sw.groups,
                             sw.margin_reference)   # nothing computed yet
    tables = [[t + rng.normal(0, 0.05, t.shape) for t in (sw.base_val, sw.base_test)]
              for _ in range(1 + case % 3)]
    if case % 7 == 0:   # a comparator with no eligible config: no test, for it alone
        tables.append([np.full_like(sw.base_val, np.nan), sw.base_test])
    fresh = [first, *(selection.against(first, v, t) for v, t in tables)]
    levels = [level * f for f in (1.0, 0.6, 0.3, 0.15, 0.1)[:len(fresh)]]
    if hasattr(selection, "sides"):
        selection.sides(fresh, direction)
        ok = [bool(selection.family(s, direction).helps and selection.family(s, direction).harms)
              for s in fresh]
        selection.intervals([(s, lv) for s, lv, k in zip(fresh, levels, ok) if k], direction)
        selection.noninferiorities([(s, margin, lv) for s, lv, k in zip(fresh, levels, ok)
                                    if k], direction)
    out = []
    for s, lv in zip(fresh, levels):
        try:
            out.append([selection.p_value(s, direction), selection.binding(s, direction).d,
                        selection.interval(s, direction, lv),
                        selection.noninferiority(s, direction, margin, lv)])
        except ValueError as exc:
            out.append(str(exc))
    return out


def tree_figures(tree: Path, cases: int) -> list:
    """Every case's figures by ``tree``'s benchkit (a process of its own)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--emit", str(cases)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another tree's benchkit")
    parser.add_argument("--cases", type=int, default=540)
    parser.add_argument("--emit", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit is not None:
        print(json.dumps([figures(c) for c in range(args.emit)]))
        return
    if args.against is None:
        parser.error("--against DIR is required: the tree to compare with")
    before, after = tree_figures(args.against, args.cases), tree_figures(ROOT, args.cases)
    differ = [a["case"] for a, b in zip(before, after) if a != b]
    print(f"{len(after)} cases, {len(differ)} differ"
          + (f": cases {differ[:10]}" if differ else " (every figure the same to the bit)"))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
