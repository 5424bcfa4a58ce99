"""Floors computed while a session's runs train, in one child process, so that the report does
not wait for them after the last run (seconds a seed: kernel ridge, boosted trees).

The controller asks for a (track, seed) as the first run of it reports; the child (``python -m
benchkit.store.floor_ahead``) reads ``MODULE:QUALNAME SEED`` lines, calls that floor function of
benchkit's (never a user's: :func:`benchkit.store.floor_cache.cacheable`) on the seed and
answers one JSON line each. It is a process, not a thread: its BLAS and OpenMP pools are its
own, one thread each (``*_NUM_THREADS=1``, as the floors' own ``single_thread``), so the
training's torch threads are never touched; it runs at niceness +10, so the training keeps its
cores where none is idle (beside it, a tabular run took 1.17x its wall time alone at load 8 on
2 cores, 2.17x without the +10: benchmarks/speed/training.py --with-floors); and the floors are
the numbers the same function gives in the controller (tests/store/test_floor_ahead.py). Any
fault (no child, a floor that raises, an answer that is not floors) leaves that seed to be
computed in the controller as before.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from benchkit.store.floor_cache import cacheable, valid
from benchkit.tracks.base import Track

THREADS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
NICE = 10  # the child's niceness above the controller's
STOP_POLL = 0.2  # seconds: how often a wait for the child looks whether to stop waiting


def function_name(track: Track) -> str:
    """``MODULE:QUALNAME`` of ``track``'s floor function."""
    make = track.make_floors
    return f"{getattr(make, '__module__', '')}:{getattr(make, '__qualname__', '')}"


class Ahead:
    """The child process and its answers: :meth:`want` asks, :meth:`get` waits for one."""

    def __init__(self, prepare: tuple[str, ...] = ()) -> None:
        self.prepare = prepare  # ``MODULE:QUALNAME`` of benchkit functions the child calls first
        self.proc: subprocess.Popen[str] | None = None
        self.asked: set[tuple[str, int]] = set()
        self.order: list[tuple[str, int]] = []  # as asked: the order the child answers in
        self.answers: dict[tuple[str, int], dict[str, float] | None] = {}
        self.done = threading.Condition()
        self.ended = False  # the child's output is closed: no more answers

    def want(self, track: Track, seed: int) -> None:
        """Ask for ``track``'s floors on ``seed`` (once; benchkit's own tracks only)."""
        if not cacheable(track):
            return
        name = (function_name(track), int(seed))
        if name in self.asked:
            return
        self.asked.add(name)
        try:
            if self.proc is None:
                self._start()
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write(f"{name[0]} {name[1]}\n")
            self.proc.stdin.flush()
            self.order.append(name)
        except (OSError, ValueError):  # no child, or it has gone: computed in the controller
            self.asked.discard(name)

    def _start(self) -> None:
        env = dict(os.environ, **{k: "1" for k in THREADS_ENV})
        root = str(Path(__file__).resolve().parents[2])  # where this benchkit imports from
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchkit.store.floor_ahead", *self.prepare],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=env)
        threading.Thread(target=self._read, daemon=True, name="benchkit-floors").start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                try:
                    answer = json.loads(line)
                    name = (str(answer["function"]), int(answer["seed"]))
                except (ValueError, KeyError, TypeError):
                    continue
                floors = answer.get("floors")
                with self.done:
                    self.answers[name] = floors if valid(floors) else None
                    self.done.notify_all()
        finally:
            with self.done:
                self.ended = True
                self.done.notify_all()

    def get(self, track: Track, seed: int, stop: Callable[[], bool] = lambda: False
            ) -> dict[str, float] | None:
        """``track``'s floors on ``seed`` once the child has them (waiting for it), or None
        when they were not asked for, the child could not give them, or ``stop()`` became
        true while waiting (looked at every :data:`STOP_POLL` seconds)."""
        name = (function_name(track), int(seed)) if cacheable(track) else None
        if name not in self.asked:
            return None
        with self.done:
            while not self.done.wait_for(lambda: name in self.answers or self.ended,
                                         timeout=STOP_POLL):
                if stop():
                    return None
            return self.answers.get(name)

    def started(self, track: Track, seed: int) -> bool:
        """Whether the child has answered ``track``'s floors on ``seed`` or is computing them
        now (the first asked and unanswered: it answers in the order asked), so that waiting
        for it costs less than computing them again."""
        name = (function_name(track), int(seed)) if cacheable(track) else None
        if name not in self.asked:
            return False
        with self.done:
            if name in self.answers:
                return True
            current = next((n for n in self.order if n not in self.answers), None)
            return name == current and not self.ended

    def close(self) -> None:
        """No more questions: the child ends after its last answer; one still computing when
        the session ends (interrupted, or nothing waited for it) is stopped."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.close()
        except OSError:
            pass
        if proc.poll() is None and not all(n in self.answers for n in self.asked):
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _function(name: str) -> Callable[..., Any]:
    module, _, qualname = name.partition(":")
    if not module.startswith("benchkit."):
        raise ValueError(f"not one of benchkit's floor functions: {name}")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not callable(found):
        raise TypeError(f"{name} is not a function")
    return found


def main() -> None:
    """The child: one JSON answer a line asked, at a lower priority than the training (where
    every core is busy the runs go first; an idle core it takes whole)."""
    try:
        os.nice(NICE)
    except (AttributeError, OSError):  # no nice() here: the same numbers, sooner
        pass
    for name in sys.argv[1:]:  # what the controller calls before floors (a trained floor's loop)
        _function(name)()
    for line in sys.stdin:
        try:
            name, seed = line.split()
            answer: dict[str, object] = {"function": name, "seed": int(seed)}
        except ValueError:  # not a question the controller writes
            continue
        try:
            answer["floors"] = {k: float(v) for k, v in _function(name)(int(seed)).items()}
        except Exception as error:  # the controller computes it again and reports the error
            answer["error"] = f"{type(error).__name__}: {error}"
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
