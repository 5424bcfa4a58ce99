"""The readers of a written report's JSON (benchkit/report/reading.py): what the summary,
plots, sentences and gate messages take from a report dict (its unmatched_reason and
non_discriminating are tested beside the rules that write what they read:
tests/verdict/test_controls_and_mechanism.py)."""
from __future__ import annotations

from builders import as_report

from benchkit.report import reading


def test_a_comparison_is_tested_at_its_looks_level_else_at_alpha():
    def comparison(**fields):
        comp = as_report({"comparison": fields}).comparison
        assert comp is not None
        return comp

    assert reading.tested_level(comparison(level=0.01, alpha=0.05)) == 0.01
    assert reading.tested_level(comparison(level=None, alpha=0.05)) == 0.05


def test_paired_values_are_seed_by_seed_and_number_the_seeds_when_the_protocol_does_not():
    report = {"baseline": {"full": {"per_seed": [1.0, 2.0]}}, "idea": {"per_seed": [0.5, 1.0]},
              "comparison": {"per_seed_diffs": [-0.5, -1.0]}, "protocol": {"seeds": [7, 9]}}
    assert reading.paired_values(as_report(report)) == ([7, 9], [1.0, 2.0], [0.5, 1.0],
                                                         [-0.5, -1.0])
    assert reading.paired_values(as_report({**report, "protocol": {"seeds": None}}))[0] == [0, 1]

