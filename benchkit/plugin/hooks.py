"""The pytest plugin: options, markers and hooks.

Workers (or the single process without xdist) train and attach each run's result to its test
report (:mod:`benchkit.plugin.fixture`); pytest-xdist carries it to the controller, whose
:class:`benchkit.plugin.controller.BenchSession` alone aggregates, writes the reports and
applies the gate. This module imports no torch, so a plain ``pytest`` on a project that benches
nothing pays nothing for it.
"""
from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

from benchkit.plugin import activation
from benchkit.plugin import settings
from benchkit.plugin import timeouts
from benchkit.plugin import whole
from benchkit.plugin.activation import is_worker
from benchkit.plugin.collection import BenchWarning as BenchWarning  # public: benchkit.plugin
from benchkit.plugin.collection import MARKERS, module_spec
from benchkit.plugin.fixture import (ITEM_AUDIT, ITEM_RUN, after_call, attach_payload,
                                     before_call, item_spec, keep_returned, release_lease, reuse,
                                     start_run, stop_recording, stored_record)
from benchkit.plugin.isolation import GUARD, Guard
from benchkit.plugin.progress import run_group, worker_counts_property
from benchkit.plugin.settings import (GATES, HEADER_SHOWN, NAMES, SETTINGS, SPECS, STORE,
                                      Settings)
from benchkit.spec import IdeaSpec, arm_label, run_id
from benchkit.training import device


# -- options ------------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("benchkit", "benchkit: bench ML ideas against a tuned baseline")

    def add(flag: str, ini: str, help: str, check: Callable[[str], object] | None = None,
            **kw: Any) -> None:
        if check is not None:
            kw["type"] = settings.cli_type(check)
        group.addoption(flag, dest=ini, default=None, help=f"{help} (ini: {ini})", **kw)
        parser.addini(ini, help=help, type="string")

    add("--bench-report-dir", "bench_report_dir", "where reports go, relative to the rootdir "
        "(default: reports)", metavar="DIR")
    add("--bench-seeds", "bench_seeds", "override every idea's seed count", settings.seeds,
        metavar="N")
    add("--bench-seed-offset", "bench_seed_offset", "train seeds N .. N + S - 1 instead of "
        "0 .. S - 1: a replication on a disjoint seed block (default 0; any other makes the "
        "session exploratory)", settings.seed_offset, metavar="N")
    add("--bench-epochs", "bench_epochs", "override every track's epochs (a quick smoke: "
        "--bench-seeds 2 --bench-epochs 1)", settings.epochs, metavar="N")
    add("--bench-alpha", "bench_alpha", "significance level (default 0.05)", settings.alpha,
        metavar="A")
    add("--bench-gate", "bench_gate", f"fail the session when an idea misses this verdict: "
        f"{', '.join(GATES)} (default off)", settings.gate, metavar="G")
    add("--bench-threads", "bench_threads", "torch threads per process (default 1: fixed so "
        "that results are bit-identical with and without -n)", settings.threads, metavar="N")
    add("--bench-audit", "bench_audit", "retrain K stored runs drawn at random (unpredictably; "
        "the report names them) and fail when any differs in bits from its record (default 0)",
        settings.audit, metavar="K")
    add("--bench-audit-fresh", "bench_audit_fresh", "retrain K of the session's reused stored "
        "runs, drawn at random, each alone in a fresh pytest process, and fail when any "
        "differs in bits from its record: a run that depends on what ran before it in its "
        "process (default 0)", settings.audit, metavar="K")
    add("--bench-store", "bench_store", "where finished runs are kept and shared: a directory "
        "(relative to the rootdir; NFS is fine) or an fsspec URL such as s3://bucket/runs "
        "(default: pytest's cache)", settings.store, metavar="LOCATION")
    add("--bench-shard", "bench_shard", "train only shard K of N of every idea's runs into the "
        "store, no report; 'merge': train nothing, write the reports from the store "
        "(docs/scale-out.md)", settings.shard, metavar="K/N")
    add("--bench-timeout", "bench_timeout", "stop a run that takes longer than this many "
        "seconds: it fails and its comparison is incomplete (default off; uses pytest-timeout)",
        settings.timeout, metavar="SECONDS")
    add("--bench-device", "bench_device", f"where runs train: {', '.join(device.CHOICES)} "
        "(default cpu; auto: cuda, else mps, else cpu; with -n, one worker per GPU)",
        device.parse, metavar="D")
    group.addoption("--bench-fresh", action="store_true", default=False, dest="bench_fresh",
                    help="retrain every run, ignoring stored runs")


# -- configure -----------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    """Markers, settings and the controller's session object; nothing a session that benches
    nothing would notice (benchkit.plugin.activation sets up the rest once a module benches)."""
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    settings = Settings(config)
    config.stash[SETTINGS] = settings
    config.stash[SPECS] = {}
    config.stash[NAMES] = {}
    config.stash[GUARD] = Guard()
    config.stash[STORE] = None
    activation.check_store_options(config, settings)
    if not is_worker(config):
        from benchkit.plugin.controller import BenchSession
        config.pluginmanager.register(BenchSession(config), "benchkit-session")
    if activation.asked_on_command_line(config):
        try:
            activation.activate(config)
        except activation.SetupError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config: pytest.Config) -> str | None:
    """The session's settings, when a ``--bench-*`` option was given (else in the summary of a
    session that benched: a session that benches nothing gets no header line)."""
    if not activation.is_active(config):
        return None
    config.stash[HEADER_SHOWN] = True
    return activation.settings_line(config.stash[SETTINGS])


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module_item = metafunc.definition.getparent(pytest.Module)
    if module_item is None:  # not collected from a module: no bench module's arm
        return
    spec = module_spec(metafunc.config, module_item)
    arm_mark = metafunc.definition.get_closest_marker("arm")
    if spec is None or arm_mark is None:
        return
    if "run" not in metafunc.fixturenames:
        raise pytest.Collector.CollectError(
            f"benchkit: {module_item.nodeid}: arm test {metafunc.function.__name__} does not "
            "take the run fixture; write it as def test_x(run): ...")
    arm = arm_label(arm_mark, f"{module_item.nodeid}: {metafunc.function.__name__}")
    points = [(arm, track, cfg, seed) for track, cfg, seed in spec.arm_points(arm)]
    # a direct parameter, not a fixture: outside bench modules ``run`` is the project's own
    # name (its fixture, or pytest's "fixture 'run' not found"); start_run makes the Run. It
    # is a parametrize mark, applied by pytest after this hook: pytest then leaves a project's
    # parametrized ``run`` fixture out of arm tests (a mark has precedence over a fixture)
    metafunc.definition.add_marker(pytest.mark.parametrize(
        "run", points, ids=[run_id(t, c, s) for _, t, c, s in points]))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Give arm runs their time limit (--bench-timeout). Under xdist a worker runs its items
    even after collection errors (pytest's own stop lives in the runtest loop xdist replaces):
    stop it here, so a mistake trains nothing."""
    timeout = config.stash[SETTINGS].timeout
    if timeout is not None:
        timeouts.limit_runs([item for item in items if item_spec(item) is not None], timeout)
    if (is_worker(config) and session.testsfailed
            and not config.getoption("continue_on_collection_errors")):
        config.hook.pytest_deselected(items=list(items))
        items[:] = []
    shard = config.stash[SETTINGS].shard
    if isinstance(shard, tuple):
        from benchkit.plugin.shard import split
        items[:], dropped = split(items, shard, item_spec)
        if dropped:
            config.hook.pytest_deselected(items=dropped)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count the arm runs selected and how many of them are not stored (will train): a session
    that benches nothing says so, and ``scripts/bench`` picks ``-n`` from what is left."""
    config = session.config
    arms = [item for item in session.items if isinstance(item, pytest.Function)
            and item_spec(item) is not None and item.get_closest_marker("arm")]
    known = sum(1 for spec in config.stash[SPECS].values() if isinstance(spec, IdeaSpec))
    stored = [item for item in arms if _stored(item)]
    _draw_audit(stored, config.stash[SETTINGS].audit, config.stash[SETTINGS].audit_seed)
    by_group: dict[str, int] = {}
    counts = {"bench_modules": known, "arm_runs_selected": len(arms),
              "to_train": len(arms) - len(stored), "to_train_by_group": by_group,
              "mechanism_items": whole.mechanism_items(config)}
    stored_ids = {id(item) for item in stored}
    for item in arms:
        param = item.callspec.params.get("run")
        if id(item) not in stored_ids and isinstance(param, tuple):  # (arm, track, cfg, seed)
            group = run_group(item.nodeid, param[1])
            by_group[group] = by_group.get(group, 0) + 1
    if is_worker(config):
        # pytest-xdist gives a worker's config workeroutput (sent to the controller at the end)
        config.workeroutput["benchkit_collection"] = counts  # type: ignore[attr-defined]
        if counts["to_train"]:   # to the controller on the first report (its progress line)
            config.stash[COUNTS_UNSENT] = counts
    else:
        from benchkit.plugin.controller import BenchSession
        bench_session = config.pluginmanager.get_plugin("benchkit-session")
        if isinstance(bench_session, BenchSession):  # registered by pytest_configure
            bench_session.collection = counts


def _stored(item: pytest.Function) -> bool:
    """Whether the arm item's run has a stored result that this session would reuse."""
    store, param = item.config.stash[STORE], item.callspec.params.get("run")
    if store is None or item.config.stash[SETTINGS].fresh or param is None:
        return False
    return stored_record(item, store) is not None


def _draw_audit(stored: list[pytest.Function], k: int, seed: int) -> None:
    """Mark ``k`` of the stored runs to be retrained and compared with their records, drawn
    from their node ids with the session's unpredictable ``seed`` (the same in every xdist
    worker, so that k runs are drawn in all; the report names them)."""
    if not k or not stored:
        return
    import random

    ordered = sorted(stored, key=lambda item: item.nodeid)
    for item in random.Random(seed).sample(ordered, min(k, len(ordered))):
        item.stash[ITEM_AUDIT] = True


# a worker's collection counts, not yet reported
COUNTS_UNSENT = pytest.StashKey[dict[str, Any]]()


# -- the call and its report -----------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, object, object]:
    """Every test of a bench module starts from the same process-wide state and leaves it as
    it found it (benchkit.plugin.isolation): one run's settings never reach the next."""
    if item_spec(item) is None:
        return (yield)
    with item.config.stash[GUARD].around():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A bench test that changed what benchkit cannot undo (torch's inter-op thread count)
    fails: the tests after it in its process would depend on it."""
    result = yield
    if item_spec(item) is not None:
        why = item.config.stash[GUARD].irreversible()
        if why is not None:
            pytest.fail(why, pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """After the arm test's fixtures: its ``run`` parameter becomes its Run."""
    result = yield
    callspec = getattr(item, "callspec", None)  # a parametrized pytest.Function's
    if (isinstance(item, pytest.Function) and callspec is not None and "run" in callspec.params
            and item_spec(item) is not None):
        item.funcargs["run"] = start_run(item)
    return result


@pytest.hookimpl(tryfirst=True)  # first: a later teardown's error must not keep the lease
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """The run key this item trained is stored (or failed): another worker may take it."""
    release_lease(item)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Reuse a stored run: its result is taken and the test body is not called."""
    return True if reuse(pyfuncitem) else None


@pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_pyfunc_call")
def pytest_pyfunc_call_seed_and_check(pyfuncitem: pytest.Function
                                      ) -> Generator[None, object, object]:
    if ITEM_RUN not in pyfuncitem.stash:
        return (yield)
    before_call(pyfuncitem)
    body = pyfuncitem.obj
    returned = keep_returned(pyfuncitem)
    try:
        result = yield
    finally:
        pyfuncitem.obj = body
        stop_recording(pyfuncitem)
    after_call(pyfuncitem, returned)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    counts = item.config.stash.get(COUNTS_UNSENT, None)
    if counts is not None:  # the controller's progress line needs them before the session ends
        report.user_properties.append(worker_counts_property(counts))
        del item.config.stash[COUNTS_UNSENT]
    spec = item_spec(item)
    if spec is not None:
        attach_payload(item, report, call, spec)
    return report
