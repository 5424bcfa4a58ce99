"""Progress of a long bench on the controller's terminal: runs trained of runs to train, time
elapsed and an estimate of the time left.

Only the controller shows it (a worker's output is not the user's terminal), from the results
as they arrive (under ``-n`` through pytest-xdist). Where the terminal is a tty the line is
rewritten in place while nothing else was printed since; otherwise (CI logs) a plain line is
written every :data:`CI_EVERY_S` seconds or every tenth of the runs, whichever comes first.
``-q`` shows it less often, ``-qq`` not at all.
"""
from __future__ import annotations

import json
import time

import pytest

from benchkit.spec.payloads import Payload, RunPayload

COUNTS = "benchkit_collection"   # a worker's collection counts, on its first test report
TTY_EVERY_S = 0.5                # a tty's line is rewritten at most this often
CI_EVERY_S = 60.0                # a plain line at least this often in a log ...
CI_SHARE = 0.1                   # ... or after this share of the runs to train
QUIET_FACTOR = 5                 # -q: lines this many times less often


def clock_text(seconds: float) -> str:
    """``1:05``, ``12:00``, ``1:02:03``: a duration as a person reads it."""
    s = int(round(max(seconds, 0.0)))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def run_group(nodeid: str, track: str) -> str:
    """The runs whose durations predict each other's: one arm test on one track (its seeds and
    grid configs), e.g. ``ideas/test_x.py::test_idea|tabular``."""
    return f"{nodeid.split('[')[0]}|{track}"


class Progress:
    """Counts of one session's runs and the line that reports them (pure: given a clock)."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.start = clock()
        self.to_train: int | None = None   # from collection: selected runs without a record
        self.to_train_by_group: dict[str, int] = {}   # the same per run_group
        self.trained = 0
        self.reused = 0
        self.failed = 0
        self.first_at: float | None = None   # when the first run finished training
        self.first_seconds = 0.0             # and how long it took itself
        self.seconds_by_group: dict[str, list[float]] = {}   # each finished run's own time

    def planned(self, counts: dict) -> None:
        if self.to_train is None and counts.get("to_train") is not None:
            self.to_train = int(counts["to_train"])
            self.to_train_by_group = dict(counts.get("to_train_by_group") or {})

    def seen(self, payload: Payload) -> None:
        """One arm run's result arrived (a reused, trained or failed run)."""
        if not isinstance(payload, RunPayload) or payload.outcome == "skipped":
            return
        if payload.reused:
            self.reused += 1
            return
        if payload.outcome == "passed":
            self.trained += 1
        else:
            self.failed += 1
        seconds = float((payload.result.seconds if payload.result else None) or 0.0)
        if self.first_at is None:
            self.first_at, self.first_seconds = self.clock(), seconds
        group = run_group(payload.nodeid, payload.track or "")
        self.seconds_by_group.setdefault(group, []).append(seconds)

    @property
    def done(self) -> int:
        return self.trained + self.failed

    def left_s(self) -> float | None:
        """Seconds left at the session's rate so far (wall time, so ``-n`` counts; after the
        first run, so the set-up before it is left out), or None before two runs trained.

        Where collection counted the runs per :func:`run_group`, what is left is weighed by
        each group's mean run time so far (a group not started yet: the mean of all runs),
        and converted to wall time at the rate the runs since the first took: runs of one
        bench may differ 100-fold in cost (a slow idea arm trained last)."""
        if not self.to_train or self.done < 2:
            return None
        wall = self.clock() - self.first_at
        left_runs = max(self.to_train - self.done, 0)
        finished = [t for times in self.seconds_by_group.values() for t in times]
        work_since_first = sum(finished) - self.first_seconds
        if not self.to_train_by_group or work_since_first <= 0:
            return wall / (self.done - 1) * left_runs
        mean_all = sum(finished) / len(finished)
        left_work = sum(
            max(n - len(self.seconds_by_group.get(g, ())), 0)
            * (sum(self.seconds_by_group[g]) / len(self.seconds_by_group[g])
               if self.seconds_by_group.get(g) else mean_all)
            for g, n in self.to_train_by_group.items())
        return left_work * wall / work_since_first

    def line(self, *, brief: bool = False) -> str:
        total = "?" if self.to_train is None else str(max(self.to_train, self.done))
        left = self.left_s()
        text = (f"benchkit: {self.done}/{total} runs trained"
                + (f" ({self.failed} failed)" if self.failed else "")
                + ("" if brief or not self.reused else f", {self.reused} reused")
                + f" | {clock_text(self.clock() - self.start)} elapsed")
        if left is not None and self.done < (self.to_train or 0):
            text += f" | about {clock_text(left)} left"
        return text


class ProgressReporter:
    """Shows a :class:`Progress` on the controller's terminal (a plugin of the controller's:
    the controller feeds it each result, its last-run report hook writes the line)."""

    def __init__(self, config: pytest.Config, clock=time.monotonic):
        self.config = config
        self.progress = Progress(clock)
        self.verbosity = config.get_verbosity()
        self.last_at: float | None = None
        self.last_done = 0
        self.written = 0                      # the length of our line on a tty (0: none)
        self.letters_since = 0                # pytest's letters written on it since ("." ...)
        self.all_passed_since = True

    @staticmethod
    def counts_from(report) -> dict | None:
        """A worker's collection counts carried on its first report, when this one has them."""
        for name, value in getattr(report, "user_properties", ()):
            if name == COUNTS:
                return json.loads(value)
        return None

    def planned(self, counts: dict | None) -> None:
        if counts:
            self.progress.planned(counts)

    def seen(self, payload: Payload) -> None:
        self.progress.seen(payload)

    @pytest.hookimpl(trylast=True)   # after the terminal reporter wrote the test's letter
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.failed or (report.skipped and report.when == "setup"):
            self.letters_since += 1
            self.all_passed_since &= report.passed
        if self.progress.done != self.last_done or self.last_at is None:
            self.show()

    def _terminal(self):
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        return None if tr is None or self.verbosity <= -2 else tr

    def due(self, tty: bool) -> bool:
        now, p = self.progress.clock(), self.progress
        factor = QUIET_FACTOR if self.verbosity < 0 else 1
        if p.done == 0:
            return False
        if self.last_at is None or p.done == p.to_train:
            return True
        if tty:
            return now - self.last_at >= TTY_EVERY_S * factor
        share = max(1, int((p.to_train or 0) * CI_SHARE * factor))
        return now - self.last_at >= CI_EVERY_S * factor or p.done - self.last_done >= share

    def show(self) -> None:
        tr = self._terminal()
        if tr is None or not self.progress.to_train or not self.due(self._tty(tr)):
            return
        tty = self._tty(tr)
        self.last_at, self.last_done = self.progress.clock(), self.progress.done
        line = self.progress.line(brief=self.verbosity < 0)
        # A line holding "\r" has no width for pytest's writer (-1) until the next newline: so
        # a width of -1 says that only letters followed our line, and it can be rewritten.
        width = self.config.get_terminal_writer().width_of_current_line
        if not tty:   # a line of its own (under xdist pytest's letters do not end theirs)
            tr.write(("\n" if width else "") + line + "\n")
            return
        if self.written and width < 0 and self.all_passed_since:
            tr.write("\r" + line.ljust(self.written + self.letters_since) + "\r" + line + " ")
        else:   # on a line of its own; pytest's letters follow it, as after a file name
            tr.write(("\n" if width else "") + "\r" + line + " ")
        self.written = len(line) + 1
        self.letters_since, self.all_passed_since = 0, True

    def _tty(self, tr) -> bool:
        """A line to rewrite: a terminal, and pytest writes letters, not a line per test."""
        return bool(tr.isatty()) and self.verbosity <= 0


def worker_counts_property(counts: dict) -> tuple[str, str]:
    """The (name, value) a worker adds to its first report so the controller knows how many
    runs there are to train before the session ends."""
    return COUNTS, json.dumps(counts, sort_keys=True)
