"""Count string-key accesses in benchkit/ per module: ``x["key"]`` and ``.get("key"`` (issue 43's
measure of how much of the pipeline still passes dicts).

    PYTHONPATH=$PWD python benchmarks/pipeline/key_accesses.py [--all]

Prints ``count  module`` for each module with any (``--all``: every module), then the total.
Counted on the syntax tree (``ast``), so strings, comments and docstrings do not count; a
subscript by a string constant counts whether it reads, writes or deletes.
"""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def key_accesses(tree: ast.AST) -> int:
    """How many ``x["key"]`` subscripts and ``.get("key", ...)`` calls ``tree`` holds."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            count += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            count += 1
    return count


def per_module(package: Path) -> dict[str, int]:
    """Each module's path from the package's parent (``benchkit/verdict/decision.py``) -> its
    count, for every module of ``package``."""
    return {str(path.relative_to(package.parent)): key_accesses(
        ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(package.rglob("*.py"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="list modules with none too")
    args = parser.parse_args()
    counts = per_module(ROOT / "benchkit")
    for module, count in counts.items():
        if count or args.all:
            print(f"{count:5d}  {module}")
    print(f"{sum(counts.values()):5d}  total ({len(counts)} modules)")


if __name__ == "__main__":
    main()
