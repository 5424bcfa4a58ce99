"""Stopping work from outside without losing the session: a run's time limit and SIGTERM.

``--bench-timeout SECONDS`` gives every arm run pytest-timeout's ``timeout`` marker with
``func_only``, so that pytest-timeout decides when a run's timer starts and stops (around the
test's call: fixtures, benchkit's imports and its setup of the run come before it, so that
only the run's own code is timed) and one item never has two timers (a global ``--timeout``
is overridden for arm runs, not raced). Through pytest-timeout's ``pytest_timeout_set_timer``
hook benchkit supplies the timer for those runs: SIGALRM, as pytest-timeout's ``signal``
method, with a failure that names the option, raised only inside the call, where a failure
fails that run. The run fails, its comparison is incomplete and the session goes on. A run
that installs its own SIGALRM handler fails when its call ends; if it outlasts the limit by
:data:`GRACE` seconds, a watchdog interrupts it as Ctrl-C would, and it fails the same way
(the session goes on). Where SIGALRM is missing (Windows) or the run is not on the main thread,
pytest-timeout's own ``thread`` method stops the whole process instead, as it always does.

SIGTERM (what CI runners and job schedulers send) is turned into the KeyboardInterrupt of a
Ctrl-C in the process that coordinates the session: pytest then ends the session, xdist stops
its workers, and benchkit writes the partial reports (``complete: false``). A second SIGTERM
ends the process at once, except while the reports are being written: from then on SIGTERM
waits until they are (:func:`reports_first`), so that a session always ends with its reports.
"""
from __future__ import annotations

import _thread
import signal
import sys
import threading

import pytest

ITEM_LIMIT = pytest.StashKey[float]()      # arm item -> its --bench-timeout seconds
ITEM_CANCEL = pytest.StashKey[object]()    # arm item -> how to stop its timer
GRACE = 5.0     # seconds past the limit before a run that replaced the handler is interrupted
RUN_IMPORTS = ("torch", "benchkit.training.run", "benchkit.training.device",
               "benchkit.store.trace")  # what benchkit imports for a run: before its timer


def limit_runs(items, seconds: float) -> None:
    """Mark every arm run with pytest-timeout's marker for ``seconds``."""
    for item in items:
        if item.get_closest_marker("arm") is not None:
            item.add_marker(pytest.mark.timeout(seconds, func_only=True))
            item.stash[ITEM_LIMIT] = seconds


class RunTimer:
    """pytest-timeout's timer hooks for arm runs under ``--bench-timeout``."""

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_timeout_set_timer(self, item, settings):
        seconds = item.stash.get(ITEM_LIMIT, None)
        if (seconds is None or settings.timeout != seconds or not hasattr(signal, "SIGALRM")
                or threading.current_thread() is not threading.main_thread()):
            return None  # pytest-timeout's own method

        import importlib

        for name in RUN_IMPORTS:  # a first import cut short would break every later run
            importlib.import_module(name)

        def stop(signum, frame):
            pytest.fail(f"benchkit: {item.nodeid} ran past --bench-timeout {seconds:g} s "
                        "(ini bench_timeout) and was stopped", pytrace=False)

        watchdog = threading.Timer(seconds + GRACE, _interrupt_if_replaced,
                                   (item.nodeid, seconds, stop))
        watchdog.daemon = True

        def cancel():
            watchdog.cancel()
            signal.setitimer(signal.ITIMER_REAL, 0)
            replaced = signal.getsignal(signal.SIGALRM) is not stop
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            if replaced:
                pytest.fail(f"benchkit: {item.nodeid} replaced the SIGALRM handler that "
                            f"--bench-timeout {seconds:g} uses to stop it: it cannot be timed, "
                            "so it fails; leave SIGALRM to benchkit in an arm, or drop "
                            "--bench-timeout", pytrace=False)

        item.stash[ITEM_CANCEL] = cancel
        signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        watchdog.start()
        return True

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_timeout_cancel_timer(self, item):
        cancel = item.stash.get(ITEM_CANCEL, None)
        if cancel is None:
            return None
        del item.stash[ITEM_CANCEL]
        cancel()
        return True


def _interrupt_if_replaced(nodeid: str, seconds: float, stop) -> None:
    """The watchdog: the run is still going past its limit; if its SIGALRM handler is not
    benchkit's, no alarm will stop it, so interrupt it as Ctrl-C would (the timer's cancel
    then fails the run, naming the handler, and the session goes on)."""
    if signal.getsignal(signal.SIGALRM) is not stop:
        print(f"\nbenchkit: {nodeid} replaced the SIGALRM handler and ran past "
              f"--bench-timeout {seconds:g} s: it is interrupted", file=sys.stderr)
        _thread.interrupt_main()


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

    def restore() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, interrupt)
    config.add_cleanup(restore)


class ReportsFirst:
    """SIGTERM held back while the reports are written: ``received`` says whether one came."""

    def __init__(self):
        self.received = False

    def hold(self, signum, frame) -> None:
        self.received = True


def reports_first() -> ReportsFirst | None:
    """From now on in this process, SIGTERM is noted instead of interrupting (the reports
    being written are what a SIGTERM'd session must end with; writes are atomic and quick).
    None where SIGTERM is not benchkit's to handle (another handler, or not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    current = signal.getsignal(signal.SIGTERM)
    if current is not signal.SIG_DFL and getattr(current, "__qualname__", "") != \
            "sigterm_as_interrupt.<locals>.interrupt":
        return None
    holder = ReportsFirst()
    signal.signal(signal.SIGTERM, holder.hold)
    return holder
