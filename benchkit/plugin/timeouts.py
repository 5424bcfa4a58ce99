"""Stopping work from outside without losing the session: a run's time limit and SIGTERM.

``--bench-timeout SECONDS`` gives every arm run pytest-timeout's ``timeout`` marker, so that
pytest-timeout decides when a run's timer starts and stops (its setup, call and teardown) and
one item never has two timers (a global ``--timeout`` is overridden for arm runs, not raced).
Through pytest-timeout's ``pytest_timeout_set_timer`` hook benchkit supplies the timer for
those runs: SIGALRM, as pytest-timeout's ``signal`` method, with a failure that names the
option. The run fails, its comparison is incomplete and the session goes on. Where SIGALRM is
missing (Windows) or the run is not on the main thread, pytest-timeout's own ``thread`` method
stops the whole process instead, as it always does.

SIGTERM (what CI runners and job schedulers send) is turned into the KeyboardInterrupt of a
Ctrl-C in the process that coordinates the session: pytest then ends the session, xdist stops
its workers, and benchkit writes the partial reports (``complete: false``). A second SIGTERM
ends the process at once.
"""
from __future__ import annotations

import signal
import threading

import pytest

ITEM_LIMIT = pytest.StashKey[float]()      # arm item -> its --bench-timeout seconds
ITEM_CANCEL = pytest.StashKey[object]()    # arm item -> how to stop its timer


def limit_runs(items, seconds: float) -> None:
    """Mark every arm run with pytest-timeout's marker for ``seconds``."""
    for item in items:
        if item.get_closest_marker("arm") is not None:
            item.add_marker(pytest.mark.timeout(seconds, func_only=False))
            item.stash[ITEM_LIMIT] = seconds


class RunTimer:
    """pytest-timeout's timer hooks for arm runs under ``--bench-timeout``."""

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_timeout_set_timer(self, item, settings):
        seconds = item.stash.get(ITEM_LIMIT, None)
        if (seconds is None or settings.timeout != seconds or not hasattr(signal, "SIGALRM")
                or threading.current_thread() is not threading.main_thread()):
            return None  # pytest-timeout's own method

        def stop(signum, frame):
            pytest.fail(f"benchkit: {item.nodeid} ran past --bench-timeout {seconds:g} s "
                        "(ini bench_timeout) and was stopped", pytrace=False)

        def cancel():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)

        item.stash[ITEM_CANCEL] = cancel
        signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        return True

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_timeout_cancel_timer(self, item):
        cancel = item.stash.get(ITEM_CANCEL, None)
        if cancel is None:
            return None
        del item.stash[ITEM_CANCEL]
        cancel()
        return True


def check_timeout_plugin(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("timeout"):
        raise pytest.UsageError("benchkit: --bench-timeout (ini bench_timeout) needs the "
                                "pytest-timeout plugin, which is not loaded (-p no:timeout?); "
                                "install pytest-timeout or drop the option")
    config.pluginmanager.register(RunTimer(), "benchkit-timer")


def sigterm_as_interrupt(config: pytest.Config) -> None:
    """Handle SIGTERM as Ctrl-C in this process, unless someone else already handles it."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        return

    def interrupt(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, interrupt)
    config.add_cleanup(lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
