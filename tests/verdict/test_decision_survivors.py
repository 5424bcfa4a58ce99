"""Rules of the decision core that only a targeted input tells apart, in process: a control's
margin tests (non-inferiority, equivalence) at the family's level under the report's claim,
the aggregation's family size, report companions and write errors, and the edges of an
extendable grid."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from benchkit.plugin import aggregate
from benchkit.verdict import extension as extend, controls as fairness
from benchkit.store import atomic
from benchkit.report import bench_report
from benchkit.report import summary

# -- a control arm under a margin claim ---------------------------------------------------------


def margin_report(n: int, *, claim: str | None, family_size: int | None) -> dict:
    """An idea within 0.1% of its control on every one of ``n`` seeds, the control compared
    with a 10% non-inferiority margin and a p (0.6) far from significant."""
    control_values = [1.0 + 0.1 * k for k in range(n)]
    idea_values = [v + 0.001 * (-1) ** k for k, v in enumerate(control_values)]
    comp = {"p_adjusted": 0.6, "p_value": 0.3, "delta_mean": 0.0,
            "noninferiority": {"margin_rel": 0.1}}
    if family_size is not None:
        comp["family_size"] = family_size
    protocol = {} if claim is None else {"claim_type": claim}
    return {"practical_verdict": "helps", "system_verdict": "partial", "mechanism_ok": None,
            "comparison": {"p_adjusted": 0.01, "delta_mean": -0.5},
            "metric_direction": "lower is better", "protocol": protocol,
            "idea": {"per_seed": idea_values},
            "controls": {"c": {"arm": "control:c", "full": {"per_seed": control_values},
                               "comparison": comp}}}


@pytest.mark.parametrize("claim, verdict", [
    ("equivalence", "equivalent"),     # TOST p = 1/256 each side < 0.05 / 2
    ("superiority", "non-inferior"),   # no TOST: the margin test alone
    (None, "non-inferior"),            # a protocol without a claim is a superiority claim
])
def test_a_control_is_judged_under_the_reports_claim(claim, verdict):
    rep_ = margin_report(8, claim=claim, family_size=2)
    fairness.finish_verdicts(rep_, 0.05)
    comp = rep_["controls"]["c"]["comparison"]
    assert rep_["controls"]["c"]["verdict"] == verdict
    # the margin test is redone on the control's and the idea's seeds, at level / family size
    assert comp["noninferiority"]["p_value"] == pytest.approx(1 / 256)
    assert comp["noninferiority"]["non_inferior"] is True
    assert ("equivalence" in comp) == (claim == "equivalence")


@pytest.mark.parametrize("family_size, verdict", [
    (2, "inconclusive"),   # one-sided p 1/32 = 0.03125 is not below 0.05 / 2
    (1, "non-inferior"),   # ... and is below 0.05
    (None, "non-inferior"),  # a comparison without a family is a family of one
])
def test_a_controls_margin_test_is_at_the_level_over_its_family_size(family_size, verdict):
    rep_ = margin_report(5, claim="superiority", family_size=family_size)
    fairness.finish_verdicts(rep_, 0.05)
    assert rep_["controls"]["c"]["verdict"] == verdict
    assert rep_["controls"]["c"]["comparison"]["noninferiority"]["p_value"] == 1 / 32


# -- aggregation ---------------------------------------------------------------------------------
CFG = {"lr": 1e-3}
PROTOCOL = {"model": "m", "metric": "mse", "metric_direction": "lower is better"}


def spec(name="agg", tracks=("tabular",), seeds=6):
    return {"name": name, "module": f"ideas/test_{name}.py", "tracks": list(tracks),
            "grids": {t: [CFG] for t in tracks}, "seeds": list(range(seeds)),
            "epochs": {t: 1 for t in tracks}, "claim": None, "margin": None,
            "protocols": {t: {"track": t, **PROTOCOL} for t in tracks}}


def payloads(sp, arms=("baseline", "idea")):
    out = []
    for track in sp["tracks"]:
        for seed in sp["seeds"]:
            for arm in arms:
                value = 1.0 + 0.1 * seed - (0.1 + 0.01 * seed if arm == "idea" else 0.0)
                out.append({"kind": "run", "outcome": "passed", "message": None, "spec": sp,
                            "nodeid": f"{sp['module']}::{arm}[{track}-{seed}]", "arm": arm,
                            "track": track, "cfg": CFG, "seed": seed, "val": value,
                            "test": value, "diverged": False, "signatures": {}, "logs": {}})
    return out


def settings(tmp_path, gate="off"):
    return SimpleNamespace(alpha=0.05, report_dir=tmp_path, gate=gate)


def test_an_idea_with_only_claims_does_not_stop_the_next_ideas_report(tmp_path):
    claim = {"kind": "mechanism", "spec": spec("a"), "nodeid": "m::test_claim",
             "outcome": "passed", "message": None}
    written, _ = aggregate.aggregate_session([claim] + payloads(spec("b")), settings(tmp_path))
    assert [r["name"] for _, r in written] == ["b"]


def test_a_single_run_makes_an_incomplete_report_not_an_interrupted_one(tmp_path):
    written, failures = aggregate.aggregate_session(
        payloads(spec(seeds=1), arms=("baseline",)), settings(tmp_path, gate="helps"))
    ((_, r),) = written
    assert r["complete"] is False and r["practical_verdict"] == "incomplete"
    assert "the session was interrupted" not in r["incomplete"]["reasons"]
    assert len(failures) == 1 and "incomplete" in failures[0]


def test_every_comparison_records_its_holm_family_size(tmp_path):
    written, _ = aggregate.aggregate_session(payloads(spec(tracks=("tabular", "dynamics"))),
                                             settings(tmp_path))
    assert [r["comparison"]["family_size"] for _, r in written] == [2, 2]
    for path, _ in written:
        assert json.loads(path.read_text())["comparison"]["family_size"] == 2


def test_a_control_arms_margin_test_is_at_the_level_over_the_whole_family(tmp_path):
    sp = {**spec("ctl", seeds=5), "margin": 0.1, "arms": ["baseline", "idea", "control:c"]}
    out = []
    for seed in sp["seeds"]:  # the control within 0.1% of the idea on every seed
        idea = 0.8 + 0.1 * seed
        for arm, v in (("baseline", idea + 0.2), ("idea", idea),
                       ("control:c", idea + 0.001 * (-1) ** seed)):
            out.append({**payloads(sp, arms=("idea",))[0], "arm": arm, "seed": seed,
                        "nodeid": f"{sp['module']}::{arm}[tabular-{seed}]", "val": v, "test": v})
    ((_, r),) = aggregate.aggregate_session(out, settings(tmp_path))[0]
    comp = r["controls"]["c"]["comparison"]
    # family: baseline + control = 2, so one-sided p 1/32 is not below 0.05 / 2
    assert comp["family_size"] == 2 and comp["noninferiority"]["p_value"] == 1 / 32
    assert r["controls"]["c"]["verdict"] == "inconclusive"


def test_companions_get_the_report_and_keep_plots_only_when_it_did_not_change(tmp_path,
                                                                              monkeypatch):
    calls = []
    monkeypatch.setattr(summary, "write_companions",
                        lambda path, r, **kw: calls.append((path, r, kw)))
    for _ in range(2):
        written, _ = aggregate.aggregate_session(payloads(spec()), settings(tmp_path))
        ((path, r),) = written
        assert calls[-1][:2] == (path, r)
    assert [kw for *_, kw in calls] == [{"plots_current": False}, {"plots_current": True}]


@pytest.mark.parametrize("exc, says", [
    (OSError(13, "Permission denied", "/elsewhere/report.tmp"),
     "cannot write /elsewhere/report.tmp: Permission denied"),
    (OSError("disk full"), "cannot write {path}: disk full"),
])
def test_a_write_error_names_the_file_and_the_reason(tmp_path, monkeypatch, exc, says):
    def fail(path, text):
        raise exc
    monkeypatch.setattr(atomic, "write_atomic", fail)
    errors = []
    written, _ = aggregate.aggregate_session(payloads(spec("x")), settings(tmp_path),
                                             errors=errors)
    path = bench_report.report_path(tmp_path, "x", "tabular")
    assert written == []
    assert errors == ["benchkit: ERROR x tabular: " + says.format(path=path)]


# -- extendable grids ----------------------------------------------------------------------------


def test_axes_skip_keys_that_are_missing_or_not_numeric():
    grid = [{"opt": o, "lr": lr, "wd": wd} for o, lr, wd in (("a", 1, 0.1), ("b", 2, 0.2),
                                                              ("c", 3, 0.3))]
    assert extend.axes(grid) == {"lr": [1, 2, 3], "wd": [0.1, 0.2, 0.3]}
    del grid[1]["wd"]   # a key some config lacks is no axis
    assert extend.axes(grid) == {"lr": [1, 2, 3]}


@pytest.mark.parametrize("values, log", [
    ([1, 2, 4], True), ([1, 2, 3], False),
    ([1, 3, 6], True),   # ratios 3, 2 and differences 2, 3 vary alike (1.5): a tie is log
])
def test_log_spacing_at_the_tie(values, log):
    assert extend.log_spaced(values) is log


def test_a_high_side_extension_steps_from_the_highest_value():
    def val(arm, cfg, seed):  # both arms' optimum lies above the grid
        return math.log10(cfg["lr"] / 1e-2) ** 2 + 0.001 * seed
    out = extend.resolve([{"lr": v} for v in (1e-3, 2e-3, 4e-3)], val, [0], "lower", 1)
    assert out["extensions"] == [{"axis": "lr", "side": "high", "from": 4e-3, "value": 8e-3,
                                  "arms": ["baseline", "idea"]}]
    assert sorted(c["lr"] for c in out["grid"]) == [1e-3, 2e-3, 4e-3, 8e-3]
