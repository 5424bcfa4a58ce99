"""Upper bounds, each a clear one-line refusal naming what is valid: torch threads, seeds and
grid size (before anything is collected), and report files given to the commands (size, and
files that are not regular: a FIFO would block)."""
from __future__ import annotations

import os

import pytest

from benchkit.spec.run_record import RunPoint, RunResult
from benchkit.cli.commands import main
from benchkit.plugin import settings
from benchkit.spec import SpecError
from builders import parse


def test_threads_and_seeds_options_have_upper_bounds():
    with pytest.raises(ValueError, match=r"99999 is too large; valid: an integer in \[1, 256\]"):
        settings.threads("99999")
    assert settings.threads("256") == 256
    with pytest.raises(ValueError, match=r"too large; valid: an integer in \[2, 1000\]"):
        settings.seeds(str(10 ** 6))


@pytest.mark.parametrize("kwargs,fragment", [
    ({"seeds": 10 ** 6}, "seeds=1000000: need an integer in [2, 1000]"),
    ({"grid": {"lr": list(range(1, 101)), "wd": list(range(100))}},
     "grid has 10000 configs; valid: at most 1000"),
    ({"grid": [{"lr": i} for i in range(1, 1002)]}, "grid has 1001 configs; valid: at most 1000"),
    ({"grid": {"lr": list(range(1, 101))}, "seeds": 101},
     "100 configs x 101 seeds on tabular is 10100 runs per arm; valid: at most 10000"),
])
def test_seeds_and_grid_size_are_bounded_at_collection(kwargs, fragment):
    with pytest.raises(SpecError) as info:
        parse(**kwargs)
    assert fragment in str(info.value)


# issue 50: integers longer than benchkit's own record reader reads (benchkit.store.bounded)
# were accepted, then every record was refused: every session retrained everything
@pytest.mark.parametrize("kwargs,fragment", [
    ({"grid": {"width": [10 ** 20]}}, "grid value width=100000000000000000000: an integer of 21 "
     "digits; valid: an integer of at most 20 digits (|n| <= 99999999999999999999)"),
    ({"grid": [{"lr": 0.1, "width": -10 ** 25}]}, "an integer of 26 digits; valid: an integer of "
     "at most 20 digits"),
    ({"frontier": {"keep": [1, 10 ** 21]}}, "frontier value keep=1000000000000000000000: an "
     "integer of 22 digits"),
    ({"max_seeds": 10 ** 30}, "max_seeds=1000000000000000000000000000000 must be an integer in "
     "[2, 1000]"),
    ({"looks": (8, 10 ** 25)}, "strictly increasing integers in [2, 1000]"),
    ({"looks": (8, 1001)}, "strictly increasing integers in [2, 1000]"),
    ({"extend": 10 ** 30}, "must be an integer in [0, 1000]"),
    ({"budget_tolerance": 10 ** 400}, "budget_tolerance=1000000000"),
    ({"margin": 0.1, "margin_reference": 10 ** 400}, "margin_reference=1000000000"),
])
def test_integers_beyond_what_the_records_hold_are_refused_at_collection(kwargs, fragment):
    with pytest.raises(SpecError) as info:
        parse(**kwargs)
    assert fragment in str(info.value)
    assert len(str(info.value)) < 400


def test_the_integer_bound_is_the_record_readers():
    from benchkit.spec.idea import MAX_INT
    from benchkit.store import bounded

    assert bounded.loads(str(MAX_INT)) == MAX_INT and bounded.loads(str(-MAX_INT)) == -MAX_INT
    with pytest.raises(bounded.Refused):
        bounded.loads(str(MAX_INT + 1))
    assert parse(grid={"width": [MAX_INT]}).grids["tabular"] == ({"width": MAX_INT},)
    assert parse(max_seeds=1000).looks == (64, 1000)  # tabular's default seeds, then 1000


@pytest.mark.parametrize("option", ["epochs", "audit"])
def test_epochs_and_audit_options_are_bounded_like_the_records(option):
    check = getattr(settings, option)
    assert check("9" * 20) == int("9" * 20)
    with pytest.raises(ValueError, match=r"is too large; valid: an integer in \[[01], 9{20}\]"):
        check("1" + "0" * 20)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_an_oversized_report_is_refused_by_every_command(tmp_path, capsys):
    fifo = tmp_path / "bench_report.json"
    os.mkfifo(fifo)
    big = tmp_path / "big" / "bench_report.json"
    big.parent.mkdir()
    with big.open("wb") as f:
        f.truncate(33 * 1024 * 1024)   # sparse: costs no disk
    for argv in (["compare", fifo, fifo], ["verify", fifo], ["show", fifo], ["verify", big]):
        assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert sum("not a regular file" in line for line in err) == 3, err
    assert "34603008 bytes; valid: a report of at most 33554432 bytes" in err[-1]


def test_a_report_dir_outside_the_project_given_as_a_separate_word_is_refused(pytester,
                                                                             tmp_path_factory):
    """pytest would take it for a test path when it chooses the rootdir: the rootdir and the
    default store would move. Inside the project, or written with '=', it is fine."""
    pytester.makeini("[pytest]\n")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = pytester.runpytest_inprocess("--bench-report-dir", str(elsewhere))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*write --bench-report-dir={elsewhere} (with '=')*"])
    (pytester.path / "inside").mkdir()
    for args in (["--bench-report-dir", "inside"], [f"--bench-report-dir={elsewhere}"]):
        assert pytester.runpytest_inprocess(*args).ret == pytest.ExitCode.NO_TESTS_COLLECTED


# -- issue 42: records and reports bounded before they are read; grids by value -----------
def test_bounded_json_refuses_long_integers_duplicate_keys_and_deep_nesting():
    from benchkit.store import bounded

    assert bounded.loads('{"a": 12345678901234567890, "b": [1.5e300]}')["b"] == [1.5e300]
    for text, fragment in [("1" * 5000, "an integer of 5000 digits; valid: at most 20"),
                           ('{"a": -' + "9" * 21 + "}", "an integer of 21 digits"),
                           ('{"a": 1, "a": 2}', "key 'a' is given twice in one object"),
                           ("[" * 100000 + "]" * 100000, "nested too deeply"),
                           (b"\xff\xfe{", "not JSON"), ("{", "not JSON (Expecting")]:
        with pytest.raises(bounded.Refused, match=fragment.replace("(", r"\(")):
            bounded.loads(text)


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path):
    import tracemalloc

    from benchkit.store import bounded

    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(3 * 1024 ** 3)   # sparse: 3 GB that cost no disk
    tracemalloc.start()
    try:
        with pytest.raises(bounded.Refused, match="3221225472 bytes; valid: at most 1024"):
            bounded.read_file(big, 1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024   # nothing of the 3 GB was read
    assert bounded.read_file(tmp_path / "absent.json", 1024) is None


@pytest.mark.parametrize("text,fragment", [
    ('{"bench_version": 1, "n": ' + "7" * 5000 + "}", "an integer of 5000 digits"),
    ('{"bench_version": 1, "bench_version": 1}', "key 'bench_version' is given twice"),
])
def test_every_command_refuses_an_unbounded_report_in_one_line(tmp_path, capsys, text,
                                                                fragment):
    path = tmp_path / "bench_report.json"
    path.write_text(text)
    for argv in (["show", path], ["compare", path, path], ["render", path], ["verify", path],
                 ["leaderboard", path]):
        assert main([str(a) for a in argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0] and "Traceback" not in err[0], err


def _stored(tmp_path, **change):
    """A RunStore with one valid record of this CPU, and that record (``change`` applied
    before it is stored: a record written by someone else)."""
    from benchkit.store import hardware, records
    from benchkit.store.runs import RunStore

    store = RunStore(tmp_path / "store", tmp_path, 1)
    key = "ef" * 32
    result = {"val": 1.0, "test": 2.0, "diverged": False, "seconds": 0.1, "signatures": {},
              "logs": {}, "budgets": {}}
    record = records.build(key, RunPoint(arm="idea", track="tabular", cfg={}, seed=0),
                           RunResult.from_json(result), {},
                           records.StoredOrigin(module="m", nodeid="n"),
                           change.get("cpu", hardware.cpu()))
    return store, key, record


def test_a_record_whose_cpu_is_not_its_file_names_is_not_used(tmp_path):
    import dataclasses

    from benchkit.store import hardware, records
    from benchkit.store.runs import record_name

    store, key, record = _stored(tmp_path, cpu="Another CPU (avx512f)")
    mine = record_name(dataclasses.replace(record, cpu=hardware.cpu()))  # this CPU's tag
    store.storage.write(mine, records.dumps(record))
    assert store.lookup(key, tmp_path / "m") is None
    assert any("its cpu 'Another CPU (avx512f)'" in p and "not the file it is in" in p
               for p in store.problems), store.problems
    store.put(record)   # filed under its own CPU's tag: another machine's, not used here
    assert store.lookup(key, tmp_path / "m") is None


def test_an_oversized_or_duplicate_keyed_record_is_refused_with_a_reason(tmp_path):
    from benchkit.store import records
    from benchkit.store.runs import record_name

    store, key, record = _stored(tmp_path)
    name = record_name(record)
    path = store.storage.directory / name
    path.parent.mkdir(parents=True)
    with path.open("wb") as f:
        f.truncate(records.MAX_RECORD_BYTES + 1)
    assert store.lookup(key, tmp_path / "m") is None
    assert any(f"{records.MAX_RECORD_BYTES + 1} bytes; valid: at most" in p
               for p in store.problems), store.problems
    text = records.dumps(record).decode()
    path.write_text(text[:-1] + ', "key": "' + key + '"}')
    assert store.lookup(key, tmp_path / "m") is None
    assert any("key 'key' is given twice" in p for p in store.problems), store.problems
    store.put(record)
    assert store.lookup(key, tmp_path / "m").result.val == 1.0


@pytest.mark.parametrize("grid,fragment", [
    ({"lr": [1, 1.0]}, "duplicate configs (equal values, however written): lr=1.0"),
    ({"lr": [1e-2, 0.01]}, "duplicate configs"),
    ([{"lr": 1e-2, "wd": 0}, {"wd": 0.0, "lr": 0.01}], "duplicate configs"),
    ({"lr": [10 ** 400]}, "must be a finite number within float range"),
    ({"lr": [1e-2], "width": [-(10 ** 309)]}, "must be a finite number within float range"),
])
def test_grids_refuse_equal_values_however_written_and_values_outside_float_range(grid,
                                                                                  fragment):
    with pytest.raises(SpecError) as info:
        parse(grid=grid)
    assert fragment in str(info.value)


def test_a_bool_and_a_number_are_different_grid_values():
    assert len(parse(grid={"lr": [1e-2], "flag": [True, 1]}).grids["tabular"]) == 2


def test_an_own_tracks_epochs_and_grid_are_bounded_like_a_marks(monkeypatch):
    """An own track (benchkit.tracks.register) gives its epochs and default grid to every bench
    on it: the same bound as --bench-epochs and grid= (issue 50)."""
    import dataclasses

    from benchkit import tracks

    monkeypatch.setattr(tracks, "_REGISTRY", dict(tracks._REGISTRY))  # restored afterwards
    base = tracks.get("tabular")
    for name, changes, fragment in (
            ("huge_epochs", {"epochs": 10 ** 20}, "track 'huge_epochs' declares epochs="
             "100000000000000000000; valid: an integer in [1, 99999999999999999999]"),
            ("huge_grid", {"grid": ({"lr": 1e-3, "width": 10 ** 21},)},
             "grid value width=1000000000000000000000: an integer of 22 digits")):
        tracks.register(dataclasses.replace(base, name=name, **changes), replace=True)
        with pytest.raises(SpecError) as info:
            parse(track=name)
        assert fragment in str(info.value)
