"""``--bench-device``: spelling, availability, the xdist worker -> GPU mapping, and what a run
records about its device. This machine has no GPU: CUDA is faked where a test needs one."""
from __future__ import annotations

import pytest
import torch

from benchkit.training import device
from benchkit.store import environment
from benchkit.training.device import DeviceError, for_worker, parse, resolve
from benchkit.store.runs import RunStore
from idea_modules import arm, idea_module

IDEA = idea_module("on_device", arm("baseline", """
    assert run.data.train.x.device == run.device
    run.fit(run.track.model())"""), arm("idea", """
    model = run.track.model().to(run.device)
    run.fit(model)
    assert next(model.parameters()).device == run.device"""))


@pytest.fixture
def gpus(monkeypatch):
    """Pretend this machine has ``n`` CUDA devices named ``names`` (no CUDA call is made)."""
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # restored afterwards

    def fake(n: int, names=("NVIDIA H200",)):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.setattr(torch.cuda, "get_device_name",
                            lambda d: names[torch.device(d).index % len(names)])
    yield fake
    environment._environment.cache_clear()  # no faked description outlives the test


@pytest.mark.parametrize("text, expected", [("cpu", "cpu"), ("CUDA", "cuda"), (" mps ", "mps"),
                                            ("cuda:3", "cuda:3"), ("auto", "auto")])
def test_parse_accepts_the_choices(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text", ["gpu", "cuda:", "cuda:-1", "tpu", "", "cuda:x"])
def test_parse_refuses_anything_else_naming_the_choices(text):
    with pytest.raises(DeviceError, match="valid: cpu, cuda, cuda:N, mps, auto"):
        parse(text)


@pytest.mark.parametrize("requested, worker, count, expected", [
    ("cuda", None, 4, "cuda:0"), ("cuda", "gw0", 2, "cuda:0"), ("cuda", "gw1", 2, "cuda:1"),
    ("cuda", "gw2", 2, "cuda:0"), ("cuda", "gw7", 4, "cuda:3"), ("cuda", "gw5", 1, "cuda:0"),
    ("cuda", "master", 2, "cuda:0"), ("cuda:1", "gw0", 2, "cuda:1"), ("cpu", "gw3", 2, "cpu"),
])
def test_each_xdist_worker_gets_its_own_gpu(requested, worker, count, expected):
    assert for_worker(requested, worker, count) == expected


def test_here_auto_is_the_cpu_and_cuda_is_refused_naming_what_there_is(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert resolve("auto") == ("mps" if "mps" in device.available() else "cpu")
    assert resolve("cpu") == "cpu"
    for value in ("cuda", "cuda:3"):
        with pytest.raises(DeviceError, match=r"not available here; available: cpu"):
            resolve(value)


def test_resolve_with_two_gpus(gpus):
    gpus(2)
    assert resolve("cuda", "gw3") == "cuda:1"
    assert resolve("auto", "gw2") == "cuda:0"
    assert resolve("cuda:1", "gw0") == "cuda:1"
    with pytest.raises(DeviceError, match=r"cuda:2 is not available here; available: cpu, "
                                          r"cuda:0, cuda:1"):
        resolve("cuda:2")


def test_resolve_sets_the_cublas_workspace_before_cuda_starts(gpus, monkeypatch):
    gpus(1)
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0")
    resolve("cuda")
    import os
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


def test_the_gpu_model_is_keyed_and_its_index_is_not(gpus, tmp_path):
    gpus(3, names=("NVIDIA H200", "NVIDIA H200", "NVIDIA A100"))

    def key(dev):
        store = RunStore(tmp_path, tmp_path, threads=1, device=dev)
        return store.key(arm_fingerprint="f", protocol={}, arm="idea",
                         track="tabular", cfg={"lr": 0.1}, seed=0)
    (tmp_path / "test_x.py").write_text("")
    assert key("cuda:0") == key("cuda:1")
    assert len({key("cuda:0"), key("cuda:2"), key("cpu")}) == 3
    env = environment.environment(1, "cuda:2")
    assert env["device"] == "cuda" and env["accelerator"].startswith("NVIDIA A100 (CUDA ")
    assert "use_deterministic_algorithms(True)" in env["determinism"]
    assert "CUBLAS_WORKSPACE_CONFIG=:4096:8" in env["determinism"]
    assert environment.environment(1, "cpu")["device"] == "cpu"
    assert "accelerator" not in environment.environment(1, "cpu")


@pytest.mark.parametrize("args, words", [
    (["--bench-device", "cuda"], ["--bench-device cuda", "CUDA is not available here",
                                  "available: cpu"]),
    (["--bench-device", "cuda:3"], ["cuda:3 is not available here", "available: cpu"]),
    (["--bench-device", "mps"], ["mps is not available here", "available: cpu"]),
    (["--bench-device", "tpu"], ["--bench-device", "unknown device 'tpu'",
                                 "cpu, cuda, cuda:N, mps, auto"]),
    (["-o", "bench_device=gpu"], ["ini option bench_device", "unknown device 'gpu'"]),
])
def test_a_device_this_machine_lacks_is_a_usage_error(pytester, monkeypatch, args, words):
    if torch.cuda.is_available() or "mps" in device.available():
        pytest.skip("this machine has an accelerator")
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # restored afterwards
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_on_device=IDEA)
    result = pytester.runpytest(*args)
    # an ini value is read only where benchkit is active: without a --bench-* option it is a
    # collection error of each bench module (README's refusals), an option a usage error
    expected = pytest.ExitCode.USAGE_ERROR if args[0].startswith("--bench") else \
        pytest.ExitCode.INTERRUPTED
    assert result.ret == expected
    text = result.stderr.str() + result.stdout.str()
    assert all(word in text for word in words), text
    assert "Traceback" not in text and "INTERNALERROR" not in text
    assert not (pytester.path / "reports").exists()  # nothing trained


@pytest.mark.timeout(300)
@pytest.mark.parametrize("value", ["cpu", "auto"])
def test_the_device_is_recorded_in_the_report(pytester, read_report, value):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    pytester.makeini(f"[pytest]\nbench_device = {value}\n")
    pytester.makepyfile(test_on_device=IDEA)
    result = pytester.runpytest("--bench-epochs", "1", "-p", "no:randomly")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["benchkit *: torch * on cpu, *"])
    env = read_report(pytester.path, "on_device")["environment"]
    assert env["device"] == "cpu" and "accelerator" not in env


def test_a_run_lives_on_its_device():
    from benchkit import tracks
    from benchkit.training.run import Run

    the_run = Run(arm="idea", track=tracks.get("tabular"), cfg={"lr": 0.1}, seed=0,
                  device="cpu")
    assert the_run.device == torch.device("cpu")
    assert all(t.device == the_run.device for split in the_run.data for t in split)
    shared = the_run.track.data(0).train.x
    assert the_run.data.train.x.data_ptr() != shared.data_ptr()  # a copy, on every device
