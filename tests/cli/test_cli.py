"""``python -m benchkit show|compare|render``, run as a user would (subprocess)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from benchkit.verdict import build
from benchkit.report import bench_report
from builders import make_report, write
from commands import assert_clean_error, bench, write_json


@pytest.fixture(scope="module")
def helps() -> dict:
    r = make_report(effect=-0.3)
    assert r["practical_verdict"] == "helps"
    return r


# ---------------------------------------------------------------- show

@pytest.mark.slow
def test_show_finds_reports_in_folders_recursively(tmp_path, helps):
    write(tmp_path, helps, "reports/fake_idea/tabular")
    other = make_report(effect=0.0, noise=0.3, name="other_idea", seeds=4)
    write(tmp_path, other, "reports/deep/er/other_idea/tabular")
    res = bench("show", cwd=tmp_path)  # default folder: reports
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:4] == ["idea", "track", "verdict", "decided"]
    assert any(ln.startswith("fake_idea ") and "helps/worked" in ln for ln in lines)
    assert ("benchkit: reports in reports/<idea>/<track>/, reports/deep/er/<idea>/<track>/ "
            in res.stdout)
    assert any(ln.startswith("other_idea ") for ln in lines)
    assert "benchkit: WARNING other_idea tabular: only 4 seeds" in res.stdout
    res = bench("show", tmp_path / "reports" / "fake_idea" / "tabular" / "bench_report.json")
    assert res.returncode == 0 and "other_idea" not in res.stdout


@pytest.mark.slow
def test_show_says_incomplete_and_errors_cleanly(tmp_path):
    write(tmp_path, make_report(missing=1), "r")
    res = bench("show", tmp_path)
    assert res.returncode == 0
    assert "incomplete" in res.stdout and "benchkit: INCOMPLETE fake_idea tabular" in res.stdout
    assert_clean_error(bench("show", tmp_path / "nowhere"), "nowhere", "no such file")
    empty = tmp_path / "empty"
    empty.mkdir()
    res = bench("show", empty)
    assert res.returncode == 1 and "no bench_report.json found" in res.stderr


@pytest.mark.slow
def test_show_reads_a_hand_made_v1_report(tmp_path, helps):
    """The reference reports (bench_version 1, hand-made) have no name/warnings/incomplete."""
    legacy = {k: v for k, v in helps.items() if k not in (
        "name", "claim", "module", "complete", "incomplete", "warnings", "runs")}
    write_json(tmp_path / "reports" / "old_idea" / "tabular" / "bench_report.json", legacy)
    res = bench("show", tmp_path / "reports")
    assert res.returncode == 0, res.stderr
    assert any(ln.startswith("old_idea ") for ln in res.stdout.splitlines())


# ---------------------------------------------------------------- compare

@pytest.mark.slow
def test_compare_same_report_is_ok(tmp_path, helps):
    path = write(tmp_path, helps)
    res = bench("compare", path, path.parent)  # a folder stands for its report
    assert res.returncode == 0, res.stdout + res.stderr
    assert "fake_idea on tabular" in res.stdout
    for field in ("baseline mean", "idea mean", "delta_mean", "p_value", "mde",
                  "practical verdict", "system verdict"):
        assert field in res.stdout
    assert "OK: no regression" in res.stdout and res.stderr == ""


@pytest.mark.slow
def test_compare_worse_verdict_exits_1(tmp_path, helps):
    new = make_report(effect=0.0, noise=0.3)
    assert new["practical_verdict"] == "inconclusive"
    res = bench("compare", write(tmp_path, helps, "old"), write(tmp_path, new, "new"))
    assert res.returncode == 1, res.stdout
    assert "REGRESSION: practical verdict got worse: helps -> inconclusive" in res.stdout
    assert any(ln.startswith("practical verdict") and ln.rstrip().endswith("worse")
               for ln in res.stdout.splitlines())
    # the other way round is an improvement
    res = bench("compare", tmp_path / "new", tmp_path / "old")
    assert res.returncode == 0, res.stdout


def test_compare_incomplete_new_report_is_worst(tmp_path, helps):
    res = bench("compare", write(tmp_path, helps, "old"),
                write(tmp_path, make_report(missing=3), "new"))
    assert res.returncode == 1
    assert "practical verdict got worse: helps -> incomplete" in res.stdout
    assert "NEW is incomplete" in res.stdout and "Traceback" not in res.stderr


@pytest.mark.slow
def test_compare_regression_beyond_the_old_mde_exits_1(tmp_path, helps):
    mde = helps["comparison"]["mde"]
    for shift, expected in ((1.5 * mde, 1), (0.5 * mde, 0), (-3 * mde, 0)):
        new = copy.deepcopy(helps)  # same verdict; only the idea's mean moves
        new["idea"]["mean"] += shift  # lower is better: + is worse
        res = bench("compare", write(tmp_path, helps, "old"), write(tmp_path, new, f"n{shift}"))
        assert res.returncode == expected, (shift, res.stdout)
        assert ("the idea's mse regressed by" in res.stdout) == (expected == 1)


@pytest.mark.slow
def test_compare_regression_follows_a_higher_is_better_metric(tmp_path):
    old = make_report(effect=+0.3, direction="higher")
    mde = old["comparison"]["mde"]
    up, down = copy.deepcopy(old), copy.deepcopy(old)
    up["idea"]["mean"] += 2 * mde
    down["idea"]["mean"] -= 2 * mde
    p_old = write(tmp_path, old, "old")
    assert bench("compare", p_old, write(tmp_path, up, "up")).returncode == 0
    res = bench("compare", p_old, write(tmp_path, down, "down"))
    assert res.returncode == 1 and "higher is better" in res.stdout


@pytest.mark.parametrize("case,fragments", [
    ("missing", ("no such file",)),
    ("not_json", ("not JSON",)),
    ("no_version", ("not a benchkit report (no bench_version)", "supported bench_version: 1")),
    ("list", ("not a benchkit report",)),
    ("wrong_version", ("bench_version 7 is not supported", "reads bench_version 1")),
    ("broken", ("not a valid benchkit report", "comparison")),
    ("other_idea", ("different ideas", "'fake_idea'", "'someone_else'")),
    ("other_track", ("different tracks", "'tabular'", "'dynamics'")),
])
def test_compare_errors_are_one_clean_line(tmp_path, helps, case, fragments):
    old = write(tmp_path, helps, "old")
    new = tmp_path / "new" / "bench_report.json"
    if case == "not_json":
        new.parent.mkdir()
        new.write_text("{ this is not json")
    elif case == "no_version":
        write_json(new, {"track": "tabular"})
    elif case == "list":
        write_json(new, [1, 2, 3])
    elif case == "wrong_version":
        write_json(new, {**helps, "bench_version": 7})
    elif case == "broken":
        write_json(new, {k: v for k, v in helps.items() if k != "comparison"})
    elif case == "other_idea":
        write_json(new, {**helps, "name": "someone_else"})
    elif case == "other_track":
        write_json(new, {**helps, "track": "dynamics"})
    assert_clean_error(bench("compare", old, new), *fragments)


@pytest.mark.slow
def test_help_lists_the_subcommands_and_exit_codes():
    res = bench("--help")
    assert res.returncode == 0
    for word in ("show", "compare", "render", "exit status"):
        assert word in res.stdout
    res = bench("compare", "--help")
    text = " ".join(res.stdout.split())  # argparse re-wraps the description
    assert res.returncode == 0 and "helps > non-inferior > inconclusive > harms" in text
    res = bench()
    assert res.returncode == 2 and "Traceback" not in res.stderr


@pytest.mark.slow
def test_render_writes_companions_for_existing_reports(tmp_path, helps):
    path = write(tmp_path, helps, "reports/fake_idea/tabular")
    res = bench("render", tmp_path / "reports")
    assert res.returncode == 0, res.stderr
    assert (path.parent / "summary.md").read_text().startswith("# fake_idea on tabular")
    assert json.loads(path.read_text()) == json.loads(bench_report.dumps(helps))  # report untouched


def test_the_cli_reads_the_version_benchkit_writes():
    from benchkit.cli import commands

    assert build.BENCH_VERSION in commands.SUPPORTED_VERSIONS


@pytest.mark.slow
def test_reports_written_by_an_earlier_benchkit_stay_readable():
    """The committed reports predate budgets, controls, frontiers, exploratory flags and
    signature nulls: show and compare still read them (the new fields are optional)."""
    root = Path(__file__).resolve().parents[2] / "reports"
    shown = bench("show", str(root))
    assert shown.returncode == 0, shown.stderr
    assert "error" not in shown.stderr
    for report in sorted(root.glob("*/*/bench_report.json")):
        same = bench("compare", str(report), str(report))
        assert same.returncode == 0, same.stdout + same.stderr
