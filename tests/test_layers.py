"""benchkit's layers, checked from the source alone (``ast``: nothing is imported or run).

The graph is every import of one benchkit module by another, at module level or inside a
function. It must have no cycle and no edge against :data:`ALLOWED`; no module imports another
module's private name; no module is over :data:`MAX_LINES` lines; only the plugin imports
pytest; torch is imported at module level only where training happens.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "benchkit"
MAX_LINES = 400

# The dependency rule: layer -> the layers it may import (besides itself and the root package,
# which holds only __version__). stats imports nothing of benchkit; spec the track registry;
# store spec's vocabulary; training tracks and store; verdict stats, spec and tracks; report
# verdict, stats, spec, store (atomic writes) and tracks (which floors are limits); cli report,
# verdict, store, stats and spec; plugin everything.
ALLOWED: dict[str, set[str]] = {
    "stats": set(),
    "tracks": set(),
    "spec": {"tracks"},
    "store": {"spec"},
    "training": {"tracks", "store"},
    "verdict": {"stats", "spec", "tracks"},
    "report": {"verdict", "stats", "spec", "store", "tracks"},
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


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_the_line_limit(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module]}: {lines} lines (limit {MAX_LINES})"


def third_party(module: str, name: str, *, top_only: bool = False) -> list[int]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    nodes = tree.body if top_only else list(ast.walk(tree))
    lines = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(n == name or n.startswith(name + ".") for n in names):
            lines.append(node.lineno)
    return lines


def test_only_the_plugin_imports_pytest():
    bad = [f"{m}:{line}" for m in MODULES if layer(m) not in PYTEST_LAYERS
           for line in third_party(m, "pytest")]
    assert not bad, bad


def test_torch_is_imported_at_module_level_only_where_training_happens():
    bad = [f"{m}:{line}" for m in MODULES if m not in TORCH_AT_IMPORT
           for line in third_party(m, "torch", top_only=True)]
    assert not bad, bad
