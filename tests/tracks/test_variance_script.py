"""benchmarks/tracks/variance.py's source that costs no training: the inits' variance read from
the committed A/A benches (one score per init stream and seed). Reads JSON only."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from benchkit import tracks

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tracks" / "variance.py"


@pytest.fixture(scope="module")
def variance():
    spec = importlib.util.spec_from_file_location("variance_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_committed_a_a_benches_give_one_stream_per_init_offset(variance):
    """mnist1d's four 16-seed benches of its earlier protocol hold five init streams (the
    seed's own, +1,000,003 shared by two benches, +2,000,003, +3,000,017, +4,000,037): each
    counted once, 16 x 4 degrees of freedom, paired sd sqrt(2) x the pooled within-seed sd."""
    found = variance.committed_aa_inits(tracks.get("mnist1d"))
    assert found["init_offsets"] == [0, 1_000_003, 2_000_003, 3_000_017, 4_000_037]
    assert (found["n_test"], found["seeds"], found["df"]) == (1000, 16, 64)
    assert found["paired_sd_test"] == pytest.approx(2 ** 0.5 * found["sd_init_test"])


def test_pooled_variance_is_the_within_group_one(variance):
    assert variance.pooled_var([[1.0, 3.0], [10.0, 10.0, 13.0]]) == pytest.approx((2 + 6) / 3)
