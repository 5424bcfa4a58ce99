"""Validation curves (run.fit's standard loop) and the "still improving" flag
(benchkit.verdict.convergence), their records and their report fields."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.spec.run_record import CurvePoint, RunPoint, RunResult
from benchkit.verdict import convergence
from benchkit.training import loop
from benchkit.store import records
from benchkit.store.runs import record_name
from idea_modules import arm, idea_module


def curve(*vals):
    return tuple(CurvePoint(epoch=e, val=v) for e, v in zip((1, 2, 3, 4), vals))


def curve_json(*vals):
    """:func:`curve` as a stored record's result holds it."""
    return [p.to_json() for p in curve(*vals)]


def test_curve_epochs_are_the_quarters_deduplicated():
    assert loop.curve_epochs(4) == (1, 2, 3, 4)
    assert loop.curve_epochs(30) == (7, 15, 22, 30)
    assert loop.curve_epochs(2) == (1, 2)
    assert loop.curve_epochs(1) == (1,)
    assert loop.curve_epochs(0) == ()


def test_last_quarter_gain_is_relative_and_direction_aware():
    assert convergence.last_quarter_gain(curve(4.0, 3.0, 2.0, 1.5), "lower") == 0.25
    higher = convergence.last_quarter_gain(curve(0.5, 0.6, 0.8, 0.9), "higher")
    assert higher == pytest.approx(0.125)
    assert convergence.last_quarter_gain(curve(4.0, 3.0, 2.0, 2.5), "lower") == -0.25  # worse
    assert convergence.last_quarter_gain([CurvePoint(epoch=1, val=1.0)], "lower") is None
    assert convergence.last_quarter_gain(None, "lower") is None
    assert convergence.last_quarter_gain(curve(4.0, 3.0, None, 1.0), "lower") is None


def runs(end_values, start=100.0):  # gains of k/100 are exact in floats: at the threshold
    return convergence.SelectedRuns({"lr": 0.01}, tuple(
        RunResult(val=end, test=end, diverged=False, seconds=None,
                  curve=curve(2 * start, 1.5 * start, start, end)) for end in end_values))


@pytest.mark.parametrize("direction, ends, flagged", [
    ("lower", [98.0, 95.0, 99.9], True),     # median gain 2%
    ("lower", [99.0, 95.0, 99.5], False),    # median gain exactly 1%: not above the threshold
    ("lower", [98.99, 95.0, 100.0], True),   # just above
    ("higher", [102.0, 105.0, 100.1], True),
    ("higher", [101.0, 105.0, 100.5], False),  # exactly 1%
    ("higher", [98.0, 95.0, 99.9], False),     # worse at the end: no flag whatever its size
])
def test_the_flag_is_the_median_gain_above_the_threshold(direction, ends, flagged):
    section, warnings = convergence.section("tabular", {"baseline": runs(ends)}, direction)
    arm = section.arms["baseline"]
    assert arm.still_improving is flagged and arm.seeds == 3
    assert section.threshold == convergence.STILL_IMPROVING == 0.01
    assert bool(warnings) is flagged
    if flagged:
        assert "still improving: the baseline's selected config lr=0.01" in warnings[0]
        assert f"{arm.last_quarter_gain:.1%}" in warnings[0]


def test_the_section_states_the_track_declaration_and_skips_arms_without_curves():
    from benchkit import tracks

    section, warnings = convergence.section(
        "dynamics", {"idea": convergence.SelectedRuns({"lr": 1.0}, (
            RunResult(val=1.0, test=1.0, diverged=False, seconds=None),))}, "lower")
    assert (section.budget, section.budget_reason) == (
        tracks.get("dynamics").budget, tracks.get("dynamics").budget_reason)
    assert section.arms["idea"].to_json() == {"cfg": {"lr": 1.0}, "last_quarter_gain": None,
                                               "seeds": 0, "still_improving": False,
                                               "budget_check": None}
    assert warnings == []
    assert convergence.section("no-such-track", {}, "lower")[0].budget is None


def test_every_builtin_track_declares_its_budget_with_a_reason():
    from benchkit import tracks

    for name in tracks.names():
        t = tracks.get(name)
        assert t.budget in convergence.BUDGETS and t.budget_reason, name
    with pytest.raises(ValueError, match="budget must be 'convergence' or 'fixed'"):
        tracks.base.Track(name="x", make_data=None, make_model=None, model_name="m", grid=(),
                          epochs=1, budget="forever")


RESULT = {"val": 1.0, "test": 2.0, "diverged": False, "seconds": 0.5, "signatures": {},
          "logs": {}, "budgets": {}}
RUN = {"arm": "baseline", "track": "tabular", "cfg": {"lr": 0.01}, "seed": 0}


def build(**extra):
    return records.build("k", RunPoint.from_json(RUN), RunResult.from_json({**RESULT, **extra}), {},
                         records.StoredOrigin(module="m", nodeid="n"), "cpu")


def test_a_record_keeps_its_curve_and_an_old_record_without_one_stays_valid():
    new, old = build(curve=curve_json(3.0, 2.0, 1.5, 1.0)), build()
    assert new.to_json()["result"]["curve"][-1] == {"epoch": 4, "val": 1.0}
    assert "curve" not in old.to_json()["result"]
    for record in (new, old):
        assert records.load(records.dumps(record), "k") == record
    assert new.run_digest == old.run_digest  # the curve is outside the run's digest
    assert "curve" not in build(curve=None).to_json()["result"]


@pytest.mark.parametrize("bad, why", [
    ([], "curve is not a non-empty list"),
    ({"epoch": 1, "val": 1.0}, "curve is not a non-empty list"),
    ([{"epoch": 1}], "curve point fields wrong"),
    ([{"epoch": 2, "val": 1.0}, {"epoch": 2, "val": 1.0}], "curve epoch 2 is not an integer above"),
    ([{"epoch": 0, "val": 1.0}], "curve epoch 0 is not an integer above"),
    ([{"epoch": True, "val": 1.0}], "curve epoch True"),
    ([{"epoch": 1, "val": "1"}], "curve val at epoch 1 is str"),
])
def test_a_bad_curve_is_an_invalid_record(bad, why):
    result = build(curve=curve_json(1.0)).to_json()["result"]
    result["curve"] = bad
    with pytest.raises(records.InvalidRecord, match=why):
        records.check_result(result)


def test_fit_takes_the_curve_without_changing_training():
    import torch

    from benchkit.training import loop
    from benchkit.tracks.base import Data, Split, Track

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(96, 3, generator=gen)
    split = Split(x, x.sum(1, keepdim=True))
    track = Track(name="tiny", make_data=None, make_model=None, model_name="lin", grid=(),
                  epochs=4)
    results = []
    for on in (True, False):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        if on:
            results.append(loop.fit(model, Data(split, split, split), track, lr=0.01,
                                     epochs=4, batch_size=16, seed=0))
        else:
            loop.train(model, split, track, lr=0.01, epochs=4, batch_size=16, seed=0)
            results.append(loop.evaluate(model, split, track))
    fitted, plain = results
    assert [e for e, _ in fitted.curve] == [1, 2, 3, 4]
    assert fitted.curve[-1][1] == fitted.val == plain  # same bits with the curve taken
    assert fitted.curve[0][1] > fitted.curve[-1][1]


BENCH = idea_module("curves", arm("baseline"), arm("idea", """
    run.fit(run.track.model())
    run.record(val=run.val, test=run.test)   # its own result: no curve"""), grid={"lr": [2e-2]})


def test_a_bench_writes_curves_the_flag_and_the_declaration(pytester, read_report):
    from benchkit import tracks

    pytester.makepyfile(test_curves=BENCH)
    pytester.runpytest("--bench-seeds", "2", "--bench-epochs", "4").assert_outcomes(passed=4)
    report = read_report(pytester.path, "curves")
    base = [r for r in report["runs"] if r["arm"] == "baseline"]
    assert [[p["epoch"] for p in r["curve"]] for r in base] == [[1, 2, 3, 4]] * 2
    assert all(r["curve"][-1]["val"] == r["val"] for r in base)
    assert all(r["curve"] is None for r in report["runs"] if r["arm"] == "idea")
    conv = report["convergence"]
    assert conv["budget"] == tracks.get("tabular").budget
    assert conv["budget_reason"] == tracks.get("tabular").budget_reason
    assert conv["arms"]["baseline"]["seeds"] == 2 and conv["arms"]["idea"]["seeds"] == 0
    # 4 of 120 epochs at lr 2e-2: validation gains 4.2% and 3.2% over the last quarter on seeds
    # 0-1 (issue 54's tabular; at lr 1e-3 the wider model's curve is flat by epoch 3)
    assert conv["arms"]["baseline"]["still_improving"] is True
    assert any(w.startswith("still improving: the baseline's selected config lr=0.02")
               for w in report["warnings"])
    summary = (pytester.path / "reports" / "curves" / "tabular" / "summary.md").read_text()
    assert "still improving" in summary and "as the track declares" in summary


def test_stored_runs_from_before_curves_are_reused_without_one(pytester, read_report):
    import json

    pytester.makepyfile(test_curves=BENCH)
    args = ("--bench-seeds", "2", "--bench-epochs", "2")
    pytester.runpytest(*args).assert_outcomes(passed=4)
    stored = sorted((pytester.path / ".pytest_cache" / "d" / "benchkit-runs").rglob("*.json"))
    assert len(stored) == 4
    for path in stored:  # as a record written before curves: no field, digest recomputed
        record = json.loads(path.read_text())
        record["result"].pop("curve", None)
        body = {k: v for k, v in record.items() if k != "digest"}
        record["digest"] = records._sha(body)
        path.unlink()  # a record is filed under its CPU tag and digest: the new digest's name
        name = record_name(records.StoredRun.from_json(record))
        (path.parent / Path(name).name).write_text(json.dumps(record))
    pytester.runpytest(*args).assert_outcomes(passed=4)
    report = read_report(pytester.path, "curves")
    assert [r["origin"] for r in report["runs"]] == ["reused"] * 4
    assert all(r["curve"] is None for r in report["runs"])
    assert report["convergence"]["arms"]["baseline"]["seeds"] == 0
