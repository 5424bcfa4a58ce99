"""The benchkit pytest plugin, end to end: idea modules written into a temporary project and
benched by a real pytest session, with and without ``-n 2``: the run-level cases.

Most run-level cases share one session per mode (``suite``): one small idea module per case,
benched together, so that the expensive part (starting processes that import torch) is paid
twice for all of them rather than twice per case. Every module there has its own name, hence
its own report; each test below reads only its own idea's report and lines.

Sessions of one idea each: test_plugin_sessions.py (the gate, ``-m mechanism``),
test_plugin_collection.py (collection errors), test_plugin_options.py (options, ini).
"""
from __future__ import annotations

import json

import pytest

from idea_modules import idea_module, TORCH, BASELINE, FAST, HARMS, IDEA_SAME
from sessions import line_with, shared_session

# benches of several idea modules per session: longer than the suite's 120 s default
# each session runs once, whichever worker asks first (sessions.shared_session)
pytestmark = [pytest.mark.timeout(600), pytest.mark.e2e]

MODES = [pytest.param([], id="n0"), pytest.param(["-n", "2"], id="n2")]

NAN_MODEL = '''
class NaNOut(nn.Module):
    """Its loss is NaN from the first step."""
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return x.sum(1, keepdim=True) * self.w * float("nan")
'''


# ======================================================================== the shared suite
# 2: an idea that ignores its input, six seeds: significantly worse (HARMS, tests/sessions.py)
SUITE = {
    "test_const.py": HARMS,
    # 1, 3, 6: identical arms, three seeds (fewer than 6: the warning)
    "test_same.py": idea_module("same", BASELINE, IDEA_SAME, imports=TORCH, seeds=3),
    # 7: numpy scalars and 0-d tensors through run.record / run.signature / run.log
    "test_scalars.py": idea_module("scalars", '''
        @pytest.mark.arm("baseline")
        def test_baseline(run):
            run.record(val=np.float32(1.5 + run.seed), test=torch.tensor(2.25 + run.seed))
            run.log("n_params", np.int64(7))

        @pytest.mark.arm("idea")
        def test_idea(run):
            run.record(val=torch.tensor(1.25 + run.seed, dtype=torch.float64),
                       test=np.float64(2.0 + run.seed))
            run.signature("zero", observed=torch.tensor(0.0), predicted=np.float32(0.0),
                          tol=np.float64(1e-6), null=np.float64(1.0))
        ''', imports=TORCH),
    # 8: the idea arm records nothing
    "test_silent.py": idea_module("silent", BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.track.model()  # builds a model and forgets to train it
        ''', imports=TORCH),
    # 9: one run raises after training
    "test_raises.py": idea_module("raises", BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(run.track.model())
            if run.seed == 1:
                raise RuntimeError("boom on seed 1")
        ''', imports=TORCH),
    # 10: NaN loss in one config of two; then in every config
    "test_nan_some.py": idea_module("nan_some", NAN_MODEL,
                               BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(NaNOut() if run.cfg["lr"] == 1e-2 else run.track.model())
        ''', imports=TORCH, grid={"lr": [1e-2, 3e-3]}),
    "test_nan_all.py": idea_module("nan_all", NAN_MODEL, BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(NaNOut())
        ''', imports=TORCH),
    # 4: mechanism evidence
    "test_mech_fail.py": idea_module("mech_fail", BASELINE, IDEA_SAME, '''
        @pytest.mark.mechanism
        def test_claim():
            assert 1 + 1 == 3
        ''', imports=TORCH),
    "test_mech_ok.py": idea_module("mech_ok", BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(run.track.model())
            run.signature("residual", observed=1e-9, predicted=0.0, tol=1e-6, null=1.0)

        @pytest.mark.mechanism
        def test_claim():
            assert 1 + 1 == 2
        ''', imports=TORCH),
    "test_mech_sig_off.py": idea_module("mech_sig_off", BASELINE, '''
        @pytest.mark.arm("idea")
        def test_idea(run):
            run.fit(run.track.model())
            run.signature("residual", observed=0.5, predicted=0.0, tol=0.1)
        ''', imports=TORCH),
}
SUITE_OUTCOMES = {"passed": 52, "failed": 4}  # silent: 2 failed; raises: 1; mech_fail: 1
SUITE_ARGS = [*FAST, "--bench-gate=not-harms"]


class Suite:
    def __init__(self, tmp_path_factory, read_report):
        self.tmp_path_factory = tmp_path_factory
        self.read_report = read_report
        self.sessions = {}

    def session(self, mode: list[str]):
        """(root, result) of the suite benched with ``mode`` (run once per mode)."""
        key = tuple(mode)
        if key not in self.sessions:
            self.sessions[key] = shared_session(
                self.tmp_path_factory, "suite-" + ("-".join(mode) or "n0"),
                {"pytest.ini": "[pytest]\n", **SUITE}, *SUITE_ARGS, *mode)
        return self.sessions[key]

    def report(self, mode, name):
        root, _ = self.session(mode)
        return self.read_report(root, name)


@pytest.fixture(scope="module")
def suite(tmp_path_factory, read_report):
    return Suite(tmp_path_factory, read_report)


def runs_of(report):
    return {(r["arm"], json.dumps(r["cfg"]), r["seed"]): r for r in report["runs"]}


@pytest.mark.parametrize("mode", MODES)
def test_suite_outcomes(suite, mode):
    _, result = suite.session(mode)
    result.assert_outcomes(**SUITE_OUTCOMES)
    assert result.ret == 1  # failing tests (and the gate)
    result.stdout.fnmatch_lines(["*= benchkit =*"])


@pytest.mark.parametrize("mode", MODES)
def test_identical_arms_give_zero_diffs_and_p_one(suite, mode):
    report = suite.report(mode, "same")
    comp = report["comparison"]
    assert report["complete"] is True
    assert comp["per_seed_diffs"] == [0.0, 0.0, 0.0]
    assert comp["p_value"] == 1.0
    assert comp["idea_wins"] == 0
    assert report["practical_verdict"] == "inconclusive"
    assert report["baseline"]["full"]["per_seed"] == report["idea"]["per_seed"]
    assert report["mechanism_ok"] is None  # no evidence at all
    assert report["math_verification"]["passed"] is None
    _, result = suite.session(mode)
    # the suite runs with --bench-epochs 1: exploratory, so its only gate failure is that
    failed = [line for line in result.outlines if line.startswith("benchkit: FAIL same ")]
    assert failed and all("exploratory (--bench-epochs 1" in line for line in failed), failed


def test_per_seed_numbers_identical_with_and_without_xdist(suite):
    names = ("const", "same", "scalars", "raises", "nan_some", "nan_all", "mech_ok")

    def numbers(mode):
        out = {}
        for name in names:
            for r in suite.report(mode, name)["runs"]:
                key = (name, r["arm"], json.dumps(r["cfg"]), r["seed"])
                out[key] = (r["outcome"], r["diverged"],
                            None if r["val"] is None else float.hex(r["val"]),
                            None if r["test"] is None else float.hex(r["test"]))
        return out

    serial, distributed = numbers([]), numbers(["-n", "2"])
    assert len(serial) == 12 + 6 + 4 + 4 + 8 + 4 + 4
    assert distributed == serial


@pytest.mark.parametrize("mode", MODES)
def test_mechanism_ok(suite, mode):
    failing = suite.report(mode, "mech_fail")  # a mechanism test alone: no evidence for 1
    assert failing["mechanism_ok"] is None
    assert failing["math_verification"]["passed"] is False
    [claim] = failing["math_verification"]["tests"]
    assert claim["test"] == "test_mech_fail.py::test_claim"
    assert claim["outcome"] == "failed"

    confirmed = suite.report(mode, "mech_ok")
    assert confirmed["mechanism_ok"] == 1
    assert confirmed["math_verification"]["passed"] is True
    assert confirmed["mechanism_signature"]["signatures"]["residual"]["confirmed"] is True

    off = suite.report(mode, "mech_sig_off")
    assert off["mechanism_ok"] == 0
    sig = off["mechanism_signature"]["signatures"]["residual"]
    assert sig["confirmed"] is False
    assert sig["observed"] == 0.5

    assert suite.report(mode, "same")["mechanism_ok"] is None


@pytest.mark.parametrize("mode", MODES)
def test_few_seeds_warn_loudly(suite, mode):
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines([line_with(
        "benchkit: WARNING same tabular:", "only 3 seeds", "smallest possible two-sided p is 0.25",
        "sign-flip")])
    report = suite.report(mode, "same")
    assert any("smallest possible two-sided p is 0.25" in w and "sign-flip" in w
               for w in report["warnings"]), report["warnings"]


@pytest.mark.parametrize("mode", MODES)
def test_numpy_scalars_and_0d_tensors_land_as_plain_floats(suite, mode):
    report = suite.report(mode, "scalars")
    runs = runs_of(report)
    for seed in (0, 1):
        base = runs[("baseline", '{"lr": 0.01}', seed)]
        idea = runs[("idea", '{"lr": 0.01}', seed)]
        assert (base["val"], base["test"]) == (1.5 + seed, 2.25 + seed)
        assert (idea["val"], idea["test"]) == (1.25 + seed, 2.0 + seed)
        for value in (base["val"], base["test"], idea["val"], idea["test"]):
            assert type(value) is float
        assert base["logs"] == {"n_params": 7.0}
        assert type(base["logs"]["n_params"]) is float
        assert idea["signatures"] == {"zero": 0.0}
    assert report["comparison"]["per_seed_diffs"] == [-0.25, -0.25]
    assert report["mechanism_ok"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_arm_that_records_nothing(suite, mode):
    _, result = suite.session(mode)
    for seed in (0, 1):
        nodeid = f"test_silent.py::test_idea[tabular-lr=0.01-seed{seed}]"
        result.stdout.fnmatch_lines([line_with("benchkit: ", nodeid, " recorded no result"),
                                     line_with("FAILED ", nodeid)])
    report = suite.report(mode, "silent")
    assert report["complete"] is False
    assert report["practical_verdict"] == "incomplete"
    assert report["comparison"] is None
    assert sorted(report["incomplete"]["missing"]) == [
        "idea[tabular-lr=0.01-seed0]", "idea[tabular-lr=0.01-seed1]"]
    result.stdout.fnmatch_lines(["benchkit: FAIL silent tabular: incomplete*"])


@pytest.mark.parametrize("mode", MODES)
def test_run_that_raises(suite, mode):
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines([
        line_with('raise RuntimeError("boom on seed 1")'),
        "E * RuntimeError: boom on seed 1",
    ])
    result.stdout.fnmatch_lines([line_with(
        "FAILED", "test_raises.py::test_idea[tabular-lr=0.01-seed1]")])
    report = suite.report(mode, "raises")
    runs = runs_of(report)
    for arm, seed in (("baseline", 0), ("baseline", 1), ("idea", 0)):
        kept = runs[(arm, '{"lr": 0.01}', seed)]
        assert kept["outcome"] == "passed"
        assert isinstance(kept["val"], float) and isinstance(kept["test"], float)
    assert report["comparison"] is None
    assert report["complete"] is False
    assert report["practical_verdict"] == "incomplete"
    assert report["incomplete"]["missing"] == ["idea[tabular-lr=0.01-seed1]"]
    [failed] = report["incomplete"]["failed"]
    assert failed["run"] == "idea[tabular-lr=0.01-seed1]"
    assert "boom on seed 1" in failed["message"]
    result.stdout.fnmatch_lines(["benchkit: FAIL raises tabular: incomplete*"])


@pytest.mark.parametrize("mode", MODES)
def test_nan_loss_is_diverged_and_its_config_not_eligible(suite, mode):
    report = suite.report(mode, "nan_some")
    runs = runs_of(report)
    for seed in (0, 1):
        nan_run = runs[("idea", '{"lr": 0.01}', seed)]
        assert nan_run["diverged"] is True
        assert nan_run["outcome"] == "passed"  # diverging is a result, not an exception
        assert nan_run["val"] is None and nan_run["test"] is None
        assert runs[("idea", '{"lr": 0.003}', seed)]["diverged"] is False
    sweep = {json.dumps(s["cfg"]): s for s in report["idea_sweep"]}
    assert sweep['{"lr": 0.01}']["eligible"] is False
    assert sweep['{"lr": 0.01}']["diverged_seeds"] == [0, 1]
    assert sweep['{"lr": 0.003}']["eligible"] is True
    assert report["complete"] is True
    assert report["idea_config"] == {"lr": 0.003}
    assert any("diverged" in w for w in report["warnings"]), report["warnings"]


@pytest.mark.parametrize("mode", MODES)
def test_every_config_diverged(suite, mode):
    report = suite.report(mode, "nan_all")
    assert all(r["diverged"] for r in report["runs"] if r["arm"] == "idea")
    assert report["complete"] is False
    assert report["practical_verdict"] == "incomplete"
    assert any("idea" in reason and "diverged" in reason
               for reason in report["incomplete"]["reasons"]), report["incomplete"]
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines(["benchkit: FAIL nan_all tabular: *diverged*"])
    result.stdout.fnmatch_lines(["benchkit: FAIL nan_some tabular: *exploratory (*"])
    result.stdout.no_fnmatch_line("benchkit: FAIL nan_some tabular: incomplete*")


# ======================================================================== harms and the gate


@pytest.mark.parametrize("mode", MODES)
def test_idea_ignoring_its_input_harms(suite, mode):
    report = suite.report(mode, "const")
    assert report["practical_verdict"] == "harms"
    assert report["comparison"]["p_value"] < 0.05
    assert report["comparison"]["delta_mean"] > 0  # MSE: higher is worse
    assert report["n_seeds"] == 6
    assert not any("smallest possible two-sided sign-flip p" in w for w in report["warnings"])
    _, result = suite.session(mode)
    result.stdout.fnmatch_lines(["benchkit: FAIL const tabular: *harms*"])


