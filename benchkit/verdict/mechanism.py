"""Mechanism evidence: the report's ``mechanism_signature`` (each ``run.signature`` over the
idea's selected runs, :func:`mechanism_signature`) and ``math_verification`` (the mechanism
tests' outcomes, :func:`math_verification`), as records of :mod:`benchkit.verdict.sections`, and
the ``mechanism_ok`` they give. A signature that passes but whose null (the same statistic where
the mechanism is absent) passes too is ``non_discriminating`` and cannot count toward
``mechanism_ok = 1``; one without a null is confirmed with its discrimination unchecked. And
what the source of an arm shows before anything runs: a ``run.signature`` call that cannot fail.
Pure Python over run records, report dicts (and an arm's source).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from benchkit.spec.payloads import MechanismPayload
from benchkit.spec.run_record import RunRecord, Signature
from benchkit.verdict.sections import (MathVerification, MechanismSignature, MechanismTest,
                                       SignatureEvidence)


def mechanism_signature(idea_runs: Sequence[RunRecord]) -> MechanismSignature:
    """Aggregate ``run.signature`` over the idea's selected-config runs: observed is the value
    farthest from the prediction; confirmed only when every run confirmed it."""
    recorded = [r.result.signatures if r.result else {} for r in idea_runs]
    names = sorted({n for signatures in recorded for n in signatures})
    out = {}
    for name in names:
        entries = [signatures.get(name) for signatures in recorded]
        present = [e for e in entries if e is not None]
        finite = [e.observed for e in present if e.observed is not None]
        predicted = _predicted(present[0].predicted, name)
        farthest = max(finite, key=lambda v: abs(v - predicted)) if finite else None
        confirmed = len(present) == len(entries) and all(e.confirmed for e in present)
        tol = max(_predicted(e.tol, name) for e in present)
        status, discriminating, nulls = signature_status(confirmed, entries, predicted, tol)
        out[name] = SignatureEvidence(
            prediction=present[0].prediction, predicted=predicted, tol=tol, observed=farthest,
            per_seed=tuple(e.observed if e else None for e in entries), confirmed=confirmed,
            status=status, discriminating=discriminating, null_per_seed=tuple(nulls))
    return MechanismSignature(
        signatures=out, confirmed=all(s.confirmed for s in out.values()) if out else None)


def _predicted(value: float | None, name: str) -> float:
    """A run's prediction or tolerance of signature ``name``; a report's row keeps neither (its
    signatures are observations: :meth:`Signature.observation`), so it gives no evidence."""
    if value is None:
        raise ValueError(f"signature {name!r} of a report's row has no prediction: its "
                         "evidence comes from the runs, not the rows")
    return value


def math_verification(mechanism_payloads: Sequence[MechanismPayload]) -> MathVerification:
    """The report's ``math_verification``: each mechanism test's outcome (by node id), and
    whether every one that ran passed (None when none ran)."""
    tests = tuple(MechanismTest(test=p.nodeid, outcome=p.outcome, message=p.message)
                  for p in sorted(mechanism_payloads, key=lambda p: p.nodeid))
    ran = [t for t in tests if t.outcome != "skipped"]  # a skipped claim is no evidence
    return MathVerification(tests=tests,
                            passed=all(t.outcome == "passed" for t in ran) if ran else None)


def signature_status(confirmed: bool, entries: Sequence[Signature | None], predicted: float,
                     tol: float) -> tuple[str, bool | None, list[float | None]]:
    """(status, discriminating, null per seed) of one aggregated signature.

    ``discriminating`` is None without a null, True when every seed's null lies outside
    ``tol`` of the prediction, False when any seed's null is within it (that seed's check could
    not have failed). status: ``not confirmed``, ``non_discriminating``, ``confirmed``, or
    ``confirmed (discrimination unchecked)`` when no null was given."""
    nulls = [e.null if e else None for e in entries]
    has_null = [bool(e and e.has_null) for e in entries]
    if not any(has_null):
        discriminating = None
    else:
        discriminating = all(h and (n is None or abs(n - predicted) > tol)
                             for h, n in zip(has_null, nulls))
    if not confirmed:
        status = "not confirmed"
    elif discriminating is False:
        status = "non_discriminating"
    elif discriminating is None:
        status = "confirmed (discrimination unchecked)"
    else:
        status = "confirmed"
    return status, discriminating, nulls if any(has_null) else []


def evidence_ok(signatures_confirmed: Iterable[bool | None], tests_passed: Iterable[bool]
                ) -> int | None:
    """1 if every signature is confirmed and every mechanism test passed, 0 if any is not,
    None when the idea states no mechanism evidence at all."""
    flags = list(signatures_confirmed) + list(tests_passed)
    if not flags:
        return None
    return int(all(f is not None and bool(f) for f in flags))


def mechanism_ok(signatures: Mapping[str, SignatureEvidence],
                 tests_passed: list[bool]) -> int | None:
    """1 only with evidence from trained runs: at least one signature confirmed against a
    discriminating null (status ``confirmed``), every signature confirmed, none
    non-discriminating, and no mechanism test failed; 0 when a signature measured on the runs
    is not confirmed or a mechanism test failed beside one; null otherwise. Mechanism tests
    alone (no signature) check the claim's math, not the trained models: they say what they
    say in math_verification and leave mechanism_ok null."""
    if not signatures:
        return None
    ok = evidence_ok([s.confirmed for s in signatures.values()], tests_passed)
    if ok != 1:
        return ok
    statuses = [s.status for s in signatures.values()]
    if "non_discriminating" in statuses or "confirmed" not in statuses:
        return None
    return 1


class SignatureCall(NamedTuple):
    """The arguments of one ``run.signature`` call, each as written literally in its source
    (a number or a string), None where it is not a literal or not given."""

    name: Any = None
    observed: Any = None
    predicted: Any = None
    tol: Any = None
    prediction: Any = None
    null: Any = None


def signatures_that_cannot_fail(function: Callable[..., Any]) -> list[str]:
    """What the source of an arm shows about its ``run.signature`` calls before anything runs:
    a literal null within ``tol`` of a literal prediction, or a literal observed value, is a
    check that cannot fail (a collection-time warning; the report judges the measured nulls)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "signature"):
            continue
        given = dict(zip(SignatureCall._fields, call.args))
        given.update({k.arg: k.value for k in call.keywords if k.arg in SignatureCall._fields})
        literal = SignatureCall(**{k: _literal(v) for k, v in given.items()})
        name = literal.name if isinstance(literal.name, str) else "?"
        predicted, tol, null = literal.predicted, literal.tol, literal.null
        if isinstance(literal.observed, (int, float)):
            found.append(f"run.signature({name!r}): observed is the constant "
                         f"{literal.observed!r}, so the check cannot fail; pass the statistic "
                         "measured on the trained model")
        elif predicted is not None and tol is not None and null is not None \
                and abs(null - predicted) <= tol:
            found.append(f"run.signature({name!r}): its null {null!r} is within tol {tol!r} of "
                         f"the prediction {predicted!r}, so the check cannot tell the mechanism "
                         "from its absence")
    return found


def _literal(node: ast.expr) -> Any:
    """A number or string written literally in the call, else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None
