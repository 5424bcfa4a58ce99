"""Builders of hand-made specs, runs and reports that the in-process rule tests share (no
training): ``make_spec``, ``make_run``, ``typed``, ``runs_from``, ``built`` (a built report's
JSON), ``paired_report``, the 8-seed fixture (``BASE8``, ``IDEA8``, ``P8``), ``decided`` (a
built report decided), the marker parser ``parse`` and ``recorded`` (a module of hand-recorded
results for pytester sessions). Imported by name: ``from builders import ...`` (``tests/`` is on
``sys.path``: pytest puts the folder of ``tests/conftest.py`` there).
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import sys
from pathlib import Path

import numpy as np

from benchkit.report import bench_report
from benchkit.store import atomic
from benchkit.stats import paired
from benchkit.verdict import decision, pipeline
from benchkit.verdict.records import Report
from benchkit.verdict.build import build_report
from benchkit.verdict.frontier import build_frontier_report
from benchkit.spec import IdeaSpec, parse_bench_marker
from benchkit.spec.payloads import MechanismPayload, RunPayload, payload_from_json
import idea_modules

GATES = ("off", "not-harms", "non-inferior", "equivalent", "helps", "worked")
PRACTICAL = ("helps", "harms", "non-inferior", "inconclusive", "equivalent")
ALPHA = 0.05


# -------------------------------------------------------------- reports built from runs
TRACK = "tabular"
PROTOCOL = {"track": TRACK, "model": "mlp_tiny", "metric": "mse",
            "metric_direction": "lower is better", "epochs": 30}


def make_spec(grid, seeds, *, direction="lower is better", margin=None, looks=None,
              mechanism_tests=(), overrides=None, **fields):
    """An :class:`IdeaSpec` of one idea on ``TRACK`` (no extension unless ``extend`` is
    given); ``fields`` sets any other field in its plain form (``arms``, ``test``, ...)."""
    return IdeaSpec.from_plain({
        "name": "rules", "module": "ideas/test_rules.py", "tracks": [TRACK],
        "grids": {TRACK: [dict(c) for c in grid]}, "seeds": list(range(seeds)),
        "epochs": {TRACK: 30}, "claim": None, "margin": margin,
        "looks": list(looks or [seeds]), "looks_declared": looks is not None,
        "overrides": dict(overrides or {}), "extend": 0,
        "protocols": {TRACK: {**PROTOCOL, "metric_direction": direction}},
        "mechanism_tests": list(mechanism_tests), **fields})


# the spec a hand-made run carries (the worker's; the pipeline reads the caller's spec)
RUN_SPEC = make_spec([{"lr": 0.001}], 1).to_plain()


def run_json(arm, cfg, seed, val, test, *, signatures=None, outcome="passed", **fields):
    """A hand-made run payload's JSON (as a worker sends it); ``fields`` sets or adds any
    other of its keys (``track``, ``curve``, ``cpu``, ``budgets``, ``origin``, ...)."""
    return {"kind": "run", "outcome": outcome, "message": None,
            "nodeid": f"m.py::test_{arm}[{cfg}-{seed}]", "arm": arm, "track": TRACK,
            "cfg": dict(cfg), "seed": seed, "val": val, "test": test,
            "diverged": not (math.isfinite(val) and math.isfinite(test)),
            "seconds": 0.0, "reused": False, "signatures": signatures or {}, "logs": {},
            "spec": RUN_SPEC, **fields}


def make_run(arm, cfg, seed, val, test, *, signatures=None, outcome="passed", **fields):
    """A hand-made run, as the pipeline takes it: the :class:`RunPayload` of
    :func:`run_json`'s JSON (a payload without ``val`` has no result)."""
    return RunPayload.from_json(run_json(arm, cfg, seed, val, test, signatures=signatures,
                                         outcome=outcome, **fields))


def signed(*signatures: dict) -> list:
    """The idea's run records, one per seed, each with its ``signatures`` (name -> signature
    JSON)."""
    return [make_run("idea", {"lr": 0.001}, seed, 0.0, 0.0, signatures=recorded).record
            for seed, recorded in enumerate(signatures)]


def make_mechanism(nodeid: str, outcome: str, message: str | None = None) -> MechanismPayload:
    """A mechanism test's payload: its node id and outcome."""
    return MechanismPayload(outcome=outcome, message=message, nodeid=nodeid,
                            spec=IdeaSpec.from_plain(RUN_SPEC))


def typed(payloads: list[dict]) -> list:
    """Hand-made payload dicts as the controller receives them: the typed payloads
    (:func:`benchkit.spec.payloads.payload_from_json`) that ``aggregate_session`` and the
    verdict pipeline take."""
    return [p for p in map(payload_from_json, payloads) if p is not None]


def runs_from(table: dict, grid) -> list:
    """table: (arm, cfg index) -> list of (val, test) per seed."""
    return [make_run(arm, grid[k], seed, val, test)
            for (arm, k), rows in table.items() for seed, (val, test) in enumerate(rows)]


def built(spec, track, runs, mechanisms, *, alpha) -> dict:
    """:func:`benchkit.verdict.build.build_report`'s record as its JSON, undecided (what the
    rule tests assert on, and what ``decided`` takes)."""
    return build_report(spec, track, runs, mechanisms, alpha=alpha).to_json()


def built_frontier(spec, track, runs, mechanisms, *, alpha) -> dict:
    """:func:`benchkit.verdict.frontier.build_frontier_report`'s record as its JSON."""
    return build_frontier_report(spec, track, runs, mechanisms, alpha=alpha).to_json()


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
    return built(spec, TRACK, runs, [], alpha=alpha)


# 8 seeds, the idea better on 7: the exact sign-flip p is 4/256 = 0.015625
BASE8 = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]
IDEA8 = [b - 0.5 for b in BASE8[:7]] + [BASE8[7] + 0.05]
P8 = 4 / 256


def decided(report: dict, p_adjusted: float | None = None, family_size: int = 1, *,
            holm: bool = False) -> dict:
    """A built report's JSON decided on its record as the pipeline decides
    (:func:`benchkit.verdict.decision.decision_of`, then ``Decision.applied``), with the
    family's adjustment given: the baseline's comparison at ``p_adjusted`` in a family
    of ``family_size`` tracks (the controls' as the report has them), or with ``holm`` every
    comparison Holm-adjusted over the report's comparisons, as many as the family's size.
    Returns the decided report's JSON; ``report`` is not changed."""
    record = Report.from_json(report)
    comps = record.comparisons()
    if holm:
        family_size = len(comps)
        comps = [dataclasses.replace(c, p_adjusted=p, family_size=family_size)
                 for c, p in zip(comps, paired.holm([c.p_value for c in comps]))]
    elif comps:
        comps[0] = dataclasses.replace(comps[0], p_adjusted=p_adjusted)
    return decision.decision_of(record, comps, family_size).applied(record).to_json()

# ----------------------------------------------------------------- the marker, parsed
class Mark:
    def __init__(self, **kwargs):
        self.args, self.kwargs = (), kwargs


def parse(**kwargs):
    kwargs.setdefault("track", TRACK)
    return parse_bench_marker(Mark(**kwargs), "ideas/test_x.py", seeds_override=None,
                              epochs_override=None)


# ----------------------------------------- a module of hand-recorded results, benched end to end
def recorded(name: str, base: list[float], idea: list[float], claim_holds: bool = True,
             **options) -> str:
    """An idea module whose arms record ``base`` and ``idea`` (validation equal to test, one
    per seed; 8 seeds unless ``options`` say otherwise), with a mechanism test that passes
    when ``claim_holds``."""
    arm = idea_modules.arm
    return idea_modules.idea_module(
        name, f"BASE = {base!r}\nIDEA = {idea!r}",
        arm("baseline", "run.record(val=BASE[run.seed], test=BASE[run.seed])"), arm("idea", """
            run.record(val=IDEA[run.seed], test=IDEA[run.seed])
            run.signature("claim", observed=IDEA[run.seed] - IDEA[run.seed], predicted=0.0,
                          tol=1e-3, null=1.0)"""), f"""
        @pytest.mark.mechanism
        def test_claim():
            assert {claim_holds}
        """, **{"seeds": 8, **options})


def one_config_runs(base, idea):
    """Passed runs of both arms on GRID[0], validation equal to test, one per seed."""
    return ([make_run("baseline", GRID[0], s, b, b) for s, b in enumerate(base)]
            + [make_run("idea", GRID[0], s, i, i) for s, i in enumerate(idea)])


# ------------------------------------- fabricated reports, as the plugin writes them (on GRID)
ENV = {"benchkit": "0.1.0", "device": "cpu", "machine": "x86_64", "numpy": "2.4.6",
       "platform": "Linux", "python": "3.11.7", "threads": 1, "torch": "2.13.0+cpu"}


def make_report(*, effect: float = -0.3, noise: float = 0.05, seeds: int = 8,
                direction: str = "lower", missing: int = 0, failed: int = 0,
                diverge_idea_cfg: int | None = None, signature_ok: bool = True,
                mechanism_passed: bool = True, tracks: tuple = ("tabular",),
                name: str = "fake_idea", rng_seed: int = 0, margin=None) -> dict:
    """A report as the plugin would write it. ``effect`` is the idea's mean shift of the test
    metric (negative = lower); ``missing``/``failed`` drop or fail that many idea runs."""
    rng = np.random.default_rng(rng_seed)
    seed_list = list(range(seeds))
    base_level = {0: 3.0, 1: 1.6, 2: 1.1}  # lr=0.01 is best
    protocols = {t: {"track": t, "model": "mlp_tiny", "optimizer": "adam", "batch_size": 32,
                     "epochs": 2, "metric": "mse" if direction == "lower" else "accuracy",
                     "metric_direction": f"{direction} is better"} for t in tracks}
    spec = {"name": name, "module": f"ideas/test_{name}.py", "tracks": list(tracks),
            "grids": {t: GRID for t in tracks}, "seeds": seed_list,
            "epochs": {t: 2 for t in tracks}, "claim": "a | pipe-y claim that helps",
            "margin": margin, "protocols": protocols, "extend": 0}
    payloads = []
    for t in tracks:
        for arm in ("baseline", "idea"):
            for k, cfg in enumerate(GRID):
                for s in seed_list:
                    seed_effect = rng.normal(0, 0.15)
                    v = base_level[k] + seed_effect + (effect if arm == "idea" else 0.0)
                    v += rng.normal(0, noise)
                    test = v + rng.normal(0, 0.02)
                    diverged = arm == "idea" and k == diverge_idea_cfg and s == 0
                    sig = {}
                    if arm == "idea":
                        obs = 0.0 if signature_ok else 0.5
                        sig = {"residual": {"observed": obs, "predicted": 0.0, "tol": 1e-3,
                                            "prediction": "residual is zero",
                                            "confirmed": signature_ok,
                                            "has_null": True, "null": 1.0}}
                    payloads.append({
                        "kind": "run", "outcome": "passed", "message": None, "spec": spec,
                        "nodeid": f"m::test_{arm}[{t}-lr={cfg['lr']}-seed{s}]",
                        "arm": arm, "track": t, "cfg": cfg, "seed": s,
                        "val": None if diverged else float(v),
                        "test": None if diverged else float(test), "diverged": diverged,
                        "seconds": 0.01, "reused": False, "signatures": sig, "logs": {},
                        "env": ENV})
    idea_runs = [p for p in payloads if p["arm"] == "idea" and p["cfg"] == GRID[2]]
    for p in idea_runs[:missing]:
        payloads.remove(p)
    for p in idea_runs[missing:missing + failed]:
        p["outcome"], p["message"] = "failed", "RuntimeError: CUDA is not here"
        p["val"] = None  # its result lacks a validation value
    mech = [{"kind": "mechanism", "outcome": "passed" if mechanism_passed else "failed",
             "message": None if mechanism_passed else "AssertionError: residual 0.3 > 1e-9",
             "nodeid": "m::test_claim", "spec": spec}]
    reports = pipeline.idea_reports(IdeaSpec.from_plain(spec), typed(payloads), typed(mech),
                                    alpha=0.05)
    return bench_report.stamp(reports[0]).to_json()  # as the plugin decides and writes it


def write(tmp_path: Path, report: dict, sub: str = "r") -> Path:
    path = tmp_path / sub / "bench_report.json"
    atomic.write_atomic(path, bench_report.dumps(report))
    return path


# ------------------------------------------------------------------ track data, uncached
def uncached(track):
    """The track's data function itself, past its per-process caches (``make_data``'s and the
    numpy ``arrays`` it builds on), so that "two calls give equal data" compares two
    computations, not one object with itself."""
    module = sys.modules[track.make_data.__module__]
    make = getattr(track.make_data, "__wrapped__", track.make_data)

    def fresh(seed):
        getattr(getattr(module, "arrays", None), "cache_clear", lambda: None)()
        return make(seed)
    return fresh


@functools.lru_cache(maxsize=1)
def _template() -> str:
    return json.dumps(make_report(effect=-0.3))


def _overlay(base, over, key=None):
    if isinstance(base, dict) and isinstance(over, dict) and key not in BY_NAME:
        return {**base, **{k: _overlay(base.get(k), v, k) for k, v in over.items()}}
    return over


def as_report(fields: dict) -> Report:
    """The record every reader takes, of a report dict (one :func:`make_report` wrote, maybe
    changed by the test) or of just the fields a test is about, laid over a complete report
    (objects merged key by key, anything else replaced)."""
    if "bench_version" in fields:   # a whole report
        return Report.from_json(fields)
    fields = {**{k: None for k in SECTIONS if k not in fields}, **fields}
    base = {**json.loads(_template()), **SECTIONS}
    if fields.get("controls"):   # each control laid over the baseline's section and comparison
        fields = {**fields, "controls": {name: _overlay(
            {"arm": f"control:{name}", "best_cfg": base["baseline"]["best_cfg"], "sweep": [],
             "full": base["baseline"]["full"], "comparison": base["comparison"]}, c)
            for name, c in fields["controls"].items()}}
    return Report.from_json(_overlay(base, fields))


def as_comparison(fields: dict):
    """The :class:`benchkit.verdict.records.Comparison` of a comparison's JSON fields, laid
    over a complete report's comparison (:func:`as_report`)."""
    comp = as_report({"comparison": fields}).comparison
    assert comp is not None
    return comp


# objects keyed by name: a test's replaces the template's whole
BY_NAME = ("signatures", "arms", "floors", "log_medians")
# the sections a complete report may lack, empty: what a test's fields are laid over
SECTIONS = {"incomplete": {"reasons": [], "missing": [], "failed": []},
            "budgets": {"arms": {}, "checks": [], "matched": True, "unmatched": [],
                        "waivers": {}}}


# ------------------------------------------------------- a session's payloads, aggregated
AGG_CFG = {"lr": 1e-3}
AGG_PROTOCOL = {"model": "m", "metric": "mse", "metric_direction": "lower is better"}


def session_spec(name="agg", tracks=("tabular",), seeds=6) -> dict:
    """A plain spec (as a payload carries it) of one config, ``seeds`` seeds, ``tracks``."""
    return {"name": name, "module": f"ideas/test_{name}.py", "tracks": list(tracks),
            "grids": {t: [AGG_CFG] for t in tracks}, "seeds": list(range(seeds)),
            "epochs": {t: 1 for t in tracks}, "claim": None, "margin": None,
            "protocols": {t: {"track": t, **AGG_PROTOCOL} for t in tracks}}


def session_payloads(sp, gain=lambda track, seed: 0.1 + 0.01 * seed, skip=(),
                     arms=("baseline", "idea")) -> list[dict]:
    """Paired runs' payload JSON where the idea's test MSE is lower by ``gain(track, seed)``
    (``skip``: (arm, track, seed) left out)."""
    out = []
    for track in sp["tracks"]:
        for seed in sp["seeds"]:
            for arm in arms:
                if (arm, track, seed) in skip:
                    continue
                base = 1.0 + 0.1 * seed
                value = base - (gain(track, seed) if arm == "idea" else 0.0)
                out.append({"kind": "run", "outcome": "passed", "message": None, "spec": sp,
                            "nodeid": f"{sp['module']}::{arm}[{track}-{seed}]", "arm": arm,
                            "track": track, "cfg": AGG_CFG, "seed": seed, "val": value,
                            "test": value, "diverged": False, "signatures": {}, "logs": {}})
    return out


def session_settings(tmp_path, gate="off", alpha=0.05):
    """The settings ``report.session.aggregate_session`` reads."""
    from types import SimpleNamespace

    return SimpleNamespace(alpha=alpha, report_dir=tmp_path, gate=gate)

