"""An arm test's Run and what happens around an arm test's call: reuse of a stored run,
seeding, recording what the body executes, the check that a result was recorded, storing the
run, and the payload sent to the controller.

A payload is a :class:`benchkit.spec.payloads.RunPayload` (or ``MechanismPayload``); it crosses
process boundaries through xdist as its JSON, in the test report's ``user_properties`` under
:data:`PROPERTY`; a module's spec rides the first payload each process sends of it, later ones
name its digest (:func:`benchkit.spec.payloads.spec_wire`).
"""
from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import pytest

from benchkit.plugin.leases import Leases, of_worker
from benchkit.plugin.isolation import GUARD
from benchkit.plugin.settings import SETTINGS, SPECS, STORE
from benchkit.spec import IdeaSpec, run_id
from benchkit.spec.payloads import MechanismPayload, RunPayload
from benchkit.spec.run_record import Audit, Provenance, RunPoint, RunRecord, RunResult

if TYPE_CHECKING:
    from benchkit.store.records import StoredRun
    from benchkit.store.runs import RunStore, StoredPoint
    from benchkit.store.trace import Recording
    from benchkit.training.run import Run

PROPERTY = "benchkit"
ITEM_RUN: pytest.StashKey[Run] = pytest.StashKey()  # item -> its Run
ITEM_STORED: pytest.StashKey[StoredRun] = pytest.StashKey()  # item -> its reused record
ITEM_AUDIT = pytest.StashKey[bool]()      # item -> retrain it and compare with its record
ITEM_RECORDING: pytest.StashKey[Recording] = pytest.StashKey()  # item -> what its body ran
ITEM_LEASE: pytest.StashKey[tuple[Leases, str]] = pytest.StashKey()  # item -> key it trains
# id of a module's spec (kept in SPECS all session) -> the digest this process sent it under
SPECS_SENT: pytest.StashKey[dict[int, str]] = pytest.StashKey()


def item_spec(item: pytest.Item) -> IdeaSpec | None:
    """The spec of the bench module an item belongs to (None for other tests)."""
    module_item = item.getparent(pytest.Module)
    if module_item is None:
        return None
    spec = item.config.stash[SPECS].get(module_item.nodeid)
    return spec if isinstance(spec, IdeaSpec) else None


def arm_spec(item: pytest.Item) -> IdeaSpec:
    """The spec of an arm item's bench module (an arm item is only made for a bench module
    whose spec parsed: benchkit.plugin.hooks parametrizes it from the spec)."""
    spec = item_spec(item)
    if spec is None:
        raise RuntimeError(f"benchkit: {item.nodeid} is an arm test of no parsed bench module")
    return spec


def run_params(item: pytest.Function) -> StoredPoint:
    """The (arm, track, config, seed) an arm item was parametrized with."""
    return cast("StoredPoint", item.callspec.params["run"])


def start_run(item: pytest.Function) -> Run:
    """The Run of an arm item at its (arm, track, config, seed) parameter, with its stored
    record when the store has one this session reuses."""
    from benchkit import tracks
    from benchkit.training.run import Run

    arm, track, cfg, seed = run_params(item)
    spec = arm_spec(item)
    settings = item.config.stash[SETTINGS]
    the_run = Run(arm=arm, track=tracks.get(track), cfg=cfg, seed=seed,
                  epochs=spec.epochs[track], device=settings.device)
    the_run.frontier_axis = next(iter(spec.frontier)) if spec.frontier else None
    item.stash[ITEM_RUN] = the_run
    store = item.config.stash[STORE]
    if store is not None:
        the_run.store_key = item_key(item, store)
        record = None if settings.fresh else stored_record(item, store)
        leases = of_worker(item.config)
        if record is None and leases is not None and not settings.fresh \
                and settings.shard != "merge":
            record = leases.train_or_reuse(the_run.store_key,
                                           lambda: stored_record(item, store))
            if record is None:
                item.stash[ITEM_LEASE] = (leases, the_run.store_key)
        if record is not None and item.stash.get(ITEM_AUDIT, False):
            the_run.audit_expected = record.run_digest
        elif record is not None:
            item.stash[ITEM_STORED] = record
        elif settings.shard == "merge":
            why = store.why_missing(the_run.store_key, item.path)
            pytest.skip(f"benchkit: not in the run store {store.storage.location}: {why}; "
                        "--bench-shard merge trains nothing")
    return the_run


def item_key(item: pytest.Function, store: RunStore) -> str:
    """The store's lookup key of an arm item's run."""
    from benchkit.store.fingerprint import arm_fingerprint

    arm, track, cfg, seed = run_params(item)
    return store.key(arm_fingerprint=arm_fingerprint(item.function),
                     protocol=arm_spec(item).protocols[track], arm=arm, track=track, cfg=cfg,
                     seed=seed)


def stored_record(item: pytest.Function, store: RunStore) -> StoredRun | None:
    """The stored record an arm item's run would reuse (:meth:`RunStore.lookup` under its
    module's declared plan), or None."""
    from benchkit.verdict.plan import declared_plan

    spec, (_, track, cfg, _) = arm_spec(item), run_params(item)
    return store.lookup(item_key(item, store), item.path, declared_plan(spec),
                        extension=cfg not in spec.declared_grids[track])


def release_lease(item: pytest.Item) -> None:
    """Let go of the run key this item trained (its run is stored by now, or failed)."""
    held = item.stash.get(ITEM_LEASE, None)
    if held is not None:
        leases, key = held
        leases.release(key)
        del item.stash[ITEM_LEASE]


def reuse(item: pytest.Function) -> bool:
    """Restore the item's stored run, if it has one: then its body is not called."""
    record = item.stash.get(ITEM_STORED, None)
    if record is None:
        return False
    restore_stored(item.stash[ITEM_RUN], record, arm_spec(item).module)
    return True


def restore_stored(the_run: Run, record: StoredRun, module: str) -> None:
    """Give ``the_run`` its stored ``record``'s result and say where it came from
    (:meth:`StoredRun.record`: ``reused`` when ``module`` trained it, ``shared`` when another
    module did)."""
    stored = record.record(module)
    assert stored.result is not None   # a stored record always holds its result
    the_run.restore(stored.result, stored.cpu)
    the_run.provenance = stored.origin


def stored_run_payload(spec: IdeaSpec, point: StoredPoint, record: StoredRun, threads: int,
                       device: str) -> RunPayload:
    """The payload of a stored run at ``point`` = (arm, track, cfg, seed) of the idea
    ``spec``, as if its arm test had reused it in this session: the record's run record."""
    from benchkit.store.environment import environment

    arm, track, cfg, seed = point
    nodeid = f"{spec.module}::<{arm}>[{run_id(track, cfg, seed)}]"
    return RunPayload(outcome="passed", message=None, nodeid=nodeid, spec=spec,
                      record=record.record(spec.module, RunPoint(arm=arm, track=track,
                                                                 cfg=dict(cfg), seed=seed)),
                      env=environment(threads, device))


def before_call(item: pytest.Function) -> None:
    """Seed a run that trains, as the last thing before its body (nothing else eats the RNG),
    with the session's torch thread count: torch is imported from here on."""
    if ITEM_STORED in item.stash:
        return
    import torch  # noqa: F401  (first here in a process that trains: the guard sees it bare)

    from benchkit.training import device
    from benchkit.training.run import seed_everything, set_threads

    item.config.stash[GUARD].torch_imported()
    set_threads(item.config.stash[SETTINGS].threads)
    device.prepare(item.config.stash[SETTINGS].device)
    seed_everything(item.stash[ITEM_RUN].seed)
    if item.config.stash[STORE] is not None:
        from benchkit.store.trace import Recording

        item.stash[ITEM_RECORDING] = Recording()
        item.stash[ITEM_RECORDING].start()


def stop_recording(item: pytest.Function) -> None:
    recording = item.stash.get(ITEM_RECORDING, None)
    if recording is not None:
        recording.stop()


def keep_returned(item: pytest.Function) -> list[object]:
    """Call the arm's body through a wrapper that keeps what it returns (in the list this
    gives back) and returns None to pytest: an arm that returns its numbers instead of
    recording them is told so by :func:`after_call`, not by pytest's generic warning."""
    body = item.obj
    returned: list[object] = []

    @functools.wraps(body)
    def kept(*args: object, **kwargs: object) -> None:
        returned.append(body(*args, **kwargs))

    item.obj = kept
    return returned


def after_call(item: pytest.Function, returned: Sequence[object] = ()) -> None:
    if item.stash[ITEM_RUN].val is None:
        value = next((v for v in returned if v is not None), None)
        if value is not None:
            pytest.fail(f"benchkit: {item.nodeid} returned a {type(value).__name__} and recorded "
                        "no result: benchkit does not read an arm's return value; record it "
                        "with run.record(val=..., test=...) or train with run.fit(model)",
                        pytrace=False)
        pytest.fail(f"benchkit: {item.nodeid} recorded no result: call run.fit(model) "
                    "or run.record(val=..., test=...)", pytrace=False)


def attach_payload(item: pytest.Item, report: pytest.TestReport,
                   call: pytest.CallInfo[None], spec: IdeaSpec) -> None:
    """Put the payload of an arm or mechanism test into its report, once it has an outcome
    (after the call, or a setup that errored or skipped), and store a freshly trained run."""
    setup_ended = call.when == "setup" and report.outcome != "passed"
    if call.when != "call" and not setup_ended:
        return
    the_run = item.stash.get(ITEM_RUN, None)
    outcome = "error" if setup_ended and report.failed else report.outcome
    message = first_line(report) if outcome != "passed" else None
    settings = item.config.stash[SETTINGS]
    payload: RunPayload | MechanismPayload
    if the_run is not None or item.get_closest_marker("arm") is not None:
        store = item.config.stash[STORE]
        result = the_run.result() if the_run is not None else None  # its seconds end here
        not_stored = False
        if the_run is not None and result is not None and outcome == "passed" \
                and not the_run.reused and store is not None:
            not_stored = not keep(item, the_run, result, store, spec)
        payload = run_payload(item.nodeid, outcome, message, spec, the_run, settings.threads,
                              settings.device, result=result)
        point = getattr(getattr(item, "callspec", None), "params", {}).get("run")
        if the_run is None and point is not None:  # its setup failed before the Run existed
            arm, track, cfg, seed = point
            payload = dataclasses.replace(payload, record=RunRecord(
                point=RunPoint(arm=arm, track=track, cfg=dict(cfg), seed=seed), result=None,
                outcome=outcome))
        payload = dataclasses.replace(payload, not_stored=not_stored, store_problems=tuple(
            store.problems) if store is not None else ())
    elif item.get_closest_marker("mechanism") is not None:
        payload = MechanismPayload(outcome=outcome, message=message, nodeid=item.nodeid,
                                   spec=spec)
    else:
        return
    sent = item.config.stash.setdefault(SPECS_SENT, {})
    try:
        plain = payload.to_json(sent.get(id(spec)))
        text = json.dumps(plain, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:  # fails this run, not the session
        why = (f"benchkit: {item.nodeid}: its result is not plain JSON ({exc}); record "
               "numbers and strings with run.record, run.signature and run.log")
        report.outcome, report.longrepr = "failed", why
        payload = run_payload(item.nodeid, "failed", why, spec, None, settings.threads)
        plain = payload.to_json(sent.get(id(spec)))
        text = json.dumps(plain, sort_keys=True)
    sent[id(spec)] = plain["spec_digest"]   # sent with this report: later ones name it
    report.user_properties.append((PROPERTY, text))
    if isinstance(payload, RunPayload) and payload.result is not None:
        # readable in junit-xml, which writes the item's properties with its teardown report
        result = payload.result
        for key, value in (("val", result.val), ("test", result.test),
                           ("diverged", result.diverged), ("reused", payload.reused),
                           ("seconds", result.seconds)):
            item.user_properties.append((f"bench_{key}", value))


def keep(item: pytest.Item, the_run: Run, result: RunResult, store: RunStore,
         spec: IdeaSpec) -> bool:
    """Record a freshly trained run (its ``result``) with what it depended on, and store it
    (an audited run is compared with its record instead); its provenance says so. False when
    it should have been stored and was not."""
    from benchkit.store import records
    from benchkit.verdict.plan import declared_plan
    from benchkit.store.trace import dependencies

    recording = item.stash.get(ITEM_RECORDING, None)
    try:
        if recording is None or the_run.store_key is None:
            raise RuntimeError("nothing recorded what its body executed, or it has no key")
        deps = dependencies(recording.codes, recording.opened, store.rootdir, item.path)
        record = records.build(the_run.store_key, the_run.point(), result, deps,
                               records.StoredOrigin(module=spec.module, nodeid=item.nodeid,
                                                    plan=declared_plan(spec)),
                               the_run.trained_on(), secret=store.secret)
    except Exception as exc:  # never the session: an unrecordable run is just not stored
        store.problem(f"{item.nodeid}: its dependencies could not be recorded "
                      f"({exc.__class__.__name__}: {exc}): it is not stored")
        return False
    expected = getattr(the_run, "audit_expected", None)
    the_run.provenance = Provenance(
        key=record.key, digest=record.run_digest, origin="fresh", trained_in=spec.module,
        audit=None if expected is None else Audit(stored=expected,
                                                  same=expected == record.run_digest))
    return expected is not None or store.put(record)


def run_payload(nodeid: str, outcome: str, message: str | None, spec: IdeaSpec,
                the_run: Run | None,
                threads: int, device: str = "cpu", *,
                result: RunResult | None = None) -> RunPayload:
    """What an arm test sends to the controller: its outcome, and the run's ``result`` (taken
    now when not given) with the environment when ``the_run`` (a Run) exists."""
    if the_run is None:
        return RunPayload(outcome=outcome, message=message, nodeid=nodeid, spec=spec)
    from benchkit.store.environment import environment
    record = RunRecord(point=the_run.point(),
                       result=result if result is not None else the_run.result(),
                       origin=the_run.provenance, outcome=outcome, reused=the_run.reused,
                       cpu=the_run.trained_on())
    return RunPayload(outcome=outcome, message=message, nodeid=nodeid, spec=spec,
                      record=record, env=environment(threads, device))


def first_line(report: pytest.TestReport) -> str | None:
    """The failure's ``E`` line (or the last line) of a report, for the JSON report; a skip's
    reason (pytest keeps a skip as a (path, line, reason) tuple, whose repr is no message)."""
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ").strip()[:300] or None
    text = getattr(report, "longreprtext", "") or ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("E ")]
    chosen = errors[0] if errors else (lines[-1] if lines else None)
    return chosen.removeprefix("E ").strip()[:300] if chosen else None
