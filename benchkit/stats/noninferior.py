"""The record of a comparison's non-inferiority test: one record for the plain test
(:func:`benchkit.stats.paired.noninferiority`) and the selection-aware one
(:func:`benchkit.stats.selection.noninferiority`), as a report has one ``noninferiority``
object in two shapes. Stdlib only, so both stats modules import it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NonInferiorityTest:
    """The one-sided margin test of a comparison: the margin, relative and in metric units (over
    the comparator's mean), the one-sided bound, whether it is non-inferior and its p. The
    selection-aware test (:func:`benchkit.stats.selection.noninferiority`) adds ``bound_rel``
    (None when no margin would do) and ``test`` (its description), written only when ``test``
    is given. :meth:`to_json` gives the comparison's ``noninferiority`` object, in the report's
    key order."""

    margin_rel: float
    margin_abs: float | None
    bound: float | None
    non_inferior: bool
    p_value: float | None
    bound_rel: float | None = None
    test: str | None = None

    PLAIN_KEYS = ("margin_rel", "margin_abs", "bound", "non_inferior", "p_value")
    SELECTION_KEYS = ("margin_rel", "margin_abs", "bound", "bound_rel", "non_inferior",
                      "p_value", "test")

    def to_json(self) -> dict[str, Any]:
        keys = self.PLAIN_KEYS if self.test is None else self.SELECTION_KEYS
        return {k: getattr(self, k) for k in keys}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NonInferiorityTest:
        """The record of a comparison's ``noninferiority`` object; it must have exactly the keys
        of the plain test or of the selection-aware one."""
        if sorted(data) not in (sorted(cls.PLAIN_KEYS), sorted(cls.SELECTION_KEYS)):
            raise ValueError(f"a comparison's noninferiority has the keys {list(cls.PLAIN_KEYS)} "
                             f"or, selection-aware, {list(cls.SELECTION_KEYS)}; "
                             f"got {sorted(data)}")
        if "test" in data and not isinstance(data["test"], str):
            raise ValueError("a selection-aware noninferiority's test is its description "
                             f"(a string), got {data['test']!r}")
        return cls(**data)
