"""Installed in any project, benchkit is invisible until a module benches (README, "Installed
alongside other projects"): a plain project's sessions are the same with and without it, with
and without pytest-xdist; what a bench session sets up is undone when it ends.

Every session here runs in process (``runpytest_inprocess``): what benchkit would change in a
process (environment, signal handlers, torch's thread count) is then visible to the test.
"""
from __future__ import annotations

import ast
import json
import re
import signal
import tomllib
from pathlib import Path

import pytest
import torch

import benchkit
from idea_modules import idea_module, RECORDED_ARMS

PLAIN_INI = """\
[pytest]
addopts = --strict-markers
markers =
    bench: the project's own benchmarks
    arm(side): the project's own marker named arm
    mechanism: the project's own marker named mechanism
"""
PLAIN_CONFTEST = """\
import pytest

@pytest.fixture
def run():
    return 41
"""
PLAIN_TESTS = """\
import json
import os
import signal
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

def test_the_projects_run_fixture(run):
    assert run + 1 == 42

@pytest.mark.arm("left")
def test_an_arm_mark_of_its_own():
    pass

@pytest.mark.mechanism
@pytest.mark.parametrize("x", [1, 2])
def test_a_mechanism_mark_of_its_own(x):
    assert x

def test_fails():
    assert 1 == 2

def test_observe():
    Path(__file__).with_name("observed.json").write_text(json.dumps({
        "env": sorted(k for k in os.environ if k.startswith(("OMP", "MKL", "BENCH"))),
        "sigterm": repr(signal.getsignal(signal.SIGTERM)),
    }))
"""
CONFIGURATIONS = {"benchkit": [], "no-benchkit": ["-p", "no:benchkit"],
                  "benchkit-no-xdist": ["-p", "no:xdist"],
                  "no-benchkit-no-xdist": ["-p", "no:benchkit", "-p", "no:xdist"]}


def _plain_session(pytester, monkeypatch, name: str, args: list[str]):
    """Run the plain project, made afresh in its own folder, with ``args``: its outcomes,
    its output (paths and times normalised; pytest's own ``plugins:`` line, which lists
    what is installed, left out), its files and what its test observed."""
    root = pytester.mkdir(name)
    (root / "pytest.ini").write_text(PLAIN_INI)
    (root / "conftest.py").write_text(PLAIN_CONFTEST)
    (root / "test_plain.py").write_text(PLAIN_TESTS)
    monkeypatch.chdir(root)
    result = pytester.runpytest_inprocess("-p", "no:randomly", *args)
    lines = [re.sub(r"in [0-9.]+s", "in Ts", line.replace(str(root), "<root>"))
             for line in result.outlines if not line.startswith("plugins:")]
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                   if "__pycache__" not in p.parts)
    observed = json.loads((root / "observed.json").read_text())
    return result.parseoutcomes(), result.ret, lines, files, observed


def test_a_project_that_benches_nothing_does_not_notice_benchkit(pytester, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    sessions = {name: _plain_session(pytester, monkeypatch, name, args)
                for name, args in CONFIGURATIONS.items()}
    outcomes, ret, lines, files, observed = sessions["no-benchkit-no-xdist"]
    assert outcomes == {"passed": 5, "failed": 1} and ret == pytest.ExitCode.TESTS_FAILED
    assert ".pytest_cache/d" not in files  # pytest's own cache only: no benchkit-runs folder
    for name, session in sessions.items():
        assert session == sessions["no-benchkit-no-xdist"], name
    assert not any("benchkit" in line for line in lines)
    assert "OMP_NUM_THREADS" not in observed["env"]


def test_a_run_argument_outside_a_bench_module_gets_pytests_own_error(pytester):
    pytester.makepyfile(test_x="def test_wants_run(run):\n    pass\n")
    with_benchkit = pytester.runpytest_inprocess("-p", "no:randomly")
    without = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:benchkit")
    for result in (with_benchkit, without):
        assert result.parseoutcomes() == {"errors": 1}
        result.stdout.fnmatch_lines(["*fixture 'run' not found*"])


def test_arm_tests_without_a_bench_mark_are_left_to_the_project_with_a_warning(pytester):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.fixture
        def run():
            return 1

        @pytest.mark.arm("baseline")
        def test_baseline(run):
            assert run == 1
    """)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    assert result.parseoutcomes()["passed"] == 1
    result.stdout.fnmatch_lines(["*arm tests (test_baseline) but no module-level pytestmark*"
                                 "benchkit does not bench this module*"])


BENCH_MODULE = idea_module("quiet", RECORDED_ARMS, seeds=2)
AFTER_THE_BENCH = """\
import os

import torch

def test_torch_threads_are_the_processes_own():
    assert torch.get_num_threads() == {threads}
    assert "OMP_NUM_THREADS" not in os.environ
"""


def test_a_bench_session_without_xdist_sets_up_only_for_its_runs_and_undoes_it(
        pytester, monkeypatch, read_report):
    """With pytest-xdist blocked (as in an environment without it) a bench works; torch's
    thread count is the bench runs' only, the tests after them and the process get the
    thread count and SIGTERM handler they had."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    threads, sigterm = torch.get_num_threads(), signal.getsignal(signal.SIGTERM)
    own = 3 if threads != 3 else 2  # a count benchkit's default (1) is not
    try:
        torch.set_num_threads(own)
        pytester.makepyfile(test_a_bench=BENCH_MODULE,
                            test_z_plain=AFTER_THE_BENCH.format(threads=own))
        result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:randomly")
        assert torch.get_num_threads() == own
    finally:
        torch.set_num_threads(threads)
    assert result.parseoutcomes()["passed"] == 5, result.outlines
    assert signal.getsignal(signal.SIGTERM) == sigterm
    report = read_report(pytester.path, "quiet")
    assert report["n_seeds"] == 2
    result.stdout.fnmatch_lines(["benchkit *: torch * 1 torch thread(s)/process*"])


def test_hypothesis_is_an_extra_that_benchkit_itself_never_imports():
    """Hypothesis loads its pytest plugin in every session of an environment that has it:
    only idea modules with property tests need it, so it is the ``hypothesis`` extra."""
    project = tomllib.loads(Path(benchkit.__file__).parents[1].joinpath(
        "pyproject.toml").read_text())["project"]
    assert not any(dep.startswith("hypothesis") for dep in project["dependencies"])
    assert any(dep.startswith("hypothesis") for dep in
               project["optional-dependencies"]["hypothesis"])
    package = Path(benchkit.__file__).parent
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "hypothesis" for n in names), path


def test_an_unwritable_report_folder_stops_only_a_session_that_benches(pytester):
    """A file named ``reports`` where the reports would go: a session that benches nothing
    never looks; a bench module is a collection error that names the folder and the option."""
    (pytester.path / "reports").write_text("not a folder\n")
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    plain = pytester.runpytest_inprocess("-p", "no:randomly", "test_plain.py")
    assert plain.ret == pytest.ExitCode.OK and plain.parseoutcomes() == {"passed": 1}
    pytester.makepyfile(test_a_bench=BENCH_MODULE)
    benched = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    assert benched.ret == pytest.ExitCode.INTERRUPTED
    benched.stdout.fnmatch_lines(["*benchkit: *report directory*reports is not writable*"
                                  "--bench-report-dir*"])
    assert "INTERNALERROR" not in benched.stdout.str()


# -- issue 42: a neighbour's options, arguments, markers and run fixture ----------------------
def _config_with_args(args, here):
    from types import SimpleNamespace
    return SimpleNamespace(invocation_params=SimpleNamespace(args=tuple(args), dir=here))


def test_only_benchkits_own_options_switch_it_on(tmp_path):
    from benchkit.plugin import activation

    def asked(*args):
        return activation.asked_on_command_line(_config_with_args(args, tmp_path))

    assert not asked("--bench-rounds", "3") and not asked("--bench-rounds=3")
    assert not asked("--benchmark-only") and not asked("--bench-seedsX=4")
    assert asked("--bench-seeds", "4") and asked("--bench-seeds=4") and asked("--bench-fresh")


def test_the_options_benchkit_registers_are_the_ones_that_switch_it_on():
    from benchkit.plugin import hooks
    from benchkit.plugin.settings import OPTIONS

    parser = pytest.Parser(_ispytest=True)
    hooks.pytest_addoption(parser)
    names = {name for option in parser.getgroup("benchkit").options
             for name in option.names()}
    assert names == set(OPTIONS)


@pytest.mark.parametrize("value", ["x" * 300, "a and not " + "é" * 200, "bad\x00byte",
                                   "~nobody_such_user/" + "y" * 4000])
def test_a_long_or_odd_argument_is_never_taken_for_a_path(tmp_path, value):
    """``-k``/``-m``/``--deselect`` values and test paths are pytest's: benchkit looks only at
    the value of its own path options, and one that cannot be a path is simply not one."""
    from benchkit.plugin import activation

    for args in (["-k", value], ["--deselect", value], ["-m", value], [value],
                 ["--bench-store", value], ["--bench-report-dir", value]):
        activation.check_store_options(_config_with_args(args, tmp_path), None)


NEIGHBOUR_CONFTEST = """\
import pytest

def pytest_addoption(parser):
    parser.addoption("--bench-rounds", default=None, help="the project's own option")

@pytest.fixture(params=[1, 2])
def run(request):
    return request.param
"""


def test_a_projects_bench_option_and_a_long_k_are_left_alone(pytester):
    pytester.makeconftest(NEIGHBOUR_CONFTEST)
    pytester.makepyfile(test_plain="def test_ok(run):\n    assert run\n")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-rounds", "3",
                                          "-k", "x" * 300, "--deselect", "y" * 300)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.outlines
    assert "INTERNALERROR" not in result.stdout.str()
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--bench-rounds", "3")
    assert result.parseoutcomes() == {"passed": 2}
    assert not any("benchkit" in line for line in result.outlines
                   if not line.startswith("plugins:"))
    assert not (pytester.path / ".pytest_cache" / "d" / "benchkit-runs").exists()


def test_strict_markers_still_refuses_a_projects_unregistered_marks(pytester):
    """benchkit registers bench/arm/mechanism for its own modules; elsewhere, under
    --strict-markers, a project's mark of those names is refused as pytest would."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_mine="""
        import pytest

        @pytest.mark.mechanism
        def test_x():
            pass

        class TestGroup:
            @pytest.mark.arm("left")
            def test_y(self):
                pass
    """)
    loose = pytester.runpytest_inprocess("-p", "no:randomly")
    assert loose.parseoutcomes()["passed"] == 2
    strict = pytester.runpytest_inprocess("-p", "no:randomly", "--strict-markers")
    assert strict.ret == pytest.ExitCode.INTERRUPTED
    strict.stdout.fnmatch_lines(["*'arm' not found in `markers` configuration option*"])
    pytester.makeini("[pytest]\nmarkers =\n    arm: mine\n    mechanism: mine\n")
    registered = pytester.runpytest_inprocess("-p", "no:randomly", "--strict-markers")
    assert registered.parseoutcomes()["passed"] == 2


def test_a_bench_module_passes_strict_markers_beside_a_parametrized_project_run_fixture(
        pytester, read_report):
    """A project's ``run`` fixture with params is left out of arm tests (benchkit's ``run``
    parameter has precedence inside bench modules) and works everywhere else."""
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(NEIGHBOUR_CONFTEST)
    pytester.makepyfile(test_a_bench=BENCH_MODULE,
                        test_plain="def test_ok(run):\n    assert run in (1, 2)\n")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--strict-markers")
    assert result.parseoutcomes()["passed"] == 6, result.outlines
    assert read_report(pytester.path, "quiet")["n_seeds"] == 2


# -- issue 50: heavy imports and benchkit's ini keys in a session that benches nothing ----------
HEAVY_CHECK = """\
import sys

def test_nothing_heavy_is_imported():
    heavy = [name for name in ("numpy", "scipy", "torch") if name in sys.modules]
    assert not heavy, heavy
"""


@pytest.mark.e2e
@pytest.mark.parametrize("args", [["-p", "no:xdist"], ["-n", "2"]], ids=["alone", "xdist"])
def test_a_session_that_benches_nothing_imports_no_numpy_scipy_or_torch(tmp_path, monkeypatch,
                                                                        args):
    """In a fresh process, as a project meets benchkit (the stand-in floors plugin of this
    suite imports numpy, so it is left out)."""
    import subprocess
    import sys

    monkeypatch.delenv("PYTEST_PLUGINS", raising=False)
    (tmp_path / "test_plain.py").write_text(HEAVY_CHECK)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                           "-p", "no:cacheprovider", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_a_projects_own_bench_ini_key_is_read_only_where_benchkit_benches(pytester):
    """``bench_timeout = 1h`` (the project's own key, or a typo) leaves a session that benches
    nothing alone; where a module benches, it is benchkit's option and is refused in one line
    that names it and what is valid."""
    pytester.makeini("[pytest]\nbench_timeout = 1h\nbench_seeds = many\n")
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    plain = pytester.runpytest_inprocess("-p", "no:randomly", "test_plain.py")
    assert plain.ret == pytest.ExitCode.OK and plain.parseoutcomes() == {"passed": 1}
    pytester.makepyfile(test_a_bench=BENCH_MODULE)
    benched = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    assert benched.ret == pytest.ExitCode.INTERRUPTED
    benched.stdout.fnmatch_lines(["*benchkit: ini option bench_seeds: 'many' is not an "
                                  "integer; valid: an integer in *"])
    assert "INTERNALERROR" not in benched.stdout.str()
    asked = pytester.runpytest_inprocess("-p", "no:randomly", "test_plain.py", "--bench-fresh")
    assert asked.ret == pytest.ExitCode.USAGE_ERROR
    asked.stderr.fnmatch_lines(["*benchkit: ini option bench_seeds: 'many'*"])
