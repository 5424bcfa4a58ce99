"""summary.md and the plots beside a report (benchkit.report.summary, benchkit.report.plots).

Reports are fabricated through benchkit.verdict.build.build_report + decide (the code the plugin
uses), so they have the real structure without training anything.
"""
from __future__ import annotations

import builtins
import dataclasses
import copy
import json

import pytest

from benchkit.report import plots
from benchkit.report import bench_report
from benchkit.report import summary
from builders import GRID, make_report, typed, write, as_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.parametrize("kwargs", [{}, {"missing": 2, "failed": 1}, {"direction": "higher"},
                                    {"tracks": ("tabular", "dynamics")}, {"margin": 0.2},
                                    {"diverge_idea_cfg": 1}])
def test_fabricated_reports_are_valid_reports(kwargs):
    """The reports these tests render are ones benchkit could write (the shipped schema)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(bench_report.SCHEMA_PATH.read_text())
    report = json.loads(bench_report.dumps(make_report(**kwargs)))
    jsonschema.validators.validator_for(schema)(schema).validate(report)


def _won_by_idea(md: str) -> int:
    """Rows of the per-seed table whose last column ("better") is the idea."""
    return sum(1 for line in md.splitlines() if line.endswith(" | idea |"))


needs_mpl = pytest.mark.skipif(not plots.available(), reason="matplotlib is not installed")


# ---------------------------------------------------------------- summary.md

def test_summary_of_a_complete_report_has_the_key_numbers():
    r = make_report(effect=-0.3)
    assert r["practical_verdict"] == "helps" and r["system_verdict"] == "worked"
    md = summary.render_summary_md(as_report(r))
    comp = r["comparison"]
    assert "# fake_idea on tabular" in md
    assert "a | pipe-y claim that helps" in md
    # protocol
    assert "8 paired seeds (0, 1, 2, 3, 4, 5, 6, 7)" in md
    assert "lr=0.001; lr=0.003; lr=0.01" in md and "epochs 2" in md
    assert "best validation mean" in md and "never used to choose" in md
    # per-seed table: one row per seed, diff and winner in the metric's direction
    for s, d in enumerate(comp["per_seed_diffs"]):
        assert f"| {s} | " in md and format(d, "+.4g") in md
    assert f"idea wins {comp['idea_wins']}/8" in md
    assert _won_by_idea(md) == comp["idea_wins"]
    # statistics
    assert format(comp["delta_mean"], "+.4g") in md
    assert format(comp["ci95"][0], "+.4g") in md and format(comp["ci95"][1], "+.4g") in md
    assert f"p = {comp['p_value']:.4g}" in md
    assert comp["selection_aware"] and (
        f"with the selected configs held fixed it would be {comp['p_fixed_configs']:.4g}" in md)
    assert "p_adjusted" not in md  # family of one
    assert format(comp["mde"], ".4g") in md and f"{comp['mde_rel_pct']:.3g}%" in md
    # mechanism evidence and verdicts in words
    assert "`residual`" in md and "residual is zero" in md and "| 8/8 | 0/8 | confirmed |" in md
    assert "`m::test_claim` | passed" in md
    assert "**practical: helps**: the idea is significantly better by" in md
    assert "**system: worked**: the idea helps and its mechanism is confirmed" in md


def test_summary_of_an_inconclusive_report_says_what_the_bench_cannot_see():
    r = make_report(effect=0.0, noise=0.3, seeds=8, signature_ok=False)
    comp = r["comparison"]
    assert r["practical_verdict"] == "inconclusive" and r["system_verdict"] == "failed"
    md = summary.render_summary_md(as_report(r))
    assert (f"not significant at level 0.05 (p = {comp['p_value']:.3g}): with 8 seeds this "
            f"bench cannot see effects smaller than {comp['mde_rel_pct']:.3g}% of the "
            "baseline") in md
    assert f"a true effect of {comp['mde_power80']:.4g}" in md
    # the deciding test: its binding pair, with the tuned arm's tuning loss along the grid
    assert comp["planning"]["test"] == ("intersection-union sign-flip test (its binding pair, "
                                        "with the tuned arm's tuning loss)")
    assert ("80% of the time by the intersection-union sign-flip test at level 0.05 with 8 "
            "seeds" in md)
    if comp["seeds_needed"] is not None:
        assert f"would take about {comp['seeds_needed']} seeds (this bench used 8)" in md
        assert "- seeds needed (post hoc):" in md
        assert "whose sd is the one-sided 80% upper confidence bound of the observed sd" in md
        assert "planning figure: planning" not in md
    assert comp["planning"]["remedy"].startswith(("more seeds", "none"))
    assert f"- what would let this bench decide: {comp['planning']['remedy']}" in md
    assert "| 0/8 | 0/8 | not confirmed |" in md and "signature(s) not confirmed: residual" in md
    assert "its mechanism is not confirmed" in md


def test_summary_shows_adjusted_p_for_a_family_and_warnings():
    r = make_report(effect=-0.3, tracks=("tabular", "dynamics"), seeds=4)
    comp = r["comparison"]
    assert comp["family_size"] == 2
    md = summary.render_summary_md(as_report(r))
    assert f"p_adjusted = {comp['p_adjusted']:.4g} (Holm over the idea's 2 tracks" in md
    edges = [w for w in r["warnings"] if " edge of " in w]   # one line for all of them
    assert r["warnings"] and all(f"- **{w}" in md for w in r["warnings"] if w not in edges)
    assert not edges or "- **selected at the high edge of lr" in md
    assert "only 4 seeds" in md


def test_summary_of_higher_is_better_counts_wins_the_other_way():
    r = make_report(effect=+0.3, direction="higher")
    assert r["practical_verdict"] == "helps"
    md = summary.render_summary_md(as_report(r))
    assert "a positive diff means the idea won" in md
    assert _won_by_idea(md) == r["comparison"]["idea_wins"] > 0


def test_summary_of_an_incomplete_report_lists_what_is_missing_and_gives_no_verdict():
    r = make_report(missing=2, failed=1)
    assert r["comparison"] is None and r["practical_verdict"] == "incomplete"
    md = summary.render_summary_md(as_report(r))
    assert "## Incomplete: no verdict" in md
    assert "3 of 48 runs missing or failed" in md
    for m in r["incomplete"]["missing"]:
        assert f"`{m}`" in md
    assert "RuntimeError: CUDA is not here" in md
    assert "**practical: incomplete**" in md and "no verdict" in md
    assert "## Per seed" not in md and "## Comparison" not in md


def test_summary_lists_a_failed_mechanism_test_and_a_diverged_config():
    r = make_report(effect=-0.3, mechanism_passed=False, diverge_idea_cfg=1)
    md = summary.render_summary_md(as_report(r))
    assert "`m::test_claim` | failed | AssertionError: residual 0.3 > 1e-9" in md
    assert "mechanism test(s) not passed: m::test_claim" in md
    assert "not eligible: diverged on seed(s) 0" in md
    assert "**system: partial**: the idea helps, but its mechanism is not confirmed" in md


# ---------------------------------------------------------------- write_companions / plots

@needs_mpl
def test_companions_written_beside_the_report_with_valid_pngs(tmp_path):
    r = make_report(effect=-0.3)
    path = write(tmp_path, r)
    assert summary.write_companions(path, as_report(r)) == []
    folder = path.parent
    md = (folder / "summary.md").read_text()
    assert md.startswith(summary.render_summary_md(as_report(r)))
    assert "![paired seeds](paired.png)" in md and "![grid sweep](sweep.png)" in md
    for name in ("paired.png", "sweep.png"):
        data = (folder / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5000
    assert not list(folder.glob(".*.tmp"))  # atomic writes leave no temp file behind


@pytest.mark.slow
@needs_mpl
def test_plot_bytes_change_when_the_data_change(tmp_path):
    a, b = make_report(effect=-0.3, rng_seed=0), make_report(effect=+0.2, rng_seed=1)
    pa, pb = write(tmp_path, a, "a"), write(tmp_path, b, "b")
    summary.write_companions(pa, as_report(a))
    summary.write_companions(pb, as_report(b))
    for name in ("paired.png", "sweep.png"):
        assert (pa.parent / name).read_bytes() != (pb.parent / name).read_bytes()


@needs_mpl
def test_plots_handle_higher_is_better_a_diverged_config_and_a_non_lr_grid(tmp_path):
    r = make_report(effect=+0.3, direction="higher", diverge_idea_cfg=0)
    assert plots.write_plots(tmp_path, as_report(r)) is None
    g = copy.deepcopy(r)  # a two-key grid: categorical x axis
    for entry in g["baseline"]["sweep"] + g["idea_sweep"]:
        entry["cfg"] = {"lr": entry["cfg"]["lr"], "wd": 0.1}
    g["baseline"]["best_cfg"] = g["baseline"]["sweep"][2]["cfg"]
    g["idea_config"] = g["idea_sweep"][2]["cfg"]
    plots.plot_sweep(as_report(g), tmp_path / "sweep2.png")
    assert (tmp_path / "sweep2.png").read_bytes().startswith(PNG_SIGNATURE)


def test_a_selection_still_at_the_edge_is_labelled_on_the_sweep_plot(tmp_path):
    r = make_report(effect=+0.3, direction="higher")
    r["grid_extensions"] = {"limit": 2, "declared_grid": [], "extensions": [], "at_edge": [
        {"arm": "idea", "axis": "lr", "side": "high"}]}
    assert plots.edge_note(as_report(r), "idea") == "at the high edge of lr\n(extend=2)"
    assert plots.edge_note(as_report(r), "baseline") is None
    assert plots.edge_note(as_report({"grid_extensions": {"at_edge": []}}), "idea") is None
    if plots.available():
        plots.plot_sweep(as_report(r), tmp_path / "sweep.png")
        assert (tmp_path / "sweep.png").read_bytes().startswith(PNG_SIGNATURE)


@needs_mpl
def test_incomplete_report_gets_a_summary_but_no_plots_and_stale_plots_go(tmp_path):
    path = write(tmp_path, make_report())
    summary.write_companions(path, as_report(make_report()))
    assert (path.parent / "paired.png").exists()
    r = make_report(missing=1)
    notes = summary.write_companions(path, as_report(r), echo=False)
    assert notes == ["no plots for an incomplete report (no comparison to draw)"]
    assert not (path.parent / "paired.png").exists() and not (path.parent / "sweep.png").exists()
    assert "## Incomplete: no verdict" in (path.parent / "summary.md").read_text()


def test_without_matplotlib_companions_write_summary_and_return_a_note(tmp_path, monkeypatch,
                                                                       capsys):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r} (simulated)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    monkeypatch.setattr(summary, "_printed_notes", set())
    assert not plots.available()
    r = make_report(effect=-0.3)
    path = write(tmp_path, r)
    notes = summary.write_companions(path, as_report(r))
    assert notes == [plots.MISSING] and "pip install 'benchkit[plot]'" in notes[0]
    assert capsys.readouterr().err == f"\nbenchkit: {plots.MISSING}\n"
    md = (path.parent / "summary.md").read_text()
    assert "## Per seed" in md and f"_Not drawn: {plots.MISSING}._" in md
    assert not (path.parent / "paired.png").exists()
    summary.write_companions(path, as_report(r))  # printed once per process, returned every time
    assert capsys.readouterr().err == ""


def test_a_broken_report_gives_a_note_not_an_exception(tmp_path):
    r = make_report()
    broken = dataclasses.replace(as_report(r), idea=None)  # malformed: complete, but no idea
    notes = summary.write_companions(tmp_path / "bench_report.json", broken, echo=False)
    assert notes and any(n.startswith(summary.not_written(tmp_path / "bench_report.json"))
                         for n in notes)


@pytest.mark.slow
def test_aggregate_session_writes_the_summary_beside_each_report(tmp_path):
    from types import SimpleNamespace

    from benchkit.report.session import aggregate_session

    spec = {"name": "agg_idea", "module": "m.py", "tracks": ["tabular"],
            "grids": {"tabular": GRID[:1]}, "seeds": [0, 1], "epochs": {"tabular": 1},
            "claim": None, "margin": None, "protocols": {"tabular": {
                "track": "tabular", "model": "m", "metric": "mse",
                "metric_direction": "lower is better"}}}
    payloads = [{"kind": "run", "outcome": "passed", "message": None, "spec": spec,
                 "nodeid": f"x{arm}{s}", "arm": arm, "track": "tabular", "cfg": GRID[0],
                 "seed": s, "val": 1.0 + s + (arm == "idea"), "test": 1.0 + s * 0.5,
                 "diverged": False, "signatures": {}, "logs": {}}
                for arm in ("baseline", "idea") for s in (0, 1)]
    settings = SimpleNamespace(alpha=0.05, report_dir=tmp_path, gate="off")
    written, _ = aggregate_session(typed(payloads), settings)
    folder = written[0][0].parent
    assert (folder / "summary.md").read_text().startswith("# agg_idea on tabular")
    assert json.loads((folder / "bench_report.json").read_text())["name"] == "agg_idea"


def test_summary_of_a_non_inferior_report_names_the_margin():
    r = make_report(effect=0.0, noise=0.01, margin=0.2)
    assert r["practical_verdict"] == "non-inferior", r["comparison"]
    md = summary.render_summary_md(as_report(r))
    assert "**practical: non-inferior**: not significantly better" in md
    assert "less than the margin of 20% of the baseline" in md
    assert "- non-inferiority (margin 20%" in md and ", non-inferior" in md


def test_the_protocol_names_the_track_s_default_model_as_the_track_s_not_the_arms():
    """The report knows the track's default model, not the one each arm's test builds (the
    pruning ideas train mlp_tiny on a track whose default is a tanh MLP): summary.md must not
    name it as the benched model (issue 54)."""
    report = make_report()
    md = summary.render_summary_md(as_report(report))
    assert (f"the track's default model is `{report['model']}`, which an arm trains only "
            "where its test builds it") in md
    assert f"model `{report['model']}`" not in md


def test_a_frontier_shows_each_checked_budget_point_by_point():
    """On a frontier, the median of a budget over the points hides what each arm spends at
    each: summary.md gives every checked budget per point and arm (issue 54: the pruning
    controls that won had saved no multiply-adds), and leaves out one every arm spends alike."""
    from builders import ALPHA, TRACK, built_frontier, make_run, make_spec

    grid = [{"lr": 0.001, "macs": m} for m in (0.9, 0.8)]
    spent = {("baseline", 0.9): 0.89, ("idea", 0.9): 0.88, ("baseline", 0.8): 0.79,
             ("idea", 0.8): 0.78}
    runs = [make_run(arm, cfg, s, 1.0, 1.0 + 0.01 * s * (arm == "idea"),
                     budgets={"multiply_adds_ratio": spent[arm, cfg["macs"]], "steps": 16})
            for arm in ("baseline", "idea") for cfg in grid for s in range(6)]
    spec = make_spec(grid, 6, frontier={"macs": [0.9, 0.8]})
    md = summary.render_summary_md(as_report(built_frontier(spec, TRACK, runs, [],
                                                            alpha=ALPHA)))
    assert ("`multiply_adds_ratio` at each `macs` point (median per arm over its seeds; "
            "checked between the arms at every point):") in md
    assert "| 0.9 | 0.89 | 0.88 |" in md and "| 0.8 | 0.79 | 0.78 |" in md
    assert "`steps` at each" not in md
