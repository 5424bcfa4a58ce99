"""benchkit.heap: the heavy imports are frozen out of the cyclic collector, the collector is
left as it was found, and benching processes skip shutdown's collections."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def run_python(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (a clean heap and gc state); it prints one JSON."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_frozen_freezes_the_imported_heap_and_reenables_the_collector():
    result = run_python("""
        import gc, json, sys
        from benchkit import heap
        before = gc.get_freeze_count()
        module = heap.import_frozen("fractions")
        print(json.dumps({"before": before, "after": gc.get_freeze_count(),
                          "enabled": gc.isenabled(), "same": module is sys.modules["fractions"],
                          "has_class": hasattr(module, "Fraction")}))
    """)
    assert result["before"] == 0
    assert result["after"] > 1000  # everything alive, the new module's objects included
    assert result["enabled"] and result["same"] and result["has_class"]


def test_a_collector_the_user_disabled_stays_disabled():
    result = run_python("""
        import gc, json
        from benchkit import heap
        gc.disable()
        heap.import_frozen("fractions")
        print(json.dumps({"enabled": gc.isenabled()}))
    """)
    assert result == {"enabled": False}


def test_overlapping_blocks_enable_the_collector_when_the_last_one_ends():
    result = run_python("""
        import gc, json, threading
        from benchkit import heap
        inner_entered, outer_may_end = threading.Event(), threading.Event()
        seen = {}
        def other():
            with heap.frozen_afterwards():
                inner_entered.set()
                outer_may_end.wait()
            seen["after_other"] = gc.isenabled()
        with heap.frozen_afterwards():
            t = threading.Thread(target=other)
            t.start()
            inner_entered.wait()
        seen["after_first"] = gc.isenabled()   # the thread's block is still open
        outer_may_end.set()
        t.join()
        print(json.dumps(seen))
    """)
    assert result == {"after_first": False, "after_other": True}


def test_a_module_imported_elsewhere_is_frozen_once_when_first_asked_for():
    result = run_python("""
        import gc, json
        import fractions
        from benchkit import heap
        before = gc.get_freeze_count()
        heap.import_frozen("fractions")
        first = gc.get_freeze_count()
        [object() for _ in range(10)]
        heap.import_frozen("fractions")
        print(json.dumps({"before": before, "first": first,
                          "second": gc.get_freeze_count()}))
    """)
    assert result["before"] == 0 and result["first"] > 1000
    assert result["second"] == result["first"]  # asked again: nothing more frozen


def test_the_exit_hook_is_registered_once():
    result = run_python("""
        import atexit, json
        from benchkit import heap
        before = atexit._ncallbacks()
        heap.skip_exit_collection()
        heap.skip_exit_collection()
        print(json.dumps({"added": atexit._ncallbacks() - before}))
    """)
    assert result == {"added": 1}


IDEA = '''
import pytest
pytestmark = pytest.mark.bench(name="heap", track="tabular", grid={"lr": [1e-2]}, seeds=2)

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model())
'''

PROBE = '''
import gc, json, sys

def pytest_unconfigure(config):
    # not PYTEST_XDIST_WORKER: an outer xdist session passes that on to this subprocess
    who = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    with open(f"heap-{who}.json", "w") as f:
        json.dump({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled(),
                   "torch": "torch" in sys.modules}, f)
'''


@pytest.mark.parametrize("workers", [None, "2"], ids=["no-xdist", "n2"])
def test_every_process_that_trains_has_torch_frozen_and_its_collector_on(pytester, workers):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_heap_idea=IDEA)
    pytester.makeconftest(PROBE)
    args = ["--bench-epochs", "1", "-p", "no:randomly", "-p", "no:cacheprovider"]
    result = pytester.runpytest_subprocess(*args, *(["-n", workers] if workers else []))
    assert result.ret == 0
    probes = {p.name: json.loads(p.read_text()) for p in pytester.path.glob("heap-*.json")}
    trainers = {name for name, probe in probes.items() if probe["torch"]}
    # xdist may hand all four runs to one worker; without it the one process trains
    assert trainers and (trainers <= {"heap-gw0.json", "heap-gw1.json"} if workers
                         else trainers == {"heap-controller.json"}), probes
    for name in trainers:
        assert probes[name]["enabled"], probes
        assert probes[name]["frozen"] > 100_000, probes  # torch's heap, left to the end


HEAD_START_CONFTEST = '''
import json, threading

started = []
_start = threading.Thread.start

def _recording_start(self):
    started.append(self.name)
    _start(self)

threading.Thread.start = _recording_start

def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open("threads.json", "w") as f:
            json.dump(started, f)
'''


@pytest.mark.parametrize("xdist, expected", [([], False), (["-n", "2"], True)],
                         ids=["n0", "n2"])
def test_the_report_modules_get_a_head_start_only_under_xdist(pytester, xdist, expected):
    """Without xdist a thread importing scipy and matplotlib holds the GIL the training needs
    (measured: -n 0 sessions 0.5-1 s slower); under xdist the controller is idle."""
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(HEAD_START_CONFTEST)
    pytester.makepyfile(test_aa=IDEA)
    result = pytester.runpytest_subprocess("--bench-epochs", "1", "-p", "no:randomly", *xdist)
    assert result.ret == 0
    threads = json.loads((pytester.path / "threads.json").read_text())
    assert ("benchkit-prepare-aggregation" in threads) is expected, threads
