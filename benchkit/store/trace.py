"""What a run executed and read, recorded while its arm test runs, and turned into the run's
dependencies (entries of :mod:`benchkit.store.fingerprint`).

Two cheap probes, on only while an arm test's body runs:

- a global trace function that notes every code object entered (call events only: it returns
  no local tracer, so no line events), kept to the project's files afterwards;
- an audit hook on ``open`` (installed once per process, idle between runs) that notes the
  files opened for reading.

The per-step path of :func:`benchkit.training.loop.train` pauses the trace after the first epoch
(:func:`pause` / :func:`resume`): every later epoch repeats the same calls, and tracing each of
them would slow training measurably. An arm with its own loop is traced whole.

From them, :func:`dependencies` keeps the project-local code (files under the rootdir that are
neither installed packages, the interpreter's, nor benchkit's own, which the store key covers)
and follows the globals that code reads to the top-level statements that bind them, across the
project modules they import.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Literal

from benchkit.store import fingerprint

if TYPE_CHECKING:
    from _typeshed import TraceFunction   # what sys.settrace takes
TraceEvent = Literal["call", "line", "return", "exception", "opcode"]
ImportFound = tuple[str, int, "tuple[str, ...] | None"]   # fingerprint.imports_in's items
Pending = list[tuple[str, str, str]]   # (path, name, kind) still to resolve

_codes: dict[int, CodeType] = {}
_opened: list[tuple[Any, ...]] = []
_state = {"active": False, "hooked": False}
_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _trace(frame: FrameType, event: TraceEvent, arg: Any, _codes: dict[int, CodeType] = _codes,
           _id: Callable[[object], int] = id) -> None:
    code = frame.f_code
    _codes[_id(code)] = code


_trace.__dict__["benchkit"] = True  # how a later reload of this module knows the tracer


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _state["active"]:
        _opened.append(args)


class Recording:
    """Records one arm test's body: ``start()`` before it, ``stop()`` after it."""

    def __init__(self) -> None:
        self.previous: TraceFunction | None = None
        self.codes: list[CodeType] = []
        self.opened: list[tuple[Any, ...]] = []

    def start(self) -> None:
        _codes.clear()
        _opened.clear()
        if not _state["hooked"]:
            sys.addaudithook(_audit)
            _state["hooked"] = True
        self.previous = sys.gettrace()
        _state["active"] = True
        sys.settrace(_trace if self.previous is None else _chain(self.previous))

    def stop(self) -> None:
        sys.settrace(self.previous)
        _state["active"] = False
        self.codes, self.opened = list(_codes.values()), list(_opened)
        _codes.clear()
        _opened.clear()


def _chain(previous: TraceFunction) -> TraceFunction:
    """Keep a tracer that was already set (coverage, a debugger) working."""
    def trace(frame: FrameType, event: TraceEvent, arg: Any) -> TraceFunction | None:
        _trace(frame, event, arg)
        return previous(frame, event, arg)
    trace.__dict__["benchkit"] = True
    return trace


def pause() -> TraceFunction | None:
    """Stop recording calls for a while (see the module docstring); returns what
    :func:`resume` needs, None when nothing is being recorded."""
    tracer = sys.gettrace()
    if tracer is None or not getattr(tracer, "benchkit", False):
        return None
    sys.settrace(None)
    return tracer


def resume(tracer: TraceFunction | None) -> None:
    if tracer is not None:
        sys.settrace(tracer)


# A run's dependencies resolve every loaded module's file: once per path per process, not per run.
_realpath = functools.lru_cache(maxsize=None)(os.path.realpath)


@functools.lru_cache(maxsize=1)
def _excluded() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {_realpath(paths[k]) for k in ("stdlib", "purelib", "platlib") if k in paths}
    roots |= {_realpath(sys.prefix), _realpath(sys.base_prefix),
              _realpath(str(Path(__file__).parent))}
    return tuple(r + os.sep for r in roots)


class _Project:
    """Which files are project-local, and how the dependencies name them."""

    def __init__(self, rootdir: Path, arm_module: Path):
        self.root = _realpath(os.fspath(rootdir))
        self.arm = _realpath(os.fspath(arm_module))
        self.excluded = _excluded()
        self._local: dict[str, str | None] = {}
        self.packages: dict[str, str] = {}
        for mod in list(sys.modules.values()):
            file = getattr(mod, "__file__", None)
            if isinstance(file, str):
                self.packages[_realpath(file)] = mod.__package__ or ""

    def local(self, filename: object) -> str | None:
        """The real path of a project file, None for anything else."""
        if not isinstance(filename, str) or not os.path.isabs(filename):
            return None  # <frozen ...>, <string>: not a file of the project
        if filename not in self._local:
            real = _realpath(filename)
            ok = real.startswith(self.root + os.sep) and not real.startswith(self.excluded) \
                and "site-packages" not in real and "dist-packages" not in real
            self._local[filename] = real if ok else None
        return self._local[filename]

    def ref(self, path: str) -> str:
        return "@" if path == self.arm else Path(os.path.relpath(path, self.root)).as_posix()

    def module_file(self, name: str) -> str | None:
        mod = sys.modules.get(name)
        return self.local(getattr(mod, "__file__", None))

    def resolve(self, importer: str, module: str, level: int) -> str | None:
        if not level:
            return module
        try:
            return importlib.util.resolve_name("." * level + module,
                                               self.packages.get(importer, ""))
        except (ImportError, ValueError):
            return None


def dependencies(codes: Iterable[CodeType], opened: Iterable[tuple[Any, ...]], rootdir: Path,
                 arm_module: Path) -> dict[str, str]:
    """The run's dependency entries (see :mod:`benchkit.store.fingerprint`) from what it executed
    (code objects) and opened (``open`` audit arguments)."""
    project = _Project(rootdir, arm_module)
    deps = {"@|conftests|": fingerprint.conftests_digest(arm_module, rootdir)}
    everything: set[str] = set()           # every name the executed code reads
    pending: Pending = []
    imports: list[tuple[str, ImportFound]] = []
    for code in codes:
        path = project.local(code.co_filename)
        if path is None:
            continue
        everything.update(code.co_names)
        src = fingerprint.source(path)
        if src is None:
            deps[f"{project.ref(path)}|stmts|"] = fingerprint.MISSING
            continue
        qual = src.enclosing(code.co_qualname)
        if qual is not None:
            deps[f"{project.ref(path)}|def|{qual}"] = src.entry("def", qual)
            for node in src.defs[qual]:
                imports.extend((path, imp) for imp in fingerprint.imports_in(node))
        pending.extend((path, name, "name") for name in code.co_names)
    for path, imp in imports:
        _follow_import(project, path, imp, "name", everything, pending)
    _close(project, deps, pending, everything)
    for args in opened:
        rel = _read_file(project, args)
        if rel is not None:
            deps[f"|file|{rel}"] = fingerprint.file_digest(Path(project.root, rel))
    return deps


def _close(project: _Project, deps: dict[str, str], pending: Pending,
           everything: set[str]) -> None:
    """Follow names to the statements that bind them, and those statements' own names and
    imports, until nothing new turns up."""
    while pending:
        path, name, kind = pending.pop()
        entry = f"{project.ref(path)}|{kind}|{name}"
        if entry in deps:
            continue
        src = fingerprint.source(path)
        if src is None:
            deps[f"{project.ref(path)}|stmts|"] = fingerprint.MISSING
            continue
        deps.setdefault(f"{project.ref(path)}|stmts|", src.entry("stmts", ""))
        value = src.entry(kind, name)
        if value == fingerprint.MISSING or kind == "stmts":
            continue  # bound nowhere at top level: a local, an attribute or a builtin
        deps[entry] = value
        for stmt in src.bindings[name]:
            node = stmt if kind == "full" else fingerprint.shallow(stmt)
            pending.extend((path, n, "full") for n in fingerprint.read_names(node)
                           if f"{project.ref(path)}|full|{n}" not in deps)
            for imp in fingerprint.imports_in(node):
                _follow_import(project, path, imp, kind, everything, pending)


def _follow_import(project: _Project, importer: str, imp: ImportFound, kind: str,
                   everything: set[str], pending: Pending) -> None:
    module, level, names = imp
    absolute = project.resolve(importer, module, level)
    if absolute is None:
        return
    parts = absolute.split(".") if absolute else []
    for i in range(1, len(parts) + 1):     # import a.b.c runs a, a.b and a.b.c
        target = project.module_file(".".join(parts[:i]))
        if target is not None:
            whole = i < len(parts) or names is None
            pending.extend((target, n, kind) for n in (everything if whole or names is None
                                                       else names))
            pending.append((target, "", "stmts"))
    for name in names or ():
        target = project.module_file(f"{absolute}.{name}" if absolute else name)
        if target is not None:                # from pkg import submodule
            pending.extend((target, n, kind) for n in everything)


def _read_file(project: _Project, args: tuple[Any, ...]) -> str | None:
    """The rootdir-relative path of a project data file opened for reading, else None."""
    path, mode, flags = (tuple(args) + (None, None, None))[:3]
    if isinstance(mode, str):
        if any(c in mode for c in "wax+"):
            return None
    elif isinstance(flags, int) and flags & _WRITE:
        return None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        return None
    real = project.local(os.path.abspath(os.fspath(path)))
    if real is None or real.endswith((".py", ".pyc")) or not os.path.isfile(real):
        return None
    rel = Path(os.path.relpath(real, project.root))
    if rel.parts and rel.parts[0] in (".git", ".pytest_cache", "__pycache__"):
        return None
    return rel.as_posix()
