"""The run store: finished runs kept so that nothing trains twice, and reused only when nothing
the run executed has changed.

A run is found by its lookup key: the arm test's own source (docstring-free), the arm, track,
protocol, config and seed, benchkit's source, and what changes bits (python, torch and numpy
versions, thread count, device kind and accelerator model). Records sit under their key and the
CPU they trained on (bits differ across CPU types), so machines of several CPU types can share
a store; a session that only collects what others trained (``any_cpu``) takes any CPU's record,
which names it. Several records may sit under one key (the same arm code in another module, an
older tree); the one used is the first whose recorded dependencies (:mod:`benchkit.store.trace`)
all still match the tree. A baseline identical in several idea modules is trained once.

Every record read is checked (:mod:`benchkit.store.records`); an invalid one is a miss, and so is
an unsigned one when the session has a store key (``BENCHKIT_STORE_KEY``). A store that
cannot be read or written costs reuse, never the session: each problem becomes one line in
:attr:`RunStore.problems` (shown in the terminal) and training goes on.

Where records live is :mod:`benchkit.store.backends`'s business (``read``, ``write``, ``names``).
"""
from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Collection
from pathlib import Path

from benchkit.spec.idea import Config, IdeaSpec, cfg_id
from benchkit.spec.run_record import JsonDict
from benchkit.store import fingerprint
from benchkit.store import records
from benchkit.store.backends import DirectoryStorage, Storage
from benchkit.store.records import StoredRun
from benchkit.store import bounded, environment, hardware

STORE_VERSION = 2
NOT_TRAINED = "not trained for this code"          # why a run is missing, as merge says it
TRAINED_FROM_OTHER_CODE = "trained from other code"
NOT_SIGNED = "stored unsigned or signed with another key"
MISSING_REASONS = (NOT_TRAINED, TRAINED_FROM_OTHER_CODE, NOT_SIGNED)
ENV_KEYS = ("python", "torch", "numpy", "benchkit", "device", "accelerator", "threads")
StoredPoint = tuple[str, str, Config, int]   # (arm, track, cfg, seed) of a stored run


PACKAGE = Path(__file__).resolve().parents[1]   # benchkit/, every module a run may execute


def source_digest(root: Path) -> str:
    """The ``.py`` files under ``root``, byte for byte, with their paths. Bytes, not parsed
    code: the whole package costs milliseconds this way (parsing it cost a second a process),
    and an edit of a comment retraining runs errs on the safe side."""
    return fingerprint.digest("\n".join(
        f"{path.relative_to(root).as_posix()}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
        for path in sorted(root.rglob("*.py"))))


@functools.lru_cache(maxsize=1)
def benchkit_source_digest() -> str:
    """benchkit's whole package (:data:`PACKAGE`): a change to any of it retrains every run."""
    return source_digest(PACKAGE)


class RunStore:
    """Finished runs in ``storage`` (:mod:`benchkit.store.backends`; a path is taken as a
    directory), looked up by key and CPU, and checked against the tree."""

    def __init__(self, storage: Storage | str | Path, rootdir: Path, threads: int,
                 device: str = "cpu", *, any_cpu: bool = False, secret: bytes | None = None):
        self.storage = DirectoryStorage(storage) if isinstance(storage, (str, Path)) else storage
        self.rootdir = Path(rootdir)
        self.threads = int(threads)
        self.device = device  # the resolved --bench-device: its kind and model are keyed
        self.any_cpu = any_cpu
        self.secret = secret   # BENCHKIT_STORE_KEY: records are signed, and only signed ones used
        self.problems: list[str] = []   # one line each, in order, without repeats
        self.unsigned: set[str] = set()   # keys with a record refused for its signature
        self._read: dict[str, StoredRun] = {}   # record name -> the valid record read there

    def problem(self, line: str) -> None:
        line = f"benchkit: store: {line}"
        if line not in self.problems:
            self.problems.append(line)

    def key(self, *, arm_fingerprint: str, protocol: JsonDict, arm: str, track: str,
            cfg: Config, seed: int) -> str:
        """The lookup key of one run of an arm at (track, cfg, seed)."""
        env = environment.environment(self.threads, self.device)
        material = {
            "store_version": STORE_VERSION, "arm": arm, "arm_code": arm_fingerprint,
            "track": track, "protocol": protocol, "cfg": cfg, "seed": seed,
            "benchkit": benchkit_source_digest(), "env": {k: env.get(k) for k in ENV_KEYS},
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    @staticmethod
    def folder(key: str) -> str:
        return f"v{STORE_VERSION}/{key[:2]}/{key}"

    def records(self, key: str) -> list[StoredRun]:
        """Every valid record stored under ``key`` for this CPU (any CPU's with ``any_cpu``,
        this CPU's first); invalid ones are reported, not returned. A valid record is read once
        a store object (a session looks a run up at collection, its end and the item's setup),
        and the key's folder listed each time: a record stored since, by this process or
        another (a worker, a shard), has a new name (its digest), so it is read."""
        where = self.storage.location
        mine = f"{self.folder(key)}/{cpu_tag(hardware.cpu())}-"
        try:
            names = self.storage.names(self.folder(key))
        except OSError as exc:
            self.problem(f"cannot read the run store at {where} ({_why(exc)}): runs are "
                         "trained, not reused")
            return []
        names = sorted(names, key=lambda n: not n.startswith(mine))
        found = []
        for name in names if self.any_cpu else [n for n in names if n.startswith(mine)]:
            if name in self._read:
                found.append(self._read[name])
                continue
            try:
                record = load_stored(self.storage, name, key, self.secret)
            except OSError as exc:
                self.problem(f"cannot read stored run {name} ({_why(exc)}): trained again")
                continue
            except records.UnsignedRecord:
                self.unsigned.add(key)
                self.problem(f"stored runs at {where} that are not signed under "
                             f"{records.KEY_VARIABLE} are not used: they are trained again "
                             "(and stored signed)")
            except records.InvalidRecord as exc:
                self.problem(f"stored run {where}/{name} is invalid ({exc}): not used, the "
                             "run is trained again")
            else:
                if record is not None:
                    self._read[name] = record
                    found.append(record)
        return found

    def lookup(self, key: str, arm_module: Path, plan: JsonDict | None = None, *,
               extension: bool = False) -> StoredRun | None:
        """The stored record of ``key`` whose dependencies all still match, or None. Given the
        module's declared ``plan`` (:func:`benchkit.verdict.plan.declared_plan`), a record
        trained under it comes first (a ``--bench-fresh`` session stores its retrained runs
        beside the old ones), and the run of an ``extension`` config (beyond the declared
        grid) is only taken when trained under it (or under no recorded plan): whether it is
        needed at all was decided by the runs of its plan."""
        usable = [r for r in self.records(key)
                  if fingerprint.changed(r.deps, self.rootdir, Path(arm_module)) is None]
        if plan is None:
            return usable[0] if usable else None
        planned = [r for r in usable if r.origin.plan in (plan, None)]
        same = [r for r in planned if r.origin.plan == plan]
        chosen = same or planned or ([] if extension else usable)
        return chosen[0] if chosen else None

    def why_missing(self, key: str, arm_module: Path) -> str:
        """Why ``lookup`` finds no record of ``key``: never trained for this code, trained
        from other code (a dependency has changed since; it names the first), or stored
        without a signature the session's key verifies."""
        for record in self.records(key):
            entry = fingerprint.changed(record.deps, self.rootdir, Path(arm_module))
            if entry is not None:
                return f"{TRAINED_FROM_OTHER_CODE} ({entry.split('|')[-1]} has changed since)"
        if key in self.unsigned:
            return f"{NOT_SIGNED} than {records.KEY_VARIABLE}"
        return (f"{NOT_TRAINED} (its shard did not run or pass, or ran other code of the arm, "
                "benchkit or the environment)")

    def put(self, record: StoredRun) -> bool:
        """Store a record under its key and CPU; False (and a problem line) when it cannot be
        written."""
        name = record_name(record)
        try:
            self.storage.write(name, records.dumps(record))
        except (OSError, ValueError) as exc:
            self.problem(f"cannot write to the run store at {self.storage.location} "
                         f"({_why(exc)}): runs are not stored")
            return False
        return True

    def fill(self, spec: IdeaSpec, present: Collection[tuple[str, str, str, int]],
             plan: JsonDict | None = None) -> list[tuple[StoredPoint, StoredRun]]:
        """The stored runs of the idea ``spec`` that ``present`` lacks:
        ``[((arm, track, cfg, seed), record), ...]``. ``present`` holds the
        (arm, track, cfg_id, seed) of the runs the session has; a run with no usable record
        stays missing. ``plan``: the idea's declared plan, as :meth:`lookup` takes it."""
        module_file = self.rootdir / spec.module
        arm_tests = dict(spec.arm_tests)
        found: list[tuple[StoredPoint, StoredRun]] = []
        for arm in spec.arms:  # controls too: a report lacking them would be incomplete
            if arm not in arm_tests:
                continue
            code = fingerprint.arm_fingerprint_in(module_file, arm_tests[arm])
            for track in spec.tracks:
                for cfg in spec.grids[track]:
                    for seed in spec.seeds:
                        if (arm, track, cfg_id(cfg), seed) in present:
                            continue
                        record = self.lookup(self.key(
                            arm_fingerprint=code, protocol=spec.protocols[track], arm=arm,
                            track=track, cfg=cfg, seed=seed), module_file, plan,
                            extension=cfg not in spec.declared_grids[track])
                        if record is not None:
                            found.append(((arm, track, cfg, seed), record))
        return found


def cpu_tag(cpu: str) -> str:
    """The tag of a CPU model that a record's file name starts with."""
    return hashlib.sha256(cpu.encode()).hexdigest()[:16]


def record_name(record: StoredRun) -> str:
    """Where a record is stored: under its key, named by the CPU it trained on and its digest."""
    return f"{RunStore.folder(record.key)}/{cpu_tag(record.cpu)}-{record.digest[:24]}.json"


def load_stored(storage: Storage, name: str, key: str, secret: bytes | None = None
                ) -> StoredRun | None:
    """The record stored at ``name`` under ``key``, checked (:func:`records.load`), or None when
    there is none. Bounded before it is read (:data:`records.MAX_RECORD_BYTES`), and its file
    name must be the one its CPU and digest give: a record filed under another CPU's tag would
    be reused on a machine that computes other bits. Raises InvalidRecord or OSError."""
    try:
        data = storage.read(name, records.MAX_RECORD_BYTES)
    except bounded.Refused as exc:
        raise records.InvalidRecord(str(exc)) from None
    if data is None:
        return None
    record = records.load(data, key, secret)
    if name != record_name(record):
        raise records.InvalidRecord(f"its cpu {record.cpu!r:.80} and digest name "
                                    f"{record_name(record).rsplit('/', 1)[-1]}, not the file "
                                    "it is in")
    return record


def _why(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc.strerror or exc}" if isinstance(exc, OSError) \
        else f"{exc.__class__.__name__}: {exc}"


def unusable_store(exc: OSError, rootdir: Path, threads: int, device: str) -> RunStore:
    """The store of a session whose store folder cannot be made: nothing is found or kept,
    and the problem is said once (runs train without reuse)."""
    store = RunStore(_Unusable(), rootdir, threads, device)
    store.problem(f"cannot create the run store in pytest's cache ({_why(exc)}): runs are "
                  "trained, not reused or stored")
    return store


class _Unusable:
    location = "pytest's cache"

    def read(self, name: str, limit: int | None = None) -> bytes | None:
        return None

    def write(self, name: str, data: bytes) -> None:
        return None  # the problem was said once, when opening

    def names(self, folder: str) -> list[str]:
        return []
