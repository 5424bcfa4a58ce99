"""Many machines through one store: where runs live (benchkit/store/backends.py), sharded sessions
(``--bench-shard K/N``, benchkit/spec/shard.py) and the final session that writes the reports.

End to end, as users meet it: copies of one project at different paths (as on different
machines) share a store directory or a ``file://`` URL; shards run concurrently; the final
session trains nothing and its per-seed numbers equal a one-machine bench bit for bit; a shard
that never ran leaves an incomplete report that names its runs.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from benchkit.spec import shard
from benchkit.spec.run_record import RunPoint, RunResult
from benchkit.store.backends import DirectoryStorage, FsspecStorage, open_storage
from benchkit.store import hardware
from benchkit.store.runs import RunStore
from idea_modules import arm, idea_module
from sessions import child_environment, run_session, shared_session, validate_report

IDEA = idea_module("spread", arm("baseline"), arm("idea", """
    if os.environ.get("HANG_AT") == f"{run.cfg['lr']}-{run.seed}":  # to be killed here
        open("hanging", "w").close()
        time.sleep(600)
    run.fit(run.track.model(), lr=run.cfg["lr"] * 1.5)"""), """
    @pytest.mark.mechanism
    def test_claim():
        assert True
    """, imports="import os, time\nimport pytest", grid={"lr": [1e-2, 3e-3]}, seeds=3)
SEEDS = [0, 1, 2]
FAST = ["--bench-epochs", "1", "-p", "no:randomly", "-p", "no:cacheprovider", "-W", "ignore"]


# -- the storage contract ---------------------------------------------------------------------
def storages(tmp_path):
    return [DirectoryStorage(tmp_path / "dir"),
            FsspecStorage(f"memory://bench-{uuid.uuid4().hex}"),  # one process-wide memory fs:
                                                                # unique across in-process runs
            FsspecStorage((tmp_path / "url").as_uri())]


def test_read_write_names_on_every_backend(tmp_path):
    for storage in storages(tmp_path):
        assert storage.read("ab/k/x.json") is None
        assert storage.names("ab/k") == []
        storage.write("ab/k/x.json", b"one")
        storage.write("ab/k/x.json", b"two")       # replaced, not appended
        storage.write("ab/k/y.json", b"three")
        storage.write("ab/k/sub/z.json", b"four")  # not directly in ab/k/
        assert storage.read("ab/k/x.json") == b"two", storage.location
        assert storage.names("ab/k") == ["ab/k/x.json", "ab/k/y.json"], storage.location


def test_concurrent_writers_never_tear_a_record(tmp_path):
    """Writers of one name and a reader at the same time: every read is one whole record."""
    for storage in storages(tmp_path):
        records = [bytes([65 + i]) * 200_000 for i in range(4)]
        seen, stop = [], threading.Event()

        def write(record):
            for _ in range(15):
                storage.write("cd/k/r.json", record)

        def read():
            while not stop.is_set():
                data = storage.read("cd/k/r.json")
                if data is not None:
                    seen.append(data)
        reader = threading.Thread(target=read)
        reader.start()
        writers = [threading.Thread(target=write, args=(r,)) for r in records]
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        stop.set()
        reader.join()
        assert all(data in records for data in seen), storage.location
        assert storage.read("cd/k/r.json") in records
        assert storage.names("cd/k") == ["cd/k/r.json"], "a temporary file was left behind"


def test_locations(tmp_path):
    assert open_storage("runs", tmp_path).directory == tmp_path / "runs"
    assert isinstance(open_storage("memory://x", tmp_path), FsspecStorage)
    with pytest.raises(ValueError, match="valid: a directory, or a URL"):
        open_storage("nosuchprotocol://bucket/runs", tmp_path)


def test_a_merge_store_takes_a_record_of_another_cpu_and_names_it(tmp_path):
    from benchkit.store import records

    storage = FsspecStorage(f"memory://cpu-{uuid.uuid4().hex}")
    plain = RunStore(storage, tmp_path, 1)
    merge = RunStore(storage, tmp_path, 1, any_cpu=True)
    key, run = "ab" * 32, {"arm": "idea", "track": "tabular", "cfg": {}, "seed": 0}

    def record(val, cpu):
        result = {"val": val, "test": 2.0, "diverged": False, "seconds": 0.1,
                  "signatures": {}, "logs": {}, "budgets": {}}
        return records.build(key, RunPoint.from_json(run), RunResult.from_json(result), {},
                             records.StoredOrigin(module="m", nodeid="n"), cpu)
    plain.put(record(1.0, "Other CPU (avx512f)"))
    assert plain.lookup(key, tmp_path / "m") is None     # this machine would compute other bits
    assert merge.lookup(key, tmp_path / "m").cpu == "Other CPU (avx512f)"
    plain.put(record(3.0, hardware.cpu()))                 # trained here: filed under this CPU
    assert plain.lookup(key, tmp_path / "m").result.val == 3.0
    assert merge.lookup(key, tmp_path / "m").result.val == 3.0


# -- the assignment ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["0/2", "3/2", "2", "a/b", "1/0", "", "1/2/3"])
def test_a_bad_shard_names_the_valid_forms(value):
    with pytest.raises(ValueError, match=r"valid: K/N with integers 1 <= K <= N"):
        shard.parse(value)


def test_parse():
    assert shard.parse("2/4") == (2, 4) and shard.parse(" merge ") == "merge"


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8])
def test_every_unit_in_exactly_one_shard_and_the_shards_balanced(n):
    tracks, seeds = ["tabular", "dynamics"], list(range(8))
    for name in ("a", "moment_preserving_rank2", "l2"):
        counts = {k: {t: 0 for t in tracks} for k in range(1, n + 1)}
        for t in tracks:
            for s in seeds:
                counts[shard.shard_of(name, tracks, seeds, t, s, n)][t] += 1
        for t in tracks:
            per_shard = [counts[k][t] for k in counts]
            assert sum(per_shard) == len(seeds)
            assert max(per_shard) - min(per_shard) <= 1, (name, t, per_shard)


def test_split_pairs_flags_a_seed_whose_arms_trained_on_different_cpus():
    from builders import ALPHA, TRACK, built, make_run, make_spec
    grid = [{"lr": 0.01}]

    def runs(split):
        return [make_run(arm, grid[0], s, 1.0 + s + (arm == "idea"), 2.0 + s,
                         cpu="AMD B (avx2)" if split and (arm, s) == ("idea", 4)
                         else "Intel A (avx2)")
                for arm in ("baseline", "idea") for s in range(6)]
    report = built(make_spec(grid, 6), TRACK, runs(split=True), [], alpha=ALPHA)
    flagged = [w for w in report["warnings"] if "different CPU types" in w]
    assert len(flagged) == 1 and "seed(s) 4 " in flagged[0] and "AMD B" in flagged[0]
    assert {r["cpu"] for r in report["runs"]} == {"Intel A (avx2)", "AMD B (avx2)"}
    report = built(make_spec(grid, 6), TRACK, runs(split=False), [], alpha=ALPHA)
    assert not [w for w in report["warnings"] if "CPU" in w]


# -- sessions as users run them ---------------------------------------------------------------
def copy_of_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_spread.py").write_text(IDEA)
    return root


def pytest_in(path: Path, *args, **env_extra) -> subprocess.Popen:
    env = child_environment(**env_extra)
    return subprocess.Popen([sys.executable, "-m", "pytest", *FAST, *args], cwd=path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=600)
    print(out)
    return proc.returncode, out


def run_in(path: Path, *args) -> tuple[int, str]:
    return finish(pytest_in(path, *args))


def per_seed(report: dict) -> list:
    return [(r["arm"], r["seed"], json.dumps(r["cfg"]), r["val"].hex(), r["test"].hex())
            for r in report["runs"]]


def report_of(root: Path) -> dict:
    return validate_report(root / "reports" / "spread" / "tabular" / "bench_report.json")


def shard_runs(k: int, n: int) -> list[str]:
    return sorted(f"{arm}[tabular-lr={lr}-seed{s}]" for arm in ("baseline", "idea")
                  for lr in (0.01, 0.003) for s in SEEDS
                  if shard.shard_of("spread", ["tabular"], SEEDS, "tabular", s, n) == k)


# its two tests share one session, whichever worker asks first
@pytest.fixture(scope="module")
def one_machine(tmp_path_factory):
    root, result = shared_session(tmp_path_factory, "scale-out-one-machine",
                                  {"pytest.ini": "[pytest]\n", "test_spread.py": IDEA},
                                  *FAST, "--bench-store=own-store")
    assert result.ret == 0, "\n".join(result.outlines + result.errlines)
    return report_of(root)


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_two_concurrent_shards_then_a_plain_session_equal_one_machine(tmp_path, one_machine):
    store = tmp_path / "shared-store"
    a, b, c = (copy_of_project(tmp_path / name / "checkout") for name in ("a", "bb", "ccc"))
    shards = [pytest_in(a, f"--bench-store={store}", "--bench-shard", "1/2"),
              pytest_in(b, f"--bench-store={store}", "--bench-shard", "2/2",
                        "--bench-gate", "helps")]
    (rc1, out1), (rc2, out2) = (finish(p) for p in shards)
    assert (rc1, rc2) == (0, 0), out1 + out2
    n1, n2 = len(shard_runs(1, 2)), len(shard_runs(2, 2))
    assert f"benchkit: shard 1/2 trained {n1} run(s), 0 reused; no verdict (shard)" in out1
    assert ("benchkit: shard 2/2 trained "
            f"{n2} run(s), 0 reused; no verdict (shard): --bench-gate helps applies in the "
            "final session") in out2
    assert n1 + n2 == 12 and min(n1, n2) == 4  # 3 seeds over 2 shards: 2 and 1 seeds
    assert not (a / "reports").exists() and not (b / "reports").exists()

    rc, out = run_in(c, f"--bench-store={store}", "--bench-gate", "off")
    assert rc == 0, out
    assert "benchkit: 0 run(s) trained, 12 reused" in out
    final = report_of(c)
    assert final["complete"] and per_seed(final) == per_seed(one_machine)
    for key in ("baseline", "idea", "comparison", "practical_verdict", "system_verdict"):
        assert final[key] == one_machine[key], key


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_a_missing_shard_is_incomplete_and_named_then_complete_once_it_ran(tmp_path, one_machine):
    """Through fsspec (a file:// URL); the final session is ``--bench-shard merge``."""
    url = (tmp_path / "url-store").as_uri()
    a, b, c = (copy_of_project(tmp_path / name / "checkout") for name in ("a", "bb", "ccc"))
    rc, out = run_in(a, f"--bench-store={url}", "--bench-shard=1/2")
    assert rc == 0, out
    rc, out = run_in(c, f"--bench-store={url}", "--bench-shard=merge", "--bench-gate=not-harms")
    assert rc == 1, out  # incomplete fails every gate
    assert f"benchkit: merge: {len(shard_runs(2, 2))} run(s) not in the store" in out
    assert "0 run(s) trained" in out
    report = report_of(c)
    assert not report["complete"] and report["practical_verdict"] == "incomplete"
    assert sorted(report["incomplete"]["missing"]) == shard_runs(2, 2)

    rc, out = run_in(b, f"--bench-store={url}", "--bench-shard=2/2")
    assert rc == 0, out
    rc, out = run_in(c, f"--bench-store={url}", "--bench-shard=merge")
    assert rc == 0 and "benchkit: 0 run(s) trained, 12 reused" in out, out
    assert per_seed(report_of(c)) == per_seed(one_machine)


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_a_killed_shard_leaves_its_unfinished_runs_missing_and_named(tmp_path):
    store = tmp_path / "store"
    a, c = (copy_of_project(tmp_path / name / "checkout") for name in ("a", "ccc"))
    process = pytest_in(a, f"--bench-store={store}", "--bench-shard=1/1", HANG_AT="0.01-1")
    deadline = time.monotonic() + 540
    while not (a / "hanging").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (a / "hanging").exists(), finish(process)[1]
    process.kill()  # SIGKILL: no teardown, no report, nothing more stored
    finish(process)
    rc, out = run_in(c, f"--bench-store={store}", "--bench-shard=merge")
    report = report_of(c)
    unfinished = ["idea[tabular-lr=0.01-seed1]", "idea[tabular-lr=0.01-seed2]"] + [
        f"idea[tabular-lr=0.003-seed{s}]" for s in SEEDS]   # the arms run in this order
    assert rc == 1 and "benchkit: 0 run(s) trained, 7 reused" in out, out  # incomplete: exit 1
    assert sorted(report["incomplete"]["missing"]) == sorted(unfinished)
    assert f"benchkit: NEXT: {len(unfinished)} run(s) of this merge are not in the store" in out


@pytest.mark.parametrize("args, message", [
    (["--bench-shard", "3/2"], "--bench-shard: '3/2' is not a shard; valid: K/N"),
    (["--bench-shard", "merge", "--bench-fresh"], "give one of them"),
    (["--bench-shard", "1/2", "-p", "no:cacheprovider"], "--bench-shard needs a run store"),
    (["--bench-store=nosuchprotocol://b/runs"], "valid: a directory, or a URL"),
    (["--bench-store", "."], "write --bench-store=. (with '=')"),
])
def test_usage_errors(pytester, args, message):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_spread=IDEA)
    result = run_session(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
