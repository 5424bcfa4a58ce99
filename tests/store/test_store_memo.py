"""A session reads a stored run once (issue 51): RunStore keeps each valid record it read by
name and lists the key's folder at each lookup, so a record stored since, by this store or by
another process (an xdist worker, a shard), is read and taken."""
from __future__ import annotations

from benchkit.spec.payloads import RunPoint, RunResult
from benchkit.store import records
from benchkit.store.backends import DirectoryStorage
from benchkit.store.runs import RunStore, record_name

KEY = "c3" * 32
POINT = RunPoint(arm="idea", track="tabular", cfg={"lr": 0.01}, seed=1)
PLAN = {"looks": [8], "boundary": "union"}


class Counting(DirectoryStorage):
    """A directory store that counts the records read."""

    def __init__(self, directory):
        super().__init__(directory)
        self.reads = 0

    def read(self, name, limit=None):
        self.reads += 1
        return super().read(name, limit)


def _record(val: float, plan=None) -> records.StoredRun:
    return records.build(KEY, POINT, RunResult(val=val, test=val, diverged=False, seconds=1.0),
                         {}, records.StoredOrigin(module="m.py", nodeid="m.py::t", plan=plan),
                         "cpu")


def _store(path) -> RunStore:
    return RunStore(Counting(path), path, threads=1, any_cpu=True)


def test_a_stored_run_is_read_once_and_again_after_a_put(tmp_path):
    store = _store(tmp_path)
    old = _record(0.5)
    assert store.put(old)
    for _ in range(3):   # collection, its end, the item's setup
        assert store.lookup(KEY, tmp_path / "m.py", PLAN) == old
    assert store.storage.reads == 1
    new = _record(0.25, PLAN)   # a --bench-fresh session stores its retrained run beside
    assert store.put(new)
    assert store.lookup(KEY, tmp_path / "m.py", PLAN) == new
    assert sorted(store.records(KEY), key=record_name) == sorted([old, new], key=record_name)


def test_a_run_another_process_stores_is_found(tmp_path):
    store, worker = _store(tmp_path), _store(tmp_path)
    assert store.lookup(KEY, tmp_path / "m.py", PLAN) is None
    assert worker.put(_record(0.5))
    assert store.lookup(KEY, tmp_path / "m.py", PLAN) == _record(0.5)
    assert worker.put(_record(0.25, PLAN))   # a newer run, under the session's plan
    assert store.lookup(KEY, tmp_path / "m.py", PLAN) == _record(0.25, PLAN)
    assert store.storage.reads == 2


def test_a_corrupt_record_is_reported_once_and_left_out(tmp_path):
    store = _store(tmp_path)
    good = _record(0.5)
    assert store.put(good)
    bad = record_name(good).replace("-", "-0", 1)
    (tmp_path / bad).write_bytes(b"{not json")
    assert store.records(KEY) == [good] == store.records(KEY)
    assert store.storage.reads == 3   # the valid record once; the invalid one at each lookup
    assert len(store.problems) == 1 and "invalid" in store.problems[0]
