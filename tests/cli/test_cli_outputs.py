"""The commands' own outputs and inputs that are not reports (issue 50): a directory or an
unwritable place where ``render``, ``leaderboard --json/--plot`` or a session writes, two
reports that measure differently, and the run store ``verify`` reads: each one clear line
naming the path (never a temp file's name, never a traceback), exit status 2."""
from __future__ import annotations

import copy

import pytest

from benchkit.cli import commands
from benchkit.store import atomic
from builders import make_report
from commands import write_json


@pytest.fixture(scope="module")
def helps() -> dict:
    return make_report(effect=-0.3)


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = commands.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(code: int, err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("benchkit: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_an_atomic_write_onto_a_directory_names_the_path_not_its_temp_file(tmp_path):
    target = tmp_path / "reports" / "bench_report.json"
    (target / "inner").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as info:
        atomic.write_atomic(target, "{}")
    assert info.value.filename == str(target) and ".tmp" not in str(info.value)
    assert sorted(p.name for p in target.parent.iterdir()) == ["bench_report.json"]


@pytest.mark.parametrize("key, value", [("metric", "accuracy"),
                                        ("metric_direction", "higher is better")])
def test_compare_refuses_reports_that_measure_differently(tmp_path, capsys, helps, key, value):
    old = write_json(tmp_path / "old" / "bench_report.json", helps)
    changed = copy.deepcopy(helps)
    changed[key] = value
    new = write_json(tmp_path / "new" / "bench_report.json", changed)
    code, out, err = run_cli(capsys, "compare", old, new)
    one_line(code, err, f"the reports measure differently: {key}", repr(value),
             "their figures cannot be compared")
    assert "OK: no regression" not in out


def test_render_onto_a_directory_named_summary_md_is_one_line(tmp_path, capsys, helps):
    report = write_json(tmp_path / "a" / "tabular" / "bench_report.json", helps)
    (report.parent / "summary.md").mkdir()
    code, out, err = run_cli(capsys, "render", report)
    one_line(code, err, f"{report.parent / 'summary.md'} not written", "Is a directory")


@pytest.mark.parametrize("flag", ["--json", "--plot"])
def test_leaderboard_outputs_that_cannot_be_written_are_one_line(tmp_path, capsys, helps,
                                                                  flag):
    shared = copy.deepcopy(helps)
    for k, row in enumerate(shared["runs"]):   # the digests that put two ideas on one board
        row["digest"] = f"{k:064x}"
    for name in ("a", "b"):
        write_json(tmp_path / "reports" / name / "tabular" / "bench_report.json",
                   {**shared, "name": name})
    folder = tmp_path / "out"
    folder.mkdir()
    code, out, err = run_cli(capsys, "leaderboard", tmp_path / "reports", flag, folder)
    one_line(code, err, f"{flag} {folder}: cannot write it", "valid: a file path")


def test_verify_finds_the_rootdirs_store_from_anywhere_and_a_missing_one_is_exit_2(
        tmp_path, capsys, helps, monkeypatch):
    project = tmp_path / "project"
    report = write_json(project / "reports" / "a" / "tabular" / "bench_report.json", helps)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = run_cli(capsys, "verify", report)
    one_line(code, err, "no run store at .pytest_cache/d/benchkit-runs in", "give --store")
    code, out, err = run_cli(capsys, "verify", report, "--store", "nowhere")
    one_line(code, err, "--store nowhere: no run store at", str(elsewhere / "nowhere"))
    store = project / ".pytest_cache" / "d" / "benchkit-runs"
    store.mkdir(parents=True)
    code, out, err = run_cli(capsys, "verify", report)
    assert f"match the store at {store}" in out, out + err
