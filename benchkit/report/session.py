"""A session's reports: each idea's payloads through the verdict pipeline
(:mod:`benchkit.verdict.pipeline`: one frozen report per idea x track), written with their
companions, and the gate. No pytest here: the controller (:mod:`benchkit.plugin.controller`)
calls it at session finish with pytest's cache behind the floors."""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path

from benchkit.report import bench_report, reading, summary
from benchkit.report.fmt import mechanism_word, num
from benchkit.store import atomic, floor_cache, records
from benchkit.spec.payloads import MechanismPayload, Payload, RunPayload
from benchkit.store.provenance import provenance
from benchkit.verdict import decision, pipeline
from benchkit.verdict.plan import Exploratory
from benchkit.verdict.records import Report

TrackFloors = Callable[[str, list[int]], dict]  # (track, seeds) -> the track's floors


def aggregate_session(payloads: list[Payload], settings, *, complete_session: bool = True,
                      errors: list[str] | None = None, rootpath=None, store: dict | None = None,
                      floors: TrackFloors | None = None, partial: dict[str, str] | None = None):
    """Write every report this session's payloads make. Returns (written, gate failures):
    ``written`` is a list of (path, report); failures are ``benchkit: FAIL ...`` lines.
    With ``errors``, a report that cannot be written adds a ``benchkit: ERROR`` line to it and
    the other reports are still written (a previous report stays as it was: writes are
    atomic); without it the OSError propagates. ``store`` (how far the session's stored runs
    are trusted: :func:`benchkit.store.records.trust`; None: no run store) becomes each
    report's ``store``, with the runs it audited. ``floors`` gives a track's floors on seeds
    (the controller's keeps them in pytest's cache); None: the reports have none.
    ``partial``: idea name -> why this session ran only part of its tests; that idea's
    reports are exploratory (written apart from a complete one; every gate fails)."""
    by_idea: dict[str, list[Payload]] = {}
    for p in payloads:
        by_idea.setdefault(p.spec.name, []).append(p)
    written, failures = [], []
    for name in sorted(by_idea):
        group = by_idea[name]
        runs = [p for p in group if isinstance(p, RunPayload)]
        if not runs:
            continue  # only claims ran (-m mechanism): nothing to compare, no report
        spec = runs[0].spec
        mechanisms = [p for p in group if isinstance(p, MechanismPayload)]
        reports = pipeline.idea_reports(spec, runs, mechanisms, alpha=settings.alpha,
                                        floors=None if floors is None else
                                        lambda report: floors_of(report, floors,
                                                                 complete_session))
        for built in reports:
            path = bench_report.report_path(settings.report_dir, name, built.track)
            previous, set_aside = read_previous(path)
            incomplete = built.incomplete
            if not complete_session and incomplete is not None:
                incomplete = dataclasses.replace(
                    incomplete, reasons=(*incomplete.reasons, "the session was interrupted"))
            audited = sorted(p.nodeid for p in runs
                             if p.audit is not None and p.track == built.track)
            why_partial = (partial or {}).get(name)
            if why_partial is not None:
                built = dataclasses.replace(built, exploratory=Exploratory(
                    (*(built.exploratory.reasons if built.exploratory else ()), why_partial)))
            written_report = bench_report.stamp(dataclasses.replace(
                built, incomplete=incomplete, provenance=provenance(rootpath, spec.module),
                store={**(store or records.trust(None)), "audited": audited}))
            aside, written_report = beside(path, written_report, previous)
            if aside != path:
                path, (previous, aside_too) = aside, read_previous(aside)
                set_aside += aside_too
            if set_aside:  # the report says it, so the terminal does (one WARNING line each)
                written_report = dataclasses.replace(
                    written_report, warnings=(*written_report.warnings, *set_aside))
            r = written_report
            plain = r.to_json()   # the JSON edge: the file
            try:
                atomic.write_atomic(path, bench_report.dumps(plain))
                summary.write_companions(  # summary.md (+ plots) beside it
                    path, r, plots_current=same_report(previous, plain))
            except OSError as exc:
                if errors is None:
                    raise
                errors.append(f"benchkit: ERROR {name} {r.track}: cannot write "
                              f"{exc.filename or path}: {exc.strerror or exc}")
            else:
                written.append((path, r))
            why = gate_failure(r, settings.gate)
            if why:
                failures.append(f"benchkit: FAIL {name} {r.track}: {why}")
    return written, failures


def beside(path: Path, report: Report, previous: dict | None) -> tuple[Path, Report]:
    """Where ``report`` goes, and the report to write there: ``path`` and ``report``, unless it
    is exploratory or incomplete and ``path`` holds a complete report of the declared plan,
    which only another such report replaces; then the folder ``exploratory/`` (or
    ``incomplete/``) beside it, and ``report`` with a warning that names it."""
    if report.complete and not report.exploratory:
        return path, report
    if not (isinstance(previous, dict) and previous.get("complete") is True
            and not previous.get("exploratory")):
        return path, report
    kind = bench_report.ASIDE[0] if report.exploratory else bench_report.ASIDE[1]
    warning = (f"written to {kind}/ beside the complete report of the declared plan at {path} "
               f"(created {previous.get('created', '?')}), which a report that is {kind} never "
               "replaces")
    return (path.parent / kind / path.name,
            dataclasses.replace(report, warnings=(*report.warnings, warning)))


def floors_of(report: Report, compute: TrackFloors, complete_session: bool = True) -> Report:
    """``report`` with its track's floors on its seeds (numpy and scikit-learn, no training),
    from ``compute``. A floor that cannot be computed is a warning, never a lost report. An
    interrupted session's incomplete report gets none: it has no verdict to put in context, and
    computing them (minutes for mnist1d's seeds) kept a Ctrl-C waiting; a report gets none
    where ``compute`` stops on a SIGTERM that came while the reports were written."""
    if not complete_session and not report.complete:
        return dataclasses.replace(report, floors={}, warnings=(
            *report.warnings, "floors not computed: the session was interrupted (a session "
                              "that completes the report computes them)"))
    try:
        return dataclasses.replace(report, floors=compute(report.track,
                                                          report.seeds))
    except floor_cache.FloorsStopped as exc:
        return dataclasses.replace(report, floors={}, warnings=(
            *report.warnings, f"floors not computed: a SIGTERM came while the reports were "
                              f"written ({exc}; the next session reuses the stored runs and "
                              "computes them)"))
    except Exception as exc:  # noqa: BLE001 - a user's track code; the report still counts
        return dataclasses.replace(report, floors={}, warnings=(
            *report.warnings, f"floors of track {report.track!r} not computed: "
                              f"{type(exc).__name__}: {exc}"))


def read_previous(path: Path) -> tuple[dict | None, list[str]]:
    """The report this session replaces, if it is one (a regular file, bounded in size and
    nesting, a JSON object of a supported version whose runs are objects),
    and the warnings of setting it aside: anything else at ``path`` (a damaged file, a folder,
    a FIFO, which is never opened) is renamed beside it, so that the new report replaces it,
    nothing is lost and nothing blocks. Only to tell whether a complete report stands there
    and whether its plots are still current; never to decide a verdict."""
    if not os.path.lexists(path):
        return None, []
    try:
        return bench_report.load_report_file(path, schema=False), []
    except bench_report.ReportError as exc:
        why = str(exc).removeprefix(f"{path}: ")
    kept = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}")
    try:
        os.replace(path, kept)
    except OSError as exc:  # writing the new report there fails too, with its own ERROR line
        return None, [f"the earlier report at {path} is not a benchkit report ({why}) and "
                      f"cannot be set aside ({exc.strerror or exc})"]
    return None, [f"the earlier report at {path} was not a benchkit report ({why}): kept "
                  f"aside as {kept.name} and replaced"]


RUN_CIRCUMSTANCES = ("reused", "origin", "seconds")  # how a run came about, not what it gave


def same_report(previous: dict | None, new: dict) -> bool:
    """Whether the new report (its JSON, ``new``: the dict being written, not read back) says
    what the previous one said, apart from its timestamp and how each run came about (trained in
    this session or reused from the store, and how long it took): a ``--bench-fresh`` session
    retrains every run to the same bits, and only their seconds differ. Its plots are kept then
    (drawing them was most of the report's time)."""
    if previous is None:
        return False
    def content(report: dict) -> dict:
        runs = [{**r, **dict.fromkeys(RUN_CIRCUMSTANCES)} for r in report.get("runs") or []]
        return {**report, "created": None, "runs": runs}
    return content(previous) == content(new)


def gate_failure(report: Report, gate: str) -> str | None:
    """Why ``report`` misses ``gate``, or None when it passes."""
    if gate == "off":
        return None
    practical, system = report.practical_verdict, report.system_verdict
    if not report.complete:
        return ("incomplete (" + "; ".join(report.incomplete.reasons if report.incomplete
                                            else ()) + "): no verdict")
    if practical == "unmatched":
        return reading.unmatched_reason(report) + ": no verdict"
    comp = report.comparison
    assert comp is not None   # a complete report compares
    facts = (f"{practical}/{system}, delta {comp.delta_mean:+.4g}, "
             f"p {comp.p_adjusted:.4g} at level {num(reading.tested_level(comp))}, "
             f"mechanism_ok {mechanism_word(report.mechanism_ok)}")
    ok = decision.meets(gate, practical, system)
    exploratory = report.exploratory
    why = "exploratory (" + "; ".join(exploratory.reasons if exploratory else ()) + ")"
    if not ok:
        return f"gate {gate!r} not met" + (f", and {why}" if exploratory else "") + f": {facts}"
    if exploratory:  # the verdicts of a session that is no planned look never pass a gate
        return f"{why}: not a look of the declared plan, so no gate passes; {facts}"
    return None
