"""``python -m benchkit show|compare`` on damaged, crafted or extreme reports: each is one line
and exit status 2 (never a traceback, never the 1 that means "regression"), a non-finite
figure is a regression, control characters are escaped, and figures that could not be
computed print as n/a."""
from __future__ import annotations

import copy
import json
import math
import subprocess

import pytest

from benchkit.cli import commands
from benchkit.stats import paired
from commands import assert_clean_error, bench, write_json
from builders import make_report


@pytest.fixture(scope="module")
def helps() -> dict:
    return make_report(effect=-0.3)


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = commands.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def in_process(capsys, *args) -> subprocess.CompletedProcess:
    """``python -m benchkit args`` as test_cli's ``bench`` gives it, run by the same
    ``cli.main`` in this process (a fresh interpreter per call costs a second; test_cli.py
    runs the command as users do, and test_json_nested_too_deeply_is_one_line here too)."""
    code, out, err = run_cli(capsys, *args)
    return subprocess.CompletedProcess(["benchkit", *map(str, args)], code, out, err)


def one_clean_line(code: int, err: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchkit: error: "), err


@pytest.mark.parametrize("change, fragment", [
    (lambda r: r.update(practical_verdict=[]), "practical_verdict"),
    (lambda r: r.update(mechanism_ok="yes"), "mechanism_ok"),
    (lambda r: r.pop("comparison"), "'comparison' is a required property"),
    (lambda r: r["comparison"].update(idea_wins="8"), "comparison.idea_wins"),
    (lambda r: r["baseline"].update(full=None), "baseline.full"),
    (lambda r: r.update(environment={"x": json.loads("[" * 500 + "]" * 500)}), "environment"),
])
def test_a_crafted_report_is_one_line_and_exit_2(tmp_path, capsys, helps, change, fragment):
    report = copy.deepcopy(helps)
    change(report)
    path = write_json(tmp_path / "r" / "bench_report.json", report)
    for args in (("show", path), ("compare", path, path)):
        res = in_process(capsys, *args)
        assert_clean_error(res, str(path), "not a valid benchkit report", fragment)


def test_json_nested_too_deeply_is_one_line(tmp_path):
    path = tmp_path / "bench_report.json"
    path.write_text('{"bench_version": 1, "x": ' + "[" * 100000 + "]" * 100000 + "}")
    assert_clean_error(bench("show", path), str(path))
    assert_clean_error(bench("compare", path, path), str(path))


def mutations(report: dict):
    """(where, report) with one field removed or given a value of another type, for every
    field of the report and of its objects one level down."""
    odd = (None, [], "yes", -1, math.nan)
    for key in report:
        for value in ("<removed>", *odd):
            r = copy.deepcopy(report)
            if value == "<removed>":
                del r[key]
            else:
                r[key] = value
            yield f"{key}={value!r}", r
        if isinstance(report[key], dict):
            for sub in report[key]:
                for value in ("<removed>", None, "yes"):
                    r = copy.deepcopy(report)
                    if value == "<removed>":
                        del r[key][sub]
                    else:
                        r[key][sub] = value
                    yield f"{key}.{sub}={value!r}", r


@pytest.mark.slow
def test_no_damaged_field_makes_show_or_compare_crash(tmp_path, capsys):
    helps = make_report(effect=-0.3, seeds=3)  # few runs: quick to validate
    good = write_json(tmp_path / "good" / "bench_report.json", helps)
    path = tmp_path / "bad" / "bench_report.json"
    path.parent.mkdir()
    codes = {}
    for where, report in mutations(helps):
        path.write_text(json.dumps(report))
        code, out, err = run_cli(capsys, "show", path)  # an exception fails the test
        # compare reads OLD then NEW with show's reader: a report show refuses is given as OLD
        # (refused before the good one is validated, the slow part), one it reads as NEW
        # (compare's own figures then meet the damage)
        pair = (path, good) if code == 2 else (good, path)
        for args in (("show", path), ("compare", *pair)):
            if args[0] == "compare":
                code, out, err = run_cli(capsys, *args)
            assert code in (0, 1, 2), (where, args)
            if code == 2:
                one_clean_line(code, err)
            codes[where, args[0]] = code
    assert len(codes) > 150
    assert codes["practical_verdict=[]", "compare"] == 2
    assert codes["practical_verdict=[]", "show"] == 2


def test_a_non_finite_figure_is_a_regression(tmp_path, capsys, helps):
    for keys in (("idea", "mean"), ("comparison", "delta_mean"), ("comparison", "mde")):
        new = copy.deepcopy(helps)
        new[keys[0]][keys[1]] = math.nan
        res = in_process(capsys, "compare",
                         write_json(tmp_path / "old" / "bench_report.json", helps),
                         write_json(tmp_path / "new" / "bench_report.json", new))
        assert res.returncode == 1, res.stdout + res.stderr
        assert f"REGRESSION: NEW's {keys[1] if keys[1] != 'mean' else 'idea mean'} is nan" \
            in res.stdout
        assert "OK" not in res.stdout.splitlines()[-1]


def test_control_characters_are_escaped(tmp_path, capsys, helps):
    report = copy.deepcopy(helps)
    report["warnings"] = ["\x1b[2J\x1b[31mred alert\x07"]
    del report["name"], report["module"]  # a hand-made report: the folder names the idea
    folder = tmp_path / "reports" / "evil\x1b]0;title\x07" / "tabular"
    write_json(folder / "bench_report.json", report)
    res = in_process(capsys, "show", tmp_path / "reports")
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "\\x1b[2J\\x1b[31mred alert\\x07" in res.stdout
    assert "evil\\x1b]0;title\\x07" in res.stdout
    bad = copy.deepcopy(helps)
    bad["name"] = "a\x1b[31mb"
    res = in_process(capsys, "show", write_json(tmp_path / "named" / "bench_report.json", bad))
    assert_clean_error(res, "name")
    assert "\x1b" not in res.stderr and "\\x1b" in res.stderr


def test_figures_that_cannot_be_computed_print_as_n_a(tmp_path, capsys, helps):
    assert paired.power_mde(3, 1.0, alpha=1e-300) == math.inf  # used to loop for ever
    report = copy.deepcopy(helps)
    report["protocol"]["alpha"] = 1e-300
    report["comparison"].update(alpha=1e-300, level=1e-300, mde=None, mde_rel_pct=None,
                                mde_power80=None, seeds_needed=None)
    path = write_json(tmp_path / "r" / "bench_report.json", report)
    res = in_process(capsys, "show", path)
    assert res.returncode == 0, res.stderr
    row = res.stdout.splitlines()[2].split()
    assert row[row.index("helps/worked") + 5] == "n/a"   # the MDE column
    res = in_process(capsys, "compare", path, path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "note: OLD has no MDE" in res.stdout
