"""Atomic file writes: a killed process never leaves a half-written report or stored run.

Kept apart from report.py so that workers, which store runs, need not import the report and
statistics modules.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write text (UTF-8) or bytes via a temp file in the same folder and rename: a killed
    process never leaves a half-written file behind. An OSError names ``path`` (its
    ``filename``), never the temp file, which the caller never sees: a directory at ``path``
    is "Is a directory: <path>"."""
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; reports are for everyone
        if path.is_dir():   # os.replace would name the temp file, or replace an empty folder
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        if exc.filename == str(path):
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # errno's own subclass
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str | None) -> None:
    if tmp is not None and os.path.exists(tmp):
        os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
