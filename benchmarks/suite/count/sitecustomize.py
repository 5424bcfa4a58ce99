"""Counts the Python processes the suite starts (cpu_table.py --count-processes puts this folder
first on PYTHONPATH, which the suite's sessions inherit): each appends its command line, and
at a normal exit its own CPU seconds, to $CPU_PLUGIN_OUT/processes.jsonl."""
import atexit
import json
import os
import resource
import sys

_OUT = os.environ.get("CPU_PLUGIN_OUT")


def _write(**line) -> None:
    """Never a fault of the process counted: a test that limits file sizes (RLIMIT_FSIZE) or
    removes the folder still sees only its own output."""
    try:
        with open(os.path.join(_OUT, "processes.jsonl"), "a") as handle:  # type: ignore[arg-type]
            handle.write(json.dumps(dict(line, pid=os.getpid())) + "\n")
    except OSError:
        pass


def _at_exit() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _write(phase="exit", cpu=usage.ru_utime + usage.ru_stime)


if _OUT:
    _write(phase="start", argv=sys.orig_argv[:6])
    atexit.register(_at_exit)
