"""Tests of the report schema against the two v1 reference reports: the schema is a superset
of them: every key they have is declared with a type their value satisfies (their
idea-specific keys land in the open objects), and a full validation of one finds only the
keys v1 did not have yet.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from test_report_schema import SCHEMA, VALIDATOR

REGISTRY = Registry().with_resource(SCHEMA["$id"], Resource.from_contents(SCHEMA))


def node_at(pointer: str) -> dict:
    node = SCHEMA
    for part in filter(None, pointer.split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def validator_at(pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{SCHEMA['$id']}#{pointer}"}, registry=REGISTRY)


# ---------------------------------------------------------------------------- v1 compatibility

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


# -------------------------------------------------------------------- the v1 reference reports

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
