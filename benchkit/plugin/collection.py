"""An idea module read into its spec at collection (:func:`module_spec`, cached per module):
its ``pytest.mark.bench`` parsed, its arm and mechanism tests found and checked, its grids
extended as far as the stored runs call for; and, in a module that does not bench, pytest's own
refusal of an unregistered ``bench``/``arm``/``mechanism`` mark under ``--strict-markers``.
"""
from __future__ import annotations

import dataclasses
import types
import warnings
from typing import Any

import pytest

from benchkit.plugin import activation
from benchkit.plugin.settings import NAMES, SETTINGS, SPECS, STORE
from benchkit.spec import (ARMS, BENCH_KWARGS, IdeaSpec, SpecError, arm_label,
                           parse_bench_marker, unreachable_family)

# benchkit's markers, as pytest_configure registers them
MARKERS = (
    ("bench(name, track, grid, seeds, claim, margin, looks, boundary, test, max_seeds, "
     "claim_type, budget_tolerance, budget_waiver, frontier, extend): declares an idea module "
     "benchkit benches"),
    ("arm(kind, name=None): marks the 'baseline', the 'idea' or a 'control' arm test (a "
     "control needs name=)"),
    "mechanism: a test of the idea's mechanism claim")
MARKER_NAMES = ("bench", "arm", "mechanism")


class BenchWarning(pytest.PytestWarning):
    """A bench that is declared so that it cannot reach a verdict."""


def module_spec(config: pytest.Config, module_item: pytest.Module) -> IdeaSpec | None:
    """The validated spec of a bench module (cached), or None for a plain test module."""
    nodeid = module_item.nodeid
    cache = config.stash[SPECS]
    if nodeid not in cache:
        cache[nodeid] = _build_spec(config, module_item)
    spec = cache[nodeid]
    if isinstance(spec, SpecError):
        raise pytest.Collector.CollectError(f"benchkit: {spec}")
    return spec if isinstance(spec, IdeaSpec) else None


def _reports_follow(config: pytest.Config) -> bool:
    """Whether this session writes reports (whose warnings the terminal prints): not a
    --collect-only session, not a shard that only trains."""
    return not config.option.collectonly and not isinstance(config.stash[SETTINGS].shard, tuple)


def _first_collector(config: pytest.Config) -> bool:
    """Not an xdist worker, or its first: every worker collects every module."""
    worker = getattr(config, "workerinput", None)
    return worker is None or worker.get("workerid") in (None, "gw0")


def _build_spec(config: pytest.Config, module_item: pytest.Module) -> IdeaSpec | SpecError | None:
    """The module's spec; the mistake that stops it (a collection error of the module); None
    for a module that does not bench."""
    marks = [m for m in module_item.own_markers if m.name == "bench"]
    arms = {func: marks for func, marks in _arm_marks(module_item.obj).items()
            if any(m.args[:1] and m.args[0] in ARMS + ("control",) for m in marks)}
    if not any(_is_ours(mark) for mark in marks) and not arms:
        # not a bench module: a project's own bench/arm/mechanism marks stay its own, and
        # --strict-markers refuses them unless the project registered them
        return _unregistered_marks(config, module_item)
    if not marks and _first_collector(config):
        warnings.warn(BenchWarning(
            f"{module_item.nodeid}: arm tests ({', '.join(arms)}) but no module-level "
            "pytestmark = pytest.mark.bench(name=..., track=...): benchkit does not bench "
            "this module"), stacklevel=1)
    if not marks:
        return _unregistered_marks(config, module_item)
    if len(marks) > 1:
        return SpecError(f"{module_item.nodeid}: pytest.mark.bench is given {len(marks)} times; "
                         "give it once")
    try:
        activation.activate(config)
    except activation.SetupError as exc:
        return SpecError(str(exc).removeprefix("benchkit: "))
    settings = config.stash[SETTINGS]
    try:
        spec = parse_bench_marker(marks[0], module_item.nodeid,
                                  seeds_override=settings.seeds,
                                  seed_offset=settings.seed_offset,
                                  epochs_override=settings.epochs)
        arm_names = _check_arms(module_item.nodeid, module_item.obj)
    except SpecError as exc:
        return exc
    spec = dataclasses.replace(spec, arms=arm_names, mechanism_tests=tuple(
        _marked_functions(module_item.obj, "mechanism")), arm_tests=tuple(
        (arm_label(marks[0], module_item.nodeid), getattr(module_item.obj, func).__qualname__)
        for func, marks in _arm_marks(module_item.obj).items()))
    spec = _extended_from_store(config, module_item, spec)
    # said once: the report's warnings (printed as benchkit: WARNING lines) repeat the
    # unreachable family, so only a session that writes no report warns of it here; under
    # xdist every worker collects, and the first speaks for all
    why = (unreachable_family(len(spec.seeds), len(spec.tracks), settings.alpha)
           if not _reports_follow(config) else None)
    from benchkit.verdict.mechanism import signatures_that_cannot_fail
    for func in _arm_marks(module_item.obj):
        why_not = signatures_that_cannot_fail(getattr(module_item.obj, func))
        why = "; ".join(filter(None, [why, *why_not]))
    if why and _first_collector(config):  # once per module, at collection
        warnings.warn(BenchWarning(f"{module_item.nodeid}: {why}"), stacklevel=1)
    owners = config.stash[NAMES]
    other = owners.setdefault(spec.name, module_item.nodeid)
    if other != module_item.nodeid:
        return SpecError(f"{module_item.nodeid}: idea name {spec.name!r} is already used by "
                         f"{other}; their reports would collide: give each module its own "
                         "name=")
    return spec


def _extended_from_store(config: pytest.Config, module_item: pytest.Module,
                         spec: IdeaSpec) -> IdeaSpec:
    """The spec with each track's grid extended as far as the stored runs call for
    (benchkit.verdict.grids), and the budget checks they call for; the report applies the same
    rules to the runs."""
    if spec.overrides:
        # an override session is exploratory: the edge of its grid is a warning, not a reason
        # to train more (a frontier's axis is never extended: benchkit.verdict.extension)
        return dataclasses.replace(spec, extend=0)
    from benchkit.store.idea_results import stored_results
    from benchkit.verdict import grids
    from benchkit.verdict.plan import declared_plan
    store = config.stash[STORE]   # --bench-fresh too: it retrains what the runs call for
    # stored runs are chosen under the declared plan (RunStore.lookup)
    result = stored_results(spec, store, module_item.obj, module_item.path, declared_plan(spec))
    if spec.extend and store is not None:
        spec = dataclasses.replace(spec, grids=grids.grids_from_store(spec, result))
    checks, check_seeds = grids.checks_from_store(spec, result)
    return dataclasses.replace(spec, checks=checks, check_seeds=check_seeds)


def _strict_markers(config: pytest.Config) -> bool:
    """Whether the session refuses unregistered marks (``--strict-markers``, ``--strict``,
    or their ini settings)."""
    for name in ("strict_markers", "strict"):
        try:
            value = config.getini(name)   # pytest 9: the options set these ini values
        except ValueError:
            value = None                  # pytest 8: command-line options only
        if value is None:
            value = getattr(config.option, name, None)
        if value:
            return True
    return False


def _unregistered_marks(config: pytest.Config, module_item: pytest.Module) -> SpecError | None:
    """Under --strict-markers, pytest's own refusal of a ``bench``, ``arm`` or ``mechanism``
    mark in a module that does not bench and a project that did not register it: benchkit
    registers these names for its own modules, which must not make them valid elsewhere."""
    if not _strict_markers(config):
        return None
    lines = list(config.getini("markers"))
    for line in MARKERS:   # benchkit's own registration, once each: what is left is the project's
        if line in lines:
            lines.remove(line)
    registered = {line.split(":")[0].split("(")[0].strip() for line in lines}
    used = {mark.name for mark in _all_marks(module_item)} & set(MARKER_NAMES)
    for name in sorted(used - registered):
        return SpecError(f"{module_item.nodeid}: {name!r} not found in `markers` configuration "
                         f"option (--strict-markers; benchkit's {name!r} mark applies only in "
                         "bench modules: register your own in the ini's markers)")
    return None


def _all_marks(module_item: pytest.Module) -> list[pytest.Mark]:
    """The marks of a module, its functions and its classes and their methods."""
    found = list(module_item.own_markers)
    objects = list(vars(module_item.obj).values())
    objects += [member for obj in objects if isinstance(obj, type)
                for member in vars(obj).values()]
    for obj in objects:
        if callable(obj) or isinstance(obj, type):
            marks = getattr(obj, "pytestmark", [])
            found += marks if isinstance(marks, list) else [marks]
    return [mark for mark in found if hasattr(mark, "name")]


def _is_ours(mark: pytest.Mark) -> bool:
    """Whether a ``bench`` mark is benchkit's: it gives keyword arguments of benchkit's (a bare
    ``pytest.mark.bench`` or one with other keywords is the project's own marker)."""
    return any(key in BENCH_KWARGS for key in mark.kwargs)


def _marked_functions(module_obj: types.ModuleType, mark: str
                      ) -> dict[str, list[tuple[Any, ...]]]:
    """function name -> the mark's args, for every function of the module with that mark."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for attr, obj in vars(module_obj).items():
        marks = getattr(obj, "pytestmark", [])
        args = [m.args for m in marks if getattr(m, "name", None) == mark]
        if args and callable(obj):
            found[attr] = args
    return found


def _check_arms(where: str, module_obj: types.ModuleType) -> tuple[str, ...]:
    """The module's arms (baseline, idea, then its controls in module order), checked."""
    valid = ("valid: exactly one test marked pytest.mark.arm('baseline') and one marked "
             "pytest.mark.arm('idea'), each taking the run fixture, plus any number marked "
             "pytest.mark.arm('control', name='<name>')")
    nested = [f"{name}.{func}" for name, obj in vars(module_obj).items()
              if isinstance(obj, type) for func in _arm_marks(obj)]
    if nested:   # pytest would collect them as methods, each without its run parameter
        raise SpecError(f"{where}: arm test(s) inside a class ({', '.join(nested)}); {valid}, "
                        "written at module level (not in a class)")
    by_arm: dict[str, list[str]] = {a: [] for a in ARMS}
    for func, marks in _arm_marks(module_obj).items():
        if len(marks) != 1:
            raise SpecError(f"{where}: {func} has {len(marks)} arm marks; {valid}")
        by_arm.setdefault(arm_label(marks[0], f"{where}: {func}"), []).append(func)
    for arm, funcs in by_arm.items():
        if len(funcs) != 1:
            what = "no" if not funcs else f"{len(funcs)} ({', '.join(funcs)})"
            raise SpecError(f"{where}: {what} {arm!r} arm test; {valid}")
    return tuple(by_arm)


def _arm_marks(module_obj: types.ModuleType | type) -> dict[str, list[pytest.Mark]]:
    return {attr: [m for m in getattr(obj, "pytestmark", []) if getattr(m, "name", None) == "arm"]
            for attr, obj in vars(module_obj).items()
            if callable(obj) and any(getattr(m, "name", None) == "arm"
                                     for m in getattr(obj, "pytestmark", []))}
