"""Signed records (``BENCHKIT_STORE_KEY``): a forger who can write the store, and recompute
every digest with benchkit's own functions, still cannot plant a run in a keyed session or
past ``python -m benchkit verify``; audits are drawn unpredictably and named in the report."""
from __future__ import annotations

import json

import pytest

from benchkit.spec.run_record import RunPoint, RunResult
from benchkit.cli.commands import main
from benchkit.store import records
from benchkit.store.backends import DirectoryStorage
from benchkit.store.runs import RunStore
from idea_modules import idea_module, RECORDED_ARMS
from sessions import run_session, validate_report

KEY = b"ci-secret"
RESULT = {"val": 0.5, "test": 0.25, "diverged": False, "seconds": 1.0, "signatures": {},
          "logs": {}, "budgets": {}}
RUN = {"arm": "idea", "track": "tabular", "cfg": {"lr": 0.01}, "seed": 0}


def record(secret=None, key="k" * 64, **result):
    return records.build(key, RunPoint.from_json(RUN), RunResult.from_json({**RESULT, **result}),
                         {}, records.StoredOrigin(module="m.py", nodeid="m"), "cpu",
                         secret=secret)


def forge(record: dict, secret=None, **result) -> dict:
    """What a forger writes: new numbers, every digest recomputed (and a MAC under ``secret``)."""
    body = {k: v for k, v in record.items() if k not in ("digest", "mac", "run_digest")}
    body["result"] = {**body["result"], **result}
    body["run_digest"] = records.run_digest(body["key"], body["result"])
    body["digest"] = records._sha(body)
    if secret is not None:
        body["mac"] = records.mac(body, secret)
    return body


def test_a_record_signed_under_the_key_loads_and_a_forgery_does_not():
    signed = record(KEY)
    key = signed.key
    assert records.load(records.dumps(signed), key, KEY) == signed
    assert records.load(records.dumps(signed), key) == signed          # a keyless session reads it
    with pytest.raises(records.UnsignedRecord, match="not signed, and BENCHKIT_STORE_KEY is set"):
        records.load(records.dumps(record()), key, KEY)
    for forged in (records.canonical(forge(signed.to_json(), test=0.1)),
                   records.canonical(forge(signed.to_json(), b"guessed", test=0.1))):
        records.load(forged, key)                                        # digests alone cannot tell
        with pytest.raises(records.InvalidRecord):
            records.load(forged, key, KEY)
    tampered = {**signed.to_json(), "cpu": "another"}           # the MAC covers every field
    with pytest.raises(records.InvalidRecord):
        records.load(records.canonical(tampered), key, KEY)


def test_a_keyed_store_reuses_signed_records_only_and_warns_once(tmp_path):
    plain = RunStore(DirectoryStorage(tmp_path), tmp_path, threads=1, any_cpu=True)
    keyed = RunStore(DirectoryStorage(tmp_path), tmp_path, threads=1, any_cpu=True,
                     secret=KEY)
    for seed_test in (0.25, 0.75):                              # two unsigned records
        assert plain.put(record(test=seed_test))
    assert len(plain.records("k" * 64)) == 2
    assert keyed.records("k" * 64) == []
    assert keyed.problems == [f"benchkit: store: stored runs at {tmp_path} that are not signed "
                              "under BENCHKIT_STORE_KEY are not used: they are trained again "
                              "(and stored signed)"]
    assert keyed.why_missing("k" * 64, tmp_path / "m.py").startswith(  # what merge says
        "stored unsigned or signed with another key than BENCHKIT_STORE_KEY")
    assert plain.why_missing("x" * 64, tmp_path / "m.py").startswith("not trained for this code")
    assert keyed.put(record(KEY))
    assert [r.mac for r in keyed.records("k" * 64)] == [record(KEY).mac]


@pytest.fixture
def project(pytester, monkeypatch):
    from benchkit.report import plots

    monkeypatch.setattr(plots, "write_plots", lambda folder, report: None)  # not tested here
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_rec=RECORDED)
    return pytester


RECORDED = idea_module("rec", RECORDED_ARMS, seeds=3)


def bench(pytester, *args, validate=False):
    result = run_session(pytester, "-p", "no:randomly", "-p", "no:cacheprovider",
                         "--bench-store=runs", *args)
    path = pytester.path / "reports" / "rec" / "tabular" / "bench_report.json"
    return result, validate_report(path) if validate else json.loads(path.read_text())


def bits(report) -> list:
    return [(r["arm"], r["seed"], r["val"], r["test"], r["digest"]) for r in report["runs"]]


def test_a_keyed_session_signs_retrains_a_forgery_and_verify_refuses_it(project, monkeypatch,
                                                                        capsys):
    monkeypatch.setenv(records.KEY_VARIABLE, KEY.decode())
    first, report = bench(project, validate=True)
    assert first.ret == 0 and report["store"] == {**records.trust(True), "audited": []}
    paths = sorted((project.path / "runs").rglob("*.json"))
    assert all("mac" in json.loads(p.read_text()) for p in paths)
    target = next(p for p in paths if json.loads(p.read_text())["run"]["arm"] == "idea")
    target.write_text(json.dumps(forge(json.loads(target.read_text()), test=-1.0)))
    folder, store = project.path / "reports" / "rec" / "tabular", project.path / "runs"
    assert main(["verify", str(folder), "--store", str(store)]) == 1
    assert "not signed, and BENCHKIT_STORE_KEY is set" in capsys.readouterr().out
    second, again = bench(project, "--bench-audit", "2")
    assert second.ret == 0, second.stdout.str()
    second.stdout.fnmatch_lines(["benchkit: store: stored runs at * that are not signed under "
                                 "BENCHKIT_STORE_KEY are not used*",
                                 "benchkit: 3 run(s) trained, 3 reused*"])  # 1 + 2 audited
    assert len(again["store"]["audited"]) == 2
    assert bits(again) == bits(report)                         # the forgery did not get in
    assert main(["verify", str(folder), "--store", str(store)]) == 0
    assert "(signed under BENCHKIT_STORE_KEY)" in capsys.readouterr().out
    assert records.trust(False)["keyed"] is False
    assert "trusted unsigned" in records.trust(False)["trust"]
