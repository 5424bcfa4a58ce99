"""Builders of hand-made specs, runs and reports that the in-process rule tests share (no
training): ``make_spec``, ``make_run``, ``runs_from``, ``paired_report``, the 8-seed fixture
(``BASE8``, ``IDEA8``, ``P8``), the marker parser ``parse`` and ``RECORDED`` (a module of
hand-recorded results for pytester sessions). Imported by name: ``from builders import ...``
(``tests/`` is on ``sys.path``: pytest puts the folder of ``tests/conftest.py`` there).
"""
from __future__ import annotations

import math

from benchkit.verdict.build import build_report
from benchkit.spec import parse_bench_marker

GATES = ("off", "not-harms", "non-inferior", "equivalent", "helps", "worked")
PRACTICAL = ("helps", "harms", "non-inferior", "inconclusive", "equivalent")
ALPHA = 0.05


# -------------------------------------------------------------- reports built from runs
TRACK = "tabular"
PROTOCOL = {"track": TRACK, "model": "mlp_tiny", "metric": "mse",
            "metric_direction": "lower is better", "epochs": 30}


def make_spec(grid, seeds, *, direction="lower is better", margin=None, looks=None,
              mechanism_tests=(), overrides=None):
    return {"name": "rules", "module": "ideas/test_rules.py", "tracks": [TRACK],
            "grids": {TRACK: [dict(c) for c in grid]}, "seeds": list(range(seeds)),
            "epochs": {TRACK: 30}, "claim": None, "margin": margin,
            "looks": list(looks or [seeds]), "looks_declared": looks is not None,
            "overrides": dict(overrides or {}),
            "protocols": {TRACK: {**PROTOCOL, "metric_direction": direction}},
            "mechanism_tests": list(mechanism_tests)}


def make_run(arm, cfg, seed, val, test, *, signatures=None, outcome="passed"):
    return {"kind": "run", "outcome": outcome, "message": None,
            "nodeid": f"m.py::test_{arm}[{cfg}-{seed}]", "arm": arm, "track": TRACK,
            "cfg": dict(cfg), "seed": seed, "val": val, "test": test,
            "diverged": not (math.isfinite(val) and math.isfinite(test)),
            "seconds": 0.0, "reused": False, "signatures": signatures or {}, "logs": {}}


def runs_from(table: dict, grid) -> list[dict]:
    """table: (arm, cfg index) -> list of (val, test) per seed."""
    return [make_run(arm, grid[k], seed, val, test)
            for (arm, k), rows in table.items() for seed, (val, test) in enumerate(rows)]


GRID = [{"lr": 0.001}, {"lr": 0.003}, {"lr": 0.01}]

def paired_report(base, idea, *, alpha=ALPHA, direction="lower is better", margin=None,
                  signatures=None, looks=None, overrides=None):
    """A one-config report whose test values are given per seed (validation equal to test)."""
    grid = GRID[:1]
    runs = [make_run("baseline", grid[0], s, b, b) for s, b in enumerate(base)]
    runs += [make_run("idea", grid[0], s, i, i, signatures=(signatures or [None] * len(idea))[s])
             for s, i in enumerate(idea)]
    spec = make_spec(grid, len(base), direction=direction, margin=margin, looks=looks,
                     overrides=overrides)
    return build_report(spec, TRACK, runs, [], alpha=alpha)


# 8 seeds, the idea better on 7: the exact sign-flip p is 4/256 = 0.015625
BASE8 = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]
IDEA8 = [b - 0.5 for b in BASE8[:7]] + [BASE8[7] + 0.05]
P8 = 4 / 256

# ----------------------------------------------------------------- the marker, parsed
class Mark:
    def __init__(self, **kwargs):
        self.args, self.kwargs = (), kwargs


def parse(**kwargs):
    kwargs.setdefault("track", TRACK)
    return parse_bench_marker(Mark(**kwargs), "ideas/test_x.py", seeds_override=None,
                              epochs_override=None)


# ----------------------------------------- a module of hand-recorded results, benched end to end
RECORDED = '''\
import pytest

pytestmark = pytest.mark.bench(name={name!r}, track="tabular", grid={{"lr": [1e-2]}}, seeds=8)
BASE = {base!r}
IDEA = {idea!r}

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.record(val=BASE[run.seed], test=BASE[run.seed])

@pytest.mark.arm("idea")
def test_idea(run):
    run.record(val=IDEA[run.seed], test=IDEA[run.seed])
    run.signature("claim", observed=0.0, predicted=0.0, tol=1e-3)

@pytest.mark.mechanism
def test_claim():
    assert {claim_holds}
'''

