"""A report's run rows as records (``report["runs"]``): one :class:`RunRow` per run of the
session, made from its payload (:func:`benchkit.verdict.build.run_row`) and read back by
:class:`benchkit.verdict.records.Report`'s ``from_json``; ``cli/verify.py`` matches the written rows
against the store as JSON."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from benchkit.codec import JsonRecord
from benchkit.spec.idea import Config
from benchkit.spec.payloads import CurvePoint, RunResult


@dataclass(frozen=True)
class RunRow(JsonRecord):
    """One run's row: where it sits, its result (a failed run's: none), and where the result
    came from (``digest``, ``key``, ``origin``, ``trained_in``: None without a result)."""

    arm: str
    seed: int
    cfg: Config
    val: float | None
    test: float | None
    seconds: float | None
    diverged: bool
    outcome: str
    reused: bool
    logs: Mapping[str, float | None]
    signatures: Mapping[str, float | None]   # name -> observed
    budgets: Mapping[str, float]
    cpu: str | None
    curve: tuple[CurvePoint, ...] | None
    digest: str | None
    key: str | None
    origin: str | None
    trained_in: str | None

    def result(self) -> RunResult:
        """The row's result as the rules read it: its metrics, whether it diverged, its
        seconds and its validation curve."""
        return RunResult(val=self.val, test=self.test, diverged=self.diverged,
                         seconds=self.seconds, curve=self.curve)
