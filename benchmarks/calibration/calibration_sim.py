"""The simulation-only calibration studies (no training), run by
benchmarks/calibration/calibration.py.

``--sequential``: sequential_boundaries, the union-bound against the exact look boundaries.
``--statistics``: statistics, seeded simulations of the figures a report gives through
benchkit's own calls (signflip planning figures, the sign-flip interval, non-inferiority and
TOST at their margins, the spending rule). Import it with ``benchmarks/calibration/``
and ``benchmarks/stats/`` on ``sys.path`` (calibration.py puts them there).
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from benchkit.stats import paired
from benchkit.verdict import comparison, decision

import simstats
from simstats import rate


def sequential_boundaries(reps: int, alpha: float, effect: float, seed: int = 17) -> dict:
    """FWER and power of the two boundary kinds at looks (8, 16), on simulated paired
    differences (no training): per condition ``reps`` benches of 16 differences, seeded; a
    bench rejects when look 1 (8 seeds) has p below its level, or look 2 (16) does. Exact
    Clopper-Pearson 95% intervals."""
    from benchkit.stats import sequential

    looks = [8, 16]
    union = paired.look_levels(looks, looks[-1], alpha)
    draws = {"normal, H0": lambda r: r.normal(0.0, 1.0, 16),
             "t(3), H0": lambda r: r.standard_t(3, 16),
             f"normal, effect {effect:g} sd": lambda r: r.normal(effect, 1.0, 16)}
    out = {"looks": looks, "alpha": alpha, "reps": reps, "seed": seed,
           "union_levels": union, "conditions": {}}
    for k, (name, draw) in enumerate(draws.items()):
        rng = np.random.default_rng(seed + k)
        hits = {"union": 0, "exact": 0}
        final_levels, conditional = [], {"union": [], "exact": []}
        prefix = np.arange(2 ** 16) & (2 ** 8 - 1)  # row r's first 8 signs: row r mod 256
        for _ in range(reps):
            d = draw(rng)
            p1, p2 = paired.sign_flip_p_value(d[:8]), paired.sign_flip_p_value(d)
            exact = sequential.exact_levels(d, looks, alpha)
            final_levels.append(exact[1])
            hits["union"] += p1 < union[0] or p2 < union[1]
            hits["exact"] += p1 < exact[0] or p2 < exact[1]
            # the error given these magnitudes, over every sign vector: under H0 its mean over
            # benches is the FWER, with far less Monte Carlo error than the rejection count
            r1 = sequential._p_per_row(sequential._signs(8), np.abs(d[:8]))[prefix]
            r2 = sequential._p_per_row(sequential._signs(16), np.abs(d))
            for kind, lv in (("union", union), ("exact", exact)):
                conditional[kind].append(float(np.mean((r1 < lv[0]) | (r2 < lv[1]))))
        out["conditions"][name] = {
            kind: {"rejected": h, "rate": h / reps, "ci95": simstats.clopper_pearson(h, reps),
                   "null_error_given_magnitudes": {
                       "mean": float(np.mean(conditional[kind])),
                       "max": float(np.max(conditional[kind])),
                       "se": float(np.std(conditional[kind], ddof=1) / math.sqrt(reps))}}
            for kind, h in hits.items()}
        out["conditions"][name]["exact_final_level_median"] = float(np.median(final_levels))
        print(name, {k: out["conditions"][name][k]["rate"] for k in hits}, flush=True)
    return out


# ---------------------------------------------------------------- --statistics (no training)

STAT_SALT = 0x57A75   # the --statistics streams: default_rng([STAT_SALT, condition])
STAT_REPS = 3000      # simulated benches per condition (the floor is 2,000)
HARM_SHARE = 6        # the harm-within-margin curve runs reps // 6 benches per seed count:
#                       each is the report's full path (compare, then decision.claim_verdict),
#                       0.1-0.3 s per bench at 16-64 seeds on the shared 2-core machine
GATE_PASSES = ("helps", "non-inferior", "equivalent")  # the non-inferior gate (aggregate)


def _bound(level: float, n: int) -> float:
    """level + 2 binomial SE of a rate of n benches: the issue's tolerance for a rate <= level."""
    return level + 2 * math.sqrt(level * (1 - level) / n)


def _sim_power(d: np.ndarray, level: float) -> dict:
    """Share of the benches (rows of d) whose two-sided sign-flip p (benchkit's test, batched:
    simstats.sign_flip_p_values) is below level."""
    return rate(int(np.sum(np.asarray(simstats.sign_flip_p_values(d)) < level)), len(d))


def planning_statistics(reps: int, look1: float) -> dict:
    """signflip.power / mde_power80 / seeds_needed against independent simulations of the test
    they describe, and seeds_needed against the smallest n at which p < level is possible."""
    from benchkit.stats import signflip

    def normal(n: int, es: float, cond: int) -> np.ndarray:
        return np.random.default_rng([STAT_SALT, cond]).standard_normal((reps, n)) + es

    out = {"benchkit_sim_reps": signflip.SIM_REPS,
           "power": [], "seeds_needed": [], "mde_power80": [], "reachable": []}
    for c, (n, es, level) in enumerate([(6, 1.0, 0.05), (8, 0.5, 0.05), (8, 1.0, 0.05),
                                        (12, 1.0, 0.01), (10, 0.8, look1), (16, 0.6, 0.05)]):
        sim = _sim_power(normal(n, es, 100 + c), level)
        claimed = signflip.power(n, es, level)
        se = math.sqrt(claimed * (1 - claimed) / signflip.SIM_REPS
                       + sim["rate"] * (1 - sim["rate"]) / reps)
        row = {"n": n, "effect_sd": es, "level": level, "benchkit": claimed,
               "simulated": sim, "combined_se": se,
               "within_2se": abs(claimed - sim["rate"]) <= 2 * se}
        if n <= 11:  # power() tests exactly here: its own draws, its own p against float64
            own = np.random.default_rng([0, n]).standard_normal((signflip.SIM_REPS, n)) + es
            p_power = signflip._p_values(own, signflip._flips(n), True)
            p64 = np.asarray(simstats.sign_flip_p_values(own))
            row["own_draws"] = {"benches": len(own),
                                "p_differs_from_float64": int(np.sum(np.abs(p_power - p64) > 1e-9)),
                                "p_smaller": int(np.sum(p_power < p64 - 1e-9)),
                                "power_float64": float(np.mean(p64 < level))}
        out["power"].append(row)
    for c, (es, level) in enumerate([(1.0, 0.05), (0.8, 0.05), (1.2, 0.01), (1.0, look1)]):
        n = signflip.seeds_needed(es, 1.0, level)
        at = _sim_power(normal(n, es, 200 + 2 * c), level)
        below = (_sim_power(normal(n - 1, es, 201 + 2 * c), level)
                 if n - 1 >= signflip.min_pairs(level) else None)
        out["seeds_needed"].append({"effect_sd": es, "level": level, "seeds_needed": n,
                                    "min_pairs": signflip.min_pairs(level),
                                    "power_at": at, "power_one_fewer": below})
    for c, (n, level) in enumerate([(6, 0.05), (8, 0.05), (12, 0.01), (10, look1)]):
        mde = signflip.mde_power80(n, 1.0, level)
        out["mde_power80"].append({"n": n, "level": level, "mde_sd": mde,
                                   "t_mde_sd": paired.power_mde(n, 1.0, level),
                                   "power_at_mde": _sim_power(normal(n, mde, 300 + c), level)})
    for level in (0.1, 0.05, look1, 0.025, 0.01, look1 / 2, 0.005):
        first = signflip.min_pairs(level)
        needed = {es: signflip.seeds_needed(es, 1.0, level) for es in (0.5, 1.0, 2.0, 5.0, 20.0)}
        out["reachable"].append({
            "level": level, "min_pairs": first, "min_p_at_min_pairs": paired.min_p_value(first),
            "min_p_one_fewer": paired.min_p_value(first - 1),
            "seeds_needed_by_effect_sd": {f"{k:g}": v for k, v in needed.items()},
            "below_min_pairs": sum(v is not None and v < first for v in needed.values())})
    return out


def interval_statistics(reps: int, look1: float) -> dict:
    """signflip.sign_flip_ci as a report computes it (on the per-seed differences, at the
    level): does it exclude 0 exactly when compare's p is below the level, and how often does
    it cover the true shift (symmetric differences: the test of d - shift is exact)?"""
    from benchkit.stats import signflip

    rng = np.random.default_rng([STAT_SALT, 400])
    levels = (0.05, 0.01, look1)
    disagree = {f"{lv:g}": 0 for lv in levels}
    for b in range(reps):
        n = int(rng.integers(2, 21))
        kind = b % 3
        d = (rng.normal(rng.choice([0.0, 0.7, 1.5]), 1.0, n) if kind == 0 else
             rng.integers(-3, 4, n).astype(float) if kind == 1 else  # ties and zeros
             rng.standard_t(2, n))
        p = paired.sign_flip_p_value(d)
        for lv in levels:
            lo, hi = signflip.sign_flip_ci(d, lv)
            excludes = (lo is not None and lo > 0) or (hi is not None and hi < 0)
            disagree[f"{lv:g}"] += excludes != (p < lv)
    out = {"agreement": {"benches": reps, "n_range": [2, 20],
                         "mix": "thirds: normal(0, 0.7 or 1.5; sd 1), integers -3..3, t(2)",
                         "disagreements": disagree}, "coverage": []}
    for c, (n, dist) in enumerate([(6, "normal"), (8, "normal"), (12, "normal"), (8, "t(3)")]):
        r = np.random.default_rng([STAT_SALT, 410 + c])
        shift = 1.0
        d = (r.standard_normal((reps, n)) if dist == "normal" else r.standard_t(3, (reps, n))) \
            + shift
        cover = t_disagree = sf_disagree = 0
        for row in d:
            lo, hi = signflip.sign_flip_ci(row, 0.05)
            cover += (lo is None or lo <= shift) and (hi is None or shift <= hi)
            significant = paired.compare(np.zeros(n), row, direction="lower").p_value < 0.05
            t_lo, t_hi = paired.ci95(row)  # the paired t interval, which no report holds
            t_disagree += (t_lo > 0 or t_hi < 0) != significant
            sf_disagree += ((lo is not None and lo > 0) or (hi is not None and hi < 0)) \
                != significant
        unit = paired.min_p_value(n)
        out["coverage"].append({
            "n": n, "differences": f"{dist} + {shift:g}", "level": 0.05,
            "covered": rate(cover, reps),
            "exact_coverage": 1 - (math.ceil(0.05 / unit) - 1) * unit,
            "t_ci95_disagrees_with_p": rate(t_disagree, reps),
            "signflip_ci_disagrees_with_p": rate(sf_disagree, reps)})
    return out


def _margin_bench(rng, n: int, *, base_sd: float, scale: float, noise: float,
                  direction: str) -> tuple[np.ndarray, np.ndarray]:
    """One bench whose idea is ``scale`` times the baseline in the metric's worse direction
    (1.05: 5% worse), with heteroscedastic per-seed noise noise*|baseline|."""
    b = rng.normal(1.0, base_sd, n)
    factor = scale if direction == "lower" else 2 - scale
    return b, factor * b + rng.normal(0.0, noise * np.abs(b), n)


def noninferiority_at_margin(reps: int, look1: float) -> list[dict]:
    """stats.noninferiority (as decision.claim_verdict calls it) on ideas exactly at the 5% margin
    in expectation, both directions, small and large baseline spread, at alpha and at look 1's
    level: the false 'non-inferior' rate, to stay <= level + 2 SE."""
    out, c = [], 500
    for direction in ("lower", "higher"):
        for base_sd in (0.05, 0.4):
            for level in ((0.05, look1) if base_sd == 0.4 and direction == "lower" else (0.05,)):
                c += 1
                rng, k = np.random.default_rng([STAT_SALT, c]), 0
                for _ in range(reps):
                    b, i = _margin_bench(rng, 8, base_sd=base_sd, scale=1.05, noise=0.03,
                                         direction=direction)
                    k += paired.noninferiority(b, i, direction=direction, margin=0.05,
                                              alpha=level).non_inferior
                out.append({"direction": direction, "n": 8, "base_sd": base_sd, "noise": 0.03,
                            "idea": "5% worse (the margin)", "margin": 0.05, "level": level,
                            "non_inferior": rate(k, reps), "bound": _bound(level, reps)})
    return out


def harm_within_margin(reps: int, seeds=(8, 16, 32, 64)) -> list[dict]:
    """An idea 1% worse with a 5% margin through the report's path (stats.compare with
    margin=, then decision.claim_verdict): how often it passes the non-inferior gate."""

    out = []
    for c, n in enumerate(seeds):
        rng, gate, ni, harms = np.random.default_rng([STAT_SALT, 520 + c]), 0, 0, 0
        for _ in range(reps):
            b, i = _margin_bench(rng, n, base_sd=0.1, scale=1.01, noise=0.1, direction="lower")
            compared = comparison.of_figures(paired.compare(b, i, direction="lower",
                                                            margin=0.05))
            v, comp = decision.claim_verdict(
                dataclasses.replace(compared, p_adjusted=compared.p_value, family_size=1), b, i,
                direction="lower", level=0.05, family_size=1, claim_type="non-inferiority")
            gate += v in GATE_PASSES
            ni += comp.noninferiority is not None and comp.noninferiority.non_inferior
            harms += comp.p_value < 0.05
        out.append({"n": n, "idea": "1% worse", "margin": 0.05, "base_sd": 0.1, "noise": 0.1,
                    "level": 0.05, "gate_passed": rate(gate, reps),
                    "non_inferior": rate(ni, reps),
                    "also_significantly_worse": rate(harms, reps)})
    return out


def tost_at_margin(reps: int) -> list[dict]:
    """equivalence.tost on ideas exactly 5% worse / 5% better in expectation (relative margin,
    heteroscedastic): the false 'equivalent' rate, to stay <= alpha + 2 SE."""
    from benchkit.stats import equivalence

    out, c = [], 540
    for n in (8, 12):
        for scale in (1.05, 0.95):
            c += 1
            rng, k = np.random.default_rng([STAT_SALT, c]), 0
            for _ in range(reps):
                b, i = _margin_bench(rng, n, base_sd=0.3, scale=scale, noise=0.03,
                                     direction="lower")
                k += equivalence.tost(b, i, direction="lower", margin=0.05,
                                      level=0.05).equivalent
            side = "worse" if scale > 1 else "better"
            out.append({"n": n, "idea": f"{abs(scale - 1):.0%} {side}",
                        "margin": 0.05, "base_sd": 0.3, "noise": 0.03, "level": 0.05,
                        "equivalent": rate(k, reps), "bound": _bound(0.05, reps)})
    return out


def margin_statistics(reps: int, look1: float) -> dict:
    """Non-inferiority and TOST exactly at their margins, and the within-margin harm's gate."""
    return {"noninferiority_at_margin": noninferiority_at_margin(reps, look1),
            "harm_within_margin": harm_within_margin(max(10, reps // HARM_SHARE)),
            "tost_at_margin": tost_at_margin(reps)}


def spending_statistics(reps: int, alpha: float = 0.05) -> dict:
    """The sequential spending rule at looks (8, 16) of 16 against testing both looks at the
    full alpha, under H0 (normal and t(3) differences): family-wise error."""
    looks = [8, 16]
    levels = paired.look_levels(looks, looks[-1], alpha)
    out = {"looks": looks, "alpha": alpha, "levels": levels, "conditions": {}}
    for c, dist in enumerate(("normal", "t(3)")):
        r = np.random.default_rng([STAT_SALT, 600 + c])
        d = r.standard_normal((reps, 16)) if dist == "normal" else r.standard_t(3, (reps, 16))
        p1 = simstats.sign_flip_p_values(d[:, :looks[0]])
        p2 = simstats.sign_flip_p_values(d)
        hits = {name: sum(simstats.sequential_decision([a, b], lv)["rejected_at"] is not None
                          for a, b in zip(p1, p2))
                for name, lv in (("spending", levels), ("naive", [alpha, alpha]))}
        out["conditions"][dist] = {k: rate(v, reps) for k, v in hits.items()}
    return out


def statistics(reps: int) -> dict:
    look1 = paired.look_levels([8, 16], 16, 0.05)[0]
    out = {"sim_reps": reps, "salt": STAT_SALT, "look1_level": look1}
    for name, fn in (("planning", planning_statistics), ("interval", interval_statistics),
                     ("margins", margin_statistics),
                     ("spending", lambda r, _: spending_statistics(r))):
        t0 = time.perf_counter()
        out[name] = fn(reps, look1)
        out[name]["seconds"] = time.perf_counter() - t0
        print(f"{name}: {out[name]['seconds']:.0f} s", flush=True)
    return out
