"""Where runs train: ``--bench-device {cpu,cuda,cuda:N,mps,auto}`` resolved to one torch device
per process, and the settings that make an accelerator's results repeatable.

``auto`` is CUDA where there is a GPU, else MPS, else the CPU. Under pytest-xdist with several
GPUs, worker ``gwN`` trains on ``cuda:(N % count)``, so ``-n`` = the GPU count places one worker
per device; an explicit ``cuda:N`` is kept for every worker. A device this machine lacks is
refused before anything trains, naming the devices it has.

On CUDA, the same command must give the same bits, as on the CPU: deterministic algorithms
(``torch.use_deterministic_algorithms``), cuBLAS's fixed workspace (``CUBLAS_WORKSPACE_CONFIG``,
which must be set before CUDA starts, hence at configure time) and no cuDNN autotuning. What
was applied is recorded in the report's environment. The device kind and the accelerator's
model go into a run's store key: a run trained on one GPU model is not reused on another, while
the GPU's index does not matter (workers of one machine share their runs).

The CPU path imports no torch here: a CPU session keeps its cheap collection.
"""
from __future__ import annotations

import os
import re

CHOICES = ("cpu", "cuda", "cuda:N", "mps", "auto")
CUBLAS_WORKSPACE = ":4096:8"
_DETERMINISTIC_WORKSPACES = (":4096:8", ":16:8")


class DeviceError(ValueError):
    """A device that is no choice, or that this machine lacks (the message says which)."""


def parse(value: str) -> str:
    """Check the spelling of a ``--bench-device`` value (no torch): one of :data:`CHOICES`."""
    text = str(value).strip().lower()
    if text in ("cpu", "cuda", "mps", "auto") or re.fullmatch(r"cuda:\d+", text):
        return text
    raise DeviceError(f"unknown device {value!r}; valid: {', '.join(CHOICES)}")


def for_worker(requested: str, worker: str | None, count: int) -> str:
    """The CUDA device of one process: ``cuda:N`` as given; plain ``cuda`` is ``cuda:0``
    without xdist and ``cuda:(N % count)`` on xdist worker ``gwN``."""
    if requested != "cuda":
        return requested
    match = re.fullmatch(r"gw(\d+)", worker or "")
    return f"cuda:{int(match.group(1)) % count if match and count > 0 else 0}"


def available() -> list[str]:
    """The devices this machine offers, e.g. ``['cpu', 'cuda:0', 'cuda:1']``."""
    import torch

    found = ["cpu"] + [f"cuda:{i}" for i in range(cuda_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return found


def cuda_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def resolve(value: str, worker: str | None = None) -> str:
    """The device this process trains on, for a :func:`parse`-d value: ``cpu``, ``cuda:N`` or
    ``mps``; :class:`DeviceError` naming what is available when this machine lacks it."""
    requested = parse(value)
    if requested == "cpu":
        return "cpu"
    if requested.startswith("cuda"):
        _fix_cublas_workspace()  # before anything can start CUDA
    have = available()
    if requested == "auto":
        requested = "cuda" if cuda_count() else "mps" if "mps" in have else "cpu"
    if requested == "cuda" and cuda_count():
        return for_worker("cuda", worker, cuda_count())
    if requested in have:
        return requested
    why = ("CUDA is not available here" if requested == "cuda"
           else f"{requested} is not available here")
    raise DeviceError(f"{why}; available: {', '.join(have)}")


def _fix_cublas_workspace() -> None:
    """cuBLAS is deterministic only with a fixed workspace, read when CUDA starts."""
    if os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in _DETERMINISTIC_WORKSPACES:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE


def prepare(device: str) -> None:
    """Before a run trains on ``device``: the settings that make an accelerator repeatable
    (process-wide; nothing on the CPU, whose results are repeatable as they are)."""
    if not device.startswith("cuda"):
        return
    import torch

    _fix_cublas_workspace()
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.cuda.set_device(torch.device(device))


