"""A run store you can trust, as users meet it: garbage, planted or damaged records are misses
(retrained, same verdict, exit 0), diverged runs come back diverged, and a store or cache that
cannot be read or written costs reuse, never the session."""
from __future__ import annotations

import json

import pytest

from idea_modules import arm, idea_module
from sessions import run_session, validate_report

IDEA = idea_module("trust", arm("baseline"), arm("idea", """
    if run.cfg["lr"] == 3e-2 and run.seed == 1:
        run.record(val=float("nan"), test=float("nan"))   # this run diverges
        return
    run.fit(run.track.model(), lr=run.cfg["lr"] / 2)
    run.signature("gap", 0.0, 0.0, 1e-3, null=1.0)      # stored with its null, and reused"""),
                   grid={"lr": [1e-2, 3e-2]})


@pytest.fixture
def project(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_trust=IDEA)
    return pytester


def bench(pytester, *args):
    result = run_session(pytester, "--bench-epochs", "1", "-p", "no:randomly", *args)
    path = pytester.path / "reports" / "trust" / "tabular" / "bench_report.json"
    return result, (validate_report(path) if path.exists() else None)


def record_files(pytester) -> list:
    return sorted((pytester.path / ".pytest_cache" / "d" / "benchkit-runs").rglob("*.json"))


def verdict(report) -> tuple:
    return (report["complete"], report["practical_verdict"], report["comparison"]["p_value"],
            [(r["arm"], r["seed"], r["test"], r["diverged"]) for r in report["runs"]])


def origins(report) -> list:
    return [r["origin"] for r in report["runs"]]


def test_a_diverged_run_is_restored_as_diverged_and_the_rerun_is_complete(project):
    first, r1 = bench(project)
    assert first.ret == 0 and r1["complete"] is True
    assert [r["diverged"] for r in r1["runs"]].count(True) == 1
    second, r2 = bench(project)
    assert second.ret == 0, second.stdout.str()
    assert verdict(r2) == verdict(r1)
    assert set(origins(r2)) == {"reused"}
    second.stdout.fnmatch_lines(["benchkit: 0 run(s) trained, 8 reused*"])


@pytest.mark.parametrize("field,value,why", [
    ("val", "abc", "val is str 'abc', not a number"),
    ("diverged", "false", "diverged is 'false', not true or false"),
    ("val", 12345.0, "run_digest does not match its result"),      # a planted value
], ids=["garbage-val", "diverged-as-text", "planted-value"])
def test_an_invalid_record_is_a_miss_with_a_warning_and_is_retrained(project, field, value,
                                                                     why):
    first, r1 = bench(project)
    assert first.ret == 0
    target = record_files(project)[0]
    record = json.loads(target.read_text())
    record["result"][field] = value
    target.write_text(json.dumps(record))
    second, r2 = bench(project)
    assert second.ret == 0, second.stdout.str()
    assert verdict(r2) == verdict(r1)
    assert sorted(origins(r2)) == ["fresh"] + ["reused"] * 7
    second.stdout.fnmatch_lines([f"benchkit: store: stored run * is invalid ({why}): not used, "
                                 "the run is trained again"])


def test_a_record_that_is_not_json_is_a_miss(project):
    bench(project)
    record_files(project)[0].write_text("{not json")
    second, r2 = bench(project)
    assert second.ret == 0 and r2["complete"] is True
    second.stdout.fnmatch_lines(["benchkit: store: stored run * is invalid (not JSON*"])
    second.stdout.fnmatch_lines(["benchkit: 1 run(s) trained, 7 reused*"])


def test_an_unusable_cache_costs_reuse_not_the_session(project):
    """The cache directory is a file: pytest's cache and the store cannot be made."""
    (project.path / "cachefile").write_text("not a folder")
    result, report = bench(project, "-o", "cache_dir=cachefile")
    assert result.ret == 0, result.stdout.str()
    assert report["complete"] is True and set(origins(report)) == {"fresh"}
    result.stdout.fnmatch_lines(["benchkit: store: cannot create the run store in pytest's "
                                 "cache*: runs are trained, not reused or stored"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_an_unwritable_store_costs_reuse_not_the_session(project, xdist):
    """The store's folder is a file: nothing can be listed or written there."""
    store = project.path / ".pytest_cache" / "d" / "benchkit-runs"
    store.mkdir(parents=True)
    (store / "v2").write_text("in the way")
    result, report = bench(project, *xdist)
    assert result.ret == 0, result.stdout.str()
    assert report["complete"] is True and set(origins(report)) == {"fresh"}
    result.stdout.fnmatch_lines(["benchkit: store: cannot write to the run store at *: runs "
                                 "are not stored"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_audit_retrains_drawn_runs_and_fails_naming_an_edited_value(project):
    """A careful planter recomputes the digests: reuse cannot tell, the audit can."""
    from benchkit.cli.commands import main
    from benchkit.store import records
    from benchkit.store.runs import record_name

    bench(project)
    folder = str(project.path / "reports" / "trust" / "tabular")
    store = str(project.path / ".pytest_cache" / "d" / "benchkit-runs")
    assert main(["verify", folder, "--store", store]) == 0
    for path in record_files(project):
        record = json.loads(path.read_text())
        if record["run"]["arm"] == "idea" and record["result"]["test"] is not None:
            record["result"]["test"] /= 2
            body = {k: v for k, v in record.items() if k not in ("digest",)}
            body["run_digest"] = records.run_digest(record["key"], record["result"])
            body["digest"] = records._sha(body)
            path.unlink()   # and files it under the name its new digest gives (runs.record_name)
            name = record_name(records.StoredRun.from_json(body))
            path.with_name(name.rsplit("/", 1)[-1]).write_text(json.dumps(body))
    assert main(["verify", folder, "--store", store]) == 1  # the report's bits are not there
    planted, _ = bench(project)
    assert planted.ret == 0  # reuse alone takes it
    audited, report = bench(project, "--bench-audit", "8")
    assert audited.ret == 1
    audited.stdout.fnmatch_lines(["benchkit: FAIL audit: test_trust.py::test_idea?tabular-lr=* "
                                  "retrained differs in bits from its stored run*"])
    clean, _ = bench(project, "--bench-audit", "2", "-k", "baseline")
    assert clean.ret == 0
