"""Process-wide settings a bench test may change, kept from leaking into the tests after it.

A run that calls ``torch.set_default_dtype(torch.float64)`` or ``torch.set_grad_enabled(False)``
and does not undo it would change every run that follows in its process, and which runs follow
it depends on how xdist schedules them: the results would depend on ``-n``. So every test of a
bench module (arm or mechanism) starts from the state its process had at its first bench test
(the state conftest files and idea modules set up, identical in every process), and whatever
it changes is undone after its teardown.

Covered (:data:`COVERED`): torch's default dtype and default device, grad mode, deterministic
algorithms (and warn-only), anomaly detection (and its NaN check), float32 matmul precision,
cuDNN's deterministic and benchmark flags, the intra-op thread count; numpy's floating-point
error handling (``np.seterr``); environment variables (``os.environ``) and the working
directory (a run that sets a variable or calls ``os.chdir`` would otherwise change the runs
after it, and whether its baseline ran in the same process); the root logger's level and
handlers and ``logging.disable``; ``sys.path``. torch's inter-op thread count cannot be undone
(torch takes it once per process): a bench test that changes it fails
(:meth:`Guard.irreversible`) and says where to set it instead. Not covered: module globals,
functions monkeypatched and not restored, an ``inference_mode`` or other context entered and
never left (``--bench-audit-fresh`` notices their effect: docs/neighbours.md), and random
number generators (seeded before every run instead).

torch is looked at only when it is already imported: a session that reuses every run never
imports it.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys

import pytest

COVERED = ("default_dtype", "default_device", "grad", "deterministic", "anomaly",
           "matmul_precision", "cudnn", "threads", "numpy_errors", "environ", "cwd",
           "logging", "sys_path")
IRREVERSIBLE = ("interop_threads",)   # checked after each bench test's call, not undone
PYTEST_OWN = "PYTEST_CURRENT_TEST"   # pytest sets it per phase: never restored by us


def _torch_state(torch) -> dict:
    return {
        "default_dtype": torch.get_default_dtype(),
        "default_device": str(torch.get_default_device()),
        "grad": torch.is_grad_enabled(),
        "deterministic": (torch.are_deterministic_algorithms_enabled(),
                          torch.is_deterministic_algorithms_warn_only_enabled()),
        "anomaly": (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
        "matmul_precision": torch.get_float32_matmul_precision(),
        "cudnn": (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark),
        "threads": torch.get_num_threads(),
    }


def _torch_defaults(torch) -> dict:
    """torch's state as imported (the thread count is left alone: benchkit sets it per run)."""
    return {"default_dtype": torch.float32, "default_device": "cpu", "grad": True,
            "deterministic": (False, False), "anomaly": (False, True),
            "matmul_precision": "highest", "cudnn": (False, False)}


def _cudnn(torch, flags) -> None:
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = flags


_SETTERS = {
    "default_dtype": lambda torch, v: torch.set_default_dtype(v),
    "default_device": lambda torch, v: torch.set_default_device(None if v == "cpu" else v),
    "grad": lambda torch, v: torch.set_grad_enabled(v),
    "deterministic": lambda torch, v: torch.use_deterministic_algorithms(v[0], warn_only=v[1]),
    "anomaly": lambda torch, v: torch.autograd.set_detect_anomaly(v[0], check_nan=v[1]),
    "matmul_precision": lambda torch, v: torch.set_float32_matmul_precision(v),
    "cudnn": _cudnn,
    "threads": lambda torch, v: torch.set_num_threads(v),
}


def snapshot() -> dict:
    """The covered settings now (``torch`` is None while torch is not imported)."""
    import numpy as np

    torch = sys.modules.get("torch")
    return {"torch": _torch_state(torch) if torch is not None else None,
            "numpy_errors": np.geterr(), "environ": _environ(), "cwd": _cwd(),
            "logging": _logging(), "sys_path": list(sys.path),
            "interop_threads": torch.get_num_interop_threads() if torch is not None else None}


def _logging() -> tuple:
    root = logging.getLogger()
    return root.level, tuple(root.handlers), logging.root.manager.disable


def _apply_logging(state: tuple) -> None:
    """The root logger's level and handlers, and ``logging.disable``, as in ``state``."""
    if _logging() == state:
        return
    level, handlers, disabled = state
    root = logging.getLogger()
    root.setLevel(level)
    root.handlers[:] = list(handlers)
    logging.disable(disabled)


def _environ() -> dict:
    return {k: v for k, v in os.environ.items() if k != PYTEST_OWN}


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the folder was removed under the process
        return None


def _apply_process(environ: dict, cwd: str | None) -> None:
    """Environment variables as in ``environ`` (pytest's own left alone) and ``cwd``."""
    now = _environ()
    for name in now.keys() - environ.keys():
        del os.environ[name]
    for name, value in environ.items():
        if now.get(name) != value:
            os.environ[name] = value
    if cwd is not None and _cwd() != cwd:
        try:
            os.chdir(cwd)
        except OSError:
            pass  # gone: the next test starts where it can


def apply(state: dict) -> None:
    """Set the covered settings to ``state``, touching only those that differ."""
    import numpy as np

    np.seterr(**state["numpy_errors"])
    _apply_process(state["environ"], state["cwd"])
    _apply_logging(state["logging"])
    if sys.path != state["sys_path"]:
        sys.path[:] = state["sys_path"]
    torch = sys.modules.get("torch")
    if torch is None:
        return
    wanted = state["torch"] if state["torch"] is not None else _torch_defaults(torch)
    now = _torch_state(torch)
    for key, value in wanted.items():
        if now[key] != value:
            _SETTERS[key](torch, value)


class Guard:
    """One per process: the state of its first bench test, restored around each bench test."""

    def __init__(self):
        self.start: dict | None = None
        self.before: dict | None = None   # the state the current bench test restores
        self.imported_interop: int | None = None   # torch's inter-op count when a test imported it

    @contextlib.contextmanager
    def around(self):
        before = self.before = snapshot()
        if self.start is None:
            self.start = before
        apply(self.start)
        try:
            yield
        finally:
            apply(before)
            self.before = None

    def irreversible(self) -> str | None:
        """Why the bench test running now changed what cannot be undone (torch's inter-op
        thread count, which torch takes once per process), or None: the runs after it in its
        process would run with its setting, so it fails instead."""
        torch = sys.modules.get("torch")
        if self.before is None or torch is None:
            return None
        was = self.before["interop_threads"]
        now = torch.get_num_interop_threads()
        if was is None:   # torch first imported by this test: it had torch's own count
            was = self.imported_interop
        if was is None or now == was:
            return None
        return (f"benchkit: this test changed torch's inter-op thread count ({was} -> {now}), "
                "which torch cannot undo in a process: every test after it in this process "
                "would run with it. Call torch.set_num_interop_threads in conftest.py (before "
                "any bench test), where every process sets it alike")

    def torch_imported(self) -> None:
        """Called when a bench test has just imported torch, before benchkit sets its thread
        count: the test then leaves torch as imported (its own thread count included), so
        that tests after it in the process get torch's defaults, not benchkit's settings."""
        torch = sys.modules.get("torch")
        if self.before is not None and self.before["torch"] is None and torch is not None:
            self.before["torch"] = _torch_state(torch)
            self.imported_interop = torch.get_num_interop_threads()


GUARD = pytest.StashKey[Guard]()  # on pytest's config: the process's Guard
