"""The run store: finished runs kept so that nothing trains twice, and reused only when nothing
the run executed has changed.

A run is found by its lookup key: the arm test's own source (docstring-free), the arm, track,
protocol, config and seed, benchkit's source, and what changes bits (python, torch and numpy
versions, thread count, device, CPU). Several records may sit under one key (the same arm code
in another module, or an older tree); the one used is the first whose recorded dependencies
(:mod:`benchkit.recorder`) all still match the tree. A baseline that is identical in several
idea modules is therefore trained once.

Every record read is checked (:mod:`benchkit.records`); an invalid one is a miss. A store that
cannot be read or written costs reuse, never the session: each problem becomes one line in
:attr:`RunStore.problems` (shown in the terminal) and training goes on.

Where records live is a backend with three operations (``get_bytes``, ``put_bytes``, ``list``)
over ``/``-separated names; :class:`DirectoryBackend` keeps them in a folder.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Protocol

from benchkit import fingerprint as fp
from benchkit import records
from benchkit.atomic import write_atomic

STORE_VERSION = 2
ENV_KEYS = ("python", "torch", "numpy", "benchkit", "device", "threads", "cpu")


class Backend(Protocol):
    """Where records live. Names are ``/``-separated and relative; ``put_bytes`` replaces a
    name whole or not at all (never a torn record); errors are ``OSError``."""

    def get_bytes(self, name: str) -> bytes | None: ...     # None: no such record
    def put_bytes(self, name: str, data: bytes) -> None: ...
    def list(self, prefix: str) -> list[str]: ...           # names directly under a folder
    def describe(self) -> str: ...


class DirectoryBackend:
    """Records as files under a folder, written atomically (temp file + rename)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def describe(self) -> str:
        return str(self.root)

    def get_bytes(self, name: str) -> bytes | None:
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None

    def put_bytes(self, name: str, data: bytes) -> None:
        write_atomic(self.root / name, data)

    def list(self, prefix: str) -> list[str]:
        folder = self.root / prefix
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            return []
        return sorted(f"{prefix}{e.name}" for e in entries
                      if not e.name.startswith(".") and e.is_file())


@functools.lru_cache(maxsize=1)
def benchkit_source_digest() -> str:
    """benchkit's own code, comment- and docstring-free: a change to it retrains everything."""
    root = Path(__file__).parent
    return fp.digest("\n".join(f"{path.relative_to(root).as_posix()}:{fp.code_digest(path)}"
                                for path in sorted(root.rglob("*.py"))))


class RunStore:
    """Finished runs under a backend, looked up by key and checked against the tree."""

    def __init__(self, backend: Backend, rootdir: Path, threads: int):
        self.backend = backend
        self.rootdir = Path(rootdir)
        self.threads = int(threads)
        self.problems: list[str] = []   # one line each, in order, without repeats

    def problem(self, line: str) -> None:
        line = f"benchkit: store: {line}"
        if line not in self.problems:
            self.problems.append(line)

    def key(self, *, arm_fingerprint: str, protocol: dict, arm: str, track: str, cfg: dict,
            seed: int) -> str:
        """The lookup key of one run of an arm at (track, cfg, seed)."""
        from benchkit.run import environment

        env = environment(self.threads)
        material = {
            "store_version": STORE_VERSION, "arm": arm, "arm_code": arm_fingerprint,
            "track": track, "protocol": protocol, "cfg": cfg, "seed": seed,
            "benchkit": benchkit_source_digest(), "env": {k: env.get(k) for k in ENV_KEYS},
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    @staticmethod
    def _folder(key: str) -> str:
        return f"v{STORE_VERSION}/{key[:2]}/{key}/"

    def records(self, key: str) -> list[dict]:
        """Every valid record stored under ``key`` (invalid ones are reported, not returned)."""
        where = self.backend.describe()
        try:
            names = self.backend.list(self._folder(key))
        except OSError as exc:
            self.problem(f"cannot read the run store at {where} ({_why(exc)}): runs are "
                         "trained, not reused")
            return []
        found = []
        for name in names:
            try:
                data = self.backend.get_bytes(name)
            except OSError as exc:
                self.problem(f"cannot read stored run {name} ({_why(exc)}): trained again")
                continue
            if data is None:
                continue
            try:
                found.append(records.load(data, key))
            except records.InvalidRecord as exc:
                self.problem(f"stored run {where}/{name} is invalid ({exc}): not used, the "
                             "run is trained again")
        return found

    def lookup(self, key: str, arm_module: Path) -> dict | None:
        """The stored record of ``key`` whose dependencies all still match, or None."""
        for record in self.records(key):
            if fp.changed(record["deps"], self.rootdir, Path(arm_module)) is None:
                return record
        return None

    def put(self, record: dict) -> bool:
        """Store a record; False (and a problem line) when it cannot be written."""
        name = f"{self._folder(record['key'])}{record['digest'][:24]}.json"
        try:
            self.backend.put_bytes(name, records.dumps(record))
        except (OSError, ValueError) as exc:
            self.problem(f"cannot write to the run store at {self.backend.describe()} "
                         f"({_why(exc)}): runs are not stored")
            return False
        return True

    def fill(self, spec: dict, present) -> list[tuple[tuple, dict]]:
        """The stored runs of the idea ``spec`` (its plain form) that ``present`` lacks:
        ``[((arm, track, cfg, seed), record), ...]``. ``present`` holds the
        (arm, track, cfg_id, seed) of the runs the session has; a run with no usable record
        stays missing."""
        from benchkit.spec import ARMS, cfg_id

        module_file = self.rootdir / spec["module"]
        arm_tests = spec.get("arm_tests") or {}
        found = []
        for arm in ARMS:
            if arm not in arm_tests:
                continue
            code = fp.arm_fingerprint_in(module_file, arm_tests[arm])
            for track in spec["tracks"]:
                for cfg in spec["grids"][track]:
                    for seed in spec["seeds"]:
                        if (arm, track, cfg_id(cfg), seed) in present:
                            continue
                        record = self.lookup(self.key(
                            arm_fingerprint=code, protocol=spec["protocols"][track], arm=arm,
                            track=track, cfg=cfg, seed=seed), module_file)
                        if record is not None:
                            found.append(((arm, track, cfg, seed), record))
        return found


def _why(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc.strerror or exc}" if isinstance(exc, OSError) \
        else f"{exc.__class__.__name__}: {exc}"


def open_store(config, threads: int) -> RunStore | None:
    """The session's store in pytest's cache (None without the cache plugin). A cache folder
    that cannot be made is a problem line, not an error: runs then train without reuse."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    try:
        folder = cache.mkdir("benchkit-runs")
    except OSError as exc:
        store = RunStore(_Unusable(exc), config.rootpath, threads)
        store.problem(f"cannot create the run store in pytest's cache ({_why(exc)}): runs are "
                      "trained, not reused or stored")
        return store
    return RunStore(DirectoryBackend(folder), config.rootpath, threads)


class _Unusable:
    """A backend that could not be opened: nothing is found, nothing is written."""

    def __init__(self, exc: OSError):
        self.exc = exc

    def describe(self) -> str:
        return "pytest's cache"

    def get_bytes(self, name: str) -> bytes | None:
        return None

    def put_bytes(self, name: str, data: bytes) -> None:
        return None  # the problem was said once, when opening

    def list(self, prefix: str) -> list[str]:
        return []
