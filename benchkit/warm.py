"""``--bench-warm``: xdist workers forked from a pool that has torch imported already.

Every ``-n`` worker otherwise imports torch (about 1 s) before its first run, which on a short
bench is a large part of the session (docs/performance.md). With ``--bench-warm`` (ini
``bench_warm = true``) the controller points xdist's popen workers at the pool of
``benchkit/warm_pool.py``: each worker is a fork of a process that imported numpy, torch,
pytest and execnet and nothing else, made into exactly what ``python -u -c`` would be
(environment, working directory, ``sys.path``, stdio). When no pool answers, or the pool is
stale, a worker starts cold as before, so the results never depend on the pool; only the time
does.

The pool is started after a session that used cold workers, in the background, and exits after
``--bench-warm-idle`` minutes without a request. One pool serves one interpreter and one set of
the environment variables that change how torch and numpy load (``ENV_PREFIXES``).
``python -m benchkit warm`` lists the pools, ``--stop`` stops them. Linux only (it needs fork
and fd passing); elsewhere the option is accepted and workers start cold.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

import pytest

from benchkit import warm_pool

POOL_SCRIPT = Path(warm_pool.__file__)
# only modules pytest never assert-rewrites: a plugin's package imported before pytest marks it
# for rewriting draws "Module already imported so cannot be rewritten" in every worker
PRELOAD = ("numpy", "torch", "pytest", "execnet")
# variables read when the interpreter, numpy, torch or their libraries load: a pool serves
# only sessions that agree on all of them (the rest are set in each worker after the fork)
ENV_PREFIXES = ("PYTHON", "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "GOTO", "BLIS_",
                "NPY_", "NUMPY_", "TORCH", "PYTORCH_", "CUDA", "CUBLAS_", "CUDNN_", "NVIDIA_",
                "LD_", "MALLOC_", "DNNL_", "ONEDNN_", "ATEN_")
DIR_ENV = "BENCHKIT_WARM_DIR"
OUTPUT_KEY = "benchkit_warm"    # workeroutput: "warm", or why the worker started cold


def supported() -> bool:
    import socket

    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")


def pool_dir() -> Path:
    """The user's private directory of pool sockets (``BENCHKIT_WARM_DIR`` overrides it)."""
    return Path(os.environ.get(DIR_ENV) or
                Path(tempfile.gettempdir(), f"benchkit-warm-{os.getuid()}"))


def _private_dir() -> Path | None:
    """pool_dir(), created 0700; None when it is not safely ours (its socket runs code)."""
    path = pool_dir()
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def pool_key(environ) -> str:
    """Names the pool that can serve workers started with this environment (see
    ENV_PREFIXES) by this interpreter and this version of the pool."""
    material = {
        "executable": sys.executable,
        "pool": hashlib.sha256(POOL_SCRIPT.read_bytes()).hexdigest(),
        "preload": PRELOAD,
        "env": sorted((k, v) for k, v in environ.items()
                      if k.startswith(ENV_PREFIXES) and not k.startswith("BENCHKIT_")),
    }
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:16]


def ping(path) -> dict | None:
    try:
        return warm_pool.request(str(path), {"op": "ping"})
    except (OSError, ValueError):
        return None


def start_pool(directory: Path, key: str, idle_minutes: float, environ: dict) -> None:
    """Start a pool in the background, detached from this session (its own session, stdio to
    a log file), so nothing waits for it: not this process, not a CI step reading our pipes.
    ``environ`` is the one its key was computed from."""
    log = os.open(directory / f"{key}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            os.posix_spawn(sys.executable,
                           [sys.executable, "-u", str(POOL_SCRIPT), "serve", str(directory), key,
                            str(idle_minutes * 60), ",".join(PRELOAD)],
                           environ,
                           file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0),
                                         (os.POSIX_SPAWN_DUP2, log, 1),
                                         (os.POSIX_SPAWN_DUP2, log, 2)],
                           setsid=True)
        finally:
            os.close(devnull)
    finally:
        os.close(log)


def pools() -> list[dict]:
    """Every pool of this user that answers, with its socket path."""
    directory = pool_dir()
    found = []
    for sock in sorted(directory.glob("*.sock")) if directory.is_dir() else ():
        try:
            info = warm_pool.request(str(sock), {"op": "ping"})
        except ConnectionRefusedError:  # nobody listens: its server died without cleaning up
            sock.unlink(missing_ok=True)
            continue
        except (OSError, ValueError):
            continue
        found.append(dict(info, socket=str(sock)))
    return found


def stop_all() -> list[dict]:
    stopped = []
    for info in pools():
        try:
            warm_pool.request(info["socket"], {"op": "stop"})
            stopped.append(info)
        except (OSError, ValueError):
            pass
    return stopped


# -- in the session ------------------------------------------------------------------------
def worker_state(config: pytest.Config) -> None:
    """In a worker: say whether it was forked warm, and drop the marks from the environment so
    nothing this worker starts (a subprocess, a nested pytest) inherits them."""
    warm = os.environ.pop(warm_pool.WARM_ENV, None)
    cold = os.environ.pop(warm_pool.COLD_REASON_ENV, None)
    if warm or cold:
        config.workeroutput[OUTPUT_KEY] = "warm" if warm else cold


class WarmWorkers:
    """Controller side of --bench-warm: point xdist's popen workers at the pool, count how they
    started, and start a pool after the session when none answered."""

    def __init__(self, idle_minutes: float):
        self.idle_minutes = idle_minutes
        self.directory = _private_dir() if supported() else None
        self.environ: dict[str, str] = {}  # what the workers start with, for key and pool
        self.key = ""                      # set once the workers are pointed at a pool
        self.eligible = 0                  # popen workers of this session
        self.started: list[str] = []       # "warm" or the reason a worker started cold

    @property
    def socket(self) -> Path:
        return self.directory / f"{self.key}.sock"

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_setupnodes(self, config, specs) -> None:
        eligible = [spec for spec in specs
                    if getattr(spec, "popen", False) and not spec.python and not spec.via]
        self.eligible = len(eligible)
        if self.directory is None or not eligible:
            return
        self.environ = dict(os.environ)  # xdist starts the workers with it, right after this
        self.key = pool_key(self.environ)
        client = shlex.join([sys.executable, str(POOL_SCRIPT), "connect", str(self.socket)])
        for spec in eligible:
            spec.python = client

    def pytest_testnodedown(self, node, error) -> None:
        state = getattr(node, "workeroutput", {}).get(OUTPUT_KEY)
        if state:
            self.started.append(state)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for line in self.summary_lines():
            terminalreporter.write_line(line)

    def pytest_unconfigure(self, config) -> None:
        if self.key and ping(self.socket) is None:
            start_pool(self.directory, self.key, self.idle_minutes, self.environ)

    @property
    def warm(self) -> int:
        return self.started.count("warm")

    def summary_lines(self) -> list[str]:
        if not self.eligible:
            return []
        if self.directory is None:
            why = ("needs Linux" if not supported() else
                   f"{pool_dir()} is not a private directory of this user")
            return [f"benchkit: --bench-warm: workers started cold ({why})"]
        lines = [f"benchkit: --bench-warm: {self.warm} of {len(self.started)} worker(s) forked "
                 "from the warm pool (torch preloaded)"]
        cold = sorted({s for s in self.started if s != "warm"})
        if cold:
            lines.append(f"benchkit: --bench-warm: started cold because {'; '.join(cold)}; a "
                         "pool starts after this session for the next one")
        return lines
