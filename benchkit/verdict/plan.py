"""The declared plan a verdict rests on: which of the idea's declarations say how its runs are
judged (recorded with each run), and why a session whose stored runs were judged under another
plan is exploratory."""
from __future__ import annotations

from benchkit.spec.idea import IdeaSpec

PLAN_KEYS = ("looks", "boundary", "test", "claim_type", "margin")


def declared_plan(spec: IdeaSpec, looks=None) -> dict:
    """How the module says its runs are judged (not what they train): recorded with each run,
    since a change to it after a look changes what the verdict means. ``looks`` replaces the
    spec's when the session resolves them."""
    values = {k: getattr(spec, k) for k in PLAN_KEYS}
    values["looks"] = list(spec.looks if looks is None else looks)
    return {k: v for k, v in values.items() if k == "looks" or v is not None}


def plan_changes(plan: dict, runs) -> list[str]:
    """Why the session is exploratory when stored runs of this module (origin ``reused``) were
    trained under another declared plan: a plan chosen after seeing results is no plan. Empty
    when none was (records without a plan are not judged)."""
    before = [r["planned"] for r in runs if r.get("origin") == "reused"
              and r.get("planned") is not None and r["planned"] != plan]
    changes = sorted({f"{k} {old.get(k)!r} -> {plan.get(k)!r}" for old in before
                      for k in PLAN_KEYS if old.get(k) != plan.get(k)})
    if not changes:
        return []
    return [f"the plan changed after a look: stored runs were judged under another plan "
            f"({'; '.join(changes)}); declare it before the first look, or --bench-fresh "
            "retrains under the new one"]
