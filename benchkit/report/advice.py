"""A report's warnings for people: each says what it means for the verdict and what to do.

The report keeps its warnings as the verdict stage wrote them (facts); here the terminal and
summary.md add the consequence and the next step, and the per-arm "still improving" flags of a
report become one line. Pure Python: reads the report's record only.
"""
from __future__ import annotations

import re

from benchkit.report.fmt import pct, readable
from benchkit.verdict.records import Report

IMPROVING = re.compile(r"still improving: the (?P<arm>.+?)'s selected config (?P<cfg>\S+) gained "
                       r"(?P<gain>[-\d.]+)%")


def _improving(report: Report, flags: list[str]) -> str:
    """One sentence for every "still improving" flag of a report, with what it means."""
    by_arm: dict[str, float] = {}
    for text in flags:
        m = IMPROVING.match(text)
        if m:   # a frontier flags an arm once per point: its largest gain stands for it
            arm = m["arm"].removeprefix("control:")
            by_arm[arm] = max(by_arm.get(arm, 0.0), float(m["gain"]))
    gains = ", ".join(f"{arm} {pct(g)}" for arm, g in by_arm.items())
    conv = report.convergence
    threshold = conv.threshold
    fixed = conv.budget == "fixed"
    decided = (report.decided_by or "baseline").removeprefix("control:")
    head = (f"still improving at the end of training: {gains} better on validation over the "
            f"last quarter of training (median over seeds; the screen flags above "
            f"{pct(100 * threshold) if threshold is not None else 'the threshold'}). ")
    if fixed:
        return head + ("The track trains for a fixed budget, so the verdict holds at that "
                       "budget and says nothing about longer training; nothing to do unless "
                       "the claim is about trained-out models (then bench on a track that "
                       "trains to convergence).")
    checks = [a.budget_check for a in conv.arms.values()
              if a.still_improving and a.budget_check]
    if any(c.pending for c in checks):
        return head + ("Under a decaying schedule that can be the annealing, not learning: the "
                       f"budget check (each flagged arm's config at {checks[0].epochs} "
                       "epochs) settles it. Run the bench again to train it (stored runs are "
                       "reused).")
    measured = ", ".join(f"{pct(100 * c.gain)} at {c.epochs} epochs" for c in checks
                         if c.gain is not None)
    worst = by_arm.get(decided) is not None or by_arm.get("idea") is not None
    return head + ((f"Trained longer (the budget check), it still gains: {measured}. "
                    if measured else "")
                   + "The track is meant to train to convergence, so the arms were compared "
                   "before they finished: "
                   + ("the arms in the deciding comparison were still learning, so a longer "
                      "training could change the verdict. " if worst else
                      "the deciding comparison's arms were not flagged, so the verdict is "
                      "unlikely to change. ")
                   + "To settle it, give both arms more epochs (run.fit(model, epochs=N) in "
                   "each arm, or a track with more epochs) and bench again.")


ADVICE = (  # (start of the warning, what it means and what to do)
    ("only ", "The verdict can only be inconclusive: raise seeds= in the bench mark (or "
              "declare looks=) to the count the warning names."),
    ("exploratory:", ""),  # the ways out that apply: exploratory_advice
    ("look ", "Nothing to do: a later look adds seeds (raise seeds= to the next declared look)."),
    ("this look is tested at level", "The verdict can only be inconclusive at this look: raise "
                                     "seeds= to the next declared look."),
    ("mechanism test(s)", "Run them (without the -k/-m that left them out) for a mechanism "
                          "verdict that counts them."),
)
EDGE = re.compile(r"the (?P<arm>.+?)'s selected config (?P<cfg>\S+) is at the (?P<side>\w+) edge "
                  r"of (?P<axis>\S+) after (?P<steps>\d+) extension\(s\) \(extend=(?P<limit>\d+)\)")
DIVERGED = re.compile(r"\d+ run\(s\) diverged")


def _reasons(report: Report | None) -> tuple[str, ...]:
    """Why the report's session is exploratory (none: it is not, or no report is given)."""
    return () if report is None or report.exploratory is None else report.exploratory.reasons


def _smoke(report: Report | None) -> bool:
    """Whether the report is of a session with --bench-seeds/--bench-epochs (a smoke run)."""
    return any("--bench-" in r for r in _reasons(report))


def exploratory_advice(report: Report | None) -> str:
    """For a verdict that counts: the ways out of this session's reasons to be exploratory
    only (an override, a seed count that is no declared look, a plan changed after a look)."""
    reasons = _reasons(report)
    ways = []
    flags = [f for f in ("--bench-seeds", "--bench-epochs") if any(f in r for r in reasons)]
    if flags:
        ways.append(f"run without {'/'.join(flags)}")
    if any("the plan changed after a look" in r for r in reasons):
        ways.append("run once with --bench-fresh (every run retrained under the new plan) or "
                    "put back the plan the stored runs were judged under")
    if any("is not a declared look" in r for r in reasons) and not flags:
        ways.append("bench at a declared look, or declare the seed count in looks= before the "
                    "first look")
    return ("For a verdict that counts: " + "; ".join(ways) + ".") if ways else ""


def explain(text: str, report: Report | None = None) -> str:
    """``text`` (one warning of a report) with what it means and what to do, when known."""
    if text.startswith("exploratory:"):
        advice = exploratory_advice(report)
        return f"{text}. {advice}" if advice else text
    if EDGE.match(text):
        return _edges(report, [text])
    if text.startswith("only ") and _smoke(report):
        return text + ". Expected in a smoke run with --bench-seeds: its verdict is descriptive."
    if DIVERGED.match(text):
        return (text + ". The verdict stands on the configs that trained; if a whole arm "
                "diverged, lower the largest learning rate of grid=")
    for start, advice in ADVICE:
        if text.startswith(start) and advice and advice not in text:
            return f"{text}. {advice}" if not text.rstrip().endswith(".") else f"{text} {advice}"
    return text


def _edges(report: Report | None, texts: list[str]) -> str:
    """One sentence for every selection left at a grid edge (per arm, per frontier point)."""
    found = [m for m in map(EDGE.match, texts) if m is not None]  # callers pass edge ones only
    arms = list(dict.fromkeys(m["arm"].removeprefix("control:") for m in found))
    sides = sorted({f"{m['side']} edge of {m['axis']}" for m in found})
    cfgs = list(dict.fromkeys(m["cfg"] for m in found))
    m = found[0]
    text = (f"selected at the {' and '.join(sides)} after {m['steps']} extension(s) "
            f"(extend={m['limit']}): {', '.join(arms)} (at {', '.join(cfgs)}). ")
    if _smoke(report):
        return text + ("A session with --bench-seeds/--bench-epochs does not extend grids, so "
                       "this is expected in a smoke run; a session at the declared plan does.")
    return text + ("The verdict may favour the better-tuned arm: widen grid= on that side or "
                   "raise extend= in the bench mark.")


def warnings_for_people(report: Report) -> list[str]:
    """The report's warnings, each explained; the "still improving" flags as one, and the
    selections left at a grid edge as one."""
    warnings = list(report.warnings)
    groups = {"improving": [w for w in warnings if w.startswith("still improving:")],
              "edge": [w for w in warnings if EDGE.match(w)]}
    out, done = [], set()
    for text in warnings:
        kind = "improving" if text in groups["improving"] else "edge" if text in groups["edge"] \
            else None
        if kind is None:
            out.append(explain(text, report))
        elif kind not in done:
            done.add(kind)
            out.append((_improving if kind == "improving" else _edges)(report, groups[kind]))
    return [readable(w) for w in out]


def warning_lines(report: Report) -> list[str]:
    """``benchkit: WARNING <idea> <track>: ...`` lines of the terminal."""
    return [f"benchkit: WARNING {report.name} {report.track}: {w}"
            for w in warnings_for_people(report)]
