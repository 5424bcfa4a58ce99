"""Calibration of the selection-aware test (benchkit.stats.selection) when the selection varies.

Two measurements, both A/A (the same method in both arms, so every helps/harms is a false
positive) on a three-config grid whose configs' true means differ slightly:

``--sim``: simulated sweeps at 6/8/12/16 seeds in two regimes, the rate at which the test that
holds the selected configs fixed (the plain sign-flip test of the selected configs' test values,
what benchkit decided by before) and the selection-aware test reject at alpha, and the power of
both when the idea is better by 0.5 and 1 sd on every config.

``--plugin``: 200 A/A idea modules through the plugin (pytest, ``run.record`` values, no
training), read back from their reports: the share whose practical verdict is helps or harms,
and the share whose ``p_fixed_configs`` is below alpha.

    PYTHONPATH=. nice -n 10 python benchmarks/calibration/selection_calibration.py --sim --plugin
writes benchmarks/results/selection_calibration.json. Deterministic (seeded).
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

from benchkit.stats import paired
from benchkit.stats import selection

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "selection_calibration.json"
MEANS = (0.0, 0.01, 0.02)        # the configs' true means (lower is better)
REGIMES = {
    # a small validation split: validation noisier than test, configs near the optimum
    "selection noise": {"seed_sd": 0.1, "run_sd": 0.0, "val_sd": 0.05, "test_sd": 0.01},
    # run-to-run variation dominates: a run good on validation is good on test
    "run-to-run": {"seed_sd": 0.1, "run_sd": 0.05, "val_sd": 0.01, "test_sd": 0.01},
}


def sweep_draw(rng, n: int, regime: dict, effect: float = 0.0):
    """One bench: per arm (n seeds x 3 configs) validation and test values. The seed's effect
    is shared by both arms (pairing); ``effect`` (in units of the sd of a fixed config's
    per-seed test difference) makes the idea better on every config, validation and test."""
    k = len(MEANS)
    seed = rng.normal(0, regime["seed_sd"], (n, 1)) + np.asarray(MEANS)
    unit = math.sqrt(2 * (regime["run_sd"] ** 2 + regime["test_sd"] ** 2))
    out = []
    for arm in (0, 1):
        run = rng.normal(0, regime["run_sd"], (n, k)) - (effect * unit if arm else 0.0)
        out += [1 + seed + run + rng.normal(0, regime["val_sd"], (n, k)),
                1 + seed + run + rng.normal(0, regime["test_sd"], (n, k))]
    return out  # base_val, base_test, idea_val, idea_test


def fixed_diffs(bv, bt, iv, it):
    """(d, kb, ki): the per-seed differences at the configs each arm selects on all seeds'
    validation (stats.select_config), those configs held fixed, and the configs."""
    kb = paired.select_config([bv[:, c] for c in range(bv.shape[1])], "lower")
    ki = paired.select_config([iv[:, c] for c in range(iv.shape[1])], "lower")
    return (it[:, ki] - bt[:, kb]).tolist(), kb, ki


def rate(k: int, n: int) -> dict:
    se = math.sqrt(max(k / n * (1 - k / n), 1e-12) / n)
    return {"count": k, "n": n, "rate": k / n, "se": se}


def simulate(reps: int, alpha: float) -> list[dict]:
    rows = []
    for name, regime in REGIMES.items():
        for n in (6, 8, 12, 16):
            for effect in (0.0, 0.5, 1.0):
                rng = np.random.default_rng([17, n, int(effect * 10), len(name)])
                fixed = aware = 0
                t0 = time.time()
                for _ in range(reps):
                    draw = sweep_draw(rng, n, regime, effect)
                    sw = selection.sweeps(*draw)
                    d, _, _ = fixed_diffs(*draw)
                    right = effect == 0 or float(np.mean(d)) < 0  # with an effect: helps only
                    fixed += right and paired.sign_flip_p_value(d) < alpha
                    aware += right and selection.p_value(sw, "lower") < alpha
                row = {"regime": name, "seeds": n, "effect_sd": effect,
                       "fixed_configs": rate(int(fixed), reps),
                       "selection_aware": rate(int(aware), reps),
                       "seconds": round(time.time() - t0, 1)}
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def margin_level(reps: int, level: float, margin: float = 0.05, seeds: int = 8) -> list[dict]:
    """Non-inferiority exactly at the margin, selection varying: the idea's whole sweep is
    (1 + margin) times the baseline-like one (lower is better), so 'non-inferior' is a false
    positive; selection.noninferiority at ``level``."""
    rows = []
    for name, regime in REGIMES.items():
        rng = np.random.default_rng([23, seeds, len(name)])
        hits = 0
        for _ in range(reps):
            bv, bt, iv, it = sweep_draw(rng, seeds, regime)
            sw = selection.sweeps(bv, bt, iv * (1 + margin), it * (1 + margin))
            hits += selection.noninferiority(sw, "lower", margin, level).non_inferior
        row = {"regime": name, "seeds": seeds, "margin": margin, "level": level,
               "false_non_inferior": rate(int(hits), reps)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


MODULE = '''\
import numpy as np
import pytest

pytestmark = pytest.mark.bench(name="aa{b}", track="tabular", grid={{"lr": {lrs!r}}},
                               seeds={seeds}, extend=0)
LRS, MEANS = {lrs!r}, {means!r}


def value(arm, seed, lr):
    """A/A: both arms draw from one distribution; the seed's effect is shared."""
    k = LRS.index(lr)
    u = np.random.default_rng([{b}, seed]).normal(0, {seed_sd})
    e = np.random.default_rng([{b}, seed, k, arm]).normal(0, 1, 2)
    return (float(1 + u + MEANS[k] + {val_sd} * e[0]),
            float(1 + u + MEANS[k] + {test_sd} * e[1]))


@pytest.mark.arm("baseline")
def test_baseline(run):
    val, test = value(0, run.seed, run.cfg["lr"])
    run.record(val=val, test=test)


@pytest.mark.arm("idea")
def test_idea(run):
    val, test = value(1, run.seed, run.cfg["lr"])
    run.record(val=val, test=test)
'''


def through_plugin(benches: int, seeds: int, alpha: float, code: Path) -> dict:
    """Write ``benches`` A/A idea modules (the selection-noise regime), run them in one pytest
    session with ``code`` (a benchkit checkout) first on the path, read the reports."""
    regime = REGIMES["selection noise"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for b in range(benches):
            (root / f"test_aa{b}.py").write_text(MODULE.format(
                b=b, seeds=seeds, lrs=[0.001, 0.003, 0.01], means=list(MEANS), **{
                    k: regime[k] for k in ("seed_sd", "val_sd", "test_sd")}))
        (root / "conftest.py").write_text("")
        noplots = root / "_noplots" / "matplotlib"  # plots change no verdict: skip them
        noplots.mkdir(parents=True)
        (noplots / "__init__.py").write_text("raise ImportError('no plots in calibration')\n")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), str(noplots.parent)])}
        t0 = time.time()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                               "-p", "no:cacheprovider", "--bench-gate=off", str(root)],
                              cwd=root, env=env, capture_output=True, text=True)
        seconds = time.time() - t0
        reports = [json.loads(p.read_text()) for p in sorted(root.glob(
            "reports/*/tabular/bench_report.json"))]
    if len(reports) != benches:
        raise SystemExit(f"{len(reports)} reports of {benches}:\n{done.stdout[-3000:]}")
    verdicts = [r["practical_verdict"] for r in reports]
    comps = [r["comparison"] for r in reports]
    fixed = [c.get("p_fixed_configs", c["p_value"]) for c in comps]
    return {"benches": benches, "seeds": seeds, "alpha": alpha, "code": str(code),
            "helps_or_harms": rate(sum(v in ("helps", "harms") for v in verdicts), benches),
            "fixed_configs_p_below_alpha": rate(sum(p < alpha for p in fixed), benches),
            "selection_differs": sum(r["baseline"]["best_cfg"] != r["idea_config"]
                                     for r in reports),
            "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
            "seconds": round(seconds, 1)}


def real_training(benches: int, seeds: int, epochs: int, grid: list[dict], alpha: float) -> dict:
    """A/A with real training on the tabular track (calibration.py's runs: the idea is the
    baseline with another initialisation stream), each bench's selection redone: the rate of
    the fixed-config and the selection-aware test at alpha."""
    sys.path.insert(0, str(Path(__file__).parent))
    import torch

    import calibration as cal
    from benchkit import tracks

    torch.set_num_threads(1)
    track = tracks.get("tabular")
    fixed = aware = differs = 0
    t0 = time.time()
    for b in range(benches):
        block = cal.run_block(track, list(range(seeds * b, seeds * (b + 1))), grid, epochs)
        arrays = [np.asarray(block[arm][key], dtype=float).T
                  for arm in ("baseline", "idea") for key in ("val", "test")]
        sw = selection.sweeps(*arrays)
        d, kb, ki = fixed_diffs(*arrays)
        differs += kb != ki
        fixed += paired.sign_flip_p_value(d) < alpha
        aware += selection.p_value(sw, "lower") < alpha
    return {"benches": benches, "seeds": seeds, "epochs": epochs, "grid": grid,
            "alpha": alpha, "selection_differs": int(differs),
            "fixed_configs": rate(int(fixed), benches),
            "selection_aware": rate(int(aware), benches),
            "seconds": round(time.time() - t0, 1)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", action="store_true")
    ap.add_argument("--plugin", action="store_true")
    ap.add_argument("--reps", type=int, default=600)
    ap.add_argument("--benches", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--training", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lrs", type=float, nargs="+", default=[5e-4, 1e-3, 2e-3, 5e-3])
    ap.add_argument("--code", type=Path, default=ROOT, help="the benchkit checkout to run")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    result = json.loads(args.out.read_text()) if args.out.exists() else {}
    if args.sim:
        t0 = time.time()
        result["simulation"] = {"reps": args.reps, "alpha": args.alpha, "means": MEANS,
                                "regimes": REGIMES, "rows": simulate(args.reps, args.alpha),
                                "margin": margin_level(args.reps, args.alpha),
                                "seconds": round(time.time() - t0, 1)}
    if args.plugin:
        got = through_plugin(args.benches, args.seeds, args.alpha, args.code.resolve())
        print(json.dumps(got), flush=True)
        key = "plugin" if args.code.resolve() == ROOT else "plugin_other_code"
        result[key] = got
    if args.training:
        got = real_training(args.benches, args.seeds, args.epochs,
                            [{"lr": lr} for lr in args.lrs], args.alpha)
        print(json.dumps(got), flush=True)
        result["training"] = got
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
