"""Margins on a declared scale (issue 41 item 5): ``margin_reference`` fixes before the bench
the value a relative margin is of, so each seed's shift is the same constant and the shifted
arms are exchangeable at the margin; the marker checks it and the report carries it."""
from __future__ import annotations

import numpy as np
import pytest

from benchkit.spec import SpecError
from benchkit.stats import pairtest, selection
from builders import ALPHA, GRID, TRACK, built, decided, make_run, make_spec, parse


def unequal_sweeps(n=8, seed=0, worse=0.0, reference=None):
    """Seed levels far apart (sd 0.4 around 1); the idea's whole sweep ``worse`` higher."""
    rng = np.random.default_rng(seed)
    level = rng.normal(1.0, 0.4, (n, 1)) + np.array([0.0, 0.01, 0.02])
    bv, bt = level + rng.normal(0, 0.03, (n, 3)), level + rng.normal(0, 0.01, (n, 3))
    iv, it = level + worse + rng.normal(0, 0.03, (n, 3)), level + worse + rng.normal(0, 0.01,
                                                                                     (n, 3))
    return selection.sweeps(bv, bt, iv, it, margin_reference=reference)


def test_a_declared_reference_shifts_every_seed_by_the_same_amount():
    sw = unequal_sweeps(reference=2.0)
    test = selection.margin_test(sw, "lower", 0.05)
    assert np.all(test.scale == 2.0)
    shifted = max(pairtest.one_sided_p(q, np.full(sw.n, -0.1), "less")
                  for q in selection.family(sw, "lower").helps)
    assert test.p_value == shifted
    ni = selection.noninferiority(sw, "lower", 0.05, 0.05)
    assert ni.margin_abs == pytest.approx(0.1)
    assert "relative to the declared reference 2" in ni.test
    per_seed = selection.noninferiority(unequal_sweeps(), "lower", 0.05, 0.05)
    assert "each seed's comparator value" in per_seed.test


def test_the_bound_inverts_the_test_with_a_reference():
    sw = unequal_sweeps(worse=0.01, reference=1.0)
    ni = selection.noninferiority(sw, "lower", 0.05, 0.05)
    m = ni.bound_rel
    assert selection.noninferiority(sw, "lower", m * 1.01, 0.05).non_inferior
    assert not selection.noninferiority(sw, "lower", m * 0.99, 0.05).non_inferior


def test_the_marker_takes_a_reference_only_with_a_margin():
    assert parse(margin=0.05, margin_reference=1.5).margin_reference == 1.5
    assert parse(margin=0.05).margin_reference is None
    for bad in ({"margin_reference": 1.0}, {"margin": 0.05, "margin_reference": 0},
                {"margin": 0.05, "margin_reference": "1"},
                {"margin": 0.05, "margin_reference": float("inf")}):
        with pytest.raises(SpecError, match="margin_reference=.* must be a number > 0"):
            parse(**bad)


def test_the_report_tests_the_margin_on_the_declared_scale():
    n = 8
    runs = [make_run(arm, cfg, s, v, v) for s in range(n) for k, cfg in enumerate(GRID[:2])
            for arm, v in (("baseline", 1.0 + s + 0.1 * k), ("idea", 1.0 + s + 0.1 * k + 0.03))]
    for reference, margin_abs in ((None, 0.05 * np.mean(1.0 + np.arange(n))), (0.5, 0.025)):
        spec = make_spec(GRID[:2], n, margin=0.05, margin_reference=reference)
        report = built(spec, TRACK, runs, [], alpha=ALPHA)
        report = decided(report, holm=True)
        assert report["protocol"]["margin_reference"] == reference
        ni = report["comparison"]["noninferiority"]
        assert ni["margin_abs"] == pytest.approx(margin_abs)
        # 0.03 worse on every seed: within 0.05 x each seed's level (>= 0.05), outside 0.025
        assert ni["non_inferior"] is (reference is None)
