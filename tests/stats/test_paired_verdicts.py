"""The verdict functions' rules (practical verdict, system verdict, mechanism_ok) as tables,
with p-values on, just below and just above the level, so that a flipped comparison or a swapped
direction fails a named test here."""
from __future__ import annotations

import itertools
import math

import pytest

from benchkit.verdict import decision
from benchkit.verdict import mechanism
from builders import ALPHA, PRACTICAL

BELOW = math.nextafter(ALPHA, 0.0)
ABOVE = math.nextafter(ALPHA, 1.0)


@pytest.mark.parametrize("p, delta, direction, expected", [
    (BELOW, -1.0, "lower", "helps"),
    (ALPHA, -1.0, "lower", "inconclusive"),     # p must be strictly below the level
    (ABOVE, -1.0, "lower", "inconclusive"),
    (BELOW, +1.0, "lower", "harms"),
    (ALPHA, +1.0, "lower", "inconclusive"),
    (BELOW, +1.0, "higher", "helps"),
    (BELOW, -1.0, "higher", "harms"),
    (ALPHA, +1.0, "higher", "inconclusive"),
    (0.0, 0.0, "lower", "inconclusive"),         # no difference is neither better nor worse
])
def test_practical_verdict_at_the_level(p, delta, direction, expected):
    assert decision.practical_verdict(p, delta, direction, ALPHA) == expected


@pytest.mark.parametrize("p, delta, non_inferior, expected", [
    (ABOVE, -1.0, True, "non-inferior"),
    (ABOVE, -1.0, False, "inconclusive"),
    (ABOVE, -1.0, None, "inconclusive"),
    (BELOW, -1.0, True, "helps"),               # significantly better beats non-inferior
])
def test_practical_verdict_non_inferior(p, delta, non_inferior, expected):
    assert decision.practical_verdict(p, delta, "lower", ALPHA,
                                      non_inferior=non_inferior) == expected


def system_expected(practical: str, mech: int | None) -> str:
    if practical == "helps" and mech == 1:
        return "worked"
    if practical == "harms" or (practical != "helps" and mech != 1):
        return "failed"
    return "partial"


@pytest.mark.parametrize("practical, mech", list(itertools.product(PRACTICAL, (1, 0, None))))
def test_system_verdict_table(practical, mech):
    assert decision.system_verdict(practical, mech) == system_expected(practical, mech)


def test_system_verdict_reference_reports():
    assert decision.system_verdict("harms", 0) == "failed"        # the pruning reference report
    assert decision.system_verdict("inconclusive", 1) == "partial"  # the compression one


@pytest.mark.parametrize("signatures, tests, expected", [
    ([], [], None),
    ([True], [], 1), ([], [True], 1), ([True], [True], 1),
    ([False], [True], 0), ([True], [False], 0), ([None], [], 0), ([True, False], [], 0),
])
def test_mechanism_ok_table(signatures, tests, expected):
    assert mechanism.evidence_ok(signatures, tests) == expected
