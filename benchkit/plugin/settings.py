"""benchkit's session settings: each option's type and range, checked once, and where the
values live on pytest's config.

An option's value comes from the command line (converted by argparse with the checks below, so
a wrong value is pytest's usage error naming the flag) or else from the ini file (checked by
the same functions when :class:`Settings` is built).
"""
from __future__ import annotations

import argparse
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from benchkit.spec.idea import MAX_INT, MAX_SEEDS, MIN_SEEDS
from benchkit.training import device

if TYPE_CHECKING:
    from benchkit.store.runs import RunStore

MAX_TIMEOUT = 365 * 24 * 3600   # a year: SIGALRM's timer takes it with room to spare
GATES = ("off", "not-harms", "non-inferior", "equivalent", "helps", "worked")

# Values on pytest's config (controller and workers alike).
SETTINGS = pytest.StashKey["Settings"]()
SPECS = pytest.StashKey[dict]()       # module nodeid -> IdeaSpec | SpecError | None
NAMES = pytest.StashKey[dict]()       # idea name -> the module nodeid that declared it
STORE: pytest.StashKey[RunStore | None] = pytest.StashKey()  # the session's store, or None
HEADER_SHOWN = pytest.StashKey[bool]()  # the settings line went into pytest's header

# benchkit's command-line options (benchkit.plugin.hooks registers exactly these): only they
# switch benchkit on in a session; a project's own ``--bench-rounds`` is the project's
OPTIONS = ("--bench-report-dir", "--bench-seeds", "--bench-seed-offset", "--bench-epochs",
           "--bench-alpha", "--bench-gate", "--bench-threads", "--bench-audit",
           "--bench-audit-fresh", "--bench-store", "--bench-shard",
           "--bench-timeout", "--bench-device", "--bench-fresh")


def _integer(minimum: int, maximum: int | None = None):
    valid = f"valid: an integer >= {minimum}" if maximum is None else \
        f"valid: an integer in [{minimum}, {maximum}]"

    def check(value: str) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not an integer; {valid}") from None
        if number < minimum:
            raise ValueError(f"{number} is too small; {valid}")
        if maximum is not None and number > maximum:
            raise ValueError(f"{number} is too large; {valid}")
        return number
    return check


def alpha(value: str) -> float:
    valid = "valid: a number in (0, 0.5], e.g. 0.05"
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a number; {valid}") from None
    if not 0 < number <= 0.5:
        raise ValueError(f"{value!r} out of range; {valid}")
    return number


def gate(value: str) -> str:
    if value not in GATES:
        raise ValueError(f"unknown gate {value!r}; valid: {', '.join(GATES)}")
    return value


def timeout(value: str) -> float:
    """Seconds a run may take; 0 for no limit (given as "off" or 0)."""
    valid = f"valid: a number of seconds in (0, {MAX_TIMEOUT}], or off (0)"
    if str(value).strip().lower() == "off":
        return 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a number; {valid}") from None
    if not 0 <= number <= MAX_TIMEOUT:
        raise ValueError(f"{value!r} out of range; {valid}")
    return number


MAX_THREADS = 256   # torch crashes on absurd counts (99999 segfaults)
# epochs and audit counts reach the records and reports: no longer than their reader reads
seeds, epochs, audit = _integer(MIN_SEEDS, MAX_SEEDS), _integer(1, MAX_INT), _integer(0, MAX_INT)
threads = _integer(1, MAX_THREADS)
# a seed block's first seed: seeds reach numpy's legacy seeding (< 2**32) plus an arm's own
# init offsets (benchmarks add about 10**6), so a block stays far below that
MAX_SEED_OFFSET = 10 ** 9
seed_offset = _integer(0, MAX_SEED_OFFSET)


def shard(value: str):
    from benchkit.spec.shard import parse
    return parse(value)


def store(value: str) -> str:
    if not str(value).strip():
        raise ValueError("empty location; valid: a directory or an fsspec URL (s3://bucket/runs)")
    return str(value).strip()


def cli_type(check):
    """``check`` as an argparse ``type=``: a wrong value is a usage error naming the flag."""
    def convert(value: str):
        try:
            return check(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = check.__name__
    return convert


class Settings:
    """The session's benchkit settings: command line first, then ini, checked once.

    The ini file is read only once benchkit is active (:meth:`read_ini`, called by
    :func:`benchkit.plugin.activation.activate`): a project's ini applies to its sessions that
    bench nothing too, and a key of its own named ``bench_timeout = 1h`` must not stop them.
    Until then the values are the command line's and the defaults."""

    def __init__(self, config: pytest.Config):
        self.ini_read = False
        # drawn unpredictably (a forger must not know which stored runs are retrained), once
        # per session: xdist workers get the controller's (pytest_configure_node)
        self.audit_seed: int = getattr(config, "workerinput", {}).get(
            "benchkit_audit_seed", secrets.randbits(64))
        self._read(config, ini=False)

    def read_ini(self, config: pytest.Config) -> None:
        """Complete the settings from the ini file (once); a wrong value is a UsageError."""
        if not self.ini_read:
            self._read(config, ini=True)
            self.ini_read = True

    def _read(self, config: pytest.Config, *, ini: bool) -> None:
        def get(name, check=None, default=None):
            value = config.getoption(name)
            if value is not None:  # from the command line: argparse converted and checked it
                return value
            raw = config.getini(name) if ini else None
            if raw in (None, ""):
                return default
            if check is None:
                return raw
            try:
                return check(str(raw).strip())
            except ValueError as exc:
                raise pytest.UsageError(f"benchkit: ini option {name}: {exc}") from None

        self.report_dir = Path(config.rootpath, get("bench_report_dir", default="reports"))
        self.seeds: int | None = get("bench_seeds", seeds)
        # a replication's seed block: seeds offset .. offset + S - 1 (exploratory unless 0)
        self.seed_offset: int = get("bench_seed_offset", seed_offset, default=0)
        self.epochs: int | None = get("bench_epochs", epochs)
        self.threads: int = get("bench_threads", threads, default=1)
        self.alpha: float = get("bench_alpha", alpha, default=0.05)
        self.gate: str = get("bench_gate", gate, default="off")
        self.timeout: float | None = get("bench_timeout", timeout) or None  # None: no limit
        self.fresh = bool(config.getoption("bench_fresh"))
        self.audit: int = get("bench_audit", audit, default=0)
        self.audit_fresh: int = get("bench_audit_fresh", audit, default=0)
        self.store: str | None = get("bench_store", store)   # None: pytest's cache
        self.shard = get("bench_shard", shard)   # None, (K, N) or "merge" (benchkit.spec.shard)
        if self.fresh and self.shard == "merge":
            raise pytest.UsageError("benchkit: --bench-fresh retrains every run and "
                                    "--bench-shard merge trains none: give one of them")
        requested = get("bench_device", device.parse, default="cpu")
        try:  # the device of this process: an xdist worker gets its own GPU
            self.device: str = device.resolve(
                requested, getattr(config, "workerinput", {}).get("workerid"))
        except device.DeviceError as exc:
            raise pytest.UsageError(f"benchkit: --bench-device {requested}: {exc}") from None
