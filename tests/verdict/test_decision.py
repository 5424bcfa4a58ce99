"""The decide stage (benchkit.verdict.decision): the worst verdict against any comparator is
the idea's, a tie names the first comparator, an unmatched budget withholds both verdicts."""
from __future__ import annotations

import dataclasses

import pytest

from benchkit.verdict.decision import VERDICT_ORDER, Decision, decide


@pytest.mark.parametrize("verdicts, expected", [
    (["helps"], ("helps", "baseline")),
    (["helps", "inconclusive"], ("inconclusive", "control:a")),
    (["equivalent", "non-inferior", "harms"], ("harms", "control:b")),
    (["inconclusive", "inconclusive"], ("inconclusive", "baseline")),  # a tie: the first
])
def test_the_worst_verdict_against_any_comparator_decides(verdicts, expected):
    arms = ["baseline", "control:a", "control:b"]
    decision = decide(list(zip(verdicts, arms)), mechanism_ok=1, budgets=None)
    assert (decision.practical, decision.decided_by) == expected
    assert decision.system == ("worked" if expected[0] == "helps" else
                               "failed" if expected[0] == "harms" else "partial")


def test_an_unmatched_budget_withholds_both_verdicts():
    decision = decide([("helps", "baseline")], 1, {"matched": False})
    assert decision.fields() == {"practical_verdict": "unmatched",
                                 "system_verdict": "unmatched", "decided_by": "baseline"}
    assert decide([("helps", "baseline")], 1, {"matched": True}).practical == "helps"


def test_a_decision_is_made_once():
    decision = decide([("harms", "baseline")], None, None)
    assert decision == Decision("harms", "failed", "baseline")
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.practical = "helps"
    assert VERDICT_ORDER[0] == "harms" and VERDICT_ORDER[-1] == "equivalent"
