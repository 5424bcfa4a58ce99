"""The budget check's sequential three-way decision (benchkit.verdict.convergence, issues 41
and 49): its error rates on simulated per-seed gains, before (one-sided t bounds on the mean,
the rule of issue 41) and after (every seed and the t bound on the same side: a sign test on
the median, issue 49), and its cost on tabular benches.

``regimes``: at a true gain on the threshold (each rule's estimand: the mean before, the median
after), the shares of checks that say "still improving" (a false alarm) and "trained out" (a
miss), for per-seed gains that are normal, lognormal-skewed (shape s 0.5 and 1, either tail),
normal with one seed in ten shifted by 5% (outliers: either way, up only, down only), and
normal but measured at the config
that validation selected among 3 equal ones over 8 seeds (the selected run's luck is not the
longer run's); for two arms checked at once, the share of benches where either errs; and for
two benches that reuse one baseline, how often the second repeats the first's false alarm
(before: both check seeds 0-2; after: each its own draw, ``convergence.check_order``).
``rates``: normal gains at true means MUS and sds SIGMAS, both rules: still improving, trained
out, undetermined, and the mean number of check runs.

``cost``: the tabular A/A report it was made on
(benchmarks/results/tracks/aa_tabular_1000_rows.json): its stored check runs replayed through
the rule at its grid's looks, and 2,000 benches whose per-seed gains are drawn with
replacement from each arm's stored gains (as many as its seeds);
the check's epochs as a share of the grid's (2 arms x configs x seeds x epochs). ``worst``:
every checked arm to the last look, for the bench sizes in BENCHES, under this rule and under
the fixed looks (3, 5) of issue 41's first version.

    PYTHONPATH=. nice -n 5 python benchmarks/calibration/budget_check.py
writes benchmarks/results/budget_check.json. Deterministic (seeded).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats as sps
from scipy.optimize import brentq

from benchkit.spec.idea import cfg_id
from benchkit.stats import sequential
from benchkit.verdict import convergence
from benchkit.spec.run_record import NO_RESULT, RunRecord

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "budget_check.json"
# the tabular A/A report the calibration was made on (16 seeds, 1,000 test rows, each seed's
# budget check stored), kept when issue 53 re-ran the A/A at 64 seeds and 10,000 test rows
AA = ROOT / "benchmarks" / "results" / "tracks" / "aa_tabular_1000_rows.json"
MUS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.04)
SIGMAS = (0.005, 0.023, 0.05, 0.128)  # 2.3%-12.8%: the audit's per-seed sds
REGIME_SIGMAS = (0.005, 0.023, 0.05)
THRESHOLD = convergence.STILL_IMPROVING
LEVEL = convergence.CHECK_LEVEL
FIXED_LOOKS = (3, 5)  # the looks before the cut to what the grid affords
LOOKS = ((3,), (3, 5))  # a default 3 x 8 bench; the 3 x 16 A/A bench
# (configs, seeds) of tabular benches: the A/A bench (3 lrs x 16 seeds), a default bench (3 x
# 8), and the A/A bench this rule was first measured on (4 x 8)
BENCHES = ((3, 16), (3, 8), (4, 8))
OUTLIER = (0.1, 0.05)   # one seed in ten shifted by +-5%
EQUAL = (3, 8)          # configs, seeds of the selection the checked config won


def decide(gains, looks, allowance: float = 0.0) -> sequential.ThreeWay:
    """The rule as the report applies it (after; ``convergence.check_decision``)."""
    return sequential.three_way(list(gains), THRESHOLD, looks=looks, level=LEVEL,
                                below=THRESHOLD - allowance)


def decide_before(g: np.ndarray, looks: tuple[int, ...]) -> np.ndarray:
    """Issue 41's rule, vectorised over rows: one-sided t bounds of the mean at LEVEL at each
    look, the first that puts it above or below the threshold decides; "above", "below" or
    "undetermined" per row."""
    out = np.full(len(g), "undetermined", dtype=object)
    open_ = np.ones(len(g), dtype=bool)
    for k in looks:
        x = g[:, :k]
        half = sps.t.ppf(1 - LEVEL, k - 1) * x.std(axis=1, ddof=1) / math.sqrt(k)
        mean = x.mean(axis=1)
        above, below = open_ & (mean - half > THRESHOLD), open_ & (mean + half < THRESHOLD)
        out[above], out[below] = "above", "below"
        open_ &= ~(above | below)
    return out


def share(k: int, n: int) -> dict:
    return {"count": int(k), "n": n, "rate": k / n, "se": math.sqrt(max(k * (n - k), 1) / n ** 3)}


def lognormal(s: float, center: str, tail: int) -> Callable:
    """Standardised (sd 1) lognormal noise of shape ``s``, centred on its mean or median, its
    long tail to the right (``tail`` 1) or left (-1)."""
    sd = math.sqrt((math.exp(s * s) - 1) * math.exp(s * s))
    m = math.exp(s * s / 2) if center == "mean" else 1.0

    def draw(rng, shape):
        return tail * (np.exp(s * rng.standard_normal(shape)) - m) / sd
    return draw


def gains(regime: str, center: str, rng, reps: int, n: int, mu: float,
          sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """reps x n per-seed gains of ``regime`` whose mean (``center`` "mean") or median is mu,
    and each rep's allowance for the selection's luck (``convergence.check_allowance``; 0
    where no config was selected)."""
    none = np.zeros(reps)
    if regime == "normal":
        return mu + sigma * rng.standard_normal((reps, n)), none
    if regime.startswith("lognormal"):
        s, tail = float(regime.split()[1].split("=")[1]), 1 if "right" in regime else -1
        return mu + sigma * lognormal(s, center, tail)(rng, (reps, n)), none
    if regime.startswith("outliers"):   # one seed in ten OUTLIER[1] off the others
        sign = rng.choice((-1.0, 1.0), (reps, n)) if "+-" in regime else (
            1.0 if "+" in regime else -1.0)
        shift = sign * (rng.random((reps, n)) < OUTLIER[0])
        bulk = mu - outlier_offset(regime, center, sigma)
        return bulk + sigma * rng.standard_normal((reps, n)) + OUTLIER[1] * shift, none
    if regime == "selected":   # validation picked the luckiest of equal configs at E epochs
        configs, seeds = EQUAL
        tau = sigma / math.sqrt(2)   # each run's luck, independent: a gain's sd is sigma
        level = 1.0 + 0.02 * rng.standard_normal((reps, 1, seeds))   # a seed's, all its runs'
        val = level + tau * rng.standard_normal((reps, configs, seeds))   # higher is better
        chosen = val[np.arange(reps), val.mean(axis=2).argmax(axis=1)]
        longer = level[:, 0] + tau * rng.standard_normal((reps, seeds))
        g = mu + (longer - chosen) / np.abs(chosen)
        allowance = np.array([convergence.check_allowance(v.tolist()) for v in val])
        return g[:, :n], allowance
    raise ValueError(regime)


REGIMES = ("normal", "lognormal s=0.5 right", "lognormal s=0.5 left", "lognormal s=1 right",
           "lognormal s=1 left", "outliers +-5%", "outliers +5%", "outliers -5%", "selected")


def outlier_offset(regime: str, center: str, sigma: float) -> float:
    """Where the mixture's mean or median (``center``) sits above the normal bulk's centre:
    one seed in ten moved by +-5% (symmetric: 0), +5% or -5%."""
    share, size = OUTLIER
    if "+-" in regime:
        return 0.0
    off = size if "+" in regime else -size
    if center == "mean":
        return share * off
    return float(brentq(lambda m: (1 - share) * sps.norm.cdf(m / sigma)
                        + share * sps.norm.cdf((m - off) / sigma) - 0.5, -size, size))


def at_threshold(regime: str, sigma: float, looks: tuple[int, ...], reps: int) -> dict:
    """Both rules' errors at a true gain on the threshold, per arm and for two arms checked
    together (either errs): before at its estimand (the mean), after at its (the median), and
    the rule before at the median too (the same draws as after)."""
    n = looks[-1]
    row: dict = {"regime": regime, "sigma": sigma, "looks": list(looks)}
    for rule, center in (("before", "mean"), ("before_median", "median"),
                         ("after", "median")):
        rng = np.random.default_rng([49, REGIMES.index(regime), int(sigma * 1e4), n,
                                     center == "median"])   # the same draws for both rules
        g, allowance = gains(regime, center, rng, 2 * reps, n, THRESHOLD, sigma)
        if rule != "after":
            d = decide_before(g, looks)
        else:
            d = np.array([decide(x, looks, a).decision for x, a in zip(g, allowance)],
                         dtype=object)
            row["mean_allowance"] = float(allowance.mean())
        a, b = d[:reps], d[reps:]
        row[rule] = {"false_alarm": share(np.count_nonzero(a == "above"), reps),
                     "miss": share(np.count_nonzero(a == "below"), reps),
                     "family_false_alarm": share(np.count_nonzero(
                         (a == "above") | (b == "above")), reps),
                     "family_miss": share(np.count_nonzero((a == "below") | (b == "below")),
                                          reps)}
    return row


def selected_power(reps: int) -> list[dict]:
    """What the allowance costs: the config chosen among equal ones, a true gain under the
    threshold (trained out is right), the share called trained out by both rules."""
    rows = []
    for looks in LOOKS:
        for sigma in (0.005, 0.023):
            for mu in (0.0, -0.01):
                rng = np.random.default_rng([49, 9, int(sigma * 1e4), looks[-1], int(-mu * 1e4)])
                g, allowance = gains("selected", "median", rng, reps, looks[-1], mu, sigma)
                after = [decide(x, looks, a).decision for x, a in zip(g, allowance)]
                rows.append({"looks": list(looks), "sigma": sigma, "mu": mu,
                             "before": share(np.count_nonzero(decide_before(g, looks)
                                                              == "below"), reps),
                             "after": share(after.count("below"), reps)})
    return rows


def shared_baseline(reps: int, sigma: float = 0.023, seeds: int = 8) -> dict:
    """Two benches reusing one baseline (its runs and check runs), its gains normal on the
    threshold: how often bench B's check repeats bench A's false alarm, before (both check
    seeds 0-2) and after (each bench's own draw, from names idea<2i> and idea<2i+1>)."""
    rng = np.random.default_rng([49, 7])
    g = THRESHOLD + sigma * rng.standard_normal((reps, seeds))
    out = {}
    for rule in ("before", "after"):
        a_alarm = b_alarm = both = 0
        for i, row in enumerate(g):
            if rule == "before":
                x = y = row[:3]
            else:
                x = row[convergence.check_order(range(seeds), f"idea{2 * i}", "tabular")[:3]]
                y = row[convergence.check_order(range(seeds), f"idea{2 * i + 1}",
                                                "tabular")[:3]]
            da, db = (decide(v, (3,)).decision == "above" for v in (x, y))
            a_alarm, b_alarm, both = a_alarm + da, b_alarm + db, both + (da and db)
        out[rule] = {"a": share(a_alarm, reps), "b": share(b_alarm, reps),
                     "both": share(both, reps),
                     "repeat": both / a_alarm if a_alarm else None}
    return {"sigma": sigma, "seeds": seeds, "reps": reps, **out}


def rates(reps: int, looks: tuple[int, ...]) -> list[dict]:
    """Normal gains at each true mean and sd: both rules' three shares and check runs."""
    rows = []
    for sigma in SIGMAS:
        for mu in MUS:
            rng = np.random.default_rng([41, 1, int(mu * 1e4), int(sigma * 1e4)])
            g = rng.normal(mu, sigma, (reps, looks[-1]))
            after = [decide(row, looks) for row in g]
            before = decide_before(g, looks)
            row = {"mu": mu, "sigma": sigma,
                   "mean_seeds": float(np.mean([x.called for x in after]))}
            for rule, d in (("before", before),
                            ("after", np.array([x.decision for x in after], dtype=object))):
                row[rule] = {"still_improving": share(np.count_nonzero(d == "above"), reps),
                             "trained_out": share(np.count_nonzero(d == "below"), reps),
                             "undetermined": share(np.count_nonzero(d == "undetermined"), reps)}
            rows.append(row)
    return rows


def worst(configs: int, seeds: int, epochs: int = 120) -> dict:
    """Every checked arm (2) to its last look: the check's share of the grid's epochs."""
    grid_epochs = 2 * configs * seeds * epochs
    check_epochs = math.ceil(convergence.BUDGET_FACTOR * epochs)
    looks = convergence.check_looks(configs, seeds)
    return {"configs": configs, "seeds": seeds, "looks": list(looks),
            "share": 2 * min(looks[-1], seeds) * check_epochs / grid_epochs,
            "fixed_looks_share": 2 * min(FIXED_LOOKS[-1], seeds) * check_epochs / grid_epochs}


def stored_gains(report: dict) -> dict:
    seeds = report["protocol"]["seeds"]
    runs = {(r["arm"], cfg_id(r["cfg"]), r["seed"]): RunRecord.from_json(r).result or NO_RESULT
            for r in report["runs"]}
    direction = "lower" if report["metric_direction"].startswith("lower") else "higher"
    out = {}
    for arm, a in report["convergence"]["arms"].items():
        check = a["budget_check"]
        selected = [runs[(arm, cfg_id(a["cfg"]), s)] for s in seeds]
        longer = [runs.get((arm, cfg_id(check["cfg"]), s)) for s in seeds]
        out[arm] = convergence.check_gains(selected, longer, direction, check["epochs"])
    return out


def cost(reps: int) -> dict:
    report = json.loads(AA.read_text())
    p = report["protocol"]
    seeds = len(p["seeds"])
    grid_epochs = 2 * len(p["grid"]) * seeds * p["epochs"]
    check_epochs = math.ceil(convergence.BUDGET_FACTOR * p["epochs"])
    looks = convergence.check_looks(len(p["grid"]), seeds)
    gains = stored_gains(report)
    replay = {arm: decide(g, looks) for arm, g in gains.items()}
    rng = np.random.default_rng([41, 3])
    runs = []
    for _ in range(reps):
        runs.append(sum(decide(rng.choice(g, size=seeds), looks).called
                        for g in gains.values()))
    replay_runs = sum(d.called for d in replay.values())
    return {"track": report["track"], "grid": len(p["grid"]), "seeds": seeds,
            "epochs": p["epochs"], "looks": list(looks), "check_epochs": check_epochs,
            "grid_epochs": grid_epochs,
            "stored_gains": {arm: [round(x, 6) for x in g] for arm, g in gains.items()},
            "replay": {arm: {"decision": d.decision, "seeds": d.called, "mean": d.mean,
                             "lower": d.lower, "upper": d.upper} for arm, d in replay.items()},
            "replay_runs": replay_runs,
            "replay_share": replay_runs * check_epochs / grid_epochs,
            "old_rule_runs": 2 * seeds,
            "old_rule_share": 2 * seeds * check_epochs / grid_epochs,
            "bootstrap_reps": reps, "bootstrap_mean_runs": statistics.fmean(runs),
            "bootstrap_mean_share": statistics.fmean(runs) * check_epochs / grid_epochs,
            "bootstrap_max_share": max(runs) * check_epochs / grid_epochs,
            "bootstrap_share_over_20pct": sum(r * check_epochs / grid_epochs > 0.2
                                              for r in runs) / reps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--shared-reps", type=int, default=20000)
    ap.add_argument("--cost-reps", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    out = {"threshold": THRESHOLD, "level": LEVEL, "sign_seeds": sequential.SIGN_SEEDS,
           "check_cost": convergence.CHECK_COST, "reps": args.reps,
           "outlier": list(OUTLIER), "equal": list(EQUAL),
           "regimes": [at_threshold(r, sigma, looks, args.reps) for looks in LOOKS
                       for r in REGIMES for sigma in REGIME_SIGMAS],
           "shared_baseline": shared_baseline(args.shared_reps),
           "selected_power": selected_power(args.reps),
           "rates": [{"looks": list(looks), "rows": rates(args.reps, looks)} for looks in LOOKS],
           "cost": cost(args.cost_reps), "worst": [worst(c, n) for c, n in BENCHES]}
    out["seconds"] = round(time.time() - t0, 1)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    c = out["cost"]
    print(f"cost: replay {c['replay_share']:.3f}, bootstrap mean "
          f"{c['bootstrap_mean_share']:.3f}, max {c['bootstrap_max_share']:.3f}")
    for r in out["regimes"]:
        print(r["looks"], f"{r['regime']:24s}", r["sigma"], *(
            f"{r[k][e]['rate']:.3f}" for k in ("before", "after")
            for e in ("false_alarm", "miss", "family_false_alarm", "family_miss")))
    sb = out["shared_baseline"]
    print("shared baseline repeat:", sb["before"]["repeat"], sb["after"]["repeat"])
    print(f"{out['seconds']} s")


if __name__ == "__main__":
    main()
