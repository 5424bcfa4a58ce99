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


@pytest.fixture(scope="module")
def mnist1d(doc):
    return importlib.import_module("replication_doc_mnist1d")


def test_mnist1d_blocks_get_their_level_table_once_one_has_run(doc, mnist1d, tmp_path):
    """replication.py --cases-dir: another track's A/A blocks in their own results file; the
    docs give their rejections and pooled accuracy differences, and nothing before a block."""
    import replication

    cases = replication.cases(ROOT / mnist1d.MNIST1D_CASES)
    assert {c["track"] for c in cases.values()} == {"mnist1d"} and replication.AA in cases
    results = json.loads((ROOT / mnist1d.MNIST1D_RESULTS).read_text())
    blocks = len(doc.outcomes(results, replication.AA))
    text = "\n".join(mnist1d.mnist1d_section(ROOT))
    assert blocks >= 1 and f"`{replication.AA}` {blocks}/{replication.AA_BLOCKS}" in text
    assert "| `test_aa` |" in text and "idea - baseline accuracy" in text
    bare = tmp_path / "repo"
    (bare / mnist1d.MNIST1D_CASES).parent.mkdir(parents=True)
    (bare / mnist1d.MNIST1D_CASES).symlink_to(ROOT / mnist1d.MNIST1D_CASES)
    assert mnist1d.mnist1d_section(bare) == []


def test_a_better_seed_is_counted_in_the_tracks_direction(doc):
    """tabular's MSE: lower is better; mnist1d's accuracy: higher is better."""
    assert doc.effect_text([0.02, 0.01, -0.01]) == "+0.0067 (1/3 seeds better)"
    assert doc.effect_text([0.02, 0.01, -0.01], "higher") == "+0.0067 (2/3 seeds better)"


def outcome(diffs: list[float], verdict: str) -> dict:
    """A block's outcome as replication.py ``outcome`` keeps it (a margin case's verdict
    ``non-inferior`` sets ``non_inferior``)."""
    return {"selected_diffs": diffs, "verdict": verdict, "complete": True,
            "mde_power80": 0.013, "baseline_mean": 0.93,
            "non_inferior": verdict == "non-inferior"}


def test_mnist1d_cases_get_pre_registration_power_and_cpu_in_accuracy(mnist1d, tmp_path):
    """Once the mnist1d cases are pre-registered and blocks ran: their effects (better seeds
    counted as higher accuracy), detection rates with Wilson intervals beside the predicted
    power, and the CPU of each stage."""
    import replication

    repo = tmp_path / "repo"
    for rel in (mnist1d.MNIST1D_CASES, mnist1d.RUN_SECONDS):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).symlink_to(ROOT / rel)
    stems = sorted(s for s in replication.cases(ROOT / mnist1d.MNIST1D_CASES)
                   if s != replication.AA)
    up, down = [0.02, 0.01, 0.03, 0.02] * 4, [-0.01, -0.02, 0.005, -0.01] * 4
    expected = {s: replication.cases(ROOT / mnist1d.MNIST1D_CASES)[s]["expected"]
                for s in stems}
    effect = {s: up if expected[s] == "helps" else down for s in stems}

    def session(offset: int, cases: list[str], cpu: float) -> dict:
        return {"offset": offset, "cases": cases, "cpu_seconds": cpu, "wall_seconds": 1.0,
                "load_average_1min": [1.0, 2.0]}

    results = {
        "preregistration": [{"offset": 100, "outcomes": {
            s: outcome(effect[s], expected[s]) for s in stems}}],
        "blocks": [{"offset": 1000, "outcomes": {
            replication.AA: outcome([0.01, -0.01] * 4, "inconclusive"),
            **{s: outcome(effect[s][:8], expected[s]) for s in stems}}},
            {"offset": 1008, "outcomes": {s: outcome(effect[s][:8], "inconclusive")
                                          for s in stems}}],
        "sessions": [session(1000, [replication.AA], 300.0), session(100, stems, 900.0),
                     session(1000, stems, 400.0), session(1008, stems, 410.0)]}
    (repo / mnist1d.MNIST1D_RESULTS).parent.mkdir(parents=True)
    (repo / mnist1d.MNIST1D_RESULTS).write_text(json.dumps(results))
    text = "\n".join(mnist1d.mnist1d_section(repo))
    for stem in stems:
        better = "16/16" if expected[stem] == "helps" else "4/16"   # higher accuracy
        if expected[stem] != "non-inferior":   # a margin case has no row of its own there
            assert f"| `{stem}` | {effect_sign(effect[stem])} ({better} seeds better) |" \
                in text
        assert f"| `{stem}` | {expected[stem]}" in text and "| 1000-1008 |" in text
        row = next(line for line in text.splitlines()
                   if line.startswith(f"| `{stem}` | {expected[stem]}"))
        assert "| 1/2 = 0.50 [0.09, 0.91] |" in row
    assert "A/A blocks 300, pre-registration 900, the other cases' blocks 810" in text
    margins = [s for s in stems if expected[s] == "non-inferior"]
    own = " ".join(s for s in stems if s not in margins)
    assert f"--cases {own} --case-blocks" in text   # margin cases after, in their own
    assert all(f"--cases {m} --case-blocks" in text for m in margins)   # sessions


def effect_sign(diffs: list[float]) -> str:
    return f"{sum(diffs) / len(diffs):+.4f}"


def test_the_docs_stage_is_the_tabular_panels_only(doc, capsys):
    import replication

    assert replication.main(["docs", "--cases-dir", str(ROOT / "benchmarks/panel/"
                                                         "replication_mnist1d")]) == 1
    assert "docs are written for the tabular panel only" in capsys.readouterr().err


def test_every_mnist1d_case_has_the_aa_baseline_arm_so_a_block_trains_it_once(mnist1d):
    """A block's session trains an arm once for every module whose arm is the same code
    (benchkit.store.fingerprint: the module that declares it is ``@``): each case's
    ``test_baseline`` is the A/A's, decorator included, on the same track."""
    import ast

    import replication

    def baseline(path: Path) -> str:
        tree = ast.parse(path.read_text())
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and n.name == "test_baseline"]
        assert len(found) == 1, path.name
        return ast.dump(found[0])

    folder = ROOT / mnist1d.MNIST1D_CASES
    known = replication.cases(folder)
    assert len(known) >= 3 and {c["track"] for c in known.values()} == {"mnist1d"}
    assert {baseline(folder / f"{stem}.py") for stem in known} == \
        {baseline(folder / f"{replication.AA}.py")}


def test_a_margins_predicted_power_lies_on_the_worse_side_of_the_tracks_direction(doc):
    """An idea 0.006 worse than its baseline is 0.006 worse whether the metric falls (MSE) or
    rises (accuracy) when it improves: the same predicted power against a 2% margin."""
    d = [0.02, -0.01, 0.015, -0.005, 0.01, 0.0, 0.012, 0.004]
    lower = doc.predicted({"selected_diffs": d, "baseline_mean": 0.93}, 0.02)
    higher = doc.predicted({"selected_diffs": [-x for x in d], "baseline_mean": 0.93}, 0.02,
                           "higher")
    assert higher == pytest.approx(lower)
    assert doc.predicted({"selected_diffs": d, "baseline_mean": 0.93}, 0.02, "higher")[1] > \
        lower[1]   # 0.006 better on accuracy: further inside the margin
