"""The arguments of ``pytest.mark.bench``, one parser each: the grid, the planned looks, the
boundary the looks share alpha by, the test that decides, the futility stop, and the fairness
arguments (claim type, budget tolerance and waiver, frontier). Each returns the validated value
or raises :class:`~benchkit.spec.idea.SpecError` saying what is wrong and what is valid."""
from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from typing import Any

from benchkit.spec.idea import (CLAIM_TYPES, INT_RANGE, MAX_GRID, MAX_INT, MAX_SEEDS, MIN_SEEDS,
                                Config, SpecError, cfg_id)

BOUNDARIES = ("union", "exact")
TESTS = ("mean", "sign", "wilcoxon")
# the keyword arguments of pytest.mark.bench as the user wrote them: any object, checked here
MarkKwargs = Mapping[str, Any]


def parse_looks(kw: MarkKwargs, where: str) -> tuple[int, ...]:
    """The planned looks of ``pytest.mark.bench``: ``looks=(8, 16)``, strictly increasing seed
    counts, each tested at its own level so that all of them together keep alpha. The
    shorthand ``max_seeds=M`` means looks at the declared seeds and at M (resolved by the
    caller, which knows the seeds); only one of the two may be given. () when neither is."""
    valid = (f"valid: looks=(8, 16), strictly increasing integers in [{MIN_SEEDS}, {MAX_SEEDS}], "
             "or max_seeds=16 (one look at seeds, one at max_seeds); not both")
    if "looks" in kw and "max_seeds" in kw:
        raise SpecError(f"{where}: looks= and max_seeds= both given; {valid}")
    if "max_seeds" in kw:
        m = kw["max_seeds"]
        if not _seed_count(m):
            raise SpecError(f"{where}: max_seeds={m!r:.60} must be an integer in [{MIN_SEEDS}, "
                            f"{MAX_SEEDS}]: the most seeds you plan to bench over all sessions; "
                            f"{valid}")
        return (m,)
    if "looks" not in kw:
        return ()
    looks = kw["looks"]
    if isinstance(looks, (str, bytes)) or not isinstance(looks, (list, tuple)) or not looks or \
            not all(map(_seed_count, looks)) or any(b <= a for a, b in zip(looks, looks[1:])):
        raise SpecError(f"{where}: looks={looks!r:.80}; {valid}")
    return tuple(looks)


def _seed_count(n: object) -> bool:
    """Whether ``n`` is a seed count an idea may plan: an integer in [MIN_SEEDS, MAX_SEEDS]."""
    return isinstance(n, int) and not isinstance(n, bool) and MIN_SEEDS <= n <= MAX_SEEDS


def check_value(value: object, what: str, where: str) -> None:
    """A grid or frontier value: a string, a bool, a number finite as a float, and an integer
    no longer than benchkit's records hold (:data:`~benchkit.spec.idea.MAX_INT`)."""
    if not isinstance(value, (str, bool, numbers.Real)) or (
            isinstance(value, numbers.Real) and not in_float_range(value)):
        raise SpecError(f"{where}: {what}={value!r:.60} must be a finite number within float "
                        "range (|x| < 1.8e308), a bool or a string")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and \
            abs(int(value)) > MAX_INT:
        raise SpecError(f"{where}: {what}={value!r:.60}: an integer of {len(str(abs(int(value))))} "
                        f"digits; valid: {INT_RANGE}, or a float such as 1e20")


def parse_grid(grid: object, where: str) -> tuple[Config, ...]:
    """A grid is a dict of non-empty value lists (their product, in order) or a list of dicts."""
    valid = ("valid: a dict of non-empty lists such as {'lr': [1e-3, 3e-3]}, "
             "or a non-empty list of dicts such as [{'lr': 1e-3}, {'lr': 3e-3}]")
    if isinstance(grid, dict):
        if not grid:
            raise SpecError(f"{where}: grid is empty; {valid}")
        for key, values in grid.items():
            if not isinstance(key, str):
                raise SpecError(f"{where}: grid key {key!r} is not a string; {valid}")
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise SpecError(f"{where}: grid[{key!r}] = {values!r:.60} is not a list; {valid}")
            if iter(values) is values:   # read once per track and again by the report
                raise SpecError(f"{where}: grid[{key!r}] is an iterator, used up by its first "
                                f"reading: give list(...) of it; {valid}")
            if not list(values):
                raise SpecError(f"{where}: grid[{key!r}] is an empty list; {valid}")
        keys, values = list(grid), [list(v) for v in grid.values()]
        if math.prod(map(len, values)) > MAX_GRID:
            raise SpecError(f"{where}: grid has {math.prod(map(len, values))} configs; valid: "
                            f"at most {MAX_GRID} (every config trains every seed of both arms)")
        configs = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    elif isinstance(grid, (list, tuple)):
        if not grid:
            raise SpecError(f"{where}: grid is empty; {valid}")
        if not all(isinstance(c, dict) and c for c in grid):
            raise SpecError(f"{where}: grid {grid!r} is not a list of non-empty dicts; {valid}")
        if len(grid) > MAX_GRID:
            raise SpecError(f"{where}: grid has {len(grid)} configs; valid: at most {MAX_GRID} "
                            "(every config trains every seed of both arms)")
        configs = [dict(c) for c in grid]
    else:
        raise SpecError(f"{where}: grid {grid!r} is a {type(grid).__name__}; {valid}")
    for cfg in configs:
        for key, value in cfg.items():
            check_value(value, f"grid value {key}", where)
        if "lr" in cfg:
            lr = cfg["lr"]
            if not real_number(lr) or not lr > 0:
                raise SpecError(f"{where}: learning rate lr={lr!r} must be a positive number")
        for key in ("epochs", "batch_size"):
            if key in cfg and (not isinstance(cfg[key], int) or cfg[key] < 1):
                raise SpecError(f"{where}: {key}={cfg[key]!r} must be a positive integer")
    configs = [{k: (float(v) if isinstance(v, numbers.Real) and not isinstance(v, (bool, int))
                    else v) for k, v in c.items()} for c in configs]
    same = [cfg_id(c) for i, c in enumerate(configs)
            if _value_key(c) in map(_value_key, configs[:i])]
    if same:
        raise SpecError(f"{where}: grid has duplicate configs (equal values, however written): "
                        f"{', '.join(same)}; give each config once")
    return tuple(configs)


def check_ids(grid: tuple[Config, ...], where: str) -> None:
    """Every config of a grid names its runs, stored results and report rows by its id
    (``cfg_id``): two configs with one id (``{'a': 1.0, 'b': 2.0}`` and ``{'a=1.0-b': 2.0}``)
    would be merged silently, so they are refused."""
    seen: dict[str, Config] = {}
    for cfg in grid:
        other = seen.setdefault(cfg_id(cfg), cfg)
        if other is not cfg:
            raise SpecError(f"{where}: grid configs {other!r:.80} and {cfg!r:.80} have the same "
                            f"id {cfg_id(cfg)!r:.80}, which names their runs; valid: keys "
                            "without '=' or '-' (or configs whose ids differ)")


def in_float_range(value: numbers.Real) -> bool:
    """Whether ``value`` (a bool counts as a number here) is a finite float once converted."""
    try:
        return math.isfinite(float(value))
    except OverflowError:   # an int such as 10**400
        return False


def _value_key(cfg: Config) -> tuple[tuple[str, tuple[str, Any]], ...]:
    """A config by its values: 1, 1.0 and 1e0 are one learning rate (True stays a bool)."""
    return tuple(sorted((k, ("bool", v) if isinstance(v, bool) else ("number", float(v))
                         if isinstance(v, numbers.Real) else ("text", v))
                        for k, v in cfg.items()))


def parse_boundary(kw: MarkKwargs, where: str, looks: tuple[int, ...]) -> str:
    """``boundary=`` of ``pytest.mark.bench``: "union" (default) or "exact"."""
    boundary = kw.get("boundary", "union")
    if not isinstance(boundary, str) or boundary not in BOUNDARIES:
        raise SpecError(f"{where}: boundary={boundary!r}; valid: "
                        f"{', '.join(map(repr, BOUNDARIES))} (how declared looks share alpha)")
    if boundary == "exact" and len(looks) < 2:
        raise SpecError(f"{where}: boundary='exact' needs two or more declared looks, e.g. "
                        "looks=(8, 16): with one look the test is at the full alpha already")
    return boundary


def parse_test(kw: MarkKwargs, where: str) -> str:
    """``test=`` of ``pytest.mark.bench``: "mean" (default), "sign" or "wilcoxon"."""
    test = kw.get("test", "mean")
    if not isinstance(test, str) or test not in TESTS:
        raise SpecError(f"{where}: test={test!r}; valid: 'mean' (sign-flip test of the mean "
                        "difference, the default), 'sign' (sign test: robust to rare "
                        "catastrophic seeds) or 'wilcoxon' (Wilcoxon signed-rank test)")
    return test


def parse_futility(kw: MarkKwargs, where: str, looks: tuple[int, ...],
                   claim_type: str) -> float | None:
    """``futility=`` of ``pytest.mark.bench``: a conditional-power threshold in (0, 1), only
    with two or more declared looks and a superiority claim; None when not declared."""
    value = kw.get("futility")
    if value is None:
        return None
    if not real_number(value) or not 0 < value < 1:
        raise SpecError(f"{where}: futility={value!r}; valid: a conditional power in (0, 1), "
                        "e.g. futility=0.1 (stop when the last look has under a 10% chance of "
                        "finding the idea better at the current trend)")
    if len(looks) < 2:
        raise SpecError(f"{where}: futility={value!r} needs looks to stop at; declare "
                        "looks=(8, 16) or max_seeds=16 with it")
    if claim_type != "superiority":
        raise SpecError(f"{where}: futility={value!r} applies to superiority claims only; "
                        f"claim_type={claim_type!r} has none (remove futility=)")
    return float(value)


def parse_fairness(kw: MarkKwargs, where: str, margin: float | None) -> dict[str, Any]:
    """claim_type, budget_tolerance, budget_waiver and frontier of ``pytest.mark.bench``."""
    claim_type = kw.get("claim_type", "superiority")
    if claim_type not in CLAIM_TYPES:
        raise SpecError(f"{where}: claim_type={claim_type!r}; valid: "
                        f"{', '.join(map(repr, CLAIM_TYPES))}")
    if claim_type != "superiority" and margin is None:
        raise SpecError(f"{where}: claim_type={claim_type!r} needs margin=<fraction of the "
                        "baseline mean in (0, 1)>: the largest " + (
                            "loss" if claim_type == "non-inferiority" else
                            "difference either way") + " the claim accepts")
    given = kw.get("budget_tolerance", {})
    tolerance = {"*": given} if real_number(given) else given
    if not isinstance(tolerance, dict) or not all(
            isinstance(k, str) and real_number(v) and 0 <= v and in_float_range(v)
            for k, v in tolerance.items()):
        raise SpecError(f"{where}: budget_tolerance={given!r:.60} must be a number >= 0 (every "
                        "budget) or a dict of budget name -> number >= 0, e.g. "
                        "{'params': 0.1}: the largest relative difference that still matches")
    waiver = kw.get("budget_waiver", {})
    if not isinstance(waiver, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in waiver.items()):
        raise SpecError(f"{where}: budget_waiver={waiver!r} must be a dict of budget name -> "
                        "the reason it may differ, e.g. {'params': 'the claim is about ...'}")
    frontier = kw.get("frontier")
    if frontier is not None:
        valid = "valid: one axis and at least two values, e.g. {'keep': [0.125, 0.25, 0.5]}"
        if not isinstance(frontier, dict) or len(frontier) != 1:
            raise SpecError(f"{where}: frontier={frontier!r}; {valid}")
        (axis, values), = frontier.items()
        if (not isinstance(axis, str) or not axis or isinstance(values, (str, bytes))
                or not hasattr(values, "__iter__")):
            raise SpecError(f"{where}: frontier={frontier!r}; {valid}")
        values = list(values)
        if len(values) < 2 or not all(isinstance(v, (str, numbers.Real)) and not isinstance(
                v, bool) for v in values) or len(set(map(repr, values))) != len(values):
            raise SpecError(f"{where}: frontier values {values!r:.80} must be two or more "
                            f"distinct numbers or strings; {valid}")
        for v in values:
            check_value(v, f"frontier value {axis}", where)
        frontier = {axis: tuple(float(v) if isinstance(v, float) else v for v in values)}
    return {"claim_type": claim_type, "budget_tolerance": {k: float(v) for k, v in
                                                           tolerance.items()},
            "budget_waiver": dict(waiver), "frontier": frontier}


def real_number(x: object) -> bool:
    """Whether a user's value is a real number other than a bool (True is an int in Python)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)
