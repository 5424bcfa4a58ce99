"""The pytest plugin: options, markers, parametrization, payloads, aggregation, gate.

Workers (or the single process without xdist) train and attach each run's result to its test
report as one JSON string in ``user_properties``; pytest-xdist carries it to the controller,
which alone aggregates, writes the reports and applies the gate. This module imports no torch at
load time, so a plain ``pytest`` on a project that benches nothing pays nothing for it.
"""
from __future__ import annotations

import dataclasses
import json
import os
import warnings
from pathlib import Path

import pytest

from benchkit.spec import (ARMS, IdeaSpec, SpecError, cfg_id, parse_bench_marker, run_id,
                           unreachable_family)

PROPERTY = "benchkit"
GATES = ("off", "not-harms", "non-inferior", "helps", "worked")

spec_cache_key = pytest.StashKey[dict]()        # module nodeid -> IdeaSpec | SpecError
names_key = pytest.StashKey[dict]()             # idea name -> module nodeid
settings_key = pytest.StashKey["Settings"]()
run_key = pytest.StashKey[object]()             # item -> Run
stored_key = pytest.StashKey[dict]()            # item -> its stored result, when reused
store_key = pytest.StashKey[object]()           # config -> RunStore | None


# -- options ------------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("benchkit", "benchkit: bench ML ideas against a tuned baseline")

    def add(flag, ini, help, default=None, **kw):
        group.addoption(flag, dest=ini, default=None, help=f"{help} (ini: {ini})", **kw)
        parser.addini(ini, help=help, default=default)

    add("--bench-report-dir", "bench_report_dir", "where reports go, relative to the rootdir "
        "(default: reports)", default="reports", metavar="DIR")
    add("--bench-seeds", "bench_seeds", "override every idea's seed count", metavar="N")
    add("--bench-epochs", "bench_epochs", "override every track's epochs (a quick smoke: "
        "--bench-seeds 2 --bench-epochs 1)", metavar="N")
    add("--bench-alpha", "bench_alpha", "significance level (default 0.05)", default="0.05",
        metavar="A")
    add("--bench-gate", "bench_gate", f"fail the session when an idea misses this verdict: "
        f"{', '.join(GATES)} (default off)", default="off", metavar="G")
    add("--bench-threads", "bench_threads", "torch threads per process (default 1: measured "
        "fastest for these models, and fixed so results are bit-identical with and without -n)",
        default="1", metavar="N")
    group.addoption("--bench-fresh", action="store_true", default=False, dest="bench_fresh",
                    help="retrain every run, ignoring stored runs")


class Settings:
    """The session's benchkit settings: command line first, then ini, validated once."""

    def __init__(self, config: pytest.Config):
        def get(name):
            value = config.getoption(name)
            return value if value is not None else config.getini(name)

        self.report_dir = Path(config.rootpath, get("bench_report_dir"))
        self.seeds = _int_option(get("bench_seeds"), "--bench-seeds", minimum=2)
        self.epochs = _int_option(get("bench_epochs"), "--bench-epochs", minimum=1)
        self.threads = _int_option(get("bench_threads"), "--bench-threads", minimum=1) or 1
        alpha = get("bench_alpha")
        try:
            self.alpha = float(alpha)
        except (TypeError, ValueError):
            raise pytest.UsageError(f"benchkit: --bench-alpha {alpha!r} is not a number; "
                                    "valid: a number in (0, 0.5], e.g. 0.05") from None
        if not 0 < self.alpha <= 0.5:
            raise pytest.UsageError(f"benchkit: --bench-alpha {alpha!r} out of range; "
                                    "valid: a number in (0, 0.5], e.g. 0.05")
        self.gate = str(get("bench_gate"))
        if self.gate not in GATES:
            raise pytest.UsageError(f"benchkit: unknown --bench-gate {self.gate!r}; valid: "
                                    f"{', '.join(GATES)}")
        self.fresh = bool(config.getoption("bench_fresh"))


def _int_option(value, flag: str, minimum: int) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"benchkit: {flag} {value!r} is not an integer; valid: an "
                                f"integer >= {minimum}") from None
    if number < minimum:
        raise pytest.UsageError(f"benchkit: {flag} {number} is too small; valid: an integer "
                                f">= {minimum}")
    return number


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# -- configure -----------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "bench(name, track, grid, seeds, claim, margin, max_seeds): "
                            "declares an idea module benchkit benches")
    config.addinivalue_line("markers", "arm(name): marks the 'baseline' or the 'idea' arm test")
    config.addinivalue_line("markers", "mechanism: a test of the idea's mechanism claim")
    settings = Settings(config)
    config.stash[settings_key] = settings
    config.stash[spec_cache_key] = {}
    config.stash[names_key] = {}
    # Thread count for torch, set before torch is imported where possible.
    os.environ.setdefault("OMP_NUM_THREADS", str(settings.threads))
    cache = getattr(config, "cache", None)
    if cache is not None:
        from benchkit.store import RunStore
        config.stash[store_key] = RunStore(cache.mkdir("benchkit-runs"))
    else:
        config.stash[store_key] = None
    if not is_worker(config):
        _check_report_dir(settings.report_dir)
        config.pluginmanager.register(BenchSession(settings), "benchkit-session")


def _check_report_dir(path: Path) -> None:
    """Refuse to start when reports could not be written: before anything trains."""
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"benchkit: report directory {path} is not writable "
                                f"({probe} is not a writable directory); choose another with "
                                "--bench-report-dir DIR")


def pytest_report_header(config: pytest.Config) -> str:
    s = config.stash[settings_key]
    seeds = s.seeds if s.seeds is not None else "per idea"
    epochs = s.epochs if s.epochs is not None else "per track"
    from importlib import metadata

    from benchkit import __version__
    try:  # read without importing torch: the controller of an xdist session never needs it
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "not installed"
    profile = "ci" if os.environ.get("CI") else "default"
    return (f"benchkit {__version__}: torch {torch_version} on cpu, "
            f"{s.threads} torch thread(s)/process, seeds {seeds}, epochs {epochs}, "
            f"alpha {s.alpha}, gate {s.gate}, hypothesis profile {profile}, "
            f"reports {s.report_dir}")


# -- collection ----------------------------------------------------------------------------
def module_spec(config: pytest.Config, module_item) -> IdeaSpec | None:
    """The validated spec of a bench module (cached), or None for a plain test module."""
    nodeid = module_item.nodeid
    cache = config.stash[spec_cache_key]
    if nodeid not in cache:
        cache[nodeid] = _build_spec(config, module_item)
    spec = cache[nodeid]
    if isinstance(spec, SpecError):
        raise pytest.Collector.CollectError(f"benchkit: {spec}")
    return spec


def _build_spec(config, module_item):
    marks = [m for m in module_item.own_markers if m.name == "bench"]
    arms = _marked_functions(module_item.obj, "arm")
    if not marks:
        if arms:
            return SpecError(f"{module_item.nodeid}: arm tests ({', '.join(arms)}) but no "
                             "module-level pytestmark = pytest.mark.bench(name=..., track=...)")
        return None
    if len(marks) > 1:
        return SpecError(f"{module_item.nodeid}: pytest.mark.bench is given {len(marks)} times; "
                         "give it once")
    settings = config.stash[settings_key]
    try:
        spec = parse_bench_marker(marks[0], module_item.nodeid,
                                  seeds_override=settings.seeds,
                                  epochs_override=settings.epochs)
        _check_arms(module_item.nodeid, arms)
    except SpecError as exc:
        return exc
    spec = dataclasses.replace(spec, mechanism_tests=tuple(
        _marked_functions(module_item.obj, "mechanism")))
    why = unreachable_family(len(spec.seeds), len(spec.tracks), settings.alpha)
    if why:  # once per module, at collection
        warnings.warn(BenchWarning(f"{module_item.nodeid}: {why}"), stacklevel=1)
    owners = config.stash[names_key]
    other = owners.setdefault(spec.name, module_item.nodeid)
    if other != module_item.nodeid:
        return SpecError(f"{module_item.nodeid}: idea name {spec.name!r} is already used by "
                         f"{other}; their reports would collide: give each module its own "
                         "name=")
    return spec


def _marked_functions(module_obj, mark: str) -> dict[str, list]:
    """function name -> the mark's args, for every function of the module with that mark."""
    found = {}
    for attr, obj in vars(module_obj).items():
        marks = getattr(obj, "pytestmark", [])
        args = [m.args for m in marks if getattr(m, "name", None) == mark]
        if args and callable(obj):
            found[attr] = args
    return found


def _check_arms(where: str, arms: dict[str, list]) -> None:
    valid = ("valid: exactly one test marked pytest.mark.arm('baseline') and one marked "
             "pytest.mark.arm('idea'), each taking the run fixture")
    by_arm = {a: [] for a in ARMS}
    for func, marks in arms.items():
        if len(marks) != 1 or len(marks[0]) != 1:
            raise SpecError(f"{where}: {func} has arm marks {marks}; {valid}")
        arm = marks[0][0]
        if arm not in ARMS:
            raise SpecError(f"{where}: {func} is marked arm({arm!r}): unknown arm; {valid}")
        by_arm[arm].append(func)
    for arm, funcs in by_arm.items():
        if len(funcs) != 1:
            what = "no" if not funcs else f"{len(funcs)} ({', '.join(funcs)})"
            raise SpecError(f"{where}: {what} {arm!r} arm test; {valid}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module_item = metafunc.definition.getparent(pytest.Module)
    spec = module_spec(metafunc.config, module_item)
    arm_mark = metafunc.definition.get_closest_marker("arm")
    if spec is None or arm_mark is None:
        return
    if "run" not in metafunc.fixturenames:
        raise pytest.Collector.CollectError(
            f"benchkit: {module_item.nodeid}: arm test {metafunc.function.__name__} does not "
            "take the run fixture; write it as def test_x(run): ...")
    points = [(arm_mark.args[0], track, cfg, seed) for track, cfg, seed in spec.points()]
    metafunc.parametrize("run", points, indirect=True,
                         ids=[run_id(t, c, s) for _, t, c, s in points])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list) -> None:
    """Under xdist a worker runs its items even after collection errors (pytest's own stop
    lives in the runtest loop xdist replaces): stop it here, so a mistake trains nothing."""
    if (is_worker(config) and session.testsfailed
            and not config.getoption("continue_on_collection_errors")):
        config.hook.pytest_deselected(items=list(items))
        items[:] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count arm runs selected: a session that benches nothing says so (on the controller)."""
    selected = sum(1 for item in session.items
                   if _item_spec(item) is not None and item.get_closest_marker("arm"))
    known = sum(1 for spec in session.config.stash[spec_cache_key].values()
                if isinstance(spec, IdeaSpec))
    counts = {"bench_modules": known, "arm_runs_selected": selected}
    if is_worker(session.config):
        session.config.workeroutput["benchkit_collection"] = counts
    else:
        session.config.pluginmanager.get_plugin("benchkit-session").collection = counts


class BenchWarning(pytest.PytestWarning):
    """A bench that is declared so that it cannot reach a verdict."""


def _item_spec(item: pytest.Item) -> IdeaSpec | None:
    module_item = item.getparent(pytest.Module)
    if module_item is None:
        return None
    return item.config.stash[spec_cache_key].get(module_item.nodeid)


# -- the run fixture and the call -----------------------------------------------------------
@pytest.fixture
def run(request: pytest.FixtureRequest):
    """One training run of an arm at (track, config, seed): see benchkit.run.Run."""
    param = getattr(request, "param", None)
    if param is None:
        raise pytest.UsageError("benchkit: the run fixture is for arm tests "
                                "(pytest.mark.arm('baseline'/'idea') in a bench module)")
    from benchkit import tracks
    from benchkit.run import Run

    settings = request.config.stash[settings_key]
    arm, track, cfg, seed = param
    spec = _item_spec(request.node)
    the_run = Run(arm=arm, track=tracks.get(track), cfg=cfg, seed=seed,
                  epochs=spec.epochs[track])
    request.node.stash[run_key] = the_run
    store = request.config.stash[store_key]
    if store is not None:
        the_run.store_key = _store_key(request.config, request.node.path,
                                       spec.protocols[track], param)
        stored = None if settings.fresh else store.get(the_run.store_key)
        if stored is not None:
            request.node.stash[stored_key] = stored
    return the_run


def _store_key(config: pytest.Config, module_file, protocol: dict, param: tuple) -> str:
    """The run store's key of the run ``param`` = (arm, track, cfg, seed) of a module."""
    from benchkit.run import environment
    from benchkit.store import run_key as make_key

    arm, track, cfg, seed = param
    return make_key(arm=arm, track=track, protocol=protocol, cfg=cfg, seed=seed,
                    module_file=str(module_file), rootdir=str(config.rootpath),
                    environment=environment(config.stash[settings_key].threads))


def stored_run_payloads(config: pytest.Config, payloads: list[dict]) -> list[dict]:
    """Payloads of the stored runs a session did not run, for the ideas it ran an arm of.

    A session that selects part of an idea (``-k``, ``-m``, ``--lf``) or stops early would
    otherwise write an incomplete report over a complete one. Looked up on the controller,
    after the session, by the same exact key a run's fixture uses: a run with no stored
    result stays missing, a run that failed in this session is not replaced, and
    ``--bench-fresh`` takes nothing."""
    store, settings = config.stash[store_key], config.stash[settings_key]
    if store is None or settings.fresh:
        return []
    from benchkit import tracks
    from benchkit.run import Run

    specs = {p["spec"]["name"]: p["spec"] for p in payloads if p["kind"] == "run"}
    had = {(p["spec"]["name"], p["arm"], p["track"], cfg_id(p["cfg"]), p["seed"])
           for p in payloads if p["kind"] == "run" and "cfg" in p}
    found = []
    for name, spec in sorted(specs.items()):
        module_file = config.rootpath / spec["module"]
        points = [(arm, track, cfg, seed) for track in spec["tracks"]
                  for cfg in spec["grids"][track] for seed in spec["seeds"] for arm in ARMS]
        for arm, track, cfg, seed in points:
            if (name, arm, track, cfg_id(cfg), seed) in had:
                continue
            stored = store.get(_store_key(config, module_file, spec["protocols"][track],
                                          (arm, track, cfg, seed)))
            if stored is None:
                continue
            the_run = Run(arm=arm, track=tracks.get(track), cfg=cfg, seed=seed,
                          epochs=spec["epochs"][track])
            the_run.restore(stored)
            nodeid = f"{spec['module']}::<{arm}>[{run_id(track, cfg, seed)}]"
            found.append({**_run_payload(nodeid, "passed", None, the_run.payload(),
                                         settings.threads), "spec": spec})
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """Reuse a stored run: its result is taken and the test body is not called."""
    stored = pyfuncitem.stash.get(stored_key, None)
    if stored is None:
        return None
    pyfuncitem.stash[run_key].restore(stored)
    return True


@pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_pyfunc_call")
def pytest_pyfunc_call_seed_and_check(pyfuncitem: pytest.Function):
    the_run = pyfuncitem.stash.get(run_key, None)
    if the_run is None:
        return (yield)
    if stored_key not in pyfuncitem.stash:  # it trains: torch is imported from here on
        from benchkit.run import seed_everything, set_threads

        set_threads(pyfuncitem.config.stash[settings_key].threads)
        seed_everything(the_run.seed)  # last thing before the body: nothing else eats the RNG
    result = yield
    if the_run.val is None:
        pytest.fail(f"benchkit: {pyfuncitem.nodeid} recorded no result: call run.fit(model) "
                    "or run.record(val=..., test=...)", pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    spec = _item_spec(item)
    if spec is None:
        return report
    setup_ended = call.when == "setup" and report.outcome != "passed"  # error or skip
    if call.when != "call" and not setup_ended:
        return report
    the_run = item.stash.get(run_key, None)
    outcome = "error" if setup_ended and report.failed else report.outcome
    message = _first_line(report) if outcome != "passed" else None
    if the_run is not None or item.get_closest_marker("arm") is not None:
        result = the_run.payload() if the_run is not None else None
        payload = _run_payload(item.nodeid, outcome, message, result,
                               item.config.stash[settings_key].threads)
        store = item.config.stash[store_key]
        if result is not None and outcome == "passed" and not result["reused"] \
                and store is not None:
            store.put(the_run.store_key, result)
    elif item.get_closest_marker("mechanism") is not None:
        payload = {"kind": "mechanism", "outcome": outcome, "message": message,
                   "nodeid": item.nodeid}
    else:
        return report
    payload["spec"] = spec.to_plain()
    report.user_properties.append((PROPERTY, json.dumps(payload, sort_keys=True)))
    if payload["kind"] == "run" and "val" in payload:
        # readable in junit-xml, which writes the item's properties with its teardown report
        for key in ("val", "test", "diverged", "reused", "seconds"):
            item.user_properties.append((f"bench_{key}", payload[key]))
    return report


def _run_payload(nodeid: str, outcome: str, message: str | None, result: dict | None,
                 threads: int) -> dict:
    """What an arm test sends to the controller (plain values only): its outcome, and the
    run's result (``Run.payload``) with the environment when there is one."""
    payload = {"kind": "run", "outcome": outcome, "message": message, "nodeid": nodeid}
    if result is not None:
        from benchkit.run import environment
        payload.update(result)
        payload["env"] = environment(threads)
    return payload


def _first_line(report) -> str | None:
    text = getattr(report, "longreprtext", "") or ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("E ")]
    chosen = errors[0] if errors else (lines[-1] if lines else None)
    return chosen.removeprefix("E ").strip()[:300] if chosen else None


# -- the controller -------------------------------------------------------------------------
class BenchSession:
    """Controller-side state and hooks (registered on the controller only): every payload
    received, then the reports, the table and the gate."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.payloads: dict[str, dict] = {}    # nodeid -> latest payload
        self.written: list[dict] = []          # summaries of written reports
        self.failures: list[str] = []
        self.collection: dict | None = None   # from local collection or a worker's output
        self.filled_from_store: dict[str, int] = {}   # idea name -> stored runs not run here

    def pytest_testnodedown(self, node, error) -> None:
        counts = getattr(node, "workeroutput", {}).get("benchkit_collection")
        if counts and self.collection is None:
            self.collection = counts

    def _completed_from_store(self, config: pytest.Config) -> list[dict]:
        """The session's payloads and the stored runs it did not run (stored_run_payloads)."""
        payloads = list(self.payloads.values())
        extra = stored_run_payloads(config, payloads)
        for payload in extra:
            name = payload["spec"]["name"]
            self.filled_from_store[name] = self.filled_from_store.get(name, 0) + 1
        return payloads + extra

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for prop in getattr(report, "user_properties", ()):
            name, value = prop
            if name == PROPERTY:
                payload = json.loads(value)
                self.payloads[payload["nodeid"]] = payload

    @pytest.hookimpl(tryfirst=True)  # before xdist waits for its workers to exit: meanwhile
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        if not self.payloads:
            return
        from benchkit.aggregate import aggregate_session

        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)
        self.written, self.failures = aggregate_session(
            self._completed_from_store(session.config), self.settings,
            complete_session=not interrupted)
        if self.failures and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if not self.payloads:
            counts = self.collection or {}
            if counts.get("bench_modules") and not counts.get("arm_runs_selected"):
                terminalreporter.write_line(
                    f"benchkit: {counts['bench_modules']} idea module(s) collected but no arm "
                    "run selected (-k/-m?): nothing benched, no report written", yellow=True)
            return
        from benchkit.table import render_summary

        tr = terminalreporter
        tr.section("benchkit")
        if not self.written:
            tr.write_line("benchkit: no arm ran in this session (all deselected?); "
                          "no report written")
        for line in render_summary(self.written, config.rootpath):
            tr.write_line(line)
        for name, count in sorted(self.filled_from_store.items()):
            tr.write_line(f"benchkit: {name}: {count} run(s) not run in this session taken "
                          "from the store, unchanged since they ran (--bench-fresh takes none)")
        for line in self.failures:
            tr.write_line(line, red=True, bold=True)
