"""``python -m benchkit leaderboard``: ideas benched against one baseline, grouped by identical
baseline runs, ranked, Holm-adjusted across the board, verdicts valid for the whole board."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchkit.cli import commands
from benchkit.cli.leaderboard import plot, render, titles
from benchkit.verdict.leaderboard import Entry, board_p_values, build, verdict
from builders import as_report
from idea_modules import arm, idea_module
from sessions import run_session

def module(name: str, lr: float) -> str:
    return idea_module(name, arm("baseline"), arm("idea", f"run.fit(run.track.model(), lr={lr})"),
                       grid={"lr": [1e-3]}, seeds=7)


def run_leaderboard(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchkit", "leaderboard", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=60)


def test_three_ideas_sharing_one_baseline_are_ranked_with_holm(pytester, capsys, monkeypatch):
    """fast (lr 3e-2) helps, same (the baseline's lr) is a tie, slow (1e-5) harms at 1 epoch;
    the baseline is trained once and shared through the run store. 7 seeds: the fewest at
    which Holm over 3 ideas can reach alpha (3 * 2/128 < 0.05)."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_fast=module("fast", 3e-2), test_same=module("same", 1e-3),
                        test_slow=module("slow", 1e-5))
    result = run_session(pytester, "--bench-epochs", "1", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["benchkit: 28 run(s) trained, 14 reused from the run store*"])
    res = run_leaderboard("reports", "--json", "board.json", cwd=pytester.path)
    assert res.returncode == 0, res.stderr
    board, = json.loads((pytester.path / "board.json").read_text())["boards"]
    assert board["family_size"] == 3 and board["adjustment"] == "holm"
    ideas = {r["name"]: r for r in board["ideas"]}
    assert [r["name"] for r in board["ideas"]] == ["fast", "same", "slow"]
    assert [r["rank"] for r in board["ideas"]] == [1, 2, 3]
    # 7 seeds all one way: exact p 2/128; Holm over 3 ideas: 3 * p for the smallest, running max
    assert ideas["fast"]["p_value"] == ideas["slow"]["p_value"] == 2 / 128
    assert ideas["fast"]["p_adjusted"] == ideas["slow"]["p_adjusted"] == 3 * 2 / 128
    assert ideas["same"]["p_value"] == ideas["same"]["p_adjusted"] == 1.0
    verdicts = [ideas[n]["verdict"] for n in ("fast", "same", "slow")]
    assert verdicts == ["helps", "inconclusive", "harms"]
    # the reports' sign (idea - baseline; MSE: negative is better), and each interval at the
    # level its verdict was decided at: alpha x p / p_adjusted (Holm's first step here)
    assert ideas["fast"]["delta_mean"] < 0 < ideas["slow"]["delta_mean"]
    fast_report = json.loads((pytester.path / "reports" / "fast" / "tabular" /
                              "bench_report.json").read_text())
    assert ideas["fast"]["delta_mean"] == pytest.approx(fast_report["comparison"]["delta_mean"])
    assert ideas["fast"]["interval"][1] < 0 < ideas["slow"]["interval"][0]
    assert ideas["fast"]["interval_level"] == pytest.approx(0.05 / 3)
    assert ideas["same"]["interval_level"] == pytest.approx(0.05)
    assert len(board["baseline"]["digests"]) == 7 and board["baseline"]["seeds"] == list(range(7))
    assert "1     fast" in res.stdout and "helps (exploratory)" in res.stdout  # --bench-epochs
    assert run_leaderboard("reports", "--track", "tabular", cwd=pytester.path).returncode == 0
    capsys.readouterr()  # Benjamini-Hochberg on request: q = 3 * p / rank, step-up
    monkeypatch.chdir(pytester.path)
    assert commands.main(["leaderboard", "reports", "--adjust", "bh", "--json", "bh.json"]) == 0
    assert "Benjamini-Hochberg (FDR)-adjusted p" in capsys.readouterr().out
    bh, = json.loads((pytester.path / "bh.json").read_text())["boards"]
    assert bh["adjustment"] == "bh"
    assert [r["p_adjusted"] for r in bh["ideas"]] == pytest.approx([3 / 2 * 2 / 128, 1.0,
                                                                    3 / 2 * 2 / 128])

    # bad input, in process (the same main() as python -m benchkit)
    def one_error_line(argv, *fragments):
        capsys.readouterr()
        assert commands.main(["leaderboard", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("benchkit: error: "), err
        for f in fragments:
            assert f in err[0], (f, err[0])

    monkeypatch.chdir(pytester.path)
    one_error_line(["nowhere"], "nowhere: no such file or folder")
    one_error_line(["reports", "--track", "digits"], "no report of track 'digits'", "tabular")
    bad = pytester.path / "reports" / "same" / "tabular" / "bench_report.json"
    report = json.loads(bad.read_text())
    report["runs"][0]["seed"] = "zero"
    bad.write_text(json.dumps(report))
    one_error_line(["reports"], "not a valid benchkit report", "runs[0].seed")
    bad.write_text("{")
    one_error_line(["reports"], "not JSON")


# -- in process -----------------------------------------------------------------------------
ROW = {"val": None, "seconds": 1.0, "diverged": False, "outcome": "passed", "reused": False,
       "logs": {}, "signatures": {}, "budgets": {}, "cpu": None, "curve": None, "key": None,
       "origin": None, "trained_in": None}


def report(improvements, *, digests=None, seeds=None, track="tabular", lower=True) -> dict:
    """A report whose idea beats a baseline of 1.0 by ``improvements`` per seed (its
    comparison not selection-aware: the plain sign-flip test decides its board p)."""
    seeds = list(range(len(improvements))) if seeds is None else seeds
    digests = [f"d{s}" for s in seeds] if digests is None else digests
    runs = []
    for s, d, g in zip(seeds, improvements, digests):
        runs.append({**ROW, "arm": "baseline", "seed": s, "cfg": {"lr": 1}, "test": 1.0,
                     "digest": g})
        runs.append({**ROW, "arm": "idea", "seed": s, "cfg": {"lr": 1},
                     "test": 1.0 - d if lower else 1.0 + d, "digest": "i"})
    return {"track": track, "metric": "mse",
            "comparison": {"alpha": 0.05, "selection_aware": False},
            "metric_direction": "lower is better" if lower else "higher is better",
            "baseline": {"best_cfg": {"lr": 1}}, "idea_config": {"lr": 1}, "runs": runs,
            "practical_verdict": "inconclusive", "frontier": None}


def entries(**reports) -> list:
    return [Entry(name, Path(f"{name}.json"), as_report(r)) for name, r in reports.items()]


def test_board_p_values_are_each_ideas_sign_flip_p_and_holm_over_the_board():
    ps, adj = board_p_values([[1.0] * 8, [0.5, -0.1, 0.3, 0.2, 0.4, 0.1, 0.2, 0.3],
                                 [1.0, -1.0] * 4])
    # the second: |sum| 1.9 is reached by 3 of the 128 flips per sign (-0.1 flipped, and with 0.1)
    assert ps == [2 / 256, 6 / 256, 1.0]
    assert adj == [3 * 2 / 256, 2 * 6 / 256, 1.0]       # Holm step-down, input order
    assert board_p_values([[-1.0] * 7, [1.0] * 7])[1] == [2 * 2 / 128] * 2
    assert verdict(0.049, 1e-9, 0.05) == "helps"
    assert verdict(0.049, -1.0, 0.05) == "harms"
    assert verdict(0.05, 1.0, 0.05) == "inconclusive" == verdict(0.01, 0.0, 0.05)


def test_grouping_by_identical_baseline_runs_and_the_reasons_when_not():
    win = [0.3, 0.2, 0.4, 0.1, 0.5, 0.3, 0.2, 0.6]
    result = build(entries(
        a=report(win), b=report([-x for x in win]),
        other_runs=report(win, digests=[f"d{s}" for s in range(7)] + ["changed"]),
        other_seeds=report(win, seeds=list(range(1, 9))),
        no_digest=report(win, digests=[None] * 8),
        diverged={**report(win), "runs": [r for r in report(win)["runs"]
                                          if (r["arm"], r["seed"]) != ("idea", 3)]},
        incomplete={**report(win), "comparison": None, "practical_verdict": "incomplete"},
        frontier={**report(win), "frontier": {"axis": "keep", "values": [0.5, 1.0],
                                              "points": []},
                  "baseline": {"best_cfg": {"keep": "selected per point (see frontier.points)"}}},
        higher=report(win, lower=False, track="digits")))
    boards = result.to_json()["boards"]
    assert [(b["track"], sorted(r["name"] for r in b["ideas"])) for b in boards] == [
        ("digits", ["higher"]), ("tabular", ["a", "b"]), ("tabular", ["other_runs"]),
        ("tabular", ["other_seeds"])]
    ab = boards[1]
    assert [(r["name"], r["verdict"]) for r in ab["ideas"]] == [("a", "helps"), ("b", "harms")]
    assert ab["ideas"][0]["p_adjusted"] == 2 * 2 / 256
    assert boards[0]["ideas"][0]["verdict"] == "helps"          # higher is better
    assert "different results at seed(s) 7" in boards[2]["notes"][0]
    assert "other baseline seeds" in boards[3]["notes"][0]
    why = {u.name: u.reason for u in result.unplaced}
    assert set(why) == {"no_digest", "incomplete", "diverged", "frontier"}
    assert why["frontier"].startswith("a frontier report: its comparison pools each seed")
    assert "no finite test result at seed(s) 3" in why["diverged"]
    assert "no digest" in why["no_digest"] and "incomplete" in why["incomplete"]
    twice = build(entries(a=report(win)) + entries(a=report(win)))
    assert not twice.boards and "more than one report" in twice.unplaced[0].reason
    text = "\n".join(render(result))
    assert "not placed: no_digest" in text and "board 2: tabular" in text


def test_a_verdict_needs_the_board_adjusted_p():
    """One idea alone at 8 seeds (p 2/256) helps; among 7 ideas Holm multiplies by 7 and the
    same idea is inconclusive; at 5 seeds 3 ideas cannot reach alpha and the board says so."""
    win = [0.3, 0.2, 0.4, 0.1, 0.5, 0.3, 0.2, 0.6]
    alone = build(entries(a=report(win))).boards[0].ideas[0]
    assert (alone.p_adjusted, alone.verdict) == (2 / 256, "helps")
    crowd = build(entries(a=report(win), **{f"n{k}": report([0.0] * 8) for k in range(6)}))
    top = crowd.boards[0].ideas[0]
    assert (top.name, top.p_adjusted, top.verdict) == ("a", 7 * 2 / 256, "inconclusive")
    few = build(entries(a=report(win[:5]), b=report(win[:5]), c=report(win[:5]))).boards[0]
    assert any("no idea on this board can be significant" in n for n in few.notes)


def test_twenty_null_ideas_against_one_baseline_keep_the_family_wise_error():
    """The fast version of benchmarks/stats/leaderboard_fwer.py (its numbers: benchmarks/README.md):
    200 seeded boards of 20 null ideas at 10 seeds; Holm keeps any false helps/harms at or below
    alpha + 2 SE, where the ideas' unadjusted p-values pass at least one idea on most boards."""
    import importlib.util

    path = Path(__file__).parents[2] / "benchmarks" / "stats" / "leaderboard_fwer.py"
    spec = importlib.util.spec_from_file_location("leaderboard_fwer", path)
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    reps, alpha = 200, 0.05
    r = sim.simulate(20, 10, "normal", reps, seed=5, alpha=alpha)
    assert r["fwer_holm"] <= alpha + 2 * (alpha * (1 - alpha) / reps) ** 0.5
    assert r["fwer_unadjusted"] > 0.25


def test_ideas_on_several_tracks_get_a_normalised_aggregate_with_bootstrap_intervals():
    win = [0.3, 0.2, 0.4, 0.1, 0.5, 0.3, 0.2, 0.6]
    mixed = [0.2, -0.1, 0.0, 0.3, -0.2, 0.1, 0.0, 0.1]
    ens = entries(a=report(win), b=report(mixed))
    ens += [Entry("a", Path("a2.json"), as_report(report(mixed, track="digits", lower=False))),
            Entry("c", Path("c.json"), as_report(report(win, track="digits")))]
    result = build(ens)
    agg, = result.to_json()["aggregate"]                     # b and c are on one track only
    assert agg["name"] == "a" and agg["tracks"] == ["digits", "tabular"]
    assert agg["normalised_improvement"] == pytest.approx((sum(win) + sum(mixed)) / 16)
    # share of better seeds, ties half: tabular 8/8, digits (4 + 2 * 0.5)/8
    assert agg["probability_of_improvement"] == pytest.approx((1 + 5 / 8) / 2)
    lo, hi = agg["interval"]
    assert 0 < lo < agg["normalised_improvement"] < hi
    assert agg["poi_interval"][0] < agg["probability_of_improvement"] <= agg["poi_interval"][1] <= 1
    assert build(ens).aggregate == result.aggregate          # seeded
    assert "across tracks" in "\n".join(render(result))


def test_the_plot_is_drawn_or_skipped_with_a_note_without_matplotlib(tmp_path, monkeypatch):
    from benchkit.report import plots

    win = [0.3, 0.2, 0.4, 0.1, 0.5, 0.3, 0.2, 0.6]
    result = build(entries(a=report(win), b=report([-x for x in win])))
    if plots.available():
        assert plot(result, tmp_path / "board.png") is None
        assert (tmp_path / "board.png").read_bytes()[:4] == b"\x89PNG"
    monkeypatch.setattr(plots, "matplotlib_classes", lambda: None)
    assert plot(result, tmp_path / "none.png") == plots.MISSING
    assert not (tmp_path / "none.png").exists()


def test_benjamini_hochberg_matches_scipy_and_is_an_option_of_the_board():
    """q-values against scipy.stats.false_discovery_control (written independently); never
    below Holm's rejections' count, and chosen by --adjust bh."""
    import numpy as np
    from scipy.stats import false_discovery_control

    from benchkit.stats.multiplicity import benjamini_hochberg
    from benchkit.stats.paired import holm
    rng = np.random.default_rng(8)
    for m in (1, 2, 5, 20):
        ps = list(rng.uniform(0, 0.2, m)) + [0.01, 0.01]
        assert benjamini_hochberg(ps) == pytest.approx(list(false_discovery_control(ps)))
        assert sum(q < 0.05 for q in benjamini_hochberg(ps)) >= sum(h < 0.05 for h in holm(ps))
    with pytest.raises(ValueError, match="adjustment must be one of"):
        build([], adjustment="bonferroni")


def test_the_plots_titles_name_each_board_and_fit_the_figure(tmp_path, monkeypatch):
    """Issue 50: each panel was titled '<track>: each idea's delta ...', cut at the figure's
    edge, and two boards of one track were titled alike."""
    from benchkit.report import plots

    classes = plots.matplotlib_classes()
    if classes is None:
        pytest.skip("matplotlib is not installed")
    figure_cls, canvas_cls = classes
    drawn = []

    class Kept(figure_cls):
        def savefig(self, *args, **kwargs):
            drawn.append(self)
            return super().savefig(*args, **kwargs)

    monkeypatch.setattr(plots, "matplotlib_classes", lambda: (Kept, canvas_cls))
    win = [0.3, 0.2, 0.4, 0.1, 0.5, 0.3, 0.2, 0.6]
    other = [f"e{s}" for s in range(8)]   # another baseline's runs: a second board
    result = build(entries(   # long names, as the shipped ideas': the panels start further right
        moment_preserving_compression=report(win),
        pruning_finetune_vs_scratch=report([-x for x in win]),
        c=report(win, digests=other), d=report(win[::-1], digests=other)))
    assert len(result.boards) == 2
    assert plot(result, tmp_path / "board.png") is None
    fig, = drawn
    renderer = fig.canvas.get_renderer()
    heads = [ax.get_title() for ax in fig.axes]
    assert heads == ["board 1: tabular, baseline lr=1 on 8 seeds",
                     "board 2: tabular, baseline lr=1 on 8 seeds"]
    result.boards[1].baseline.config["optimizer"] = "a" * 90
    assert all(len(line) <= 70 for line in titles(result)[1].splitlines())
    for text in [ax.title for ax in fig.axes] + [fig._suptitle]:
        box = text.get_window_extent(renderer)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, text.get_text()
        assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1, text.get_text()
