"""``--bench-seed-offset N`` (ini ``bench_seed_offset``): a bench's seeds moved to a disjoint
block, N .. N + S - 1, for replications (benchmarks/panel/replication.py). The block is in the
report (its seeds, ``protocol.seed_offset``, the exploratory reason) and in every run's store
key, so that a block never takes another's runs; 0 is the default session, keys included. A
wrong value is one usage line naming the option and the valid range. In-process sessions of
arms that record values (no training).
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from benchkit.plugin import fresh_audit, settings
from idea_modules import idea_module, RECORDED_ARMS
from sessions import report_path

# the runs an arm body executes, one line each: which ones a session trained, not reused
COUNTED = RECORDED_ARMS.replace(
    "def test_baseline(run):\n",
    "def test_baseline(run):\n    open('trained.txt', 'a').write(f'{run.seed}\\n')\n")
BENCH = idea_module("block", COUNTED, seeds=6)


def session(pytester, *args: str):
    pytester.makepyfile(test_block=BENCH)
    return pytester.runpytest_inprocess("-p", "no:randomly", *args)


def trained(pytester) -> list[int]:
    """The seeds whose baseline the sessions so far trained (not took from the store), in
    order; the file is emptied."""
    path = pytester.path / "trained.txt"
    seeds = [int(line) for line in path.read_text().split()] if path.exists() else []
    path.write_text("")
    return seeds


def report(pytester) -> dict:
    return json.loads(report_path(pytester.path, "block").read_text())


def test_the_block_is_trained_and_named_in_the_report(pytester):
    result = session(pytester, "--bench-seed-offset", "100")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["benchkit *seeds per idea from 100, epochs per track*"])
    assert trained(pytester) == [100, 101, 102, 103, 104, 105]
    got = report(pytester)
    assert got["protocol"]["seeds"] == [100, 101, 102, 103, 104, 105]
    assert got["protocol"]["seed_offset"] == 100
    assert got["n_seeds"] == 6
    # the recorded values are the block's own (1 + seed), not seeds 0-5's
    assert got["baseline"]["full"]["mean"] == pytest.approx(103.5)
    assert got["exploratory"]["reasons"] == [
        "--bench-seed-offset 100 overrides the module's plan"]
    assert got["practical_verdict"] == "helps"   # a verdict, descriptive only


def test_blocks_never_share_stored_runs_and_offset_zero_is_the_default(pytester):
    """Seeds 101-105 belong to both blocks: each block trains its own. Offset 0 keeps
    the default session's keys (its runs are reused) and is no override."""
    session(pytester, "--bench-seed-offset", "100")
    assert trained(pytester) == list(range(100, 106))
    session(pytester, "--bench-seed-offset", "101")
    assert trained(pytester) == list(range(101, 107))
    session(pytester, "--bench-seed-offset", "101")
    assert trained(pytester) == []   # the same block again: all from the store
    session(pytester)
    assert trained(pytester) == list(range(6))
    result = session(pytester, "--bench-seed-offset", "0")
    result.assert_outcomes(passed=12)
    assert trained(pytester) == []
    got = report(pytester)
    assert got["protocol"]["seeds"] == list(range(6)) and "seed_offset" not in got["protocol"]
    assert got.get("exploratory") is None


def test_the_ini_setting_moves_the_block_too(pytester):
    pytester.makeini("[pytest]\nbench_seed_offset = 7\n")
    session(pytester).assert_outcomes(passed=12)
    assert report(pytester)["protocol"]["seeds"] == list(range(7, 13))


@pytest.mark.parametrize("value, fragment", [
    ("-1", "-1 is too small"), ("x", "'x' is not an integer"),
    (str(settings.MAX_SEED_OFFSET + 1), "1000000001 is too large"),
    ("1.5", "'1.5' is not an integer")])
def test_a_bad_value_is_one_line_naming_the_valid_range(value, fragment):
    with pytest.raises(ValueError) as caught:
        settings.seed_offset(value)
    assert str(caught.value) == (f"{fragment}; valid: an integer in "
                                 f"[0, {settings.MAX_SEED_OFFSET}]")


def test_a_bad_command_line_value_is_a_usage_error(pytester):
    pytester.makepyfile(test_block=BENCH)
    result = pytester.runpytest_subprocess("--bench-seed-offset", "-5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --bench-seed-offset: -5 is too small; valid: an "
                                 "integer in [[]0, 1000000000]*"])
    assert "Traceback" not in result.stderr.str()


def test_a_bad_ini_value_is_a_collection_error_before_anything_runs(pytester):
    pytester.makeini("[pytest]\nbench_seed_offset = many\n")
    result = session(pytester)
    result.stdout.fnmatch_lines(["*benchkit: ini option bench_seed_offset: 'many' is not an "
                                 "integer; valid: an integer in [[]0, 1000000000]*"])
    assert trained(pytester) == []


@pytest.mark.parametrize("offset, passed", [(0, []), (64, ["--bench-seed-offset=64"])])
def test_the_fresh_audit_retrains_in_the_same_block(offset, passed):
    given = SimpleNamespace(seeds=8, seed_offset=offset, epochs=None, threads=1, device="cpu",
                            store=None)
    args = fresh_audit.command("t.py::test_idea[x]", given, None, "scratch")  # type: ignore
    assert [a for a in args if a.startswith("--bench-seed")] == ["--bench-seeds=8", *passed]
