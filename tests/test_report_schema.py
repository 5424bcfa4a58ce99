"""Tests of the report schema (benchkit/bench_report.schema.json) and of its documentation.

(a) the schema is a valid draft 2020-12 schema whose every field has a type and a description;
(b) it is a superset of the two v1 reference reports: every key they have is declared with a
    type their value satisfies (their idea-specific keys land in the open objects);
(c) reports benchkit really writes validate: via pytester (a complete idea and one whose idea
    arm raises for seed 1) and via the aggregation on synthetic payloads that hit the nullable
    corners; and the schema rejects inconsistent reports;
(d) docs/report.md is exactly what ``python -m benchkit.schema_doc`` renders.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from benchkit import report as rep
from benchkit import schema_doc, stats
from benchkit.aggregate import aggregate_session

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads(rep.SCHEMA_PATH.read_text(encoding="utf-8"))
REGISTRY = Registry().with_resource(SCHEMA["$id"], Resource.from_contents(SCHEMA))
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


def errors(report: dict) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(report)]


def node_at(pointer: str) -> dict:
    node = SCHEMA
    for part in filter(None, pointer.split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def validator_at(pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{SCHEMA['$id']}#{pointer}"}, registry=REGISTRY)


# ----------------------------------------------------------------------------- (a) the schema

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
    assert SCHEMA["properties"]["bench_version"]["const"] == rep.BENCH_VERSION == 1
    assert SCHEMA["additionalProperties"] is True
    # the package ships it (pyproject package-data "*.json") where report.py looks for it
    assert rep.SCHEMA_PATH == ROOT / "benchkit" / "bench_report.schema.json"


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
    assert set(props["practical_verdict"]["enum"]) == set(stats.PRACTICAL) | withheld
    assert set(props["practical_verdict"]["enum"]) == {
        "helps", "harms", "inconclusive", "non-inferior", "equivalent", "incomplete", "unmatched"}
    assert set(props["system_verdict"]["enum"]) == {"worked", "partial", "failed"} | withheld
    assert props["mechanism_ok"]["enum"] == [0, 1, None]
    comp = props["comparison"]["properties"]
    assert set(comp["verdict"]["enum"]) == {
        "idea better (significant)", "idea worse (significant)", "no significant win"}
    assert comp["direction"]["enum"] == list(stats.DIRECTIONS)
    for practical in stats.PRACTICAL:
        for mech in (0, 1, None):
            assert stats.system_verdict(practical, mech) in props["system_verdict"]["enum"]


# ------------------------------------------------------------------- (b) v1 compatibility

# v1 keys outside the schema's declared properties, allowed by an open object: the top level's
# idea-specific extras; anything inside mechanism_signature / math_verification.
V1_TOP_EXTRAS = {"track_justification", "pruning_fraction", "parameter_fraction_estimate"}
OPEN_BY_DESIGN = ("mechanism_signature", "math_verification")


def _object_pointer(pointer: str) -> str:
    """Follow a $ref, or the $ref branch of a nullable anyOf, to the object schema."""
    node = node_at(pointer)
    for cand in [node] + node.get("anyOf", []):
        if "$ref" in cand:
            return cand["$ref"].removeprefix("#")
    return pointer


def coverage_problems(value, pointer: str = "", path: str = "") -> tuple[list, set]:
    """Walk a v1 value along the schema: every key must be declared (or fall in an open
    object), and every leaf value must satisfy the declared field's schema."""
    problems, extras = [], set()
    if isinstance(value, dict):
        ptr = _object_pointer(pointer)
        node = node_at(ptr)
        props, extra = node.get("properties", {}), node.get("additionalProperties", True)
        for key, sub in value.items():
            where = f"{path}.{key}" if path else key
            if key in props:
                p, e = coverage_problems(sub, f"{ptr}/properties/{key}", where)
                problems += p
                extras |= e
            elif extra is False:
                problems.append(f"{where}: not declared, and {path or 'the top level'} is closed")
            elif isinstance(extra, dict):
                p, e = coverage_problems(sub, f"{ptr}/additionalProperties", where)
                problems += p
                extras |= e
            else:
                extras.add(where)
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        ptr = _object_pointer(pointer)
        for i, item in enumerate(value):
            p, e = coverage_problems(item, f"{ptr}/items", f"{path}[{i}]")
            problems += p
            extras |= e
    else:
        problems += [f"{path} = {value!r}: {e.message}"
                     for e in validator_at(pointer).iter_errors(value)]
    return problems, extras


@pytest.mark.parametrize("which", ["tabular", "dynamics"])
def test_v1_reference_keys_are_covered(which):
    ref, verdicts = V1[which]
    problems, extras = coverage_problems(ref)
    assert not problems, "\n".join(problems)
    unexpected = {e for e in extras if e not in V1_TOP_EXTRAS and not e.startswith(OPEN_BY_DESIGN)}
    assert not unexpected, f"v1 keys neither declared nor in an open object: {unexpected}"
    for key in OPEN_BY_DESIGN:  # open objects, but their v1 verdict keys are declared
        if key in ref:
            flag = "confirmed" if key == "mechanism_signature" else "passed"
            assert flag in ref[key] and flag in SCHEMA["properties"][key]["properties"]
    # v1 put the verdicts next to bench_report in the agent's answer; ours are inside
    problems, _ = coverage_problems(verdicts)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("which", ["tabular", "dynamics"])
def test_v1_reference_fails_only_on_newer_required_keys(which):
    """Full validation of a v1 report (verdicts moved inside) finds nothing but the keys v1
    did not have yet: no type, enum, range or consistency-rule error."""
    ref, verdicts = V1[which]
    found = list(VALIDATOR.iter_errors({**ref, **verdicts}))
    assert found
    assert {e.validator for e in found} == {"required"}, [e.message for e in found]


def test_v1_coverage_check_catches_what_it_should():
    ref = copy.deepcopy(V1_TABULAR)
    ref["comparison"]["bogus"] = 1
    ref["idea"]["n"] = "8"
    ref["baseline"]["sweep"][0]["cfg"]["lr"] = None
    ref["mystery"] = 1
    problems, extras = coverage_problems(ref)
    assert sorted(problems) == [
        "baseline.sweep[0].cfg.lr = None: None is not of type 'number', 'string', 'boolean'",
        "comparison.bogus: not declared, and comparison is closed",
        "idea.n = '8': '8' is not of type 'integer'"]
    assert "mystery" in extras and "track_justification" in extras


def test_v1_literals_are_the_shared_reference_reports():
    ref_dir = Path("/work/shared/reference")
    files = sorted(ref_dir.glob("*.txt")) if ref_dir.is_dir() else []
    if not files:
        pytest.skip("shared reference reports not present")
    for f, which in zip(files, ("tabular", "dynamics")):
        answer = json.loads(f.read_text()[f.read_text().index("{"):])
        ref, verdicts = V1[which]
        assert answer["bench_report"] == ref
        assert {k: answer[k] for k in verdicts} == verdicts


# --------------------------------------------------------------- (c) reports benchkit writes

IDEA = '''
import pytest
pytestmark = pytest.mark.bench(name="{name}", track="tabular", grid={{"lr": [1e-2]}},
                               claim="the idea changes nothing"{margin})

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    if {fail}:
        raise RuntimeError("the idea arm broke")
    run.fit(run.track.model())
    run.log("params", 4929)
    run.signature("zero", observed=0.0, predicted=0.0, tol=1e-6, prediction="stays zero")

@pytest.mark.mechanism
def test_claim():
    assert 1 + 1 == 2
'''


def test_reports_written_by_a_pytest_run_validate(pytester):
    pytester.makepyfile(
        test_ok=IDEA.format(name="schema_ok", margin=", margin=0.5", fail="False"),
        test_broken=IDEA.format(name="schema_broken", margin="", fail="run.seed == 1"))
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


def _spec(name, tracks, grid, margin):
    from benchkit import tracks as registry
    return {"name": name, "module": f"ideas/test_{name}.py", "tracks": tracks,
            "grids": {t: grid for t in tracks}, "seeds": [0, 1],
            "epochs": {t: 1 for t in tracks}, "claim": None, "margin": margin,
            "protocols": {t: registry.get(t).protocol(1) for t in tracks}}


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
    written, _ = aggregate_session(payloads, settings)
    return {f"{r['name']}/{r['track']}": json.loads(Path(path).read_text())
            for path, r in written}


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


@pytest.mark.parametrize("mutate", list(BROKEN.values()), ids=list(BROKEN))
def test_schema_rejects_inconsistent_reports(synthetic_reports, mutate):
    report = copy.deepcopy(synthetic_reports["plain/tabular"])
    assert errors(report) == []
    mutate(report)
    assert errors(report), "the schema accepted a broken report"


def test_top_level_is_open(synthetic_reports):
    report = copy.deepcopy(synthetic_reports["plain/tabular"])
    report["track_justification"] = "researchers may add fields"
    report["mechanism_signature"]["idea_specific"] = {"anything": [1, 2]}
    report["runs"][0]["logs"]["flops"] = 1e6
    assert errors(report) == []


# -------------------------------------------------------------------------- (d) the docs

def test_docs_are_generated_from_the_schema():
    doc = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    assert doc == schema_doc.render(), (
        "docs/report.md is out of date: run `python -m benchkit.schema_doc > docs/report.md`")


def test_docs_document_every_field():
    doc = schema_doc.render()
    for where, sub in field_nodes(SCHEMA):
        *_, kind, name = where.split("/")
        if kind == "properties":
            assert f"| `{name}` |" in doc and sub["description"] in doc.replace("\\|", "|"), where


def test_schema_doc_command_prints_the_docs():
    out = subprocess.run([sys.executable, "-m", "benchkit.schema_doc"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert out == schema_doc.render()


# ----------------------------------------------------------------- the v1 reference reports

# 000_0b8a10c7b72108d3.txt: the agent answer's bench_report, verbatim
V1_TABULAR = {'bench_version': 1,
 'track': 'tabular',
 'model': 'mlp_tiny',
 'metric_direction': 'lower is better',
 'n_seeds': 8,
 'baseline': {'best_cfg': {'lr': 0.01},
              'sweep': [{'cfg': {'lr': 0.001}, 'mean': 16.10005497932434},
                        {'cfg': {'lr': 0.003}, 'mean': 11.262676000595093},
                        {'cfg': {'lr': 0.01}, 'mean': 7.429885745048523}],
              'full': {'mean': 7.599956035614014,
                       'std': 0.8051347687842139,
                       'per_seed': [6.844658851623535, 6.109804630279541, 8.30047607421875,
                                    8.464603424072266, 7.705488681793213, 6.993262767745971,
                                    8.389989852905273, 7.991364002227783],
                       'n': 8}},
 'idea': {'mean': 8.154384911060333,
          'std': 1.0389464855334478,
          'per_seed': [7.118060111999512, 6.544161319732666, 9.722457885742188, 8.549818992614746,
                       7.820003986358643, 7.930368423461914, 9.617923736572266,
                       7.932284832000732],
          'n': 8},
 'comparison': {'delta_mean': 0.5544288754463196,
                'idea_wins': 1,
                'n_pairs': 8,
                'per_seed_diffs': [0.27340126037597656, 0.434356689453125, 1.4219818115234375,
                                   0.08521556854248047, 0.11451530456542969, 0.937105655670166,
                                   1.2279338836669922, -0.05907917022705078],
                'p_value': 0.0156,
                'mde': 0.4725954183814587,
                'mde_rel_pct': 6.218396740281628,
                'verdict': 'idea worse (significant)',
                'system_worked': False},
 'track_justification': 'ReLU hidden-axis pruning is structurally matched to the tabular MLP '
                        'track; both systems use the identical trained mlp_tiny and optimizer '
                        'budgets.',
 'pruning_fraction': 0.5,
 'idea_config': {'lr': 0.01},
 'idea_sweep': [{'cfg': {'lr': 0.001},
                 'result': {'mean': 22.81420075893402,
                            'std': 5.572511935733092,
                            'per_seed': [23.423412322998047, 15.931241035461426, 33.59147262573242,
                                         17.00380516052246, 26.614585876464844, 17.325483322143555,
                                         25.237001419067383, 23.38660430908203],
                            'n': 8}},
                {'cfg': {'lr': 0.003},
                 'result': {'mean': 14.472419738769531,
                            'std': 2.867801864411425,
                            'per_seed': [12.962059020996094, 10.092577934265137,
                                         17.148317337036133, 11.091870307922363,
                                         15.618391036987305, 13.338394165039062, 16.90511131286621,
                                         18.622636795043945],
                            'n': 8}},
                {'cfg': {'lr': 0.01},
                 'result': {'mean': 8.154384911060333,
                            'std': 1.0389464855334478,
                            'per_seed': [7.118060111999512, 6.544161319732666, 9.722457885742188,
                                         8.549818992614746, 7.820003986358643, 7.930368423461914,
                                         9.617923736572266, 7.932284832000732],
                            'n': 8}}],
 'parameter_fraction_estimate': 0.25,
 'mechanism_signature': {'prediction': 'strictly one-sided selected ReLU axes are affine or zero '
                                       'on the test patch',
                         'predicted_max_replacement_error': 0.0,
                         'observed_max_replacement_error': 0.1555086076259613,
                         'tested_one_sided_axes': 53,
                         'downstream_norm_sum': 24.949480190873146,
                         'confirmed': False}}
V1_TABULAR_VERDICTS = {'practical_verdict': 'harms', 'system_verdict': 'failed', 'mechanism_ok': 0}

# 004_43a308dad95e2d45.txt: the agent answer's bench_report, verbatim
V1_DYNAMICS = {'bench_version': 1,
 'track': 'dynamics',
 'model': 'rnn_small',
 'metric_direction': 'lower is better',
 'n_seeds': 8,
 'baseline': {'best_cfg': {'lr': 0.006},
              'sweep': [{'cfg': {'lr': 0.001}, 'mean': 0.021498297923244536},
                        {'cfg': {'lr': 0.003}, 'mean': 0.0067647010437212884},
                        {'cfg': {'lr': 0.006}, 'mean': 0.00675402011256665}],
              'full': {'mean': 0.00675402011256665,
                       'std': 0.0028601230170336904,
                       'per_seed': [0.006943476852029562, 0.005382216069847345,
                                    0.012206831015646458, 0.006380172912031412,
                                    0.0068011293187737465, 0.009766676463186741,
                                    0.0037104773800820112, 0.0028411808889359236],
                       'n': 8}},
 'idea': {'mean': 0.007599645119626075,
          'std': 0.0019136134219505131,
          'per_seed': [0.009002679027616978, 0.010305776260793209, 0.008358007296919823,
                       0.008188792504370213, 0.00483678886666894, 0.009082159027457237,
                       0.006025956943631172, 0.004997001029551029],
          'n': 8},
 'comparison': {'delta_mean': 0.0008456250070594251,
                'idea_wins': 3,
                'n_pairs': 8,
                'per_seed_diffs': [0.0020592021755874157, 0.004923560190945864,
                                   -0.003848823718726635, 0.0018086195923388004,
                                   -0.001964340452104807, -0.0006845174357295036,
                                   0.002315479563549161, 0.0021558201406151056],
                'p_value': 0.4058,
                'mde': 0.002347660486662723,
                'mde_rel_pct': 34.75945359260367,
                'verdict': 'no significant win',
                'system_worked': False},
 'mechanism_signature': {'math_check_max_moment_residual': 1.430511474609375e-06,
                         'trained_model': {'raw_norm': 39.96965408325195,
                                           'compressed_relative_error': 0.40474483370780945,
                                           'moment_residual': 1.3113021850585938e-06,
                                           'target': 'hidden moments',
                                           'predicted_residual': 0.0,
                                           'observed_residual': 1.3113021850585938e-06,
                                           'confirmed': True},
                         'predicted': 'four hidden-state moments preserved after rank-2 '
                                      'compression',
                         'observed': 'test-time hidden-state moment residual measured from '
                                     'trained model',
                         'confirmed': True},
 'math_verification': {'max_moment_residual': 1.430511474609375e-06, 'passed': True},
 'protocol': {'epochs': 8,
              'n_train': 400,
              'n_test': 400,
              'grid': [{'lr': 0.001}, {'lr': 0.003}, {'lr': 0.006}],
              'seeds': [0, 1, 2, 3, 4, 5, 6, 7]}}
V1_DYNAMICS_VERDICTS = {'practical_verdict': 'inconclusive', 'system_verdict': 'partial',
                        'mechanism_ok': 1}

V1 = {"tabular": (V1_TABULAR, V1_TABULAR_VERDICTS),
      "dynamics": (V1_DYNAMICS, V1_DYNAMICS_VERDICTS)}
