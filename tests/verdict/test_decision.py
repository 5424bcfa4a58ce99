"""The decide stage (benchkit.verdict.decision): the worst verdict against any comparator is
the idea's, a tie names the first comparator, an unmatched budget withholds both verdicts."""
from __future__ import annotations

import dataclasses

import pytest

from benchkit.verdict.decision import VERDICT_ORDER, Decision
from benchkit.verdict.sections import Budgets


def budgets(*, matched: bool) -> Budgets:
    return Budgets(arms={}, checks=(), matched=matched,
                   unmatched=() if matched else ("params x",), waivers={})


@pytest.mark.parametrize("verdicts, expected", [
    (["helps"], ("helps", "baseline")),
    (["helps", "inconclusive"], ("inconclusive", "control:a")),
    (["equivalent", "non-inferior", "harms"], ("harms", "control:b")),
    (["inconclusive", "inconclusive"], ("inconclusive", "baseline")),  # a tie: the first
])
def test_the_worst_verdict_against_any_comparator_decides(verdicts, expected):
    arms = ["baseline", "control:a", "control:b"]
    decision = Decision.from_verdicts(list(zip(verdicts, arms)), mechanism_ok=1, budgets=None)
    assert (decision.practical, decision.decided_by) == expected
    assert decision.system == ("worked" if expected[0] == "helps" else
                               "failed" if expected[0] == "harms" else "partial")


def test_an_unmatched_budget_withholds_both_verdicts():
    decision = Decision.from_verdicts([("helps", "baseline")], 1, budgets(matched=False))
    assert (decision.practical, decision.system, decision.decided_by) == (
        "unmatched", "unmatched", "baseline")
    matched = Decision.from_verdicts([("helps", "baseline")], 1, budgets(matched=True))
    assert matched.practical == "helps"


def test_a_decision_is_made_once():
    decision = Decision.from_verdicts([("harms", "baseline")], None, None)
    assert decision == Decision("harms", "failed", "baseline")
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.practical = "helps"
    assert VERDICT_ORDER[0] == "harms" and VERDICT_ORDER[-1] == "equivalent"


def test_stats_returns_numbers_and_every_verdict_word_is_decided_here():
    """No module of benchkit.stats writes a verdict word or reads a report: the words and rules
    live in benchkit.verdict.decision (a figure keyed "equivalent" is a number's name)."""
    import ast
    from pathlib import Path

    from benchkit.verdict.decision import PRACTICAL

    words = set(PRACTICAL) | {"worked", "partial", "failed", "unmatched", "incomplete"}
    stats = Path(__file__).resolve().parents[2] / "benchkit" / "stats"
    found = []
    for path in sorted(stats.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        keys = {id(k) for node in ast.walk(tree) if isinstance(node, ast.Dict)
                for k in node.keys if k is not None}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and node.value in words
                    and id(node) not in keys):
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
            if isinstance(node, ast.arg) and node.arg == "report":
                found.append(f"{path.name}:{node.lineno} takes a report")
    assert found == []
