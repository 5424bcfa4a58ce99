"""Tests of benchkit.stats.paired' planning figures: mde, ci95, effect size and power_mde,
against scipy's t and noncentral t distributions and by simulation."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from benchkit.stats import paired


# ---------------------------------------------------------------- mde, ci, effect size

def test_mde_ci_effect_size_by_hand():
    d = [1.0, 2.0, 3.0, 4.0]
    sd = np.std(d, ddof=1)
    half = sps.t.ppf(0.975, 3) * sd / 2
    assert paired.mde(d) == pytest.approx(half, rel=1e-12)
    assert paired.mde(d, alpha=0.1) == pytest.approx(sps.t.ppf(0.95, 3) * sd / 2, rel=1e-12)
    assert paired.ci95(d) == pytest.approx([2.5 - half, 2.5 + half], rel=1e-12)
    lo, hi = sps.t.interval(0.95, 3, loc=2.5, scale=sd / 2)
    assert paired.ci95(d) == pytest.approx([lo, hi], rel=1e-12)
    assert paired.effect_size(d) == pytest.approx(2.5 / sd, rel=1e-12)
    assert paired.effect_size([2.0, 2.0, 2.0]) is None
    with pytest.raises(ValueError, match="at least 2"):
        paired.mde([1.0])


# ---------------------------------------------------------------- power

def t_power_by_hand(delta, sd, n, alpha=0.05):
    df, ncp = n - 1, delta * math.sqrt(n) / sd
    c = sps.t.ppf(1 - alpha / 2, df)
    return sps.nct.sf(c, df, ncp) + sps.nct.cdf(-c, df, ncp)


def test_power_mde_gives_requested_power():
    for n, sd, power in [(8, 1.0, 0.8), (8, 0.3, 0.8), (3, 2.0, 0.9), (30, 1.0, 0.5)]:
        delta = paired.power_mde(n, sd, power=power)
        assert t_power_by_hand(delta, sd, n) == pytest.approx(power, abs=1e-8)
    assert paired.power_mde(8, 0.0) == 0.0


def test_power_mde_by_simulation():
    n, sd = 8, 1.0
    delta = paired.power_mde(n, sd)
    x = np.random.default_rng(0).normal(delta, sd, (20000, n))
    rejected = np.mean(sps.ttest_1samp(x, 0.0, axis=1).pvalue < 0.05)
    assert abs(rejected - 0.8) < 0.015


def test_power_monotonicity():
    by_n = [paired.power_mde(n, 1.0) for n in range(2, 40)]
    assert all(a > b for a, b in zip(by_n, by_n[1:]))
    assert paired.power_mde(8, 2.0) == pytest.approx(2 * paired.power_mde(8, 1.0), rel=1e-9)
    assert paired.power_mde(8, 1.0, power=0.9) > paired.power_mde(8, 1.0, power=0.8)
    # a true effect at the significance threshold is detected only ~half the time
    assert paired.power_mde(8, 1.0) > sps.t.ppf(0.975, 7) / math.sqrt(8)
