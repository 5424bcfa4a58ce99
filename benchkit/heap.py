"""Keep Python's cyclic garbage collector off the large, long-lived heap of torch and friends.

Importing torch (or scipy and matplotlib) creates millions of objects that live as long as the
process. Every full collection walks all of them: measured in one pytest session of the A/A
tabular bench, 5-6 full collections cost 0.47-0.58 s per process, and the collections of
interpreter shutdown another 0.4 s after ``import torch`` alone (0.50 s down to 0.12 s with the
heap frozen). Every xdist worker pays that, and the controller waits for the slowest.

So: import the heavy modules with the collector paused, then move everything alive to the
permanent generation (``gc.freeze``), which later collections skip. Objects created afterwards
(runs, models, tensors) are collected as usual; what is frozen lives until exit anyway.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import threading

_lock = threading.Lock()
_paused = 0               # blocks inside frozen_afterwards, across threads
_was_enabled = True
_frozen_for: set[str] = set()
_exit_hook_registered = False


@contextlib.contextmanager
def frozen_afterwards():
    """Pause the collector for the block, then freeze every object alive at its end. Blocks
    may overlap across threads: the collector is enabled again when the last one ends."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            gc.freeze()
            if _paused == 0 and _was_enabled:
                gc.enable()


def import_frozen(name: str):
    """``importlib.import_module(name)`` with the imported heap frozen (see the module doc).
    A module someone else imported already (an idea module's top-level ``import torch``) has
    its heap frozen the first time it is asked for here."""
    if name in _frozen_for:
        return importlib.import_module(name)
    with frozen_afterwards():
        module = importlib.import_module(name)
    _frozen_for.add(name)
    return module


def skip_exit_collection() -> None:
    """Freeze the heap when the process exits, so interpreter shutdown skips its collections.

    Registered with ``atexit``: it acts only when the process really ends (never inside an
    in-process ``pytester`` run), after the handlers registered later (they run first).
    Reference counting still frees what it frees; the operating system reclaims the rest."""
    global _exit_hook_registered
    with _lock:
        if not _exit_hook_registered:
            import atexit

            atexit.register(gc.freeze)
            _exit_hook_registered = True
