"""Tests of benchkit.stats.paired' planning figures: mde, ci95, effect size and power_mde,
against scipy's t and noncentral t distributions and by simulation."""
from __future__ import annotations

import math
import sys

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


# ---------------------------------------------------------------- scipy.stats not imported

def _nct_sf_then(crit: float, df: int, nc: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.clip(sps.nct.sf(crit, df, nc), 0.0, 1.0))


@pytest.mark.parametrize("private", [True, False])
def test_planning_figures_without_scipy_stats(monkeypatch, private):
    """The t-test's power and the convergence check's t quantile are scipy.stats' floats
    (nct.sf, t.ppf), computed without importing scipy.stats (0.7-0.9 s of a session's
    finish): None in sys.modules makes ``from scipy import stats`` raise. Where nctdtr is NaN
    (a lower tail at ncp 11) the value is scipy.special's _nct_sf, or scipy.stats' own where
    a scipy lacks it (``private`` False). An infinite critical t (alpha below float
    resolution) has power 0, so power_mde says no effect reaches it."""
    from benchkit.stats import sequential
    cases = [(ncp, n, alpha) for n in (2, 3, 5, 8, 12, 30, 200)
             for alpha in (0.1, 0.05, 0.025, 0.05 / 3) for ncp in (0.0, 0.7, 2.9, -3.5, 11.0)]
    levels = [(level, df) for level in (0.2, 0.05, 0.0123) for df in (1, 4, 7, 29, 500)]
    want = [_nct_sf_then(paired.t_quantile(n - 1, 1 - a / 2), n - 1, c)
            + _nct_sf_then(paired.t_quantile(n - 1, 1 - a / 2), n - 1, -c) for c, n, a in cases]
    want_q = [float(sps.t.ppf(1 - level, df)) for level, df in levels]
    x = [1.0, 1.2, 1.1, 1.3, 1.25]
    want_lower = float(np.mean(x)) - float(sps.t.ppf(0.95, 4)) * float(np.std(x, ddof=1)) \
        / float(np.sqrt(5))
    paired.t_quantile.cache_clear()
    monkeypatch.setattr(paired, "NCT_SF_PRIVATE", private)
    if private:
        monkeypatch.setitem(sys.modules, "scipy.stats", None)
        monkeypatch.delattr("scipy.stats", raising=False)
    assert [paired.t_test_power(*case) for case in cases] == want
    assert [paired.t_quantile(df, 1 - level) for level, df in levels] == want_q
    assert sequential.three_way(x, 0.5, looks=(5,)).lower == want_lower
    assert paired.t_test_power(3.0, 4, 1e-300) == 0.0
    assert paired.power_mde(4, 1.0, 1e-300) == math.inf
