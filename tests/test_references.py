"""Every repository path and every dotted ``benchkit.`` name that the prose names exists.

The prose: the markdown of docs/ and benchmarks/, README.md, pyproject.toml, and the comments and
docstrings of benchkit/ and benchmarks/. A path is a name that starts at one of the repository's top
folders (``benchkit/report/fmt.py``, ``docs/report.md``; a markdown link relative to its page); a
glob or a placeholder (``benchkit/tracks/*.py``, ``reports/<idea>/<track>``) must match something. A
dotted name (``benchkit.stats.paired.compare``) is a module, then names defined in it (a def, a
class, an assignment, an import; a class's own names after it). Read from the source alone: nothing
is imported. A moved file or a renamed function otherwise leaves the text pointing nowhere, and
nothing else notices.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("benchkit", "benchmarks", "tests", "docs", "ideas", "scripts", "reports", ".ci")
# a path: a top folder, then path characters; <...>, {...} and * are placeholders
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*<>{}-]*[\w*>}/])" % "|".join(
    re.escape(t) for t in TOP))
DOTTED = re.compile(r"(?<![\w./])benchkit(?:\.[A-Za-z_]\w*)+")  # not a host: //benchkit.invalid
# named on purpose though not in the repository: name -> why
NAMED_ELSEWHERE = {
    "ideas/test_x.py": "the example idea module of the README and of docstrings",
    "reports/l2_decay/tabular/": "where the README's example idea reports",
    "benchmarks/mutation.py": "the script's path when the recorded mutation runs were made: the "
                              "commands in benchmarks/README.md's mutation table are as recorded",
    "benchmarks/<script>.py": "the layout the runs of benchmarks/NOTES.md were made in",
    "benchkit.plugin.aggregate": "today's benchkit.report.session, named in benchmarks/README.md's "
                                 "mutation table as it was measured, before the move",
    "benchkit.fairness": "a module name a recorded mutation run was made under "
                         "(benchmarks/NOTES.md)",
}
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
OUTPUT = re.compile(r"(?:--out[=\s]+|\b(?:[Ww]rites?|[Ww]ritten to|[Aa]ppends to)\s+[`'\"]*)$")


def prose_files() -> list[Path]:
    """benchmarks/results/ is left out: the records of past runs, in the names of their day."""
    results = ROOT / "benchmarks" / "results"
    docs = sorted(p for folder in ("docs", "benchmarks") for p in (ROOT / folder).rglob("*.md")
                  if results not in p.parents)
    code = sorted(p for folder in ("benchkit", "benchmarks") for p in (ROOT / folder).rglob("*.py"))
    return docs + [ROOT / "README.md", ROOT / "pyproject.toml"] + code


def prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of what ``path`` says in words: all of a markdown or toml file; a Python
    file's comments and docstrings."""
    source = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return list(enumerate(source.splitlines(), 1))
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.add(body[0].lineno)
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING
                                            and tok.start[0] in docstrings):
            out += [(tok.start[0] + i, line) for i, line in enumerate(tok.string.splitlines())]
    return out


def path_exists(name: str, base: Path = ROOT) -> bool:
    """A file or folder at ``name`` (relative to ``base``); placeholders match anything."""
    name = name.rstrip("/.")
    if not re.search(r"[*<{]", name):
        return (base / name).exists()
    pattern = re.sub(r"<[^>]*>|\{[^}]*\}", "*", name)
    return any(base.glob(pattern))


@cache
def defined_names(path: Path) -> dict[str, set[str]]:
    """Names defined at the top of the module at ``path`` ("") and in each of its classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {"": set()}

    def names_of(body, into: set[str]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                into.add(node.name)
                if isinstance(node, ast.ClassDef):
                    out[node.name] = set()
                    names_of(node.body, out[node.name])
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    into.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                into.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                names_of(node.body, into)
                for handler in getattr(node, "handlers", []):
                    names_of(handler.body, into)
                names_of(node.orelse, into)

    names_of(tree.body, out[""])
    return out


def module_file(dotted: str) -> Path | None:
    base = ROOT / dotted.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def name_exists(dotted: str) -> bool:
    """``benchkit.a.b.c``: the longest prefix that is a module, then names defined in it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        names = defined_names(path)
        if rest[0] not in names[""]:
            return False
        # a class's own names; past that (an attribute of an attribute), the first two decide
        return len(rest) == 1 or rest[0] not in names or rest[1] in names[rest[0]]
    return False


def references(path: Path) -> list[tuple[int, str, bool]]:
    """(line, what is named, whether it exists) for every path and dotted name in ``path``."""
    found, before = [], ""
    for line, text in prose(path):
        for match in PATH.finditer(text):
            name = match.group(1)
            # where a command writes (--out X, "writes X"), not a file it needs
            output = OUTPUT.search(before + " " + text[:match.start()])
            found.append((line, name, bool(output) or name in NAMED_ELSEWHERE
                          or path_exists(name)))
        for match in DOTTED.finditer(text):
            name = match.group(0)
            found.append((line, name, name in NAMED_ELSEWHERE or name_exists(name)))
        if path.suffix == ".md":
            for match in LINK.finditer(text):
                target = match.group(1)
                if "://" not in target and not target.startswith("mailto:"):
                    found.append((line, target, path_exists(target, path.parent)))
        before = text
    return found


@pytest.mark.parametrize("path", prose_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_named_path_and_name_exists(path):
    stale = [f"{path.relative_to(ROOT)}:{line}: {name}"
             for line, name, exists in references(path) if not exists]
    assert not stale, "named but not in the repository:\n" + "\n".join(stale)


def test_every_name_kept_on_purpose_is_still_absent():
    present = [name for name in NAMED_ELSEWHERE
               if (name_exists(name) if DOTTED.fullmatch(name) else path_exists(name))]
    assert not present, f"in the repository now: remove from NAMED_ELSEWHERE: {present}"


def test_the_checks_tell_a_stale_reference_from_a_live_one(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See benchkit/report/fmt.py and benchkit/report/gone.py, docs/*.md and "
                    "reports/<idea>/<track>, [fmt](../benchkit/report/fmt.py) and [x](nowhere.md); "
                    "benchkit.stats.paired.compare, benchkit.stats.paired.gone, "
                    "benchkit.training.run.Run.fit, benchkit.training.run.Run.gone and "
                    "benchkit.aggregate. `grids.py --out benchmarks/results/new.json` and --out\n"
                    "benchmarks/results/new2.json write them; it writes "
                    "`benchmarks/results/new3.json`\n", encoding="utf-8")
    code = tmp_path / "module.py"
    code.write_text('"""Calls benchkit.verdict.nothing."""\nx = "benchkit/nothing.py"  # '
                    "benchkit/nothing_either.py\n", encoding="utf-8")
    got = {name: exists for _, name, exists in references(page)}
    assert got == {"benchkit/report/fmt.py": True, "benchkit/report/gone.py": False,
                   "docs/*.md": True, "reports/<idea>/<track>": True,
                   "../benchkit/report/fmt.py": False, "nowhere.md": False,
                   "benchkit.stats.paired.compare": True, "benchkit.stats.paired.gone": False,
                   "benchkit.training.run.Run.fit": True, "benchkit.training.run.Run.gone": False,
                   "benchkit.aggregate": False, "benchmarks/results/new.json": True,
                   "benchmarks/results/new2.json": True, "benchmarks/results/new3.json": True}
    # a Python file's comments and docstrings are read, its other strings are not
    assert [(name, exists) for _, name, exists in references(code)] == [
        ("benchkit.verdict.nothing", False), ("benchkit/nothing_either.py", False)]
