"""The software and hardware a run ran on: part of its store key and of the report's
environment. Versions are read from the installed metadata and the CPU from /proc/cpuinfo, so
that keying a stored run imports no torch (a CPU run's device needs none either)."""
from __future__ import annotations

import functools
import os
from typing import Any

import benchkit
from benchkit.store import hardware


def environment(threads: int | None = None, device: str = "cpu") -> dict[str, Any]:
    """The software and hardware a run ran on (part of its store key and of the report).
    ``threads`` is the torch thread count the run trains with
    (:func:`benchkit.training.run.set_threads`); without it torch is asked. ``device`` is the
    resolved ``--bench-device`` (:mod:`benchkit.training.device`), described by its kind and, on an
    accelerator, its model."""
    if threads is None:
        import torch
        threads = torch.get_num_threads()
    return dict(_environment(int(threads), device))


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:  # a source checkout on sys.path: ask the module
        return str(__import__(package).__version__)


@functools.lru_cache(maxsize=4)
def _environment(threads: int, device: str) -> dict[str, Any]:
    import platform  # platform.platform() reads the interpreter binary: once per process

    return {
        "python": platform.python_version(), "torch": _version("torch"),
        "numpy": _version("numpy"), "benchkit": benchkit.__version__,
        **device_description(device), "threads": threads,
        "platform": platform.platform(), "machine": platform.machine(), "cpu": hardware.cpu(),
    }


def device_description(device: str) -> dict[str, str]:
    """What of the device goes into a run's environment (and so its store key): its kind
    (``cpu``, ``cuda``, ``mps``) and, on an accelerator, its model and toolkit versions and the
    determinism settings applied."""
    kind = device.split(":")[0]
    if kind == "cpu":
        return {"device": "cpu"}
    import torch

    if kind == "cuda":
        name = torch.cuda.get_device_name(torch.device(device))
        accelerator = (f"{name} (CUDA {torch.version.cuda}, cuDNN "
                       f"{torch.backends.cudnn.version()})")
        determinism = (f"torch.use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG="
                       f"{os.environ.get('CUBLAS_WORKSPACE_CONFIG')}, cudnn.benchmark=False")
    else:
        accelerator, determinism = "Apple MPS", "none applied (MPS)"
    return {"device": kind, "accelerator": accelerator, "determinism": determinism}
