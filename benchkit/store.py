"""The run store: finished runs kept (in pytest's cache, or where ``--bench-store`` says: see
:mod:`benchkit.storage`) so that nothing trains twice.

A stored run is reused only on an exact key match, and the key covers everything that can
change a run: arm, track protocol, config, seed, the idea module's source and the
project-local modules it imports (transitively), the conftest files above it, benchkit's own
source, the torch/numpy/python versions and the thread count. When in doubt, retrain: a module
whose imports can't be resolved still hashes its own source, and any error reading the store is
a miss.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path


STORE_VERSION = 1


def _hash_files(paths, root) -> str:
    """Names relative to ``root`` and contents: a checkout or an environment at another path
    (another machine, another CI job) hashes the same."""
    h = hashlib.sha256()
    for p in sorted(set(paths)):
        h.update(os.path.relpath(os.path.realpath(p), os.path.realpath(root)).encode())
        h.update(b"\0")
        h.update(Path(p).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def benchkit_source_hash() -> str:
    root = Path(__file__).parent
    return _hash_files((p for p in root.rglob("*") if p.suffix in (".py", ".json")), root)


def _excluded_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(os.path.realpath(paths[k]) for k in ("stdlib", "purelib", "platlib")
                 if k in paths) + (os.path.realpath(sys.prefix),)


def local_dependencies(module_file: Path, rootdir: Path) -> list[Path]:
    """The module's file and every project-local module it imports, transitively (files under
    ``rootdir`` that are not installed packages or the interpreter's)."""
    root = os.path.realpath(rootdir)
    excluded = _excluded_roots()
    seen: set[str] = set()
    stack = [os.path.realpath(module_file)]
    while stack:
        path = stack.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            tree = ast.parse(Path(path).read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        package = _package_of(path)
        for name in _imported_names(tree, package):
            mod = sys.modules.get(name)
            file = getattr(mod, "__file__", None)
            if not file:
                continue
            real = os.path.realpath(file)
            if real.startswith(root + os.sep) and not real.startswith(excluded):
                stack.append(real)
    return [Path(p) for p in seen]


def _package_of(path: str) -> str:
    for mod in list(sys.modules.values()):
        if getattr(mod, "__file__", None) and os.path.realpath(mod.__file__) == path:
            return mod.__package__ or ""
    return ""


def _imported_names(tree: ast.AST, package: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                yield from (".".join(parts[:i]) for i in range(1, len(parts) + 1))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".") if package else []
                pkg = pkg[:len(pkg) - node.level + 1] if node.level > 1 else pkg
                base = ".".join([*pkg, base] if base else pkg)
            if base:
                yield base
                yield from (f"{base}.{a.name}" for a in node.names)


def conftests_above(module_file: Path, rootdir: Path) -> list[Path]:
    found, here, root = [], Path(module_file).resolve().parent, Path(rootdir).resolve()
    while True:
        if (here / "conftest.py").is_file():
            found.append(here / "conftest.py")
        if here == root or here.parent == here:
            return found
        here = here.parent


@functools.lru_cache(maxsize=256)
def code_hash(module_file: str, rootdir: str) -> str:
    files = local_dependencies(Path(module_file), Path(rootdir))
    files += conftests_above(Path(module_file), Path(rootdir))
    return _hash_files(files, rootdir)


class RunStore:
    """Finished runs, one JSON record each in ``storage`` (:mod:`benchkit.storage`; a path is
    taken as a directory), keyed by everything that can change them (see the module's
    docstring) but the CPU: a record sits under its key and the CPU it trained on, so that
    machines of several CPU types can share one store. ``get`` takes this CPU's record, or
    with ``any_cpu`` (a session that only collects what others trained) any CPU's, whose
    record names it."""

    def __init__(self, storage, rootdir: Path, threads: int, device: str = "cpu", *,
                 any_cpu: bool = False):
        from benchkit.storage import DirectoryStorage

        self.storage = DirectoryStorage(storage) if isinstance(storage, (str, Path)) else storage
        self.rootdir = Path(rootdir)
        self.threads = int(threads)
        self.device = device  # the resolved --bench-device: its kind and model are keyed
        self.any_cpu = any_cpu

    def key(self, *, module_file, protocol: dict, arm: str, track: str, cfg: dict,
            seed: int) -> str:
        """The key of one run of an idea module at (arm, track, cfg, seed)."""
        from benchkit.environment import environment

        env = environment(self.threads, self.device)
        material = {
            "store_version": STORE_VERSION, "arm": arm, "track": track, "protocol": protocol,
            "cfg": cfg, "seed": seed, "code": code_hash(str(module_file), str(self.rootdir)),
            "benchkit": benchkit_source_hash(),
            "env": {k: env.get(k) for k in ("python", "torch", "numpy", "benchkit", "device",
                                            "accelerator", "threads")},
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    @staticmethod
    def _folder(key: str) -> str:
        return f"{key[:2]}/{key}"

    def _name(self, key: str, cpu: str) -> str:
        return f"{self._folder(key)}/{hashlib.sha256(cpu.encode()).hexdigest()[:16]}.json"

    def _read(self, name: str, key: str) -> dict | None:
        try:
            data = self.storage.read(name)
            payload = json.loads(data) if data is not None else None
        except (OSError, ValueError):
            return None
        return payload if isinstance(payload, dict) and payload.get("key") == key else None

    def get(self, key: str) -> dict | None:
        """The stored result under ``key`` trained on this CPU (with ``any_cpu``: else on any
        CPU, the first in name order); None when there is none or it cannot be read."""
        from benchkit.hardware import cpu

        found = self._read(self._name(key, cpu()), key)
        if found is None and self.any_cpu:
            try:
                names = self.storage.names(self._folder(key))
            except OSError:
                names = []
            for name in names:
                found = self._read(name, key)
                if found is not None:
                    break
        return found

    def put(self, key: str, payload: dict) -> None:
        """Store a run this machine trained, under its key and this CPU."""
        from benchkit.hardware import cpu

        record = {**payload, "key": key, "cpu": payload.get("cpu") or cpu()}
        self.storage.write(self._name(key, record["cpu"]),
                           json.dumps(record, sort_keys=True).encode("utf-8"))

    def fill(self, spec: dict, present) -> list[tuple[tuple, dict]]:
        """The stored runs of the idea ``spec`` (its plain form) that ``present`` lacks:
        ``[((arm, track, cfg, seed), stored result), ...]``. ``present`` holds the
        (arm, track, cfg_id, seed) of the runs the session has; a run with no stored result
        stays missing."""
        from benchkit.spec import ARMS, cfg_id

        module_file = self.rootdir / spec["module"]
        found = []
        for track in spec["tracks"]:
            for cfg in spec["grids"][track]:
                for seed in spec["seeds"]:
                    for arm in spec.get("arms", ARMS):
                        if (arm, track, cfg_id(cfg), seed) in present:
                            continue
                        stored = self.get(self.key(
                            module_file=module_file, protocol=spec["protocols"][track],
                            arm=arm, track=track, cfg=cfg, seed=seed))
                        if stored is not None:
                            found.append(((arm, track, cfg, seed), stored))
        return found
