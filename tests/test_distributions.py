"""benchkit.distributions: scipy.stats' values, remembered exactly between sessions."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from benchkit import distributions as dist

dfs = st.integers(min_value=1, max_value=200)
probs = st.floats(min_value=1e-6, max_value=1 - 1e-6)


@settings(max_examples=200, deadline=None)
@given(q=probs, df=dfs)
def test_t_ppf_is_scipy_stats_t_ppf(q, df):
    assert dist.t_ppf(q, df) == pytest.approx(scipy_stats.t.ppf(q, df), rel=1e-12, abs=1e-14)


@settings(max_examples=200, deadline=None)
@given(x=st.floats(min_value=-50, max_value=50), df=dfs)
def test_t_cdf_is_scipy_stats_t_cdf(x, df):
    assert dist.t_cdf(x, df) == pytest.approx(scipy_stats.t.cdf(x, df), rel=1e-12, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(x=st.floats(min_value=0, max_value=10), df=dfs, nc=st.floats(min_value=-20, max_value=20))
def test_nct_upper_is_scipy_stats_nct_sf(x, df, nc):
    expected = min(max(float(scipy_stats.nct.sf(x, df, nc)), 0.0), 1.0)
    assert dist.nct_upper(x, df, nc) == pytest.approx(expected, rel=1e-9, abs=1e-14)


@settings(max_examples=100, deadline=None)
@given(a=st.integers(1, 60), b=st.integers(1, 60), q=probs)
def test_beta_ppf_is_scipy_stats_beta_ppf(a, b, q):
    assert dist.beta_ppf(a, b, q) == pytest.approx(scipy_stats.beta.ppf(q, a, b), rel=1e-10,
                                                   abs=1e-14)


def fresh_python(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (its own memo, nothing imported); it prints JSON."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_a_remembered_value_is_the_computed_bits_and_needs_no_scipy(tmp_path):
    memo = tmp_path / "memo.json"
    first = fresh_python(f"""
        import json
        from benchkit import distributions as d
        d.remember_in({str(memo)!r})
        values = [d.t_ppf(0.975, 7), d.nct_upper(2.36, 7, 1.234567), d.beta_ppf(3, 6, 0.025),
                  d.t_cdf(-1.5, 11)]
        d.save()
        print(json.dumps([v.hex() for v in values]))
    """)
    second = fresh_python(f"""
        import json, sys
        from benchkit import distributions as d
        d.remember_in({str(memo)!r})
        values = [d.t_ppf(0.975, 7), d.nct_upper(2.36, 7, 1.234567), d.beta_ppf(3, 6, 0.025),
                  d.t_cdf(-1.5, 11)]
        print(json.dumps({{"values": [v.hex() for v in values],
                          "scipy": "scipy" in sys.modules}}))
    """)
    assert second == {"values": first, "scipy": False}


def test_a_value_not_remembered_is_computed_and_then_saved(tmp_path):
    memo = tmp_path / "memo.json"
    dist.remember_in(memo)
    value = dist.t_ppf(0.9, 123)
    dist.save()
    stored = json.loads(memo.read_text())
    assert stored["values"]["t_ppf(0.9, 123.0)"] == value
    from importlib import metadata
    assert stored["versions"]["scipy"] == metadata.version("scipy")


@pytest.mark.parametrize("content", [
    "not json", "[]", json.dumps({"versions": {"memo": 0}, "values": {"t_ppf(0.975, 7.0)": 1.0}}),
])
def test_an_unreadable_or_foreign_memo_is_ignored(tmp_path, content):
    memo = tmp_path / "memo.json"
    memo.write_text(content)
    result = fresh_python(f"""
        import json
        from benchkit import distributions as d
        d.remember_in({str(memo)!r})
        print(json.dumps(d.t_ppf(0.975, 7)))
    """)
    assert result == pytest.approx(2.364624251592784, rel=1e-14)


def test_the_memo_keeps_the_values_used_last(tmp_path):
    memo = tmp_path / "memo.json"
    result = fresh_python(f"""
        import json
        from benchkit import distributions as d
        d.MAX_VALUES = 3
        d.remember_in({str(memo)!r})
        for df in (1, 2, 3, 4):
            d.t_ppf(0.975, df)
        d.t_ppf(0.975, 2)  # used again: kept
        d.t_ppf(0.975, 5)
        d.save()
        print(json.dumps(sorted(json.load(open({str(memo)!r}))["values"])))
    """)
    assert result == ["t_ppf(0.975, 2.0)", "t_ppf(0.975, 4.0)", "t_ppf(0.975, 5.0)"]
