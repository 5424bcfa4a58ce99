"""Where stored runs live: a directory (local, or a shared filesystem such as NFS) or an fsspec
URL (``s3://``, ``gs://``, ``memory://``, ``file://``, ...).

The contract is three calls on ``/``-separated names relative to the location, and its name:
``read(name, limit=None)`` gives the bytes or None when there is no such name (given a
``limit``, a file of more bytes is :class:`benchkit.store.bounded.Refused` before it is
read); ``write(name, data)`` makes ``data`` appear whole or not at all, so that many
sessions on many machines may write the same location at the same time (a reader sees either
the old record or the new one, never a torn one; two writers of one name leave one of their
records); ``names(folder)`` gives the files
directly in a folder as ``folder/leaf`` (absent folder: none); ``location`` names it in
messages. A location that cannot be reached raises ``OSError``; callers decide what that costs.
What a record contains is :mod:`benchkit.store.runs`'s business.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Protocol

from benchkit.store.atomic import write_atomic
from benchkit.store.bounded import Refused, read_file

# fsspec protocols whose single PUT is atomic (the object appears whole or not at all)
OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss",
                           "memory"})
TEMP_PREFIX = "."  # a write's temporary name starts with it; names() never gives those


class Storage(Protocol):
    """The contract above: what the run store and ``verify`` read and write records through."""

    location: str

    def read(self, name: str, limit: int | None = None) -> bytes | None: ...

    def write(self, name: str, data: bytes) -> None: ...

    def names(self, folder: str) -> list[str]: ...


class DirectoryStorage:
    """Records as files under a directory. A write goes to a uniquely named temporary file in
    the target folder, is flushed to disk and renamed over the target: rename is atomic on
    POSIX filesystems and on NFS (v3 and later), and the temporary name is unique per writer
    (``O_EXCL`` creation), so writers on different machines never share one."""

    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        self.location = str(self.directory)

    def read(self, name: str, limit: int | None = None) -> bytes | None:
        if limit is not None:
            return read_file(self.directory / name, limit)
        try:
            return (self.directory / name).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def write(self, name: str, data: bytes) -> None:
        write_atomic(self.directory / name, data)

    def names(self, folder: str) -> list[str]:
        try:
            entries = list(os.scandir(self.directory / folder))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(f"{folder}/{e.name}" for e in entries
                      if not e.name.startswith(TEMP_PREFIX) and e.is_file())


class FsspecStorage:
    """Records under an fsspec URL. Object stores (S3, GCS, Azure, memory) write with one PUT,
    which they make visible whole; every other filesystem gets a uniquely named temporary
    file moved over the target, as :class:`DirectoryStorage` does."""

    def __init__(self, url: str):
        import fsspec

        self.location = url
        self.fs, self.root = fsspec.core.url_to_fs(url)
        protocols = self.fs.protocol if isinstance(self.fs.protocol, (tuple, list)) \
            else (self.fs.protocol,)
        self.atomic_put = bool(OBJECT_STORES.intersection(protocols))
        self.root = self.root.rstrip("/")

    def _path(self, name: str) -> str:
        return f"{self.root}/{name}"

    def read(self, name: str, limit: int | None = None) -> bytes | None:
        path = self._path(name)
        try:
            if limit is None:
                whole: bytes = self.fs.cat_file(path)
                return whole
            size = self.fs.size(path)
            if size is not None and size > limit:
                raise Refused(f"{size} bytes; valid: at most {limit}")
            data: bytes = self.fs.cat_file(path, start=0, end=limit + 1)
            if len(data) > limit:
                raise Refused(f"over {limit} bytes; valid: at most {limit}")
            return data
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except (OSError, Refused):
            raise
        except Exception as exc:  # a backend's own error type (botocore, gcsfs, ...)
            raise OSError(f"{self.location}: cannot read {name}: {exc}") from exc

    def write(self, name: str, data: bytes) -> None:
        path = self._path(name)
        try:
            if self.atomic_put:
                self.fs.pipe_file(path, data)
                return
            parent, _, base = path.rpartition("/")
            self.fs.makedirs(parent, exist_ok=True)
            tmp = f"{parent}/{TEMP_PREFIX}{base}.{uuid.uuid4().hex}.tmp"
            self.fs.pipe_file(tmp, data)
            try:
                self.fs.mv(tmp, path)
            finally:
                if self.fs.exists(tmp):
                    self.fs.rm_file(tmp)
        except OSError:
            raise
        except Exception as exc:
            raise OSError(f"{self.location}: cannot write {name}: {exc}") from exc

    def names(self, folder: str) -> list[str]:
        prefix = f"{folder}/"
        folder = self._path(folder).rstrip("/")
        try:
            entries = self.fs.ls(folder, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except Exception as exc:
            raise OSError(f"{self.location}: cannot list {prefix}: {exc}") from exc
        found = []
        for entry in entries:
            path = str(entry["name"]).rstrip("/")
            leaf = path.rsplit("/", 1)[-1]
            if (entry.get("type") == "file" and not leaf.startswith(TEMP_PREFIX)
                    and path.lstrip("/") == f"{folder.lstrip('/')}/{leaf}"):
                found.append(f"{prefix}{leaf}")
        return sorted(found)


def is_url(location: str) -> bool:
    return "://" in str(location)


def open_storage(location: str | Path, rootdir: Path) -> Storage:
    """The storage at ``location``: a URL goes to fsspec, anything else is a directory
    (``~`` expanded, relative to ``rootdir``). Raises ValueError, saying what is valid, for a
    URL whose backend is not installed or not known."""
    location = str(location)
    if not is_url(location):
        return DirectoryStorage(Path(rootdir, os.path.expanduser(location)))
    try:
        import fsspec  # noqa: F401
    except ImportError:
        raise ValueError(f"{location!r} is a URL, which needs fsspec: pip install "
                         "'benchkit[store]' (plus the backend, e.g. s3fs or gcsfs); or give a "
                         "directory") from None
    try:
        return FsspecStorage(location)
    except (ImportError, ValueError) as exc:
        raise ValueError(f"{location!r}: {exc}; valid: a directory, or a URL whose fsspec "
                         "backend is installed (file://, memory://, s3:// with s3fs, gs:// "
                         "with gcsfs, ...)") from None
