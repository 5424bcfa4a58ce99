"""What benchkit sets up once a session benches, and not before.

benchkit is installed as a pytest plugin, so it loads in every session of every project in
its environment. A session that collects no bench module must not notice it: no header line,
no check of the report folder, no folder created, no signal handler, no environment variable.
:func:`activate` does all of that, once per process, when the first bench module is collected
(on the controller of an xdist session: when the first run's result arrives), or at configure
when the command line gives a ``--bench-*`` option. What it changes is undone at session end.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from benchkit.plugin import timeouts
from benchkit.plugin.settings import OPTIONS, SETTINGS, STORE, Settings

ACTIVE = pytest.StashKey[bool]()   # on pytest's config: benchkit is set up in this process


class SetupError(Exception):
    """benchkit cannot be set up as the session asks: refused before anything trains."""


class ReportDirError(SetupError):
    """The report folder cannot be written."""


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_active(config: pytest.Config) -> bool:
    return config.stash.get(ACTIVE, False)


def asked_on_command_line(config: pytest.Config) -> bool:
    """Whether the command line gives one of benchkit's own options (:data:`OPTIONS`, as
    ``--opt`` or ``--opt=value``; pytest allows no abbreviations). An ini value does not
    count (a project's ini applies to its sessions that bench nothing too), nor a project's
    own option that merely starts with ``--bench-``."""
    return any(str(arg).split("=", 1)[0] in OPTIONS for arg in config.invocation_params.args)


def activate(config: pytest.Config, *, check_reports: bool = True) -> None:
    """Set up benchkit in this process (idempotent): its ini settings, the report-folder check,
    the SIGTERM handler where the session is coordinated, and the run store.

    Raises SetupError for a wrong ini value or a ``--bench-timeout`` without pytest-timeout,
    and ReportDirError when ``check_reports`` and the report folder is not writable (the
    controller of an xdist session does not check: its workers did, at collection)."""
    if is_active(config):
        return
    settings = config.stash[SETTINGS]
    try:
        settings.read_ini(config)
        if settings.timeout is not None:
            timeouts.check_timeout_plugin(config)
    except pytest.UsageError as exc:
        raise SetupError(str(exc)) from None
    if check_reports:
        check_report_dir(settings.report_dir)
    config.stash[ACTIVE] = True
    if not is_worker(config):
        timeouts.sigterm_as_interrupt(config)
    config.stash[STORE] = open_store(config, settings)


def check_report_dir(path: Path) -> None:
    """Refuse to start when reports could not be written: before anything trains."""
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ReportDirError(f"benchkit: report directory {path} is not writable "
                             f"({probe} is not a writable directory); choose another with "
                             "--bench-report-dir DIR")


def check_store_options(config: pytest.Config, settings: Settings) -> None:
    """Refuse a ``--bench-store`` given as a separate existing path, and a ``--bench-report-dir``
    given as a separate existing path outside the folder pytest runs in: pytest takes such a
    path for a test path when it chooses the rootdir (before it knows benchkit's options), so
    the rootdir, the default store in its cache, and keys and reports would move with it."""
    args = [str(arg) for arg in config.invocation_params.args]
    here = Path(config.invocation_params.dir).resolve()
    for flag, value in itertools.pairwise(args):
        if flag not in ("--bench-store", "--bench-report-dir"):
            continue   # any other word (a long -k expression, a node id) is not looked at
        try:
            target = (here / os.path.expanduser(value)).resolve()
            if not target.exists():
                continue
        except (OSError, ValueError):  # too long, a NUL byte: not an existing path
            continue
        outside = here != target and here not in target.parents
        if flag == "--bench-store" or outside:
            raise pytest.UsageError(
                f"benchkit: write {flag}={value} (with '='): pytest takes a separate "
                "existing path for a test path when it chooses the rootdir, and the run "
                "store, keys and reports are relative to the rootdir")


def open_store(config: pytest.Config, settings: Settings):
    """The session's RunStore: at ``--bench-store``, else in pytest's cache (None when the
    cache plugin is off). A shard needs one: it is where its runs go."""
    from benchkit.store.backends import open_storage
    from benchkit.store.records import store_secret
    from benchkit.store.runs import RunStore, unusable_store

    location = settings.store
    if location is None:
        cache = getattr(config, "cache", None)
        try:
            location = cache.mkdir("benchkit-runs") if cache is not None else None
        except OSError as exc:  # costs reuse, not the session (benchkit.store)
            return unusable_store(exc, config.rootpath, settings.threads, settings.device)
    if location is None:
        if settings.shard is not None:
            raise pytest.UsageError("benchkit: --bench-shard needs a run store: give "
                                    "--bench-store LOCATION (or enable pytest's cache)")
        return None
    try:
        storage = open_storage(location, config.rootpath)
    except ValueError as exc:
        raise pytest.UsageError(f"benchkit: --bench-store {exc}") from None
    directory = getattr(storage, "directory", None)
    if directory is not None and directory.exists() and not directory.is_dir():
        raise pytest.UsageError(f"benchkit: --bench-store {location}: {directory} is not a "
                                "directory; valid: a directory (created if absent) or an "
                                "fsspec URL")
    return RunStore(storage, config.rootpath, settings.threads, device=settings.device,
                    any_cpu=settings.shard == "merge", secret=store_secret())


def settings_line(settings: Settings) -> str:
    """One line saying how this session benches (the header, or the summary's first line)."""
    from importlib import metadata

    from benchkit import __version__
    try:  # read without importing torch: the controller of an xdist session never needs it
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "not installed"
    seeds = settings.seeds if settings.seeds is not None else "per idea"
    if settings.seed_offset:
        seeds = f"{seeds} from {settings.seed_offset}"
    epochs = settings.epochs if settings.epochs is not None else "per track"
    return (f"benchkit {__version__}: torch {torch_version} on {settings.device}, "
            f"{settings.threads} torch thread(s)/process, seeds {seeds}, epochs {epochs}, "
            f"alpha {settings.alpha}, gate {settings.gate}, reports {settings.report_dir}")
