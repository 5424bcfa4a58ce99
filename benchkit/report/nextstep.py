"""The command that completes an incomplete bench, printed at the end of the session that left it
incomplete: a session never ends on advice that would only repeat it."""
from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from benchkit.report.terminal import Written
from benchkit.verdict.records import Report

VALUED = ("--bench-shard",)   # options whose value follows as the next word unless given with =


def _dropped(args, options) -> Iterator[str]:
    """``args`` as strings without ``options`` (a mapping: option -> whether its value follows
    as the next word when not given with ``=``)."""
    skip = False
    for arg in map(str, args):
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in options:
            skip = options[name] and "=" not in arg
            continue
        yield arg


def without(args, *options: str) -> list[str]:
    """``args`` without ``options`` (flags, ``--opt=value`` and ``--opt value`` forms)."""
    return list(_dropped(args, {name: name in VALUED for name in options}))


def missing_seeds(report: Report) -> list[int]:
    """The seeds of a report's missing runs (named ``arm[track-cfg-seedN]``), in order."""
    found = {int(m.group(1)) for name in (report.incomplete.missing if report.incomplete else ())
             if (m := re.search(r"-seed(\d+)\]$", name))}
    return sorted(found)


def command(args) -> str:
    return "pytest " + shlex.join(args) if args else "pytest"


def next_steps(written: Written, args, *, fresh: bool, merge: bool) -> list[str]:
    """``benchkit: NEXT ...`` lines for the reports of this session that are incomplete, each
    naming the one command that completes them: a merge's (its shards, or this machine), else
    one line per report, the command being this one without ``--bench-fresh`` (the runs just
    trained are stored) and without what selected part of the tests."""
    incomplete = [r for _, r in written if r.incomplete]
    if not incomplete:
        return []
    if merge:
        return [merge_step(incomplete, args)]
    again = command(whole(without(args, "--bench-fresh")))
    return [f"benchkit: NEXT: {r.name} {r.track}: `{again}` {what_completes(r, fresh)}"
            for r in incomplete]


def what_completes(report: Report, fresh: bool) -> str:
    """What the next session trains for an incomplete ``report``, in words."""
    inc = report.incomplete
    assert inc is not None   # the incomplete reports only
    missing, failed, pending = inc.missing, inc.failed, inc.pending or ()
    checking = any("budget check pending" in why for why in inc.reasons)
    parts = ([f"the grid extension ({', '.join(pending)})"] if pending else []) \
        + (["the budget check"] if checking else [])
    words = (f"trains {' and '.join(parts) or 'the missing runs'}: {len(missing)} run(s)"
             + (" under this plan, reusing the runs this session retrained (with --bench-fresh "
                "it would retrain them too)" if fresh else "; stored runs are reused"))
    if failed:
        words += (f"; {len(failed)} run(s) failed (listed in summary.md): it retrains them, so "
                  "fix what made them fail first")
    if pending or checking:
        words += ("; should those runs call for more (the extended grid's selection at its edge "
                  "again, a budget check's next look), that report asks for one more session")
    return words


def merge_step(incomplete: list[Report], args) -> str:
    """The NEXT line of a merge that left reports incomplete: its shards again, or this
    machine."""
    pending = [r for r in incomplete if r.incomplete and r.incomplete.pending]
    missing = sum(len(r.incomplete.missing) for r in incomplete if r.incomplete)
    plain = command(without(args, "--bench-shard"))
    why = ("the grid of " + ", ".join(f"{r.name} {r.track}" for r in pending)
           + " extended at its edge, and no shard trained the extension; "
           if pending else "")
    seeds = "; ".join(f"{r.name} {r.track} seed(s) {', '.join(map(str, s))}"
                      for r in incomplete if (s := missing_seeds(r)))
    which = f"{missing} run(s) of this merge are" if missing else "runs this merge needs are"
    seeds = seeds + "; " if seeds else ""
    return (f"benchkit: NEXT: {which} not in the store ({seeds}a shard trains whole seeds): "
            f"{why}run the shards again with this store (they train only what is missing), "
            f"then this merge; or `{plain}` trains the missing runs on this machine and writes the "
            "reports (complete, unless those runs call for a further grid extension or a "
            "budget check's next look: then that command once more)")


# options that select or stop short of an idea's tests: (option, takes a value as the next word)
SELECTING = {"-k": True, "-m": True, "--deselect": True, "--lf": False, "--last-failed": False,
             "--sw": False, "--stepwise": False, "--sw-skip": False, "--stepwise-skip": False,
             "-x": False, "--exitfirst": False, "--maxfail": True}


def whole(args) -> list[str]:
    """``args`` that run every test of the selected modules: without the options that select
    or stop short (:data:`SELECTING`, also written ``-kEXPR`` or ``--opt=value``), and each node
    id (``path::test``) as its module's path."""
    out: list[str] = []
    for arg in _dropped(args, SELECTING):
        if arg[:2] in ("-k", "-m") and not arg.startswith("--"):
            continue   # -kEXPR, -mEXPR
        if "::" in arg and not arg.startswith("-"):
            arg = arg.split("::", 1)[0]
            if arg in out:   # two node ids of one module
                continue
        out.append(arg)
    return out


def partial_line(name: str, missing: list[str], written: Written, args) -> str:
    """The one line saying that idea ``name``'s reports of this session are exploratory because
    its mechanism tests ``missing`` did not run here, where they went, and the command that
    runs the idea whole."""
    aside = any(Path(p).parent.name == "exploratory" for p, r in written if r.name == name)
    where = " (in exploratory/ beside its complete report, which stays)" if aside else ""
    return (f"benchkit: PARTIAL {name}: {len(missing)} of its mechanism test(s) did not run in "
            f"this session, so its verdict would be of part of its tests: its report is "
            f"exploratory{where} and fails every gate; NEXT: `{command(whole(args))}` runs it "
            "whole (stored runs are reused) and completes it")
