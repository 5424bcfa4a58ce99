"""Run leases: one trainer per run key in an xdist session. A worker about to train a key that
another worker of the session is training waits for that run and reuses its stored record.

Modules with byte-identical arms share runs through the run store, but under ``-n`` two
workers can both miss the record and train the same key at once (the same bits, twice the
CPU). The controller makes a leases folder on its machine and names it to its workers
(``pytest_configure_node``); a lease is a file made with ``O_EXCL`` that holds its worker's
pid, removed at the item's teardown. A lease whose process is gone (a crashed worker) is
taken over. Workers on another host, and sessions without xdist, take no lease.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, TypeVar

import pytest

INPUT = "benchkit_leases"   # workerinput key: a LeaseInput as a plain tuple (execnet)
POLL = 0.2                  # seconds between looks at a lease another worker holds
T = TypeVar("T")


def alive(pid: int) -> bool:
    """Whether a process of this host has ``pid`` (one we may not signal is alive too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Leases:
    """The leases folder of one session, as one worker process uses it."""

    def __init__(self, folder: Path, pid: int | None = None):
        self.folder = folder
        self.pid = os.getpid() if pid is None else pid

    def _path(self, key: str) -> Path:
        return self.folder / hashlib.sha256(key.encode()).hexdigest()

    def take(self, key: str) -> bool:
        """Take ``key``'s lease: True when this process now holds it, False when another does."""
        self.folder.mkdir(parents=True, exist_ok=True)  # made by the first lease of a session
        try:
            fd = os.open(self._path(key), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as out:
            out.write(str(self.pid))
        return True

    def holder(self, key: str) -> int | None:
        """The pid holding ``key``; None when nobody does (or the lease is being written)."""
        try:
            text = self._path(key).read_text()
        except FileNotFoundError:
            return None
        return int(text) if text.strip().isdigit() else None

    def release(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def train_or_reuse(self, key: str, lookup: Callable[[], T | None],
                       is_alive: Callable[[int], bool] = alive) -> T | None:
        """None once this process holds ``key`` (it trains the run and releases the lease),
        or the record ``lookup`` finds after the holder let go (the holder stored the run)."""
        while True:
            if self.take(key):
                found = lookup()   # stored by a holder that let go since the caller looked
                if found is None:
                    return None
                self.release(key)
                return found
            holder = self.holder(key)
            if holder is not None and not is_alive(holder):
                if self.holder(key) == holder:   # still the dead one's (not a new lease)
                    self.release(key)            # its worker died with it: take it over
                continue
            while self.holder(key) == holder and (holder is None or is_alive(holder)):
                time.sleep(POLL)
                if holder is None:      # a lease being written: look again at once
                    break
            found = lookup()
            if found is not None:
                return found


# -- the controller names the folder, a worker opens it ----------------------------------------
LEASES_OF_WORKER: pytest.StashKey[Leases | None] = pytest.StashKey()
FOLDER_OF_CONTROLLER: pytest.StashKey[Path] = pytest.StashKey()


class LeaseInput(NamedTuple):
    """What the controller sends each worker: the host it runs on and its leases folder."""
    host: str
    folder: str


def worker_input(config: pytest.Config) -> tuple[str, str]:
    """What the controller sends each worker: its leases folder, named once per session and
    made only by a first lease (a session that trains nothing leaves no trace), and its host."""
    folder = config.stash.get(FOLDER_OF_CONTROLLER, None)
    if folder is None:
        folder = config.stash[FOLDER_OF_CONTROLLER] = Path(
            tempfile.gettempdir()) / f"benchkit-leases-{uuid.uuid4().hex}"
    return (socket.gethostname(), str(folder))   # a LeaseInput's fields: execnet sends tuples


def remove_folder(config: pytest.Config) -> None:
    """The controller's leases folder goes with its session."""
    folder = config.stash.get(FOLDER_OF_CONTROLLER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def of_worker(config: pytest.Config) -> Leases | None:
    """This worker's Leases, or None: no xdist, or a worker on another host than its
    controller (the folder is the controller's machine's)."""
    if LEASES_OF_WORKER not in config.stash:
        sent = getattr(config, "workerinput", {}).get(INPUT)
        given = LeaseInput(*sent) if isinstance(sent, (tuple, list)) and len(sent) == 2 \
            else None
        config.stash[LEASES_OF_WORKER] = (
            Leases(Path(given.folder)) if given is not None
            and given.host == socket.gethostname() else None)
    return config.stash[LEASES_OF_WORKER]
