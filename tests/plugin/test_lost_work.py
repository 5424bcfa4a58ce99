"""A user's result is never lost (issue 42): a complete report of the declared plan is replaced
only by another one; an exploratory or incomplete session writes beside it and says where;
runs a project's conftest skipped are filled from the store."""
from __future__ import annotations

import json

import pytest

from benchkit.plugin.aggregate import aggregate_session
from sessions import report_path
from test_aggregate import payloads, settings, spec


def _only(written):
    (item,) = written
    return item


def test_an_exploratory_or_incomplete_report_never_replaces_a_complete_one(tmp_path):
    sp = spec(tracks=("tabular",))
    path, complete = _only(aggregate_session(payloads(sp), settings(tmp_path, gate="off"))[0])
    assert complete["complete"] and not complete["exploratory"]
    kept = path.read_bytes()

    exploratory = {**sp, "overrides": {"seeds": 6}}
    aside, report = _only(aggregate_session(payloads(exploratory),
                                            settings(tmp_path, gate="off"))[0])
    assert report["exploratory"] and aside == path.parent / "exploratory" / path.name
    assert path.read_bytes() == kept and aside.is_file()
    assert any(f"beside the complete report of the declared plan at {path}" in w
               for w in report["warnings"])

    aside, report = _only(aggregate_session(payloads(sp, skip={("idea", "tabular", 2)}),
                                            settings(tmp_path, gate="off"))[0])
    assert not report["complete"] and aside == path.parent / "incomplete" / path.name
    assert path.read_bytes() == kept

    again, report = _only(aggregate_session(payloads(sp), settings(tmp_path, gate="off"))[0])
    assert again == path and report["complete"]


def test_without_a_complete_report_an_exploratory_one_goes_where_it_always_did(tmp_path):
    sp = {**spec(tracks=("tabular",)), "overrides": {"seeds": 6}}
    path, report = _only(aggregate_session(payloads(sp), settings(tmp_path, gate="off"))[0])
    assert report["exploratory"] and path.parent.name == "tabular"


SKIPPING_CONFTEST = """\
import pytest

def pytest_addoption(parser):
    parser.addoption("--runbench", action="store_true")

def pytest_collection_modifyitems(config, items):
    if not config.getoption("--runbench"):
        for item in items:
            if item.get_closest_marker("bench"):
                item.add_marker(pytest.mark.skip(reason="needs --runbench"))
"""
BENCH = """\
import pytest

pytestmark = pytest.mark.bench(name="kept", track="tabular", grid={"lr": [1e-2]}, seeds=3)

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.record(val=1.0 + run.seed, test=1.0 + run.seed)

@pytest.mark.arm("idea")
def test_idea(run):
    run.record(val=0.5 + run.seed, test=0.5 + run.seed)
"""


def test_runs_a_conftest_skipped_are_taken_from_the_store(pytester):
    pytester.makeconftest(SKIPPING_CONFTEST)
    pytester.makepyfile(test_kept=BENCH)
    first = pytester.runpytest_inprocess("-p", "no:randomly", "--runbench")
    assert first.parseoutcomes()["passed"] == 6
    before = json.loads(report_path(pytester.path, "kept").read_text())
    assert before["complete"]
    skipped = pytester.runpytest_inprocess("-p", "no:randomly")
    assert skipped.parseoutcomes()["skipped"] == 6
    after = json.loads(report_path(pytester.path, "kept").read_text())
    assert after["complete"], after["incomplete"]
    assert after["comparison"]["per_seed_diffs"] == before["comparison"]["per_seed_diffs"]
    skipped.stdout.fnmatch_lines(["*kept: 6 run(s) not run in this session taken from the store*"])
    assert not (pytester.path / "reports" / "kept" / "tabular" / "incomplete").exists()


@pytest.mark.parametrize("value", [
    lambda arm, seed: 1e300 * (1 + seed) * (1.5 if arm == "idea" else 1.0),
    lambda arm, seed: 1.7e308 if arm == "idea" else -1.7e308,
], ids=["1e300", "float-max"])
def test_finite_metrics_whose_statistics_overflow_make_an_incomplete_report(tmp_path, value):
    sp = spec(tracks=("tabular",))
    runs = payloads(sp)
    for p in runs:
        p["val"] = p["test"] = value(p["arm"], p["seed"])
    written, failures = aggregate_session(runs, settings(tmp_path, gate="helps"))
    path, report = _only(written)
    assert not report["complete"] and report["comparison"] is None
    assert "statistics of these finite metrics are not finite" in \
        report["incomplete"]["reasons"][0]
    assert json.loads(path.read_text())["practical_verdict"] == "incomplete"
    assert failures and "incomplete" in failures[0]
