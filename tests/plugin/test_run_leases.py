"""One trainer per run key in an xdist session (benchkit.plugin.leases): a worker that finds
the key it is about to train held by another worker waits and reuses the stored run."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchkit.plugin import leases
from benchkit.plugin.leases import Leases
from idea_modules import arm, idea_module
from sessions import no_traceback, report_path, validate_report

KEY = "tabular|baseline|lr=0.01|seed=0"


def test_a_key_is_held_by_one_process_until_released(tmp_path):
    mine, theirs = Leases(tmp_path / "leases", pid=101), Leases(tmp_path / "leases", pid=202)
    assert mine.take(KEY) and not theirs.take(KEY)
    assert theirs.holder(KEY) == 101 and theirs.take("another key")
    mine.release(KEY)
    assert theirs.holder(KEY) is None and theirs.take(KEY)


def test_a_waiter_reuses_the_record_its_holder_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(leases, "POLL", 0.01)
    holder, waiter = Leases(tmp_path, pid=101), Leases(tmp_path, pid=202)
    stored: list[str] = []
    assert holder.take(KEY)

    def train_then_store():
        time.sleep(0.2)
        stored.append("the record")
        holder.release(KEY)

    threading.Thread(target=train_then_store).start()
    found = waiter.train_or_reuse(KEY, lambda: stored[0] if stored else None,
                                  is_alive=lambda pid: True)
    assert found == "the record" and waiter.holder(KEY) is None  # reused: nothing held


def test_a_waiter_trains_when_the_holder_let_go_without_a_record(tmp_path, monkeypatch):
    monkeypatch.setattr(leases, "POLL", 0.01)
    holder, waiter = Leases(tmp_path, pid=101), Leases(tmp_path, pid=202)
    assert holder.take(KEY)
    threading.Timer(0.1, holder.release, (KEY,)).start()   # its run failed: nothing stored
    assert waiter.train_or_reuse(KEY, lambda: None, is_alive=lambda pid: True) is None
    assert waiter.holder(KEY) == 202   # the waiter holds it now and trains


def test_the_lease_of_a_dead_worker_is_taken_over(tmp_path):
    assert Leases(tmp_path, pid=101).take(KEY)   # a worker that crashed while training
    waiter = Leases(tmp_path, pid=202)
    assert waiter.train_or_reuse(KEY, lambda: None, is_alive=lambda pid: pid != 101) is None
    assert waiter.holder(KEY) == 202


def test_a_record_stored_just_before_the_lease_is_reused_not_trained(tmp_path):
    waiter = Leases(tmp_path, pid=202)   # the holder stored and let go after our first look
    assert waiter.train_or_reuse(KEY, lambda: "the record") == "the record"
    assert waiter.holder(KEY) is None


def test_only_workers_on_the_controllers_host_take_leases():
    controller = SimpleNamespace(stash=pytest.Stash())
    sent = leases.worker_input(controller)   # named, not made: no trace until a lease
    host, folder = sent
    assert sent == leases.worker_input(controller) and not Path(folder).exists()
    here = SimpleNamespace(stash=pytest.Stash(), workerinput={leases.INPUT: sent})
    elsewhere = SimpleNamespace(stash=pytest.Stash(),
                                workerinput={leases.INPUT: ("another-host", folder)})
    alone = SimpleNamespace(stash=pytest.Stash())
    assert leases.of_worker(here).folder == Path(folder)
    assert leases.of_worker(elsewhere) is None and leases.of_worker(alone) is None
    leases.remove_folder(controller)


# A baseline arm both modules declare byte for byte: their runs share keys. Each call of its
# body appends a line to BODIES and takes a while, so that under --dist loadfile the two
# workers (one module each) reach the same seed together.
SLOW_SHARED_BASELINE = arm("baseline", """
    with open(BODIES, "a") as out:
        out.write(f"{run.seed}\\n")
    time.sleep(1.0)
    run.record(val=1.0 + run.seed, test=1.0 + run.seed)
""")
IMPORTS = """
import time
from pathlib import Path

import pytest

BODIES = Path(__file__).with_name("bodies")
"""


def test_two_workers_never_train_one_run_key_at_once(pytester, monkeypatch):
    tmp = pytester.path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))   # where the controller names its leases folder
    for name, better in (("first", 0.5), ("second", 0.25)):
        pytester.makepyfile(**{f"test_{name}": idea_module(
            name, SLOW_SHARED_BASELINE,
            arm("idea", f"run.record(val={better} + run.seed, test={better} + run.seed)"),
            imports=IMPORTS, seeds=2)})
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadfile", "-p", "no:randomly")
    no_traceback(result)
    assert result.ret == 0, result.stdout.str()
    bodies = sorted((pytester.path / "bodies").read_text().split())
    assert bodies == ["0", "1"], bodies   # each shared key trained once, by one worker
    first, second = (validate_report(report_path(pytester.path, n)) for n in ("first", "second"))
    assert first["baseline"] == second["baseline"]
    assert not list(tmp.glob("benchkit-leases-*"))   # removed with the session
