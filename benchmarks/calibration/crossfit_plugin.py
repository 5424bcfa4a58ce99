"""The arms-that-differ regimes (issue 49) through the plugin: per regime and seed count,
``--benches`` bench modules whose runs record the values crossfit_regimes.draw gives (no
training), run in one pytest session with this checkout first on the path; the verdicts are
read from the written reports. Level regimes (crossfit_regimes.NULLS, the declared estimand 0):
every helps or harms is false. Power regimes: an lr-insensitive idea better than the
comparator's best config by delta, and the audit's pair of arms whose best configs differ.
Also the planning figure's true power: at each bench's own mde_power80, the share of fresh
benches of the same regime (``--fresh`` simulated, same draws, compare stage) that find it,
the idea better by it (helps) and worse by it (harms). ``--kinds planning`` runs only the
first ``--planning-benches`` modules of a level row (the same modules: each is seeded by its
own number) and replaces only the row's planning figures, keeping its helps/harms counts
(planning figures enter no verdict); ``--only`` runs those of ``--regimes`` alone, each keeping
its place there (its seed).

    PYTHONPATH=. nice -n 15 python benchmarks/calibration/crossfit_plugin.py \
        [--benches 200] [--seeds 8 12] [--regimes ...]

writes benchmarks/results/crossfit_plugin.json (``--out``). Deterministic (seeded).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import crossfit_regimes as cr  # noqa: E402

ROOT = HERE.parents[1]
OUT = ROOT / "benchmarks" / "results" / "crossfit_plugin.json"
POWER = (("lr-blind", 0.02), ("different optimum", 0.02))

MODULE = '''\
import numpy as np
import pytest
import crossfit_regimes as cr

GRID = {grid!r}
pytestmark = pytest.mark.bench(name="cf{b}", track="cf_tabular", grid=GRID, seeds={seeds},
                               extend=0)
BV, BT, IV, IT = cr.draw({regime!r}, np.random.default_rng([49, {salt}, {b}]), {seeds},
                         {effect!r})


def _record(run, val, test):
    k = GRID.index(run.cfg)
    run.record(val=float(val[run.seed, k]), test=float(test[run.seed, k]))


@pytest.mark.arm("baseline")
def test_baseline(run):
    _record(run, BV, BT)


@pytest.mark.arm("idea")
def test_idea(run):
    _record(run, IV, IT)
'''


# the modules record values, train nothing: they run on tabular without its floors (reference
# models fitted on 10,000 test rows a seed, which enter no verdict and cost more than the bench)
CONFTEST = """\
import dataclasses

from benchkit import tracks

tracks.register(dataclasses.replace(tracks.get("tabular"), name="cf_tabular", make_floors=None))
"""


def grid_of(regime: str) -> list[dict]:
    if regime == "pair grid":  # (lr, wd) pairs: no two configs differ in one key
        return [{"lr": lr, "wd": wd} for lr, wd in
                ((1e-3, 0.0), (3e-3, 1e-4), (1e-2, 1e-3), (3e-2, 1e-2))]
    return [{"lr": lr} for lr in (1e-3, 3e-3, 1e-2)]


def rate(k: int, n: int) -> dict:
    return {"count": k, "n": n, "rate": k / n, "se": math.sqrt(max(k * (n - k), 1) / n ** 3)}


def run_benches(regime: str, seeds: int, effect: float, benches: int, salt: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for b in range(benches):
            (root / f"test_cf{b}.py").write_text(MODULE.format(
                b=b, seeds=seeds, grid=grid_of(regime), regime=regime, effect=effect, salt=salt))
        (root / "conftest.py").write_text(CONFTEST)
        noplots = root / "_noplots" / "matplotlib"  # plots change no verdict: skip them
        noplots.mkdir(parents=True)
        (noplots / "__init__.py").write_text("raise ImportError('no plots in calibration')\n")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE),
                                                            str(noplots.parent)])}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                               "-p", "no:cacheprovider", "--bench-gate=off", str(root)],
                              cwd=root, env=env, capture_output=True, text=True)
        reports = [json.loads(p.read_text()) for p in sorted(root.glob(
            "reports/*/cf_tabular/bench_report.json"))]
    if len(reports) != benches:
        raise SystemExit(f"{len(reports)} reports of {benches}:\n{done.stdout[-3000:]}")
    return reports


def true_power(regime: str, seeds: int, effect: float, mdes: list[float], fresh: int,
               salt: int, side: str = "helps") -> list[float]:
    """Per bench figure m: the share of ``fresh`` simulated benches of the regime with the
    idea better (``side`` helps) or worse (harms) by m on top of ``effect`` (every config)
    that the compare stage calls so."""
    from benchkit.stats import selection
    from benchkit.verdict import comparison

    sign = 1.0 if side == "helps" else -1.0
    out = []
    for j, m in enumerate(mdes):
        rng = np.random.default_rng([49, salt, 7, j] + ([] if side == "helps" else [2]))
        hits = 0
        for _ in range(fresh):
            bv, bt, iv, it = cr.draw(regime, rng, seeds, effect + sign * m)
            sw = selection.sweeps(bv, bt, iv, it)
            comp = comparison.compare_arms(bt[:, 0].tolist(), it[:, 0].tolist(),
                                           direction="lower", alpha=0.05, margin=None,
                                           test="mean", sweeps=sw)
            hits += comp.p_value < 0.05 and sign * comp.delta_mean < 0
        out.append(hits / fresh)
    return out


def planning_row(regime: str, n: int, effect: float, reports: list[dict], fresh: int,
                 salt: int) -> dict:
    """The planning figures' true power of the first benches' reports, both sides."""
    mdes = [r["comparison"]["mde_power80"] for r in reports]
    got = [m for m in mdes if m]
    helps = true_power(regime, n, effect, got, fresh, salt)
    harms = true_power(regime, n, effect, got, fresh, salt, "harms")
    return {"benches": len(helps), "fresh_per_bench": fresh,
            "mean_true_power": float(np.mean(helps)),
            "share_below_080": float(np.mean(np.asarray(helps) < 0.8)),
            "se": float(np.std(helps, ddof=1) / np.sqrt(len(helps))),
            "harms_mean_true_power": float(np.mean(harms)),
            "harms_share_below_080": float(np.mean(np.asarray(harms) < 0.8)),
            "harms_se": float(np.std(harms, ddof=1) / np.sqrt(len(harms))),
            "median_mde": float(np.median(got)),
            "no_figure": sum(m is None for m in mdes)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benches", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[8, 12])
    ap.add_argument("--regimes", nargs="+", default=list(cr.NULLS) + [r for r, _ in POWER])
    ap.add_argument("--fresh", type=int, default=100)
    ap.add_argument("--planning-benches", type=int, default=40)
    ap.add_argument("--kinds", nargs="+", default=["level", "power"],
                    choices=["level", "power", "planning"])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    old = json.loads(args.out.read_text()) if args.out.exists() else {"rows": []}
    rows = old["rows"]
    power = dict(POWER)
    for n in args.seeds:
        for i, regime in enumerate(args.regimes):
            if args.only and regime not in args.only:
                continue
            cases = [("level", 0.0)] if regime in cr.NULLS else []
            cases += [("power", power[regime])] if regime in power else []
            for kind, effect in cases:
                salt = 300 + i + (50 if kind == "power" else 0)
                if kind == "level" and "planning" in args.kinds:
                    t0 = time.time()
                    reports = run_benches(regime, n, effect, args.planning_benches, salt)
                    (row,) = [r for r in rows if (r["kind"], r["regime"], r["seeds"]) ==
                              (kind, regime, n)]
                    row["planning"] = {**planning_row(regime, n, effect, reports, args.fresh,
                                                      salt),
                                       "seconds": round(time.time() - t0, 1)}
                    print(json.dumps(row), flush=True)
                    args.out.write_text(json.dumps({**old, "rows": rows}, indent=1) + "\n")
                if kind not in args.kinds:
                    continue
                t0 = time.time()
                reports = run_benches(regime, n, effect, args.benches, salt)
                verdicts = [r["practical_verdict"] for r in reports]
                row = {"kind": kind, "regime": regime, "seeds": n, "estimand": -effect,
                       "benches": args.benches,
                       "helps": rate(verdicts.count("helps"), args.benches),
                       "harms": rate(verdicts.count("harms"), args.benches),
                       "seconds": round(time.time() - t0, 1)}
                if kind == "level" and args.planning_benches:
                    row["planning"] = planning_row(regime, n, effect,
                                                   reports[:args.planning_benches],
                                                   args.fresh, salt)
                rows = [r for r in rows if (r["kind"], r["regime"], r["seeds"]) !=
                        (kind, regime, n)] + [row]
                print(json.dumps(row), flush=True)
                args.out.write_text(json.dumps({**old, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
