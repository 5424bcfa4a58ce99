"""Fingerprints of project source, function by function, that ignore comments and docstrings.

A run's dependencies (see :mod:`benchkit.store.trace`) are named entries ``"REF|KIND|NAME"`` whose
value is a hash computed here from the current source, so that a stored run can be checked
against the tree it is about to be reused in:

- ``REF`` is a file path relative to the rootdir, or ``@`` for the module that declares the arm
  (so a baseline arm that is identical in two idea modules is the same run in both);
- ``def|QUALNAME``: the function (or class) with that ``__qualname__``, whole;
- ``name|NAME``: the top-level statements that bind NAME, with the bodies of functions and
  methods left out (a body counts only when it ran, and then it has a ``def`` entry);
- ``full|NAME``: the same statements whole (a name used at import time: a decorator, a call);
- ``stmts|``: the top-level statements that bind no name (side effects such as
  ``torch.set_default_dtype``);
- ``conftests|``: the side effects and ``pytest_*`` hooks of the conftest files above the arm
  module (a conftest that only adds fixtures changes nothing);
- ``file|PATH`` (REF empty): the bytes of a project file the run opened.

Hashes come from ``ast.dump`` without line numbers, of trees whose docstrings are removed, so a
comment, a docstring or a blank line changes nothing while any change to code does. A file that
is gone or does not parse makes every entry in it differ: then the run is retrained.
"""
from __future__ import annotations

import ast
import copy
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar
from pathlib import Path

MISSING = "missing"
_SOURCES: dict[str, tuple[tuple[int, int, int], "Source | None"]] = {}  # path -> (stat, parsed)


def digest(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:32]


_Tree = TypeVar("_Tree", bound=ast.AST)


def _strip_docstrings(tree: _Tree) -> _Tree:
    """``tree`` with its docstrings removed, in place: the caller parsed it for this alone."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return tree


def shallow(stmt: ast.stmt) -> ast.stmt:
    """A top-level statement with function bodies left out (methods of classes too)."""
    stmt = copy.deepcopy(stmt)
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Pass()]
    return stmt


def _dump(nodes: Iterable[ast.AST]) -> str:
    return "\n".join(ast.dump(n) for n in nodes)


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds in its module."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    names = set()
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    names.discard("*")
    return names


def read_names(node: ast.AST) -> set[str]:
    """Names and attribute names a statement reads (a superset of the globals it uses)."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return found


def imports_in(node: ast.AST) -> list[tuple[str, int, tuple[str, ...] | None]]:
    """(module, level, names or None for the whole module) of every import in ``node``."""
    found: list[tuple[str, int, tuple[str, ...] | None]] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import):
            found.extend((a.name, 0, None) for a in sub.names)
        elif isinstance(sub, ast.ImportFrom):
            names = tuple(a.name for a in sub.names)
            found.append((sub.module or "", sub.level, None if "*" in names else names))
    return found


class Source:
    """One parsed module: its functions by qualname and its top-level statements by name."""

    def __init__(self, tree: ast.Module):
        self.tree = _strip_docstrings(tree)
        self.defs: dict[str, list[ast.AST]] = {}
        self._index(self.tree.body, "")
        self.bindings: dict[str, list[ast.stmt]] = {}
        self.unbound: list[ast.stmt] = []
        for stmt in self.tree.body:
            names = _bound_names(stmt)
            for name in names:
                self.bindings.setdefault(name, []).append(stmt)
            if not names:
                self.unbound.append(stmt)
        self._memo: dict[str, str] = {}

    def _index(self, nodes: Iterable[ast.AST], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + node.name
                self.defs.setdefault(qual, []).append(node)
                inner = qual + ("." if isinstance(node, ast.ClassDef) else ".<locals>.")
                self._index(node.body, inner)
            else:
                self._index(ast.iter_child_nodes(node), prefix)

    def enclosing(self, qualname: str) -> str | None:
        """The longest qualname prefix that names a def here (lambdas, comprehensions and
        generator expressions belong to the function they are written in)."""
        parts = qualname.split(".")
        while parts:
            name = ".".join(parts)
            if name in self.defs:
                return name
            parts.pop()
        return None

    def entry(self, kind: str, name: str) -> str:
        memo_key = f"{kind}|{name}"
        if memo_key not in self._memo:
            self._memo[memo_key] = self._entry(kind, name)
        return self._memo[memo_key]

    def _entry(self, kind: str, name: str) -> str:
        if kind == "def":
            nodes = self.defs.get(name)
            return digest(_dump(nodes)) if nodes else MISSING
        if kind in ("name", "full"):
            stmts = self.bindings.get(name)
            if not stmts:
                return MISSING
            return digest(_dump(stmts if kind == "full" else [shallow(s) for s in stmts]))
        if kind == "stmts":
            return digest(_dump(self.unbound))
        if kind == "hooks":
            hooks = sorted(n for n in self.defs if n.startswith("pytest_") and "." not in n)
            return digest(_dump(self.unbound) + "\n" + "\n".join(
                _dump(self.defs[h]) for h in hooks)) if (self.unbound or hooks) else ""
        raise ValueError(f"unknown fingerprint kind {kind!r}")


def source(path: str | Path) -> Source | None:
    """The parsed module at ``path`` (cached while the file is unchanged); None when it cannot
    be read or parsed."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _SOURCES.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        parsed = Source(ast.parse(Path(path).read_bytes(), filename=path))
    except (OSError, SyntaxError, ValueError, RecursionError):
        parsed = None
    _SOURCES[path] = (stamp, parsed)
    return parsed


def file_digest(path: str | Path) -> str:
    try:
        return digest(Path(path).read_bytes())
    except OSError:
        return MISSING


def code_digest(path: str | Path) -> str:
    """A whole module's code, comment- and docstring-free (its bytes if it does not parse)."""
    src = source(path)
    return file_digest(path) if src is None else digest(ast.dump(src.tree))


def conftests_digest(module_file: Path, rootdir: Path) -> str:
    """The side effects and hooks of the conftest files from the arm module's folder up to the
    rootdir; conftests with neither (fixtures only) do not count."""
    parts, here, root = [], Path(module_file).resolve().parent, Path(rootdir).resolve()
    while True:
        conftest = here / "conftest.py"
        if conftest.is_file():
            src = source(conftest)
            value = src.entry("hooks", "") if src is not None else MISSING
            if value:
                parts.append(f"{conftest.relative_to(root).as_posix()}={value}")
        if here == root or here.parent == here:
            return digest("\n".join(parts))
        here = here.parent


def current(entry: str, rootdir: Path, arm_module: Path) -> str:
    """The value ``entry`` (``REF|KIND|NAME``) has in the tree as it is now."""
    ref, kind, name = entry.split("|", 2)
    if kind == "file":
        return file_digest(Path(rootdir, name))
    if kind == "conftests":
        return conftests_digest(arm_module, rootdir)
    path = arm_module if ref == "@" else Path(rootdir, ref)
    src = source(path)
    return MISSING if src is None else src.entry(kind, name)


def changed(deps: Mapping[str, str], rootdir: Path, arm_module: Path) -> str | None:
    """The first dependency whose value differs from the tree now (None when none does)."""
    for entry in sorted(deps):
        if current(entry, rootdir, arm_module) != deps[entry]:
            return entry
    return None


def arm_fingerprint(function: Callable[..., object]) -> str:
    """The arm test function's own source, docstring-free: part of a run's lookup key."""
    code = getattr(function, "__code__", None)
    src = source(code.co_filename) if code is not None else None
    if src is None:
        return MISSING
    qual = src.enclosing(function.__qualname__)
    return src.entry("def", qual) if qual else MISSING


def arm_fingerprint_in(module_file: Path, qualname: str) -> str:
    """:func:`arm_fingerprint` from the module's source, for an arm that is not imported."""
    src = source(module_file)
    return MISSING if src is None or qualname not in src.defs else src.entry("def", qualname)
