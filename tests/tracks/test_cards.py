"""The track cards in docs/tracks.md are what benchmarks/tracks/cards.py makes of the committed
A/A reports and per-seed floors, and those floors agree with the reports' means."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cards_module():
    """benchmarks/tracks/cards.py, imported once (its dataclasses need it in sys.modules)."""
    if "track_cards" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "track_cards", ROOT / "benchmarks" / "tracks" / "cards.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["track_cards"] = module
        spec.loader.exec_module(module)
    return sys.modules["track_cards"]


def test_the_docs_tables_are_the_generated_ones():
    """docs/tracks.md's tables and README's Tracks table; regenerate them with ``python
    benchmarks/tracks/cards.py --write`` after a bench."""
    cards = cards_module()
    made = cards.load_cards()
    block = cards.block(cards.DOC)
    assert block == cards.generated(made).strip(), "run benchmarks/tracks/cards.py --write"
    assert cards.block(cards.README) == cards.readme_table(made).strip()
    assert {c.track for c in made} == {"dynamics", "mnist1d", "tabular"}
    for c in made:  # a goal not met, or not checked, is said plainly
        assert f"({c.bar})" in block


@pytest.mark.parametrize("name", ["dynamics", "mnist1d", "tabular"])
def test_per_seed_floors_average_to_the_report_s_floors(name):
    cards = cards_module()
    report = json.loads((cards.AA / name / "bench_report.json").read_text())
    seeds = json.loads(cards.FLOORS.read_text())[name]["seeds"]
    assert sorted(int(s) for s in seeds) == report["protocol"]["seeds"]
    for floor, mean in report["floors"].items():
        values = [seeds[str(s)]["floors"][floor] for s in report["protocol"]["seeds"]]
        # rel 1e-6: BLAS on one thread or several rounds the solves differently
        assert sum(values) / len(values) == pytest.approx(mean, rel=1e-6), floor


def test_a_card_says_plainly_when_the_bar_is_not_met():
    """A report whose baseline sits within one MDE of its strongest floor gets "NOT met"."""
    cards = cards_module()
    report = {"track": "t", "metric": "mse", "metric_direction": "lower is better",
              "baseline": {"full": {"mean": 0.95}, "best_cfg": {"lr": 1}},
              "floors": {"ridge": 1.0, "limit: oracle": 0.1},
              "comparison": {"mde": 0.1, "mde_rel_pct": 10.0, "per_seed_diffs": [0.0, 0.1],
                             "p_value": 0.5},
              "protocol": {"seeds": [0, 1]},
              "runs": [{"arm": "baseline", "seed": s, "cfg": {"lr": 1}, "test": t,
                        "seconds": 1.0} for s, t in ((0, 0.9), (1, 1.0))],
              "convergence": {"arms": {"baseline": {"still_improving": False}}},
              "practical_verdict": "inconclusive"}
    per_seed = {str(s): {"floors": {"ridge": 1.0, "limit: oracle": 0.1}, "cpu_seconds": 1.0}
                for s in (0, 1)}
    made = cards.card(report, per_seed)
    assert made.floor_name == "ridge" and made.margin_mdes == pytest.approx(0.5)
    assert made.limit == ("limit: oracle", 0.1)
    assert [r.margin_mdes for r in made.seeds] == pytest.approx([1.0, 0.0])
    text = cards.generated([made])
    assert "0.5 (**NOT met**)" in text and "oracle 0.1" in text


def test_a_card_gives_the_median_cpu_seconds_of_its_timed_runs_apart_from_the_bench_s():
    """The bench's s/run is wall time on a shared machine; the one-thread figure is the median
    CPU time of the runs ``cards.py --time-runs`` timed, and says "—" when none were."""
    cards = cards_module()
    report = json.loads((cards.AA / "tabular" / "bench_report.json").read_text())
    timed = {"runs": [{"seed": s, "cpu_seconds": c, "wall_seconds": 9.0}
                      for s, c in enumerate((3.0, 1.0, 2.5))]}
    made = cards.card(report, None, timed)
    assert made.cpu_seconds_per_run == 2.5 and made.seconds_per_run != 2.5
    assert "| 2.5 |" in cards.summary_table([made])
    untimed = cards.card(report, None)
    assert untimed.cpu_seconds_per_run is None


def test_the_readme_row_gives_the_power_the_report_plans_with_and_the_bench_s_cpu(
        tmp_path, monkeypatch):
    """README's row: the A/A MDE at 80% power, the power at 1, 2 and 5% of the mean by the
    report's planning (so the power at the MDE itself is 0.8), and the CPU of the sessions of
    today's protocol, given only once a whole bench at the default seeds ran to its end."""
    import dataclasses

    import numpy as np

    from benchkit import tracks
    from benchkit.stats import planning, signflip

    cards = cards_module()
    table = cards._sibling("readme_table")
    report = json.loads((cards.AA / "tabular" / "bench_report.json").read_text())
    report["protocol"] = {**report["protocol"], **tracks.get("tabular").protocol()}
    made = dataclasses.replace(cards.card(report, None), diffs=(0.01, -0.02, 0.03, 0.0) * 4)
    made = dataclasses.replace(made, mde_power80=0.02, n_seeds=table.default_seeds("tabular"))
    sd = planning.planning_sd(np.asarray(made.diffs))
    share = signflip.mde_power80(len(made.diffs), sd, 0.05) / abs(made.baseline)
    monkeypatch.setattr(table, "EFFECTS", (share,))
    assert table.power_line(made).endswith(": 0.80")
    monkeypatch.setattr(table, "AA_CPU", tmp_path / "aa_cpu.json")
    protocol = tracks.get("tabular").protocol()
    session = {"protocol": protocol, "block": True, "pytest_last_line": "96 passed in 9s",
               "exit_status": 0, "seeds": 16, "cpu_seconds": 60.0}
    whole = {**session, "block": False, "seeds": table.default_seeds("tabular")}
    log = {"tabular": [session, {**session, "protocol": {}, "cpu_seconds": 999.0}]}
    (tmp_path / "aa_cpu.json").write_text(json.dumps(log))
    assert table.bench_cpu("tabular") is None  # no whole bench yet
    assert table.row(made).endswith("| — |")
    log["tabular"].append({**whole, "pytest_last_line": "9 passed, 1 incomplete in 9s"})
    (tmp_path / "aa_cpu.json").write_text(json.dumps(log))
    assert table.bench_cpu("tabular") is None  # stopped before its end: not a whole bench
    log["tabular"].append(whole)
    (tmp_path / "aa_cpu.json").write_text(json.dumps(log))
    assert table.bench_cpu("tabular") == (180.0, 3, False)  # today's protocol only
    assert table.row(made).endswith("| 3.0 |")
    log["tabular"].append({**session, "cpu_seconds": None})  # a killed session: unrecorded
    (tmp_path / "aa_cpu.json").write_text(json.dumps(log))
    assert table.bench_cpu("tabular") == (180.0, 4, True)
    assert table.row(made).endswith("| ≥ 3.0 |")
    other = dataclasses.replace(made, n_seeds=16)
    assert "A/A at 16 seeds, not the default: not measured" in table.row(other)


def test_committed_idea_reports_of_an_earlier_protocol_are_listed_as_stale(tmp_path,
                                                                           monkeypatch):
    from benchkit import tracks

    cards = cards_module()
    table = cards._sibling("readme_table")
    for name, n_test in (("old", 1), ("new", tracks.get("tabular").protocol()["n_test"])):
        folder = tmp_path / "reports" / name / "tabular"
        folder.mkdir(parents=True)
        protocol = {**tracks.get("tabular").protocol(), "n_test": n_test}
        (folder / "bench_report.json").write_text(json.dumps({"track": "tabular",
                                                              "protocol": protocol}))
    monkeypatch.setattr(table, "ROOT", tmp_path)
    monkeypatch.setattr(table, "REPORTS", tmp_path / "reports")
    assert table.stale_reports() == [
        f"`reports/old/tabular` (n_test 1 → {tracks.get('tabular').protocol()['n_test']})"]


def test_a_report_of_an_earlier_protocol_is_marked_stale_not_checked():
    from benchkit import tracks

    cards = cards_module()
    report = json.loads((cards.AA / "tabular" / "bench_report.json").read_text())
    report["protocol"] = {**report["protocol"], "model": "mlp_tiny", "epochs": 7}
    made = cards.card(report, None)
    assert made.stale is not None
    assert f"model mlp_tiny → {tracks.get('tabular').model_name}" in made.stale
    assert not made.met and made.bar == "**not checked**"
    assert "**stale**" in cards.summary_table([made])
    other = {"0": {"floors": {"mean": 1.0}, "cpu_seconds": None}}  # floors added since
    assert "floors" in cards.card(json.loads((cards.AA / "tabular" / "bench_report.json")
                                             .read_text()), other).stale


def test_a_retired_track_s_card_says_retired_and_why_not_its_bar(monkeypatch):
    """A track retired as a yardstick (Track.retired) has no bar: its rows say retired with the
    reason, in docs/tracks.md's tables and README's."""
    import dataclasses

    from benchkit import tracks

    cards = cards_module()
    monkeypatch.setattr(tracks, "_REGISTRY", dict(tracks._REGISTRY))  # restored afterwards
    tracks.register(dataclasses.replace(tracks.get("tabular"), retired="too easy; at length"),
                    replace=True)
    made = cards.card(json.loads((cards.AA / "tabular" / "bench_report.json").read_text()), None)
    assert made.retired and not made.met and made.bar == "**retired**"
    assert "**retired**: too easy; at length" in cards.summary_table([made])
    assert "retired as a yardstick" in cards.seed_table(made)
    assert "**retired** as a yardstick: too easy; docs/tracks.md" in cards.readme_table([made])
