"""benchkit's layers, checked from the source alone (``ast``: nothing is imported or run).

The graph is every import of one benchkit module by another, at module level or inside a
function. It must have no cycle and no edge against :data:`ALLOWED`; no module imports or uses
(``module._name``) another module's private name; no module is over :data:`MAX_LINES` lines
unless one concept needs more (:data:`CONCEPT_LINES`); only the plugin imports pytest (or
``_pytest``), and each plugin module does (the plugin is pytest glue: what does not need pytest
lives in its layer); torch is imported at module level only where training happens. Everywhere
in the repository, a benchkit module is imported under its own name (``from benchkit.stats
import paired``, never ``paired as stats``): a reader meets one name for one module.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "benchkit"
# A module holds one concept. Past MAX_LINES, look whether it still does: split it where it holds
# two, and where one concept needs more, say which here (module -> (its limit, the concept)).
MAX_LINES = 400
CONCEPT_LINES: dict[str, tuple[int, str]] = {}
# Files that still import a benchkit module under another name or use another module's private
# name: the pipeline step's files (issue 43 items 1-3), which that step renames. A file leaves the
# list when it is clean (the tests below fail on a listed file that already is).
PENDING_RENAMES: set[str] = set()
PENDING_PRIVATE_USE: set[str] = set()

# The dependency rule: layer -> the layers it may import (besides itself and the root package,
# which holds only __version__). codec (the records' JSON, generated from their types) imports
# nothing of benchkit, and every layer that holds records imports it; stats imports nothing
# else of benchkit; spec the track registry;
# store spec's vocabulary and the track registry (floors kept between sessions); training tracks,
# spec (a run's record) and store; verdict stats, spec and tracks; report verdict, stats, spec,
# store (atomic writes) and tracks (which floors are limits); cli report, verdict, store, stats
# and spec; plugin everything.
ALLOWED: dict[str, set[str]] = {
    "codec": set(),
    "stats": {"codec"},
    "tracks": set(),
    "spec": {"tracks", "codec"},
    "store": {"spec", "tracks", "codec"},
    "training": {"tracks", "spec", "store"},
    "verdict": {"stats", "spec", "tracks", "codec"},
    "report": {"verdict", "stats", "spec", "store", "tracks", "codec"},
    "cli": {"report", "verdict", "store", "stats", "spec"},
    "plugin": {"stats", "tracks", "spec", "store", "training", "verdict", "report"},
    "models": {"tracks"},      # benchkit/models.py: the public alias of benchkit.tracks.models
    "__main__": {"cli"},       # python -m benchkit
}
PYTEST_LAYERS = {"plugin"}
TORCH_AT_IMPORT = {"benchkit.training.loop", "benchkit.training.optim", "benchkit.tracks.models"}


def module_name(path: Path) -> str:
    parts = ("benchkit",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str:
    """``benchkit.<layer>...``; the root package is its own layer ("benchkit")."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "benchkit"


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def imports(module: str, tree: ast.AST | None = None):
    """(imported benchkit module, names taken from it, line, at module level) for every import
    statement of ``module``."""
    tree = tree or ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "benchkit" or a.name.startswith("benchkit."):
                    yield a.name, [], node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package(module) else module.split(".")[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if not (base == "benchkit" or base.startswith("benchkit.")):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in MODULES:          # from package import submodule
                    yield sub, [], node.lineno, id(node) in top
                else:
                    yield base, [a.name], node.lineno, id(node) in top


def graph() -> dict[str, set[str]]:
    return {m: {dep for dep, _, _, _ in imports(m) if dep != m} for m in MODULES}


def test_the_modules_are_found():
    assert "benchkit.stats.paired" in MODULES and "benchkit.plugin.hooks" in MODULES
    assert all(layer(m) in ALLOWED or m == "benchkit" for m in MODULES), sorted(
        m for m in MODULES if layer(m) not in ALLOWED and m != "benchkit")


def test_every_import_names_an_existing_module():
    missing = [f"{m} imports {dep}" for m, deps in graph().items() for dep in deps
               if dep not in MODULES]
    assert not missing, missing


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), or with a self-loop."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def violations(g: dict[str, set[str]]) -> list[str]:
    bad = []
    for m, deps in sorted(g.items()):
        for dep in sorted(deps):
            src, dst = layer(m), layer(dep)
            if dst in (src, "benchkit"):
                continue
            if dst not in ALLOWED.get(src, set()):
                bad.append(f"{m} ({src}) imports {dep} ({dst})")
    return bad


def test_every_import_follows_the_layer_rule():
    assert violations(graph()) == []


def test_the_rule_is_acyclic():
    assert cycles({k: set(v) for k, v in ALLOWED.items()}) == []


def test_a_violation_is_found():
    g = {"benchkit.stats.paired": {"benchkit.verdict.build", "benchkit"},
         "benchkit.verdict.build": {"benchkit.stats.paired", "benchkit.spec.idea"}}
    assert violations(g) == ["benchkit.stats.paired (stats) imports benchkit.verdict.build "
                             "(verdict)"]


def test_no_import_of_another_modules_private_name():
    bad = [f"{m}:{line} imports {dep}.{n}" for m in MODULES
           for dep, names, line, _ in imports(m) for n in names
           if dep != m and n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
    assert not bad, bad


def test_a_private_import_is_found():
    tree = ast.parse("from benchkit.stats.paired import _hidden\n")
    assert [(d, n) for d, n, _, _ in imports("benchkit.report.fmt", tree)] == [
        ("benchkit.stats.paired", ["_hidden"])]


def third_party(module: str, names: tuple[str, ...], *, top_only: bool = False,
                tree: ast.Module | None = None) -> list[int]:
    """The lines where ``module`` (or the source ``tree``) imports a package in ``names`` or one
    of its submodules; at module level only with ``top_only``."""
    tree = tree or ast.parse(MODULES[module].read_text(encoding="utf-8"))
    lines = []
    for node in (tree.body if top_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found = [node.module or ""]
        else:
            continue
        if any(n == name or n.startswith(name + ".") for n in found for name in names):
            lines.append(node.lineno)
    return lines


PYTEST = ("pytest", "_pytest")


def test_only_the_plugin_imports_pytest():
    bad = [f"{m}:{line}" for m in MODULES if layer(m) not in PYTEST_LAYERS
           for line in third_party(m, PYTEST)]
    assert not bad, bad


def test_every_plugin_module_is_pytest_glue():
    """A plugin module that never imports pytest belongs to the layer of what it does."""
    bad = [m for m in MODULES if layer(m) in PYTEST_LAYERS and not is_package(m)
           and not third_party(m, PYTEST)]
    assert not bad, f"never import pytest: move to their layer: {bad}"


def test_a_pytest_import_is_found():
    found = ast.parse(textwrap.dedent("""\
        import os
        from _pytest.config import Config
        def f():
            import pytest
        from pytest_xdist import x
        """))
    assert third_party("benchkit.report.fmt", PYTEST, tree=found) == [2, 4]
    assert third_party("benchkit.report.fmt", PYTEST, tree=found, top_only=True) == [2]


def test_torch_is_imported_at_module_level_only_where_training_happens():
    bad = [f"{m}:{line}" for m in MODULES if m not in TORCH_AT_IMPORT
           for line in third_party(m, ("torch",), top_only=True)]
    assert not bad, bad


def line_count(module: str) -> int:
    return MODULES[module].read_text(encoding="utf-8").count("\n")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_its_line_limit(module):
    limit, concept = CONCEPT_LINES.get(module, (MAX_LINES, None))
    lines = line_count(module)
    assert lines <= limit, (
        f"{MODULES[module]}: {lines} lines (limit {limit}{': ' + concept if concept else ''}); "
        f"split it where it holds two concepts, or state the one it holds in CONCEPT_LINES")


def test_every_concept_allowance_is_still_needed():
    stale = [m for m in CONCEPT_LINES if m not in MODULES or line_count(m) <= MAX_LINES]
    assert not stale, f"under {MAX_LINES} lines or gone: remove from CONCEPT_LINES: {stale}"


# -- names: a module under its own name, privates kept private ---------------------------------
SOURCE_FOLDERS = ("benchkit", "tests", "benchmarks", "ideas", "docs")


def python_files() -> list[Path]:
    return sorted(p for folder in SOURCE_FOLDERS for p in (ROOT / folder).rglob("*.py"))


def renamed_module_imports(path: Path, tree: ast.AST) -> list[str]:
    """``from benchkit.a import b as c`` (b a module, c not b) and ``import benchkit.a.b as c``
    (c not b) in ``tree`` (the source of ``path``)."""
    module = module_name(path) if PACKAGE in path.parents else None
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{path.relative_to(ROOT)}:{node.lineno} import {a.name} as {a.asname}"
                      for a in node.names
                      if a.name.startswith("benchkit") and a.asname
                      and a.asname != a.name.rsplit(".", 1)[-1]]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and module:
                anchor = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found += [f"{path.relative_to(ROOT)}:{node.lineno} from {base} import {a.name} as "
                      f"{a.asname}" for a in node.names
                      if a.asname and a.asname != a.name and f"{base}.{a.name}" in MODULES]
    return found


def test_no_benchkit_module_is_imported_under_another_name():
    found = {p: renamed_module_imports(p, ast.parse(p.read_text(encoding="utf-8")))
             for p in python_files()}
    bad = [line for p, lines in found.items()
           if str(p.relative_to(ROOT)) not in PENDING_RENAMES for line in lines]
    assert not bad, bad
    clean = sorted(f for f in PENDING_RENAMES if not found.get(ROOT / f))
    assert not clean, f"clean now: remove from PENDING_RENAMES: {clean}"


def test_a_renamed_import_is_found():
    tree = ast.parse(textwrap.dedent("""\
        from benchkit.stats import paired as stats
        import benchkit.verdict.build as b
        from benchkit.stats import paired
        import benchkit.verdict.build
        from ..stats import signtest as robust
        from benchkit.spec import IdeaSpec as Spec
        """))
    found = renamed_module_imports(PACKAGE / "report" / "fmt.py", tree)
    assert [line.split(" ", 1)[1] for line in found] == [
        "from benchkit.stats import paired as stats", "import benchkit.verdict.build as b",
        "from benchkit.stats import signtest as robust"]


def private_uses(module: str, tree: ast.AST | None = None) -> list[str]:
    """``m._name`` where ``m`` is (an attribute path to) another benchkit module imported into
    ``module``: its private name used without importing it."""
    tree = tree or ast.parse(MODULES[module].read_text(encoding="utf-8"))
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "benchkit" or a.name.startswith("benchkit."):
                    bound[a.asname or "benchkit"] = a.name if a.asname else "benchkit"
        elif isinstance(node, (ast.ImportFrom)):
            for dep, names, _, _ in imports(module, ast.Module(body=[node], type_ignores=[])):
                if not names:  # from package import submodule
                    bound[next(a.asname or a.name for a in node.names
                               if dep.endswith("." + a.name))] = dep
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.endswith("__")):
            continue
        path, value = [], node.value
        while isinstance(value, ast.Attribute):
            path.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in bound:
            owner = ".".join([bound[value.id]] + path[::-1])
            if owner in MODULES and owner != module:
                found.append((node.lineno, node.col_offset,
                              f"{module}:{node.lineno} uses {owner}.{node.attr}"))
    return [text for _, _, text in sorted(found)]


def test_no_module_uses_another_modules_private_name():
    found = {m: private_uses(m) for m in MODULES}
    pending = {module_name(ROOT / f) for f in PENDING_PRIVATE_USE}
    bad = [use for m, uses in found.items() if m not in pending for use in uses]
    assert not bad, bad
    clean = sorted(m for m in pending if not found.get(m))
    assert not clean, f"clean now: remove from PENDING_PRIVATE_USE: {clean}"


def test_a_private_use_is_found():
    tree = ast.parse(textwrap.dedent("""\
        from benchkit.stats import paired
        import benchkit.verdict.build
        import benchkit.stats.signtest as st
        def f(x):
            return (paired._array(x), benchkit.verdict.build._levels, st._rank, paired.compare,
                    x._own, paired.__name__)
        """))
    assert private_uses("benchkit.report.fmt", tree) == [
        "benchkit.report.fmt:5 uses benchkit.stats.paired._array",
        "benchkit.report.fmt:5 uses benchkit.verdict.build._levels",
        "benchkit.report.fmt:5 uses benchkit.stats.signtest._rank"]
