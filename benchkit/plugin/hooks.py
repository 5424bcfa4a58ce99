"""The pytest plugin: options, markers and hooks.

Workers (or the single process without xdist) train and attach each run's result to its test
report (:mod:`benchkit.plugin.fixture`); pytest-xdist carries it to the controller, whose
:class:`benchkit.plugin.controller.BenchSession` alone aggregates, writes the reports and
applies the gate. This module imports no torch, so a plain ``pytest`` on a project that benches
nothing pays nothing for it.
"""
from __future__ import annotations

import dataclasses
import types
import warnings
from collections.abc import Callable, Generator
from typing import Any

import pytest

from benchkit.plugin import activation
from benchkit.plugin import settings
from benchkit.plugin import timeouts
from benchkit.plugin import whole
from benchkit.plugin.activation import is_worker
from benchkit.plugin.fixture import (ITEM_AUDIT, ITEM_RUN, after_call, attach_payload,
                                     before_call, item_spec, keep_returned, reuse,
                                     start_run, stop_recording, stored_record)
from benchkit.plugin.isolation import GUARD, Guard
from benchkit.plugin.progress import run_group, worker_counts_property
from benchkit.plugin.settings import (GATES, HEADER_SHOWN, NAMES, SETTINGS, SPECS, STORE,
                                      Settings)
from benchkit.spec import (ARMS, BENCH_KWARGS, IdeaSpec, SpecError, arm_label,
                           parse_bench_marker, run_id, unreachable_family)
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
MARKERS = (
    ("bench(name, track, grid, seeds, claim, margin, looks, boundary, test, max_seeds, "
     "claim_type, budget_tolerance, budget_waiver, frontier, extend): declares an idea module "
     "benchkit benches"),
    ("arm(kind, name=None): marks the 'baseline', the 'idea' or a 'control' arm test (a "
     "control needs name=)"),
    "mechanism: a test of the idea's mechanism claim")
MARKER_NAMES = ("bench", "arm", "mechanism")


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


# -- collection ----------------------------------------------------------------------------
def module_spec(config: pytest.Config, module_item: pytest.Module) -> IdeaSpec | None:
    """The validated spec of a bench module (cached), or None for a plain test module."""
    nodeid = module_item.nodeid
    cache = config.stash[SPECS]
    if nodeid not in cache:
        cache[nodeid] = _build_spec(config, module_item)
    spec = cache[nodeid]
    if isinstance(spec, SpecError):
        raise pytest.Collector.CollectError(f"benchkit: {spec}")
    return spec if isinstance(spec, IdeaSpec) else None


def _reports_follow(config: pytest.Config) -> bool:
    """Whether this session writes reports (whose warnings the terminal prints): not a
    --collect-only session, not a shard that only trains."""
    return not config.option.collectonly and not isinstance(config.stash[SETTINGS].shard, tuple)


def _first_collector(config: pytest.Config) -> bool:
    """Not an xdist worker, or its first: every worker collects every module."""
    worker = getattr(config, "workerinput", None)
    return worker is None or worker.get("workerid") in (None, "gw0")


def _build_spec(config: pytest.Config, module_item: pytest.Module) -> IdeaSpec | SpecError | None:
    """The module's spec; the mistake that stops it (a collection error of the module); None
    for a module that does not bench."""
    marks = [m for m in module_item.own_markers if m.name == "bench"]
    arms = {func: marks for func, marks in _arm_marks(module_item.obj).items()
            if any(m.args[:1] and m.args[0] in ARMS + ("control",) for m in marks)}
    if not any(_is_ours(mark) for mark in marks) and not arms:
        # not a bench module: a project's own bench/arm/mechanism marks stay its own, and
        # --strict-markers refuses them unless the project registered them
        return _unregistered_marks(config, module_item)
    if not marks and _first_collector(config):
        warnings.warn(BenchWarning(
            f"{module_item.nodeid}: arm tests ({', '.join(arms)}) but no module-level "
            "pytestmark = pytest.mark.bench(name=..., track=...): benchkit does not bench "
            "this module"), stacklevel=1)
    if not marks:
        return _unregistered_marks(config, module_item)
    if len(marks) > 1:
        return SpecError(f"{module_item.nodeid}: pytest.mark.bench is given {len(marks)} times; "
                         "give it once")
    try:
        activation.activate(config)
    except activation.SetupError as exc:
        return SpecError(str(exc).removeprefix("benchkit: "))
    settings = config.stash[SETTINGS]
    try:
        spec = parse_bench_marker(marks[0], module_item.nodeid,
                                  seeds_override=settings.seeds,
                                  epochs_override=settings.epochs)
        arm_names = _check_arms(module_item.nodeid, module_item.obj)
    except SpecError as exc:
        return exc
    spec = dataclasses.replace(spec, arms=arm_names, mechanism_tests=tuple(
        _marked_functions(module_item.obj, "mechanism")), arm_tests=tuple(
        (arm_label(marks[0], module_item.nodeid), getattr(module_item.obj, func).__qualname__)
        for func, marks in _arm_marks(module_item.obj).items()))
    spec = _extended_from_store(config, module_item, spec)
    # said once: the report's warnings (printed as benchkit: WARNING lines) repeat the
    # unreachable family, so only a session that writes no report warns of it here; under
    # xdist every worker collects, and the first speaks for all
    why = (unreachable_family(len(spec.seeds), len(spec.tracks), settings.alpha)
           if not _reports_follow(config) else None)
    from benchkit.verdict.mechanism import signatures_that_cannot_fail
    for func in _arm_marks(module_item.obj):
        why_not = signatures_that_cannot_fail(getattr(module_item.obj, func))
        why = "; ".join(filter(None, [why, *why_not]))
    if why and _first_collector(config):  # once per module, at collection
        warnings.warn(BenchWarning(f"{module_item.nodeid}: {why}"), stacklevel=1)
    owners = config.stash[NAMES]
    other = owners.setdefault(spec.name, module_item.nodeid)
    if other != module_item.nodeid:
        return SpecError(f"{module_item.nodeid}: idea name {spec.name!r} is already used by "
                         f"{other}; their reports would collide: give each module its own "
                         "name=")
    return spec


def _extended_from_store(config: pytest.Config, module_item: pytest.Module,
                         spec: IdeaSpec) -> IdeaSpec:
    """The spec with each track's grid extended as far as the stored runs call for
    (benchkit.verdict.grids), and the budget checks they call for; the report applies the same
    rules to the runs."""
    settings = config.stash[SETTINGS]
    if settings.seeds is not None or settings.epochs is not None:
        # an override session is exploratory: the edge of its grid is a warning, not a reason
        # to train more (a frontier's axis is never extended: benchkit.verdict.extension)
        return dataclasses.replace(spec, extend=0)
    from benchkit.store.idea_results import stored_results
    from benchkit.verdict import grids
    from benchkit.verdict.plan import declared_plan
    store = config.stash[STORE]   # --bench-fresh too: it retrains what the runs call for
    # stored runs are chosen under the declared plan (RunStore.lookup)
    result = stored_results(spec, store, module_item.obj, module_item.path, declared_plan(spec))
    if spec.extend and store is not None:
        spec = dataclasses.replace(spec, grids=grids.grids_from_store(spec, result))
    checks, check_seeds = grids.checks_from_store(spec, result)
    return dataclasses.replace(spec, checks=checks, check_seeds=check_seeds)


def _strict_markers(config: pytest.Config) -> bool:
    """Whether the session refuses unregistered marks (``--strict-markers``, ``--strict``,
    or their ini settings)."""
    for name in ("strict_markers", "strict"):
        try:
            value = config.getini(name)   # pytest 9: the options set these ini values
        except ValueError:
            value = None                  # pytest 8: command-line options only
        if value is None:
            value = getattr(config.option, name, None)
        if value:
            return True
    return False


def _unregistered_marks(config: pytest.Config, module_item: pytest.Module) -> SpecError | None:
    """Under --strict-markers, pytest's own refusal of a ``bench``, ``arm`` or ``mechanism``
    mark in a module that does not bench and a project that did not register it: benchkit
    registers these names for its own modules, which must not make them valid elsewhere."""
    if not _strict_markers(config):
        return None
    lines = list(config.getini("markers"))
    for line in MARKERS:   # benchkit's own registration, once each: what is left is the project's
        if line in lines:
            lines.remove(line)
    registered = {line.split(":")[0].split("(")[0].strip() for line in lines}
    used = {mark.name for mark in _all_marks(module_item)} & set(MARKER_NAMES)
    for name in sorted(used - registered):
        return SpecError(f"{module_item.nodeid}: {name!r} not found in `markers` configuration "
                         f"option (--strict-markers; benchkit's {name!r} mark applies only in "
                         "bench modules: register your own in the ini's markers)")
    return None


def _all_marks(module_item: pytest.Module) -> list[pytest.Mark]:
    """The marks of a module, its functions and its classes and their methods."""
    found = list(module_item.own_markers)
    objects = list(vars(module_item.obj).values())
    objects += [member for obj in objects if isinstance(obj, type)
                for member in vars(obj).values()]
    for obj in objects:
        if callable(obj) or isinstance(obj, type):
            marks = getattr(obj, "pytestmark", [])
            found += marks if isinstance(marks, list) else [marks]
    return [mark for mark in found if hasattr(mark, "name")]


def _is_ours(mark: pytest.Mark) -> bool:
    """Whether a ``bench`` mark is benchkit's: it gives keyword arguments of benchkit's (a bare
    ``pytest.mark.bench`` or one with other keywords is the project's own marker)."""
    return any(key in BENCH_KWARGS for key in mark.kwargs)


def _marked_functions(module_obj: types.ModuleType, mark: str
                      ) -> dict[str, list[tuple[Any, ...]]]:
    """function name -> the mark's args, for every function of the module with that mark."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for attr, obj in vars(module_obj).items():
        marks = getattr(obj, "pytestmark", [])
        args = [m.args for m in marks if getattr(m, "name", None) == mark]
        if args and callable(obj):
            found[attr] = args
    return found


def _check_arms(where: str, module_obj: types.ModuleType) -> tuple[str, ...]:
    """The module's arms (baseline, idea, then its controls in module order), checked."""
    valid = ("valid: exactly one test marked pytest.mark.arm('baseline') and one marked "
             "pytest.mark.arm('idea'), each taking the run fixture, plus any number marked "
             "pytest.mark.arm('control', name='<name>')")
    nested = [f"{name}.{func}" for name, obj in vars(module_obj).items()
              if isinstance(obj, type) for func in _arm_marks(obj)]
    if nested:   # pytest would collect them as methods, each without its run parameter
        raise SpecError(f"{where}: arm test(s) inside a class ({', '.join(nested)}); {valid}, "
                        "written at module level (not in a class)")
    by_arm: dict[str, list[str]] = {a: [] for a in ARMS}
    for func, marks in _arm_marks(module_obj).items():
        if len(marks) != 1:
            raise SpecError(f"{where}: {func} has {len(marks)} arm marks; {valid}")
        by_arm.setdefault(arm_label(marks[0], f"{where}: {func}"), []).append(func)
    for arm, funcs in by_arm.items():
        if len(funcs) != 1:
            what = "no" if not funcs else f"{len(funcs)} ({', '.join(funcs)})"
            raise SpecError(f"{where}: {what} {arm!r} arm test; {valid}")
    return tuple(by_arm)


def _arm_marks(module_obj: types.ModuleType | type) -> dict[str, list[pytest.Mark]]:
    return {attr: [m for m in getattr(obj, "pytestmark", []) if getattr(m, "name", None) == "arm"]
            for attr, obj in vars(module_obj).items()
            if callable(obj) and any(getattr(m, "name", None) == "arm"
                                     for m in getattr(obj, "pytestmark", []))}


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


class BenchWarning(pytest.PytestWarning):
    """A bench that is declared so that it cannot reach a verdict."""


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
