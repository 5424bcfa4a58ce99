"""boundary="exact": look levels calibrated on the exact joint sign-flip null of the looks.

The family-wise error is checked exactly, by enumerating every sign vector for given
magnitudes (conditional on the magnitudes the signs are the whole null), against an
independent p computed by benchkit.stats.paired.sign_flip_p_value."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchkit.verdict.plan import plan_of
from benchkit.stats import sequential, paired
from benchkit.spec import arguments
from benchkit.spec import SpecError
from builders import decided, GRID, make_spec

ALPHA = 0.05


def _fwer_by_enumeration(mags, looks, levels):
    """P(some look rejects) over all sign vectors, each look's p from stats."""
    hits = 0
    rows = list(itertools.product((1.0, -1.0), repeat=looks[-1]))
    for signs in rows:
        d = np.asarray(signs) * mags[:looks[-1]]
        hits += any(paired.sign_flip_p_value(d[:n]) < lvl for n, lvl in zip(looks, levels))
    return hits / len(rows)


@pytest.mark.parametrize("mags", [
    np.linspace(0.5, 2.0, 10),                      # distinct magnitudes
    np.array([1.0] * 10),                           # every magnitude tied
    np.array([0.1, 3.0, 0.2, 0.3, 1.0, 1.0, 2.0, 0.05, 5.0, 0.4]),  # one outlier
])
def test_the_exact_family_wise_error_is_at_most_alpha(mags):
    looks = [5, 10]
    fwer_at = {}
    for signs in [np.ones(10), np.where(np.arange(10) % 3, 1.0, -1.0)]:
        levels = sequential.exact_levels(signs * mags, looks, ALPHA)
        # the levels depend on the magnitudes only, not on the observed signs
        fwer_at[tuple(levels)] = _fwer_by_enumeration(mags, looks, levels)
    assert len(fwer_at) == 1
    (levels, fwer), = fwer_at.items()
    assert fwer <= ALPHA + 1e-12, (levels, fwer)
    union = paired.look_levels(looks, looks[-1], ALPHA)
    assert levels[0] == pytest.approx(union[0]) and levels[1] >= union[1]
    # the union-bound levels err less: the exact ones spend what the union bound wastes
    assert _fwer_by_enumeration(mags, looks, union) <= fwer


def test_at_8_and_16_seeds_the_final_level_is_above_the_union_level():
    d = np.random.default_rng(1).normal(0, 1, 16)
    union = paired.look_levels([8, 16], 16, ALPHA)
    exact = sequential.exact_levels(d, [8, 16], ALPHA)
    assert exact[0] == pytest.approx(union[0])
    assert union[1] < 0.019 < 0.03 < exact[1] <= ALPHA


def test_a_looks_level_depends_only_on_the_seeds_up_to_it():
    d = np.random.default_rng(2).normal(0, 1, 16)
    other = np.concatenate([d[:8], -3 * d[8:]])
    plan = [8, 16]
    assert sequential.look_level(d, plan, 1, ALPHA) == sequential.look_level(other, plan, 1,
                                                                              ALPHA)
    assert sequential.exact_levels(d[:8], [8], ALPHA, 16) == \
        sequential.exact_levels(d, plan, ALPHA)[:1]


def test_rows_p_matches_the_reported_p():
    d = np.random.default_rng(3).normal(0.3, 1, 12)
    signs = sequential._signs(12)
    p = sequential._p_per_row(signs, d)
    for r in (0, 5, 100, 4095):
        assert p[r] == paired.sign_flip_p_value(signs[r] * d)


def test_above_16_seeds_it_is_simulated_with_a_fixed_seed():
    d = np.random.default_rng(4).normal(0, 1, 20)
    a = sequential.exact_levels(d, [10, 20], ALPHA)
    assert a == sequential.exact_levels(d, [10, 20], ALPHA)   # deterministic
    assert paired.look_levels([10, 20], 20, ALPHA)[1] < a[1] <= ALPHA + 0.005


def test_levels_of_a_plan():
    d = list(np.random.default_rng(5).normal(0, 1, 16))
    union = paired.look_levels([8, 16], 16, ALPHA)
    level, margin = sequential.levels([8, 16], 2, "exact", d, ALPHA, 1)
    assert margin == union[1] < level
    assert sequential.levels([8, 16], 2, "exact", d, ALPHA, 2) == (union[1], union[1])  # Holm
    assert sequential.levels([8, 16], 2, "union", d, ALPHA, 1) == (union[1],) * 2
    assert sequential.levels([8, 16], None, "exact", d, ALPHA, 1) == (ALPHA, ALPHA)
    spec = make_spec(GRID[:1], 16, looks=(8, 16), boundary="exact")
    assert plan_of(spec, 16).sequential.boundary == "exact"
    assert "exact joint sign-flip null" in plan_of(spec, 16).sequential.rule


def test_boundary_is_validated():
    with pytest.raises(SpecError, match="boundary='pocock'; valid: 'union', 'exact'"):
        arguments.parse_boundary({"boundary": "pocock"}, "m.py", (8, 16))
    with pytest.raises(SpecError, match="needs two or more declared looks"):
        arguments.parse_boundary({"boundary": "exact"}, "m.py", (8,))
    assert arguments.parse_boundary({}, "m.py", ()) == "union"


@pytest.mark.slow
def test_the_report_decides_at_the_exact_level_when_declared():
    """16 seeds at look 2 of (8, 16), p = 0.0236: not significant at the union level 0.0190,
    helps at the exact level; margin tests stay at the union level."""
    from builders import paired_report

    diffs = [-0.2, 0.3, -0.2, -1.8, 0.4, -0.1, -1.0, 0.1, -0.1, -0.2, -0.5, 0.0, -1.2, -0.7,
             -1.0, 0.1]
    base = [2.0 + 0.1 * k for k in range(16)]
    idea = [b + d for b, d in zip(base, diffs)]
    verdicts = {}
    for boundary in ("union", "exact"):
        report = paired_report(base, idea, looks=(8, 16), margin=0.05)
        report["sequential"]["boundary"] = boundary
        report = decided(report, report["comparison"]["p_value"], 1)
        verdicts[boundary] = (report["practical_verdict"], report["comparison"]["level"],
                              report["comparison"]["noninferiority"]["p_value"])
    union = paired.look_levels([8, 16], 16, ALPHA)[1]
    assert paired.sign_flip_p_value(diffs) == pytest.approx(0.0236, abs=1e-4)
    assert verdicts["union"][:2] == ("non-inferior", union)   # not significant at 0.019
    assert verdicts["exact"][0] == "helps"
    assert verdicts["exact"][1] == sequential.exact_levels(
        [i - b for b, i in zip(base, idea)], [8, 16], ALPHA)[1] > 0.03
