"""One run, trained in two fresh processes, gives bit-identical numbers."""
from __future__ import annotations

from idea_modules import arm, idea_module

IDEA = idea_module("det", arm("baseline"), arm("idea"), track=["tabular", "dynamics"])


def bench_once(pytester, monkeypatch, read_report, where: str) -> dict:
    """Bench only the baseline's seed-0 run of each track, in a fresh process and a fresh
    folder (so nothing stored by the other process can be reused)."""
    folder = pytester.mkdir(where)
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_det.py").write_text(IDEA)
    monkeypatch.chdir(folder)
    result = pytester.runpytest_subprocess("--bench-epochs", "1", "-k",
                                           "test_baseline and seed0")
    result.assert_outcomes(passed=2, deselected=6)
    numbers = {}
    for track in ("tabular", "dynamics"):
        [row] = read_report(folder, "det", track=track)["runs"]
        assert (row["arm"], row["seed"], row["outcome"], row["reused"]) == (
            "baseline", 0, "passed", False)
        assert isinstance(row["val"], float) and isinstance(row["test"], float)
        numbers[track] = (float.hex(row["val"]), float.hex(row["test"]))
    return numbers


def test_a_run_is_bit_identical_in_two_fresh_processes(pytester, monkeypatch, read_report):
    first = bench_once(pytester, monkeypatch, read_report, "first")
    second = bench_once(pytester, monkeypatch, read_report, "second")
    assert first == second
