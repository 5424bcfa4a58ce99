"""One trainer per run key in an xdist session: a worker about to train a key that another
worker of the session is training waits for that run and reuses its stored record.

Modules with byte-identical arms share runs through the run store, but under ``-n`` two
workers can both miss the record and train the same key at once (the same bits, twice the
CPU). The controller makes a claims folder on its machine and names it to its workers
(``pytest_configure_node``); a claim is a file made with ``O_EXCL`` that holds its worker's
pid, removed at the item's teardown. A claim whose process is gone (a crashed worker) is
taken over. Workers on another host, and sessions without xdist, claim nothing.
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

INPUT = "benchkit_claims"   # workerinput key: a ClaimsInput as a plain tuple (execnet)
POLL = 0.2                  # seconds between looks at a claim another worker holds
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


class Claims:
    """The claims folder of one session, as one worker process uses it."""

    def __init__(self, folder: Path, pid: int | None = None):
        self.folder = folder
        self.pid = os.getpid() if pid is None else pid

    def _path(self, key: str) -> Path:
        return self.folder / hashlib.sha256(key.encode()).hexdigest()

    def take(self, key: str) -> bool:
        """Claim ``key``: True when this process now holds it, False when another does."""
        self.folder.mkdir(parents=True, exist_ok=True)  # made by the first claim of a session
        try:
            fd = os.open(self._path(key), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as out:
            out.write(str(self.pid))
        return True

    def holder(self, key: str) -> int | None:
        """The pid holding ``key``; None when nobody does (or the claim is being written)."""
        try:
            text = self._path(key).read_text()
        except FileNotFoundError:
            return None
        return int(text) if text.strip().isdigit() else None

    def release(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def train_or_reuse(self, key: str, lookup: Callable[[], T | None],
                       is_alive: Callable[[int], bool] = alive) -> T | None:
        """None once this process holds ``key`` (it trains the run and releases the claim),
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
                if self.holder(key) == holder:   # still the dead one's (not a new claim)
                    self.release(key)            # its worker died with it: take it over
                continue
            while self.holder(key) == holder and (holder is None or is_alive(holder)):
                time.sleep(POLL)
                if holder is None:      # a claim being written: look again at once
                    break
            found = lookup()
            if found is not None:
                return found


# -- the controller names the folder, a worker opens it ----------------------------------------
CLAIMS_OF_WORKER: pytest.StashKey[Claims | None] = pytest.StashKey()
FOLDER_OF_CONTROLLER: pytest.StashKey[Path] = pytest.StashKey()


class ClaimsInput(NamedTuple):
    """What the controller sends each worker: the host it runs on and its claims folder."""
    host: str
    folder: str


def worker_input(config: pytest.Config) -> tuple[str, str]:
    """What the controller sends each worker: its claims folder, named once per session and
    made only by a first claim (a session that trains nothing leaves no trace), and its host."""
    folder = config.stash.get(FOLDER_OF_CONTROLLER, None)
    if folder is None:
        folder = config.stash[FOLDER_OF_CONTROLLER] = Path(
            tempfile.gettempdir()) / f"benchkit-claims-{uuid.uuid4().hex}"
    return (socket.gethostname(), str(folder))   # a ClaimsInput's fields: execnet sends tuples


def remove_folder(config: pytest.Config) -> None:
    """The controller's claims folder goes with its session."""
    folder = config.stash.get(FOLDER_OF_CONTROLLER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def of_worker(config: pytest.Config) -> Claims | None:
    """This worker's Claims, or None: no xdist, or a worker on another host than its
    controller (the folder is the controller's machine's)."""
    if CLAIMS_OF_WORKER not in config.stash:
        sent = getattr(config, "workerinput", {}).get(INPUT)
        given = ClaimsInput(*sent) if isinstance(sent, (tuple, list)) and len(sent) == 2 \
            else None
        config.stash[CLAIMS_OF_WORKER] = (
            Claims(Path(given.folder)) if given is not None
            and given.host == socket.gethostname() else None)
    return config.stash[CLAIMS_OF_WORKER]
