"""The controller's side of a session (registered on the controller only, never on an xdist
worker): it receives every payload, completes each idea with its stored runs, writes the reports
through :mod:`benchkit.report.session`, prints the table and applies the gate.
"""
from __future__ import annotations

import json

from typing import TYPE_CHECKING

import pytest

from benchkit.plugin import leases
from benchkit.plugin.activation import activate, settings_line
from benchkit.plugin.fixture import PROPERTY, stored_run_payload
from benchkit.plugin.progress import ProgressReporter
from benchkit.plugin.settings import HEADER_SHOWN, SETTINGS, STORE, Settings
from benchkit.plugin.timeouts import ReportsFirst, reports_first
from benchkit.plugin.whole import exploratory_reason, not_run
from benchkit.spec import IdeaSpec, cfg_id
from benchkit.spec.payloads import Payload, RunPayload, payload_from_json

if TYPE_CHECKING:   # the floors (numpy, every track) load only once a bench reports a run
    from benchkit.report.terminal import Written
    from benchkit.store.floor_ahead import Ahead

GATE_FAILED = "benchkit gate failed"  # the word pytest's final line shows with their count
NOT_WRITTEN = "benchkit report not written"
INCOMPLETE = "benchkit report(s) incomplete"  # pytest's final line: "48 passed, 2 benchkit ..."
NOT_STORED = "benchkit run(s) not stored"
# what the floors' child calls first, as kept_floors does here: a trained floor's loop
PREPARE_FLOORS = ("benchkit.training.floor_trainer:provide_floor_trainer",)


def audit_failures(payloads: list[Payload]) -> list[str]:
    """``benchkit: FAIL audit ...`` for every audited run whose bits differ from its record."""
    return [f"benchkit: FAIL audit: {p.nodeid} retrained differs in bits from its stored "
            f"run (digest {(p.provenance.digest or '')[:12]}, stored {p.audit.stored[:12]}): "
            "the store holds a result this code does not give" for p in payloads
            if isinstance(p, RunPayload) and p.provenance is not None
            and p.audit is not None and not p.audit.same]


def audit_summary(payloads: list[Payload], k: int) -> list[str]:
    """What ``--bench-audit K`` found, in one line (a run that differs also gets its FAIL
    line, :func:`audit_failures`); nothing without the option."""
    if not k:
        return []
    audited = [p for p in payloads if isinstance(p, RunPayload) and p.audit is not None]
    if not audited:
        return [f"benchkit: audit (--bench-audit {k}): no stored run was reused in this "
                "session, so none was retrained"]
    same = sum(1 for p in audited if p.audit is not None and p.audit.same)
    return [f"benchkit: audit (--bench-audit {k}): {len(audited)} stored run(s) retrained, "
            f"{same} identical in bits to their records"
            + (f", {len(audited) - same} not (FAIL below)" if same < len(audited) else "")]


def run_place(payload: RunPayload) -> tuple | None:
    """Which run of its idea a run payload is: (arm, track, config id, seed)."""
    point = payload.point
    return None if point is None else (point.arm, point.track, cfg_id(point.cfg), point.seed)


class BenchSession:
    """Every payload received, then the reports, the terminal table and the gate."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings: Settings = config.stash[SETTINGS]
        self.rootpath = config.rootpath
        self.payloads: dict[str, Payload] = {}  # nodeid -> latest payload
        self.specs: dict[str, IdeaSpec] = {}    # spec digest -> the spec a worker sent
        self.written: Written = []             # (path, report) of every report written
        self.failures: list[str] = []          # "benchkit: FAIL ..." lines of the gate
        self.write_errors: list[str] = []      # "benchkit: ERROR ..." lines: reports not written
        self.collection: dict | None = None    # from local collection or a worker's output
        self.filled_from_store: dict[str, int] = {}   # idea name -> stored runs not run here
        self.sigterm_held = False              # a SIGTERM came while the reports were written
        self.held: ReportsFirst | None = None  # noting a SIGTERM while they are
        self.audit_lines: list[str] = []       # what --bench-audit(-fresh) found
        self.partial: dict[str, list[str]] = {}  # idea -> its mechanism tests not run here
        self.progress = ProgressReporter(config)       # runs trained of runs to train, time left
        self.ahead: Ahead | None = None        # floors computed while the runs train
        self.floors_asked: set[tuple[str, int]] = set()  # (track, seed) looked up or asked for
        config.pluginmanager.register(self.progress, "benchkit-progress")

    @property
    def store(self):
        """The session's RunStore (None without pytest's cache), opened once a module benches."""
        return self.config.stash[STORE]

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: absent under -p no:xdist
    def pytest_testnodedown(self, node, error) -> None:
        counts = getattr(node, "workeroutput", {}).get("benchkit_collection")
        if counts and self.collection is None:
            self.collection = counts

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.collection = self.collection or self.progress.counts_from(report)
        self.progress.planned(self.collection)
        for name, value in getattr(report, "user_properties", ()):
            if name == PROPERTY:
                activate(self.config, check_reports=False)  # the workers checked the folder
                payload = payload_from_json(json.loads(value), self.specs)  # the JSON edge
                if payload is not None:
                    self.payloads[payload.nodeid] = payload
                    self.progress.seen(payload)
                    self.floors_ahead(payload)

    def floors_ahead(self, payload: Payload) -> None:
        """Ask for the floors of a run's (track, seed) while the other runs train, unless
        pytest's cache keeps them or this session writes no report (a shard)."""
        if (not isinstance(payload, RunPayload) or payload.point is None
                or payload.outcome == "skipped" or isinstance(self.settings.shard, tuple)):
            return
        from benchkit import tracks
        from benchkit.store import floor_cache
        place = (payload.point.track, payload.point.seed)
        if place in self.floors_asked:  # once a (track, seed), not once a run
            return
        self.floors_asked.add(place)
        try:
            track = tracks.get(payload.point.track)
        except KeyError:
            return
        if floor_cache.kept(track, payload.point.seed, self.cache) is None:
            from benchkit.store.floor_ahead import Ahead
            self.ahead = self.ahead or Ahead(PREPARE_FLOORS)
            self.ahead.want(track, payload.point.seed)

    @property
    def cache(self):
        """pytest's cache, or None under ``-p no:cacheprovider``."""
        return getattr(self.config, "cache", None)

    def stored_payloads(self, payloads: list[Payload]) -> list[RunPayload]:
        """Payloads of the stored runs a session did not run, for the ideas it ran an arm of.

        A session that selects part of an idea (``-k``, ``-m``, ``--lf``) or stops early would
        otherwise write an incomplete report over a complete one. A run with no stored result
        stays missing, a run that failed in this session is not replaced, and ``--bench-fresh``
        takes nothing."""
        if self.store is None or self.settings.fresh:
            return []
        # here, not at import: the plugin loads in every session, and the verdict code
        # imports numpy (a session that benches nothing imports none of it)
        from benchkit.verdict.plan import declared_plan

        runs = [p for p in payloads if isinstance(p, RunPayload)]
        specs = {p.spec.name: p.spec for p in runs}
        found = []
        for name, spec in sorted(specs.items()):
            present = {run_place(p) for p in runs if p.spec.name == name
                       and p.point is not None
                       and p.outcome != "skipped"}   # a skipped run is not run here
            for point, record in self.store.fill(spec, present, declared_plan(spec)):
                found.append(stored_run_payload(spec, point, record, self.settings.threads,
                                                self.settings.device))
                self.filled_from_store[name] = self.filled_from_store.get(name, 0) + 1
        return found

    def not_stored(self) -> list[str]:
        """Node ids of runs trained here that had to be stored and were not: every run of a
        shard (storing is all it does), every run of a session given ``--bench-store``; runs
        that pytest's cache cannot keep only cost reuse."""
        if self.settings.store is None and not isinstance(self.settings.shard, tuple):
            return []
        return sorted(p.nodeid for p in self.payloads.values()
                      if isinstance(p, RunPayload) and p.not_stored)

    @pytest.hookimpl(tryfirst=True)  # before xdist waits for its workers to exit: meanwhile
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        if self.not_stored() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if not self.payloads or isinstance(self.settings.shard, tuple):
            return  # a shard stores its runs; the final session writes the reports
        try:
            self.finish(session, exitstatus)
        finally:
            if self.ahead is not None:
                self.ahead.close()

    def finish(self, session: pytest.Session, exitstatus) -> None:
        """The reports of the session's payloads, the audit and the gate's failures."""
        held = self.held = reports_first()  # a SIGTERM from here on waits for the reports
        from benchkit.report.session import aggregate_session

        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)
        payloads = list(self.payloads.values())
        filled = self.stored_payloads(payloads)
        taken = {(p.spec.name, run_place(p)) for p in filled}
        kept: list[Payload] = [
            p for p in payloads if not isinstance(p, RunPayload) or p.outcome != "skipped"
            or p.point is None or (p.spec.name, run_place(p)) not in taken]
        self.partial = not_run(payloads, (self.collection or {}).get("mechanism_items") or {})
        self.written, self.failures = aggregate_session(
            kept + list(filled),
            self.settings, partial={name: exploratory_reason(missing)
                                    for name, missing in self.partial.items()},
            complete_session=not interrupted, errors=self.write_errors,
            rootpath=self.rootpath, store=self.trust(),
            floors=self.kept_floors)
        self.failures += audit_failures(payloads)
        self.audit_lines = audit_summary(payloads, self.settings.audit)
        if self.settings.audit_fresh:
            from benchkit.plugin.fresh_audit import audit
            failed, fresh = audit(self.config, payloads)
            self.failures += failed
            self.audit_lines += fresh
        if held is not None and held.received:  # the session ends as interrupted, reports whole
            self.sigterm_held = True
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        incomplete_merge = self.settings.shard == "merge" and any(
            not r.complete for _, r in self.written)  # its NEXT line names what completes it
        if (self.failures or self.write_errors or incomplete_merge) \
                and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def kept_floors(self, track: str, seeds: list[int]) -> dict:
        """``track``'s floors on ``seeds``, kept in pytest's cache between sessions
        (:mod:`benchkit.store.floor_cache`; computed each time under ``-p no:cacheprovider``),
        those computed while the runs trained taken from :attr:`ahead`; after a SIGTERM, none
        not computed yet (``floor_cache.FloorsStopped``: the report is written without them).
        """
        from benchkit import tracks
        from benchkit.store import floor_cache
        from benchkit.training import provide_floor_trainer
        provide_floor_trainer()
        held = self.held
        return floor_cache.floors(tracks.get(track), seeds, self.cache, self.ahead,
                                  stop=lambda: held is not None and held.received)

    def trust(self) -> dict:
        """The reports' ``store`` section (how far stored runs were trusted)."""
        from benchkit.store.records import trust
        return trust(None if self.store is None else self.store.secret is not None)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: every worker draws the same audit
    def pytest_configure_node(self, node) -> None:
        node.workerinput["benchkit_audit_seed"] = self.settings.audit_seed
        node.workerinput[leases.INPUT] = leases.worker_input(self.config)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        leases.remove_folder(config)

    def say_not_stored(self, tr) -> None:
        """The runs that did not reach the store: a red line, and a count on pytest's last
        line ("16 passed, 8 benchkit run(s) not stored"); the exit status is 1."""
        missing = self.not_stored()
        if not missing:
            return
        where = self.store.storage.location if self.store is not None else "the run store"
        tr.write_line(f"benchkit: ERROR {len(missing)} run(s) trained here could not be "
                      f"written to the run store at {where} (the store line above says why): "
                      "a merge or a later session will lack them", red=True, bold=True)
        tr.stats.setdefault(NOT_STORED, []).extend(
            pytest.TestReport(nodeid=nodeid, location=("benchkit", None, "store"), keywords={},
                              outcome="failed", longrepr="not stored", when="call")
            for nodeid in missing)

    def run_counts(self) -> tuple[int, int, int]:
        """(trained, reused, of which trained by another module) arm runs of this session."""
        results = [p for p in self.payloads.values() if isinstance(p, RunPayload)
                   and p.result is not None and p.outcome != "skipped"]
        reused = sum(1 for p in results if p.reused)
        shared = sum(1 for p in results if p.origin == "shared")
        return len(results) - reused, reused, shared

    def failed_runs(self) -> int:
        """Arm runs of this session that ran and failed (raised, recorded nothing, timed out)."""
        return sum(1 for p in self.payloads.values() if isinstance(p, RunPayload)
                   and not p.reused and p.outcome not in ("passed", "skipped"))

    def store_problems(self) -> list[str]:
        """Every store problem of this session (workers' and the controller's), once each."""
        lines = [line for p in self.payloads.values() if isinstance(p, RunPayload)
                 for line in p.store_problems]
        lines += self.store.problems if self.store is not None else []
        return list(dict.fromkeys(lines))

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        tr = terminalreporter
        if isinstance(self.settings.shard, tuple):
            from benchkit.spec.shard import label
            trained, reused, _ = self.run_counts()
            tr.write_line(f"benchkit: shard {label(self.settings.shard)} trained {trained} "
                          f"run(s), {reused} reused; no verdict (shard)"
                          + ("" if self.settings.gate == "off" else
                             f": --bench-gate {self.settings.gate} applies in the final "
                             "session"))
            for line in self.store_problems():
                tr.write_line(line, yellow=True)
            self.say_not_stored(tr)
            return
        if not self.payloads:
            counts = self.collection or {}
            if config.getoption("collectonly") and counts.get("arm_runs_selected"):
                tr.write_line(f"benchkit: {counts['arm_runs_selected']} arm run(s) selected, "
                              f"{counts['to_train']} to train (the rest are stored)")
            elif (counts.get("bench_modules") and not counts.get("arm_runs_selected")
                  and not tr.stats.get("error")):   # a collection error says why itself
                tr.write_line(
                    f"benchkit: {counts['bench_modules']} idea module(s) collected but no arm "
                    "run selected (-k/-m?): nothing benched, no report written", yellow=True)
            return
        from benchkit.report.terminal import render_summary

        tr.section("benchkit")
        if not config.stash.get(HEADER_SHOWN, False):
            tr.write_line(settings_line(self.settings))
        if not self.written and not self.write_errors:
            tr.write_line("benchkit: no arm ran in this session (all deselected?); "
                          "no report written")
        for line in render_summary(self.written, config.rootpath):
            tr.write_line(line)
        for line in self.store_problems():
            tr.write_line(line, yellow=True)
        trained, reused, shared = self.run_counts()
        failed = self.failed_runs()
        tr.write_line(f"benchkit: {trained} run(s) trained"
                      + (f" ({failed} of them failed)" if failed else "")
                      + f", {reused} reused from the run store"
                      + (f" ({shared} trained by another idea module)" if shared else "")
                      + ("" if self.settings.fresh else " (--bench-fresh retrains them)"))
        if self.settings.shard == "merge":
            from benchkit.store.runs import MISSING_REASONS
            absent = [p.message or "" for p in self.payloads.values()
                      if isinstance(p, RunPayload) and p.outcome == "skipped"]
            reasons = [f"{n} {why}" for why in MISSING_REASONS
                       if (n := sum(why in m for m in absent))]
            if absent:
                tr.write_line(f"benchkit: merge: {len(absent)} run(s) not in the store ("
                              + ", ".join(reasons or ["see the report"]) + "): their "
                              "reports are incomplete and list them", yellow=True)
        from benchkit.report.nextstep import next_steps
        for line in next_steps(self.written, config.invocation_params.args,
                               fresh=self.settings.fresh, merge=self.settings.shard == "merge"):
            tr.write_line(line, yellow=True, bold=True)
        from benchkit.report.nextstep import partial_line
        for name, missing in sorted(self.partial.items()):
            tr.write_line(partial_line(name, missing, self.written,
                                       config.invocation_params.args), yellow=True, bold=True)
        for name, count in sorted(self.filled_from_store.items()):
            tr.write_line(f"benchkit: {name}: {count} run(s) not run in this session taken "
                          "from the store, unchanged since they ran (--bench-fresh takes none)")
        for line in self.audit_lines:
            tr.write_line(line)
        for line in self.write_errors + self.failures:
            tr.write_line(line, red=True, bold=True)
        self.say_not_stored(tr)
        if self.sigterm_held:
            tr.write_line("benchkit: SIGTERM came while the reports were written: they were "
                          "finished first, and the session ends as interrupted", yellow=True)
        if self.write_errors:  # "12 passed, 1 benchkit report not written"
            tr.stats.setdefault(NOT_WRITTEN, []).extend(
                pytest.TestReport(nodeid="benchkit report", location=("benchkit", None, "report"),
                                  keywords={}, outcome="failed", longrepr=line, when="call")
                for line in self.write_errors)
        incomplete = [r for _, r in self.written if r.incomplete]
        if incomplete:  # "48 passed, 2 benchkit report(s) incomplete": the exit status stays
            tr.stats.setdefault(INCOMPLETE, []).extend(
                pytest.TestReport(nodeid=f"benchkit report {r.name} {r.track}",
                                  location=("benchkit", None, "report"), keywords={},
                                  outcome="skipped", longrepr=None, when="call")
                for r in incomplete)
        if self.failures:  # pytest's final line counts it: "12 passed, 1 benchkit gate failed"
            tr.stats.setdefault(GATE_FAILED, []).extend(
                pytest.TestReport(nodeid="benchkit gate", location=("benchkit", None, "gate"),
                                  keywords={}, outcome="failed", longrepr=line, when="call")
                for line in self.failures)
