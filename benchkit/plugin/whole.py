"""Whole sessions: a verdict is of every test of its idea, never of a subset.

A session may run part of an idea module (``-k``, ``-m``, ``--deselect``, ``--lf``, node ids, a
conftest's skip, an early stop). Its arm runs are completed from the store by the controller;
its mechanism tests cannot be, so an idea whose module held a mechanism test that did not run
here is exploratory (written apart, every gate fails), and the terminal says so in one line
naming the command that runs it whole. What the module's full collection held is recorded per
module as it is collected (:func:`pytest_pycollect_makeitem`): node ids filter the items after
it. An arm parametrized over anything but its run is refused at collection
(:func:`pytest_pycollect_makeitem`): its values would share one run key.
"""
from __future__ import annotations

from collections.abc import Generator, Iterable

import pytest

from benchkit.plugin.fixture import item_spec
from benchkit.spec.payloads import MechanismPayload, Payload, RunPayload

__all__ = ["pytest_pycollect_makeitem"]

# on pytest's config: idea name -> node ids of the mechanism tests its module's collection held
MECHANISM_ITEMS = pytest.StashKey[dict[str, set[str]]]()


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object
                              ) -> Generator[None, object, object]:
    """Record the mechanism tests a bench module's collection holds (this hook sees every
    function of the module; node ids select after it), and refuse an arm test parametrized
    over anything but its run (a parametrize mark, a fixture with params, a project's
    pytest_generate_tests): a run's key is (arm, track, config, seed), so its other values
    would share one stored run and one report row."""
    made = yield
    for item in made if isinstance(made, list) else [made]:
        if not isinstance(item, pytest.Function) or not isinstance(collector, pytest.Module):
            continue
        spec = item_spec(item)
        if spec is None:
            continue
        if item.get_closest_marker("arm") is None:
            if item.get_closest_marker("mechanism") is not None:
                found = item.config.stash.setdefault(MECHANISM_ITEMS, {})
                found.setdefault(spec.name, set()).add(item.nodeid)
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        extra = sorted(set(params) - {"run"})
        if extra:
            raise pytest.Collector.CollectError(
                f"benchkit: {collector.nodeid}: arm test {name} is parametrized over "
                f"{', '.join(extra)} (pytest.mark.parametrize, a fixture with params, or "
                "pytest_generate_tests): an arm run is one (track, grid config, seed), so every "
                f"value would share one run; valid: put the axis in the bench grid "
                f"(grid={{{extra[0]!r}: [...]}}, read as run.cfg[{extra[0]!r}]), or bench each "
                "value in its own module")
    return made


def mechanism_items(config: pytest.Config) -> dict[str, list[str]]:
    """What :func:`pytest_collectreport` recorded, as plain JSON (a worker sends it)."""
    return {name: sorted(ids) for name, ids in config.stash.get(MECHANISM_ITEMS, {}).items()}


def not_run(payloads: Iterable[Payload], collected: dict[str, list[str]]) -> dict[str, list[str]]:
    """idea name -> its mechanism tests that did not run in this session (deselected, not
    selected, skipped, or never reached), for every idea an arm run of which came: from the
    collection's record, and from the module's own list where that record is missing."""
    payloads = list(payloads)
    ideas = {p.spec.name: p.spec for p in payloads if isinstance(p, RunPayload)}
    ran = {p.nodeid for p in payloads
           if isinstance(p, MechanismPayload) and p.outcome != "skipped"}
    found = {}
    for name, spec in sorted(ideas.items()):
        if name in collected:
            missing = sorted(set(collected[name]) - ran)
        else:   # no record of the collection came (a worker lost): the module's functions
            ran_functions = {function(nodeid) for nodeid in ran}
            missing = [f"{spec.module}::{func}" for func in spec.mechanism_tests
                       if func not in ran_functions]
        if missing:
            found[name] = missing
    return found


def function(nodeid: str) -> str:
    """The test function a node id names (``mod.py::test_x[a-1]`` -> ``test_x``)."""
    return nodeid.rsplit("::", 1)[-1].split("[", 1)[0]


def exploratory_reason(missing: list[str]) -> str:
    """The report's exploratory reason for an idea whose mechanism tests ``missing`` did not
    run."""
    shown = ", ".join(function(n) + n[n.find("["):] if "[" in n else function(n)
                      for n in missing[:4]) + (" ..." if len(missing) > 4 else "")
    return (f"{len(missing)} mechanism test(s) of the module did not run in this session "
            f"({shown}: deselected by -k/-m/--deselect/--lf or node ids, skipped, or not "
            "reached): a verdict of part of the idea's tests")
