"""A report's warnings for people: each says what it means for the verdict and what to do.

The report keeps its warnings as the verdict stage wrote them (facts); here the terminal and
summary.md add the consequence and the next step, and the per-arm "still improving" flags of a
report become one line. Pure Python: reads the report dict only.
"""
from __future__ import annotations

import re

from benchkit.report.fmt import pct

IMPROVING = re.compile(r"still improving: the (?P<arm>.+?)'s selected config (?P<cfg>\S+) gained "
                       r"(?P<gain>[-\d.]+)%")


def _improving(report: dict, flags: list[str]) -> str:
    """One sentence for every "still improving" flag of a report, with what it means."""
    by_arm: dict[str, float] = {}
    for text in flags:
        m = IMPROVING.match(text)
        if m:   # a frontier flags an arm once per point: its largest gain stands for it
            arm = m["arm"].removeprefix("control:")
            by_arm[arm] = max(by_arm.get(arm, 0.0), float(m["gain"]))
    gains = ", ".join(f"{arm} {pct(g)}" for arm, g in by_arm.items())
    conv = report.get("convergence") or {}
    threshold = conv.get("threshold")
    fixed = conv.get("budget") == "fixed"
    decided = str(report.get("decided_by") or "baseline").removeprefix("control:")
    head = (f"still improving at the end of training: {gains} better on validation over the "
            f"last quarter of training (median over seeds; flagged above "
            f"{pct(100 * threshold) if threshold is not None else 'the threshold'}). ")
    if fixed:
        return head + ("The track trains for a fixed budget, so the verdict holds at that "
                       "budget and says nothing about longer training; nothing to do unless "
                       "the claim is about trained-out models (then bench on a track that "
                       "trains to convergence).")
    worst = by_arm.get(decided) is not None or by_arm.get("idea") is not None
    return head + ("The track is meant to train to convergence, so the arms were compared "
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
    ("the baseline's selected config", None),
    ("exploratory:", "Run without --bench-seeds/--bench-epochs, at a declared look, for a "
                     "verdict that counts."),
)
EDGE = re.compile(r"the .+'s selected config .+ is at the \w+ edge of ")
DIVERGED = re.compile(r"\d+ run\(s\) diverged")


def explain(text: str) -> str:
    """``text`` (one warning of a report) with what it means and what to do, when known."""
    if EDGE.match(text):
        return (text + ". The verdict may favour the better-tuned arm: widen grid= on that side "
                "or raise extend= in the bench mark")
    if DIVERGED.match(text):
        return (text + ". The verdict stands on the configs that trained; if a whole arm "
                "diverged, lower the largest learning rate of grid=")
    for start, advice in ADVICE:
        if text.startswith(start) and advice and advice not in text:
            return f"{text}. {advice}" if not text.rstrip().endswith(".") else f"{text} {advice}"
    return text


def warnings_for_people(report: dict) -> list[str]:
    """The report's warnings, the "still improving" flags as one, each explained."""
    flags = [w for w in report.get("warnings") or () if w.startswith("still improving:")]
    out, merged = [], False
    for text in report.get("warnings") or ():
        if text.startswith("still improving:"):
            if not merged:
                out.append(_improving(report, flags))
                merged = True
        else:
            out.append(explain(text))
    return out


def warning_lines(report: dict) -> list[str]:
    """``benchkit: WARNING <idea> <track>: ...`` lines of the terminal."""
    return [f"benchkit: WARNING {report['name']} {report['track']}: {w}"
            for w in warnings_for_people(report)]
