"""benchkit.report.fmt: every view writes numbers the same way; percentages never in e-notation."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from benchkit.report import fmt, plots


@pytest.mark.parametrize("x", [None, math.nan, math.inf, -math.inf])
def test_missing_and_non_finite_are_n_a(x):
    assert fmt.num(x) == fmt.signed(x) == fmt.pct(x) == "n/a"
    assert fmt.rel_pct(x, 2.0) == fmt.rel_pct(1.0, x) == "n/a"


def test_numbers_signs_and_percentages():
    assert fmt.num(0.123456) == "0.1235" and fmt.num(3, "d") == "3"
    assert fmt.signed(0.0) == "0" and fmt.signed(0.5) == "+0.5" and fmt.signed(-2) == "-2"
    assert fmt.pct(4690.2) == "4,690%" and fmt.pct(12.345) == "12.3%"
    assert fmt.pct(0.05) == "0.05%" and fmt.pct(1e-5) == "<0.01%" and fmt.pct(-1e-5) == "-<0.01%"
    assert fmt.rel_pct(-3.0, 200.0) == "1.5%" and fmt.rel_pct(1.0, 0.0) == "n/a"


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_a_percentage_is_never_in_scientific_notation(x):
    assert "e" not in fmt.pct(x).lower()


def test_mechanism_ok_is_a_word():
    assert [fmt.mechanism_word(v) for v in (None, 1, 0, True, False)] == [
        "null", "1", "0", "1", "0"]


def test_plots_use_a_log_axis_only_when_values_span_decades():
    assert plots._spans_decades([0.01, 0.5, 3.0])
    assert not plots._spans_decades([1.0, 2.0, 5.0])
    assert not plots._spans_decades([-1.0, 100.0])  # a log axis cannot show it
    assert not plots._spans_decades([None, math.nan])
