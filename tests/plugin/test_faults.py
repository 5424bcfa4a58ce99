"""Faults and bad input that the plugin suite does not cover: a dying worker, misuse of
``run.record`` / ``run.signature``, a mechanism test that errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from benchkit import tracks
from benchkit.training.run import Run
from idea_modules import arm, idea_module, idea_source
from sessions import run_session, shared_session, validate_report


def make_run() -> Run:
    return Run(arm="idea", track=tracks.get("tabular"), cfg={"lr": 1e-2}, seed=0, epochs=1)


def test_record_without_results_says_what_is_needed():
    with pytest.raises(TypeError, match=r"run.record\(val=.*test="):
        make_run().record()
    with pytest.raises(TypeError, match="single number"):
        make_run().record(val=torch.ones(3), test=1.0)
    with pytest.raises(TypeError, match="must be a real number"):
        make_run().record(val="0.5", test=1.0)


def test_record_takes_tensors_and_numpy_scalars_as_plain_floats():
    run = make_run()
    run.record(val=torch.tensor(0.5), test=np.float32(0.25))
    result = run.result()
    assert type(result.val) is float and type(result.test) is float
    assert (result.val, result.test) == (0.5, 0.25)


@pytest.mark.parametrize("tol", [-1.0, math.nan, math.inf])
def test_signature_with_a_bad_tolerance_is_an_error(tol):
    with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
        make_run().signature("x", observed=0.0, predicted=0.0, tol=tol)


@pytest.mark.parametrize("observed", [math.nan, math.inf, torch.tensor(float("nan"))])
def test_non_finite_signature_is_recorded_unconfirmed(observed):
    run = make_run()
    run.signature("x", observed=observed, predicted=0.0, tol=1e9)
    assert run.signatures["x"].confirmed is False
    assert run.signatures["x"].observed is None


IDEA = idea_module("faulty", arm("baseline"), arm("idea", """
    if run.seed == 1 and os.environ.get("BENCH_TEST_CRASH"):
        os._exit(3)   # the worker process dies mid-run
    run.fit(run.track.model())
    run.signature("zero", observed=0.0, predicted=0.0, tol=0.0)"""), '''
    @pytest.mark.mechanism
    def test_claim_that_errors():
        raise RuntimeError("the claim's own code is broken")
    ''', imports="import os\nimport pytest", seeds=3)


# The -n 2 sessions of this file, each started once per worker and asserted on by several
# tests.
# "crash": IDEA with a worker that dies, a gate and a JUnit XML file;
# "modules": IDEA (no crash), BAD_VALUES and LEAKY benched together, -rA: a line per outcome.
N2_MODULES = {"test_faulty.py": "IDEA", "test_bad_values.py": "BAD_VALUES",
              "test_leaky.py": "LEAKY"}


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    sessions = {}

    def session(kind: str):
        if kind not in sessions:
            ini = {"pytest.ini": "[pytest]\n"}
            if kind == "crash":
                sessions[kind] = shared_session(
                    tmp_path_factory, f"faults-{kind}", {**ini, "test_faulty.py": IDEA},
                    "--bench-epochs", "1", "-n", "2", "--bench-gate", "not-harms",
                    "--junitxml", "junit.xml", BENCH_TEST_CRASH="1")
            else:
                modules = {name: globals()[source] for name, source in N2_MODULES.items()}
                sessions[kind] = shared_session(
                    tmp_path_factory, f"faults-{kind}", {**ini, **modules},
                    "--bench-epochs", "1", "-p", "no:randomly", "-rA", "-n", "2")
        return sessions[kind]
    return session


def outcomes_of(result, module: str) -> dict:
    """The outcomes of ``module``'s tests in a session run with -rA (one line per test)."""
    counts = {}
    for line in result.outlines:
        word, _, nodeid = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and nodeid.startswith(module + "::"):
            counts[word.lower()] = counts.get(word.lower(), 0) + 1
    return counts


def assert_module_outcomes(result, xdist, module: str, **counts) -> None:
    """``module``'s outcomes: read per module in the shared -n 2 session, else the session's."""
    if xdist:
        assert outcomes_of(result, module) == counts
    else:
        result.assert_outcomes(**counts)


def bench_or_share(pytester, workers, xdist, filename, source, *args):
    """(project root, result): n0, a session in this process of ``source`` alone; n2, the
    shared "modules" session, in which ``filename`` is one of three modules."""
    if not xdist:
        pytester.makeini("[pytest]\n")
        pytester.makepyfile(**{filename[:-3]: source})
        return pytester.path, run_session(pytester, "--bench-epochs", "1", *args)
    return workers("modules")


@pytest.mark.e2e
def test_worker_that_dies_loses_no_finished_run_and_gives_no_verdict(workers):
    root, result = workers("crash")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*crashed*", "benchkit: FAIL faulty tabular: incomplete*"])
    report = validate_report(root / "reports/faulty/tabular/bench_report.json")
    assert report["complete"] is False and report["comparison"] is None
    assert report["incomplete"]["missing"] == ["idea[tabular-lr=0.01-seed1]"]
    finished = {(r["arm"], r["seed"]) for r in report["runs"] if r["outcome"] == "passed"}
    assert finished == {("baseline", 0), ("baseline", 1), ("baseline", 2), ("idea", 0),
                        ("idea", 2)}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_mechanism_test_that_errors_fails_the_mechanism(pytester, workers, xdist):
    root, result = bench_or_share(pytester, workers, xdist, "test_faulty.py", IDEA)
    assert_module_outcomes(result, xdist, "test_faulty.py", passed=6, failed=1)
    report = validate_report(root / "reports/faulty/tabular/bench_report.json")
    assert report["mechanism_signature"]["confirmed"] is True
    assert report["mechanism_ok"] == 0 and report["system_verdict"] == "failed"
    test, = report["math_verification"]["tests"]
    assert test["outcome"] == "failed"
    assert "the claim's own code is broken" in test["message"]


@pytest.mark.e2e
def test_run_results_are_junit_xml_properties(workers):
    root, result = workers("crash")
    assert result.ret == 1  # the erroring claim (and the worker that died)
    import xml.etree.ElementTree as ET
    cases = ET.parse(root / "junit.xml").getroot().iter("testcase")
    props = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
             for case in cases}
    run = props["test_idea[tabular-lr=0.01-seed0]"]
    assert float(run["bench_test"]) > 0 and run["bench_diverged"] == "False"


# ------------------------------------------------------- values validated where they are given

def test_run_cfg_is_read_only_and_says_how_to_change_a_setting():
    run = make_run()
    for change in (lambda c: c.pop("lr"), lambda c: c.__setitem__("lr", 1.0),
                   lambda c: c.update(lr=1.0), lambda c: c.clear()):
        with pytest.raises(TypeError, match=r"run.cfg is read-only.*run.fit\(model, lr="):
            change(run.cfg)
    assert run.cfg == {"lr": 1e-2} and dict(run.cfg) == {"lr": 1e-2}
    assert {**run.cfg, "lr": 1.0} == run.cfg | {"lr": 1.0} == {"lr": 1.0}
    assert run.point().cfg == {"lr": 1e-2} and type(run.point().cfg) is dict


@pytest.mark.parametrize("call, fragment", [
    (lambda r: r.signature("s", 0.0, 0.0, 0.0, prediction=object()),
     r"run.signature\('s', prediction=...\) must be a string"),
    (lambda r: r.signature(3, 0.0, 0.0, 0.0), "run.signature: name must be"),
    (lambda r: r.signature("a\x1b[31m", 0.0, 0.0, 0.0), "printable"),
    (lambda r: r.log("x" * 101, 1.0), "run.log: name must be .*at most 100"),
    (lambda r: r.log("n", object()), r"run.log\('n', ...\) must be a real number"),
    (lambda r: r.log("n", torch.ones(2)), "single number"),
    (lambda r: r.record(val={"a": 1}, test=1.0), r"run.record\(val=...\) must be a real number"),
])
def test_values_that_cannot_enter_a_report_are_refused_where_given(call, fragment):
    with pytest.raises(TypeError, match=fragment):
        call(make_run())


BAD_VALUES = idea_source("bad_values", """run.fit(run.track.model())
    if run.seed == 0:
        run.signature("s", observed=0.0, predicted=0.0, tol=0.0, prediction=object())
    if run.seed == 1:
        run.cfg["lr"] = torch.tensor(1.0)
    run.log("zero_d_tensor", torch.tensor(2.0))""", seeds=3, imports="import torch")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_a_bad_value_fails_its_run_only(pytester, workers, xdist):
    """A non-JSON value used to be an INTERNALERROR that stopped the session."""
    root, result = bench_or_share(pytester, workers, xdist, "test_bad_values.py", BAD_VALUES)
    assert_module_outcomes(result, xdist, "test_bad_values.py", passed=4, failed=2)
    assert result.ret == 1 and "INTERNALERROR" not in result.stdout.str()
    report = validate_report(root / "reports/bad_values/tabular/bench_report.json")
    assert report["complete"] is False and len(report["runs"]) == 6
    assert {r["cfg"]["lr"] for r in report["runs"]} == {1e-2}
    assert {(r["arm"], r["seed"]) for r in report["runs"] if r["outcome"] == "failed"} == {
        ("idea", 0), ("idea", 1)}
    failed = {f["run"]: f["message"] for f in report["incomplete"]["failed"]}
    assert "prediction=...) must be a string" in failed["idea[tabular-lr=0.01-seed0]"]
    assert "run.cfg is read-only" in failed["idea[tabular-lr=0.01-seed1]"]
    idea2, = (r for r in report["runs"] if r["arm"] == "idea" and r["seed"] == 2)
    assert idea2["logs"] == {"zero_d_tensor": 2.0}


# ------------------------------------------------------- global state does not leak between runs

LEAKY = idea_module("leaky", '''
    OWN_THREADS = torch.get_num_threads()  # the process's own: a claim runs with it, a run with 1
    START = os.getcwd()

    def state(threads=OWN_THREADS):
        return {"float32": torch.get_default_dtype() == torch.float32,
                "grad": torch.is_grad_enabled(),
                "deterministic": not torch.are_deterministic_algorithms_enabled(),
                "anomaly": not torch.is_anomaly_enabled(),
                "matmul": torch.get_float32_matmul_precision() == "highest",
                "threads": torch.get_num_threads() == threads,
                "numpy": np.geterr()["divide"] == "warn",
                "environ": "LEAKY_RUN" not in os.environ and os.environ.get("HOME") is not None,
                "cwd": os.getcwd() == START}

    def leak():
        os.environ["LEAKY_RUN"] = "1"
        os.environ.pop("HOME", None)
        os.chdir(tempfile.gettempdir())
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        torch.use_deterministic_algorithms(True)
        torch.autograd.set_detect_anomaly(True)
        torch.set_float32_matmul_precision("medium")
        torch.set_num_threads(OWN_THREADS + 2)
        np.seterr(all="raise")
    ''', arm("baseline", """
    for name, ok in state(threads=1).items():
        run.log(name, float(ok))
    run.fit(run.track.model())"""), arm("idea", """
    for name, ok in state(threads=1).items():
        run.log(name, float(ok))
    run.fit(run.track.model())
    leak()"""), '''
    @pytest.mark.mechanism
    def test_claim_leaks_too():
        leak()

    @pytest.mark.mechanism
    def test_claim_sees_a_clean_state():
        assert all(state().values()), state()
    ''', imports="import os\nimport tempfile\nimport numpy as np\nimport pytest\nimport torch",
    seeds=3)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_global_state_set_by_one_run_reaches_no_other(pytester, workers, xdist):
    if xdist:  # LEAKY's runs share their worker processes with two other modules' runs
        root, result = workers("modules")
        assert outcomes_of(result, "test_leaky.py") == {"passed": 8}
    else:  # a fresh process: a leak must not reach this one
        pytester.makeini("[pytest]\n")
        pytester.makepyfile(test_leaky=LEAKY)
        root = pytester.path
        result = run_session(pytester, "--bench-epochs", "1", "-p", "no:randomly",
                             subprocess=True)
        result.assert_outcomes(passed=8)
    report = validate_report(root / "reports/leaky/tabular/bench_report.json")
    for r in report["runs"]:
        assert r["logs"] and all(v == 1.0 for v in r["logs"].values()), r
    assert report["complete"] is True and report["comparison"] is not None


def test_this_suite_has_a_per_test_timeout_and_ideas_do_not(request):
    """A hang in benchkit's own tests fails that test (tests/conftest.py; under mutmut, which
    times each mutant out itself, none), while the rootdir's ini, which ideas/ shares, sets no
    timeout: a real bench's limit is --bench-timeout."""
    import os
    import tomllib
    from pathlib import Path

    mutating = "MUTANT_UNDER_TEST" in os.environ
    assert request.node.get_closest_marker("timeout").args == ((0,) if mutating else (120,))
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    ini = tomllib.loads(pyproject.read_text())["tool"]["pytest"]["ini_options"]
    assert "timeout" not in ini
