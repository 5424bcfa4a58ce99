"""docs/architecture.md's claims that the source can check, checked from the source alone
(``ast``, as tests/test_layers.py does; issue 52 item 6): its layer table is the layer rule
that tests/test_layers.py enforces, each package's docstring names the layers that package may
import, every module and function the document names exists, the verdict words are decided in
verdict/decision.py alone, ``verify``'s recheck rebuilds a report through the pipeline, and
verdict/ writes no JSON on the way."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from test_layers import ALLOWED, MODULES, PACKAGE, ROOT, layer

DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
LAYERS = {name for name in ALLOWED if (PACKAGE / name).is_dir() or name == "codec"}
# a verdict (verdict/decision.py: PRACTICAL), as a module would give one back
VERDICT_WORDS = {"helps", "harms", "non-inferior", "inconclusive", "equivalent"}


def layer_table() -> dict[str, set[str]]:
    """The document's layer table: each layer's row and the layers its last column names."""
    rows = {}
    for line in DOC.split("## The layers", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = re.fullmatch(r"`(\w+)(?:/|\.py)`", cells[0])
        if len(cells) == 3 and name:
            rows[name.group(1)] = set(re.findall(r"`(\w+)`", cells[2]))
    return rows


def test_the_layer_table_is_the_layer_rule():
    assert layer_table() == {name: ALLOWED[name] for name in LAYERS}


def test_the_layer_table_is_read_whole():
    """The reader above finds every row (a row it skipped would pass the test unseen)."""
    assert set(layer_table()) == LAYERS and len(LAYERS) == 10


def test_each_package_docstring_names_the_layers_it_may_import():
    """A package's ``__init__`` says what it may import (``benchkit.<layer>``), and that is
    the rule: no more, no fewer."""
    for name in LAYERS - {"codec"}:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        named = set(re.findall(r"benchkit\.(\w+)", doc or "")) - {name}
        assert named == ALLOWED[name], (name, sorted(named), sorted(ALLOWED[name]))


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top level."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def unknown_names(doc: str) -> list[str]:
    """What ``doc`` names that is not there: a file (``verdict/build.py``, or a module's file
    name alone), a name in it (``verdict/build.py: build_report``) or in a module named by its
    last part (``build.passed_runs``)."""
    by_stem: dict[str, list[Path]] = {}
    for path in MODULES.values():
        by_stem.setdefault(path.stem, []).append(path)
    missing = []
    for match in re.finditer(r"`([\w/]+)\.py(?:: (\w+))?`", doc):
        path, name = match.group(1) + ".py", match.group(2)
        files = [p for p in (ROOT / path, PACKAGE / path) if p.is_file()] or (
            by_stem.get(Path(path).stem, []) if "/" not in path else [])
        if not files or (name and not any(name in _defined(p) for p in files)):
            missing.append(match.group(0))
    for match in re.finditer(r"`(\w+)\.(\w+)(?:\([^`]*\))?`", doc):
        module, name = match.groups()
        if module in by_stem and name not in ("py", "json", "md") and not any(
                name in _defined(p) for p in by_stem[module]):
            missing.append(match.group(0))
    return missing


def test_every_module_and_name_the_document_gives_exists():
    assert unknown_names(DOC) == []


def test_a_name_that_is_not_there_is_found():
    assert unknown_names("`verdict/build.py: nothing_here`, `sweeps.grid_warnings`, "
                         "`verdict/gone.py`, `build.passed_runs`, `pipeline.py`") == [
        "`verdict/build.py: nothing_here`", "`verdict/gone.py`", "`sweeps.grid_warnings`"]


def verdicts_given(tree: ast.AST) -> list[int]:
    """Lines where a verdict word is returned or assigned (directly or by ``x if c else y``):
    where a verdict is decided, not where one is read or written in a sentence."""
    def words(node: ast.AST | None) -> bool:
        if isinstance(node, ast.IfExp):
            return words(node.body) or words(node.orelse)
        return isinstance(node, ast.Constant) and node.value in VERDICT_WORDS
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, (ast.Return, ast.Assign, ast.AnnAssign)) and words(node.value)]


def test_the_verdict_words_are_decided_in_decision_alone():
    """The document: verdict/decision.py is the one home of the verdict words (the
    leaderboard's board verdicts call its practical_verdict, the gate its meets)."""
    given = {name: verdicts_given(ast.parse(path.read_text(encoding="utf-8")))
             for name, path in MODULES.items()}
    assert {name for name, lines in given.items() if lines} == {"benchkit.verdict.decision"}
    calls = {name: {f"{n.value.id}.{n.attr}" for n in ast.walk(ast.parse(
        MODULES[name].read_text(encoding="utf-8"))) if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)} for name in ("benchkit.report.session",)}
    assert "decision.meets" in calls["benchkit.report.session"]
    leaderboard = MODULES["benchkit.verdict.leaderboard"].read_text(encoding="utf-8")
    assert "from benchkit.verdict.decision import" in leaderboard and \
        "practical_verdict(" in leaderboard


def test_a_verdict_decided_elsewhere_is_found():
    assert verdicts_given(ast.parse("def v(p):\n    return 'helps' if p < 0.05 else "
                                    "'inconclusive'\nx = f'{1}helps'\n")) == [2]


def test_recheck_rebuilds_through_the_pipeline():
    """``verify``'s recheck builds, adjusts and decides by the pipeline's own calls, never the
    stages' functions on its own."""
    tree = ast.parse(MODULES["benchkit.cli.recheck"].read_text(encoding="utf-8"))
    used = {f"{n.value.id}.{n.attr}" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    assert {"pipeline.build_finite", "pipeline.decide_family"} <= used
    assert not {u for u in used if u.split(".")[0] in ("comparison", "controls", "decision",
                                                        "selection", "paired")}


def test_verdict_reads_and_writes_no_json_file_or_text():
    """From the runs to the decided report no stage goes through JSON text: no module of
    verdict/ imports json (a record's own ``to_json`` is its JSON, at the edge)."""
    for name in MODULES:
        if layer(name) == "verdict":
            tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
            assert not any(isinstance(n, ast.Import) and any(a.name == "json" for a in n.names)
                           or isinstance(n, ast.ImportFrom) and n.module == "json"
                           for n in ast.walk(tree)), name
