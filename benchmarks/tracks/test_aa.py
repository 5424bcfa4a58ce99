"""A/A bench of one track through the plugin: the report a track card's A/A row comes from.

Both arms train the track's default model with the track's protocol and grid; the idea arm's
model is built from another init stream (``seed + IDEA_INIT_OFFSET``, as
benchmarks/calibration/ does), with the seed's data and
minibatch order. The arms differ only by chance, so the verdict must be inconclusive; the report
also carries the track's floors and the baseline's convergence check ("still improving").

    BENCHKIT_AA_TRACK=dynamics .venv/bin/python -m pytest benchmarks/tracks/test_aa.py -n 2 \\
        --bench-report-dir benchmarks/results/tracks/aa

(run twice: the second session trains the budget checks). The track's default seeds (its
``Track.seeds``; benchkit's 8 where it sets none), as any bench that declares none: the MDE
issue 40's bar measures the margin over the strongest floor in, and the power issue 53 asks of
the default protocol. ``BENCHKIT_AA_INIT_OFFSET=N`` (a positive
integer) builds the idea arm from init stream seed + N instead, for a further A/A of a track
(``--bench-report-dir benchmarks/results/tracks/aa_offset_<N>``, which the cards read).
``BENCHKIT_AA_BASELINE_OFFSET=M`` builds the baseline from init stream seed + M too, so that a
further A/A does not share the first one's baseline draw
(``--bench-report-dir benchmarks/results/tracks/aa_baseline_<M>``).
"""
from __future__ import annotations

import os

import pytest
import torch


def init_offset(raw: str | None, default: int = 1_000_003) -> int:
    """An arm's init-stream offset from its environment variable (the idea's,
    ``BENCHKIT_AA_INIT_OFFSET``, default 1,000,003; the baseline's, default 0: its own)."""
    if raw is None:
        return default
    try:
        offset = int(raw)
    except ValueError:
        offset = 0
    if offset <= 0:
        raise ValueError(f"init offset {raw!r} (BENCHKIT_AA_INIT_OFFSET or "
                         "BENCHKIT_AA_BASELINE_OFFSET): give a positive integer (the arm's init "
                         "stream is seed + offset; 0 is the seed's own stream)")
    return offset


IDEA_INIT_OFFSET = init_offset(os.environ.get("BENCHKIT_AA_INIT_OFFSET"))
BASELINE_INIT_OFFSET = init_offset(os.environ.get("BENCHKIT_AA_BASELINE_OFFSET"), default=0)
TRACK = os.environ.get("BENCHKIT_AA_TRACK", "tabular")

pytestmark = pytest.mark.bench(  # no seeds=: the track's default (Track.seeds)
    name="aa", track=TRACK,
    claim="an identical arm built from another init stream: nothing to find (A/A)")


@pytest.mark.arm("baseline")
def test_baseline(run):
    if BASELINE_INIT_OFFSET:
        torch.manual_seed(run.seed + BASELINE_INIT_OFFSET)
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_same_model_other_init(run):
    torch.manual_seed(run.seed + IDEA_INIT_OFFSET)
    run.fit(run.track.model())
