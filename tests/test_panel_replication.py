"""The replication panel (benchmarks/panel/replication.py, issue 54 item 3): its cases declare
what they expect, its interval and level check are the textbook ones, its section of
docs/panel.md is what it renders from the committed results and sits between the known answers
and the techniques without touching either. Reads sources and JSON only: nothing trains."""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PANEL = ROOT / "benchmarks" / "panel"


@pytest.fixture(scope="module")
def doc():
    sys.path.insert(0, str(PANEL))
    try:
        yield importlib.import_module("replication_doc")
    finally:
        sys.path.remove(str(PANEL))


def test_every_case_declares_its_expected_verdict_and_a_name_of_its_own(doc):
    import replication

    found = replication.cases()
    assert {c["expected"] for c in found.values()} == {"helps", "harms", "inconclusive",
                                                       "non-inferior"}
    assert len({c["name"] for c in found.values()}) == len(found)
    assert all(c["track"] == replication.TRACK and c["summary"] for c in found.values())


@pytest.mark.parametrize("k, n, lo, hi", [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634),
                                          (10, 10, 0.7225, 1.0), (1, 20, 0.0089, 0.2361)])
def test_wilson_interval(doc, k, n, lo, hi):
    got = doc.wilson(k, n)
    assert got == pytest.approx((lo, hi), abs=1e-4)


def test_level_check_is_alpha_over_two_within_two_standard_errors(doc):
    se, ok = doc.level_check(1, 20)    # 0.05 against 0.025 +- 2 x 0.0349
    assert se == pytest.approx(0.0349, abs=1e-4) and ok
    assert not doc.level_check(2, 20)[1]   # 0.10 is outside
    assert doc.level_check(0, 20)[1]


def test_the_section_goes_between_the_known_answers_and_the_techniques(doc):
    page = "<!-- panel.py: begin -->\nA\n<!-- panel.py: end -->\n\n" + \
        doc.TECHNIQUES_MARKER + "\nT\n"
    first = doc.with_section(page, f"{doc.BEGIN}\nR1\n{doc.END}\n")
    assert first.index("A") < first.index("R1") < first.index(doc.TECHNIQUES_MARKER)
    again = doc.with_section(first, f"{doc.BEGIN}\nR2\n{doc.END}\n")
    assert "R1" not in again and again.replace("R2", "R1") == first


def test_docs_are_what_the_script_renders_from_the_committed_results(doc):
    import replication

    results = json.loads((ROOT / replication.RESULTS).read_text())
    page = (ROOT / "docs" / "panel.md").read_text()
    rendered = doc.section(results, replication.cases(), ROOT)
    assert rendered.rstrip("\n") in page, f"run {replication.COMMAND} docs"


def test_a_case_runs_on_its_first_blocks_or_on_the_span_a_limit_gives(doc):
    import replication

    stems = [replication.AA, "test_late", "test_other"]
    spans = replication.block_spans(stems, 20, 10, ["test_late=6:16", "test_other=4"])
    assert spans == {replication.AA: range(20), "test_late": range(6, 16),
                     "test_other": range(4)}
    for bad in ("test_late", "test_late=", "test_late=a", "test_late=:3", "test_late=-1:3",
                "test_late=1:2:3", "test_gone=3"):
        with pytest.raises(ValueError, match=r"give STEM=K or STEM=J:K .*'test_other'"):
            replication.block_spans(stems, 20, 10, [bad])


def test_blocks_are_named_by_their_first_seeds_in_runs_of_consecutive_blocks(doc):
    done = {"test_x": {"complete": True}}
    results = {"blocks": [{"offset": o, "outcomes": done} for o in (1016, 1000, 1008, 1032)]
               + [{"offset": 1040, "outcomes": {"test_x": {"complete": False}}}]}
    assert doc.offsets(results, "test_x") == "1000-1016, 1032"
    assert doc.offsets(results, "test_y") == "none"


def test_the_cases_bench_tabular_as_registered_without_its_floors():
    """The replication's conftest: every field of the built-in track but its floors (no
    verdict reads them), so a block's runs and verdicts are the track's own."""
    import dataclasses
    import importlib.util

    from benchkit import tracks
    from benchkit.tracks import tabular

    spec = importlib.util.spec_from_file_location(
        "replication_conftest", PANEL / "replication" / "conftest.py")
    assert spec is not None and spec.loader is not None
    path = list(sys.path)   # the conftest puts panel_models' folder first
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        got = tracks.get("tabular")
    finally:
        tracks.register(tabular.TRACK, replace=True)
        sys.path[:] = path
    assert got.make_floors is None and got.floors([0, 1]) == {}
    assert dataclasses.replace(got, make_floors=tabular.TRACK.make_floors) == tabular.TRACK
    assert tracks.get("tabular") is tabular.TRACK


def test_a_nulls_seeds_are_pooled_with_two_standard_errors(doc):
    assert doc.pooled([0.01, -0.01, 0.02, 0.0]) == \
        "+0.0050 ± 0.0129 over 4 seeds (2 above 0, 1 below)"


def test_mnist1d_blocks_get_their_level_table_once_one_has_run(doc, tmp_path):
    """replication.py --cases-dir: another track's A/A blocks in their own results file; the
    docs give their rejections and pooled accuracy differences, and nothing before a block."""
    import replication

    mnist1d = replication.cases(ROOT / doc.MNIST1D_CASES)
    assert {c["track"] for c in mnist1d.values()} == {"mnist1d"} and doc.AA in mnist1d
    results = json.loads((ROOT / doc.MNIST1D_RESULTS).read_text())
    blocks = len(doc.outcomes(results, doc.AA))
    lines = doc.mnist1d_level(ROOT)
    assert blocks >= 1 and f"{blocks} of {doc.AA_BLOCKS} blocks so far" in "\n".join(lines)
    assert [line for line in lines if line.startswith("| `test_aa` |")]
    assert "idea - baseline accuracy" in "\n".join(lines)
    bare = tmp_path / "repo"
    (bare / doc.MNIST1D_CASES).parent.mkdir(parents=True)
    (bare / doc.MNIST1D_CASES).symlink_to(ROOT / doc.MNIST1D_CASES)
    assert doc.mnist1d_level(bare) == []


def test_the_docs_stage_is_the_tabular_panels_only(doc, capsys):
    import replication

    assert replication.main(["docs", "--cases-dir", str(ROOT / "benchmarks/panel/"
                                                         "replication_mnist1d")]) == 1
    assert "docs are written for the tabular panel only" in capsys.readouterr().err
