"""Tests of the report schema (benchkit/report/bench_report.schema.json) itself.

(a) the schema is a valid draft 2020-12 schema whose every field has a type and a description;
(b) reports benchkit really writes validate: via pytester (a complete idea and one whose idea
    arm raises for seed 1) and via the aggregation on synthetic payloads that hit the nullable
    corners; and the schema rejects inconsistent reports;
(c) its documentation: docs/report.md is exactly what ``python -m benchkit.report.schema_doc``
    renders, and it documents every field of the schema.

Its compatibility with the v1 reference reports: test_report_schema_v1.py.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from jsonschema import Draft202012Validator

from benchkit.verdict import build
from benchkit.report import bench_report
from benchkit.stats import paired
from idea_modules import arm, idea_module
from benchkit.report.session import aggregate_session
from builders import typed

import subprocess
import sys

from benchkit.report import schema_doc
from benchkit.verdict import decision

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads(bench_report.SCHEMA_PATH.read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


def errors(report: dict) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(report)]


# ------------------------------------------------------------------------------ (a) the schema

def field_nodes(node: dict, where: str = "#"):
    """(where, schema) of every declared field, recursively (properties, items, maps, $defs)."""
    for name, sub in node.get("properties", {}).items():
        yield f"{where}/properties/{name}", sub
        yield from field_nodes(sub, f"{where}/properties/{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from field_nodes(node[key], f"{where}/{key}")
    for i, branch in enumerate(node.get("anyOf", [])):
        yield from field_nodes(branch, f"{where}/anyOf/{i}")
    for name, sub in node.get("$defs", {}).items():
        yield f"{where}/$defs/{name}", sub
        yield from field_nodes(sub, f"{where}/$defs/{name}")


def test_schema_is_valid_draft_2020_12():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == "https://benchkit.invalid/bench_report.schema.json"
    assert SCHEMA["properties"]["bench_version"]["const"] == build.BENCH_VERSION == 1
    assert SCHEMA["additionalProperties"] is True
    # the package ships it (pyproject package-data "*.json") where report.py looks for it
    assert bench_report.SCHEMA_PATH == ROOT / "benchkit" / "report" / "bench_report.schema.json"


def test_every_field_has_a_type_and_a_description():
    fields = list(field_nodes(SCHEMA))
    assert len(fields) > 100
    bad = [w for w, sub in fields if "type" not in sub or not sub.get("description", "").strip()]
    assert not bad, f"fields without a type or a description: {bad}"


def test_closed_and_open_objects_are_as_documented():
    props = SCHEMA["properties"]
    assert props["mechanism_signature"]["additionalProperties"] is True
    assert props["math_verification"]["additionalProperties"] is True
    assert SCHEMA["$defs"]["run"]["properties"]["logs"]["additionalProperties"] is True
    assert props["mechanism_signature"]["required"] == ["signatures", "confirmed"]
    assert "passed" in props["math_verification"]["required"]
    for closed in (props["comparison"], props["baseline"], props["incomplete"],
                   props["environment"], props["comparison"]["properties"]["noninferiority"],
                   *(SCHEMA["$defs"][d] for d in ("arm_summary", "sweep_entry", "run",
                                                  "signature", "mechanism_test"))):
        assert closed["additionalProperties"] is False, closed["title"]


def test_enums_match_benchkit():
    props = SCHEMA["properties"]
    withheld = {"incomplete", "unmatched"}  # no verdict: runs missing, budgets differ
    assert set(props["practical_verdict"]["enum"]) == set(decision.PRACTICAL) | withheld
    assert set(props["practical_verdict"]["enum"]) == {
        "helps", "harms", "inconclusive", "non-inferior", "equivalent", "incomplete", "unmatched"}
    assert set(props["system_verdict"]["enum"]) == {"worked", "partial", "failed"} | withheld
    assert props["mechanism_ok"]["enum"] == [0, 1, None]
    comp = props["comparison"]["properties"]
    assert set(comp["verdict"]["enum"]) == {
        "idea better (significant)", "idea worse (significant)", "no significant win"}
    assert comp["direction"]["enum"] == list(paired.DIRECTIONS)
    for practical in decision.PRACTICAL:
        for mech in (0, 1, None):
            assert decision.system_verdict(practical, mech) in props["system_verdict"]["enum"]


# ----------------------------------------------------------------- (b) reports benchkit writes

def schema_module(name: str, fail: str, **options) -> str:
    """An idea whose arm raises where ``fail`` (source) is true, with a mechanism test."""
    return idea_module(name, arm("baseline"), arm("idea", f"""
        if {fail}:
            raise RuntimeError("the idea arm broke")
        run.fit(run.track.model())
        run.log("params", 4929)
        run.signature("zero", observed=0.0, predicted=0.0, tol=1e-6, prediction="stays zero")
        """), """
        @pytest.mark.mechanism
        def test_claim():
            assert 1 + 1 == 2
        """, seeds=None, claim="the idea changes nothing", **options)


def test_reports_written_by_a_pytest_run_validate(pytester):
    pytester.makepyfile(
        test_ok=schema_module("schema_ok", "False", margin=0.5),
        test_broken=schema_module("schema_broken", "run.seed == 1"))
    result = pytester.runpytest("--bench-epochs", "1", "--bench-seeds", "2",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=9, failed=1)
    ok = json.loads((pytester.path / "reports/schema_ok/tabular/bench_report.json").read_text())
    broken = json.loads(
        (pytester.path / "reports/schema_broken/tabular/bench_report.json").read_text())
    assert errors(ok) == []
    assert errors(broken) == []
    assert set(ok) == set(broken) == set(SCHEMA["properties"])  # nothing undeclared on top
    assert ok["complete"] and ok["comparison"]["noninferiority"] is not None
    assert ok["runs"][-1]["logs"] == {"params": 4929.0}
    assert not broken["complete"] and broken["comparison"] is None
    assert broken["baseline"]["full"] is None and broken["practical_verdict"] == "incomplete"
    assert broken["incomplete"]["missing"] == ["idea[tabular-lr=0.01-seed1]"]


def _payload(spec, track, arm, cfg, seed, val, test, *, outcome="passed", sig=None):
    diverged = val is None or test is None
    return {"kind": "run", "outcome": outcome, "nodeid": f"{spec['module']}::{arm}-{seed}",
            "message": None if outcome == "passed" else "E   RuntimeError: boom",
            "arm": arm, "track": track, "cfg": cfg, "seed": seed, "val": val, "test": test,
            "diverged": diverged and outcome == "passed", "seconds": 0.5, "reused": False,
            "signatures": sig or {}, "logs": {}, "spec": spec,
            "env": {"python": "3", "torch": "2", "numpy": "2", "benchkit": "0", "device": "cpu",
                    "threads": 1, "platform": "p", "machine": "m"}}


def _spec(name, track_names, grid, margin):
    from benchkit import tracks
    return {"name": name, "module": f"ideas/test_{name}.py", "tracks": track_names,
            "grids": {t: grid for t in track_names}, "seeds": [0, 1],
            "epochs": {t: 1 for t in track_names}, "claim": None, "margin": margin,
            "protocols": {t: tracks.get(t).protocol(1) for t in track_names}}


@pytest.fixture(scope="module")
def synthetic_reports(tmp_path_factory):
    """Reports of the aggregation (build_report, decide, stamp, write) on synthetic payloads
    chosen to hit the nullable corners: baseline mean 0 (mde_rel_pct null), constant
    differences (effect_size, seeds_needed null), a diverged config, a non-finite signature,
    a failed mechanism test, a margin, a two-track Holm family with one incomplete track, and
    an idea with no mechanism evidence at all (mechanism_ok null)."""
    grid = [{"lr": 0.01}, {"lr": 0.1}]
    a = _spec("corners", ["tabular", "dynamics"], grid, 0.1)
    bad_sig = {"probe": {"observed": None, "predicted": 0.0, "tol": 0.1, "prediction": None,
                         "confirmed": False}}
    payloads = []
    for track in ("tabular", "dynamics"):
        for seed, base in ((0, -1.0), (1, 1.0)):
            payloads.append(_payload(a, track, "baseline", grid[0], seed, 1.0, base))
            payloads.append(_payload(a, track, "baseline", grid[1], seed,
                                     None if seed else 2.0, None if seed else 2.0))
            for cfg in grid:
                if track == "dynamics" and seed == 1:
                    payloads.append(_payload(a, track, "idea", cfg, seed, None, None,
                                             outcome="failed"))
                else:
                    payloads.append(_payload(a, track, "idea", cfg, seed, 1.0, base + 0.5,
                                             sig=bad_sig))
    payloads.append({"kind": "mechanism", "outcome": "failed", "message": "E   assert 0",
                     "nodeid": "ideas/test_corners.py::test_claim", "spec": a})
    b = _spec("plain", ["tabular"], grid[:1], None)
    for seed in (0, 1, 2, 3):
        b["seeds"] = [0, 1, 2, 3]
        payloads.append(_payload(b, "tabular", "baseline", grid[0], seed, 1.0, 2.0 + seed))
        payloads.append(_payload(b, "tabular", "idea", grid[0], seed, 1.0, 1.9 + seed * 1.1))
    settings = SimpleNamespace(report_dir=tmp_path_factory.mktemp("reports"), alpha=0.05,
                               gate="off")
    written, _ = aggregate_session(typed(payloads), settings)
    return {f"{r.name}/{r.track}": json.loads(Path(path).read_text())
            for path, r in written}


@pytest.mark.slow
def test_synthetic_reports_validate(synthetic_reports):
    assert set(synthetic_reports) == {"corners/tabular", "corners/dynamics", "plain/tabular"}
    for key, report in synthetic_reports.items():
        assert errors(report) == [], key
        assert set(report) == set(SCHEMA["properties"]), key
    tab, dyn = synthetic_reports["corners/tabular"], synthetic_reports["corners/dynamics"]
    comp = tab["comparison"]  # the corners the schema must allow were really hit
    assert comp["mde_rel_pct"] is None and comp["effect_size"] is None
    assert comp["seeds_needed"] is None and comp["noninferiority"] is not None
    assert tab["baseline"]["sweep"][1]["eligible"] is False
    assert tab["baseline"]["sweep"][1]["diverged_seeds"] == [1]
    assert tab["mechanism_signature"]["signatures"]["probe"]["observed"] is None
    assert tab["mechanism_ok"] == 0
    assert dyn["complete"] is False and dyn["mechanism_signature"]["confirmed"] is None
    plain = synthetic_reports["plain/tabular"]
    assert plain["mechanism_ok"] is None and plain["math_verification"]["passed"] is None
    assert plain["comparison"]["noninferiority"] is None


def _set(path: str, value):
    def mutate(report):
        *parents, last = path.split(".")
        node = report
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        node[last] = value
    return mutate


def _drop(key):
    return lambda report: report.pop(key)


BROKEN = {
    "bench_version 2": _set("bench_version", 2),
    "unknown practical verdict": _set("practical_verdict", "maybe"),
    "mechanism_ok 2": _set("mechanism_ok", 2),
    "complete but verdict incomplete": _set("system_verdict", "incomplete"),
    "complete without comparison": _set("comparison", None),
    "undeclared comparison key": _set("comparison.surprise", 1),
    "non-v1 verdict string": _set("comparison.verdict", "idea better"),
    "system_worked contradicts verdict": _set("comparison.system_worked", True),
    "p above 1": _set("comparison.p_value", 1.5),
    "ci95 of one bound": _set("comparison.ci95", [0.0]),
    "negative std": _set("baseline.full.std", -1.0),
    "ineligible config with results": _set("baseline.sweep.0.eligible", False),
    "unknown run outcome": _set("runs.0.outcome", "ok"),
    "empty cfg": _set("runs.0.cfg", {}),
    "partial environment": _set("environment", {"python": "3"}),
    "created not ISO": _set("created", "yesterday"),
    "no runs": _drop("runs"),
    "no mechanism_ok": _drop("mechanism_ok"),
}


@pytest.mark.slow
@pytest.mark.parametrize("mutate", list(BROKEN.values()), ids=list(BROKEN))
def test_schema_rejects_inconsistent_reports(synthetic_reports, mutate):
    report = copy.deepcopy(synthetic_reports["plain/tabular"])
    assert errors(report) == []
    mutate(report)
    assert errors(report), "the schema accepted a broken report"


@pytest.mark.slow
def test_top_level_is_open(synthetic_reports):
    report = copy.deepcopy(synthetic_reports["plain/tabular"])
    report["track_justification"] = "researchers may add fields"
    report["mechanism_signature"]["idea_specific"] = {"anything": [1, 2]}
    report["runs"][0]["logs"]["flops"] = 1e6
    assert errors(report) == []


# ------------------------------------------------------------------------------------ the docs

def test_docs_are_generated_from_the_schema():
    doc = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    assert doc == schema_doc.render(), (
        "docs/report.md is out of date: "
        "run `python -m benchkit.report.schema_doc > docs/report.md`")


def test_docs_document_every_field():
    doc = schema_doc.render()
    for where, sub in field_nodes(SCHEMA):
        *_, kind, name = where.split("/")
        if kind == "properties":
            assert f"| `{name}` |" in doc and sub["description"] in doc.replace("\\|", "|"), where


def test_schema_doc_command_prints_the_docs():
    out = subprocess.run([sys.executable, "-m", "benchkit.report.schema_doc"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert out == schema_doc.render()
