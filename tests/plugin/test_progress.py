"""The controller's progress line: runs trained of runs to train, elapsed, time left."""
from __future__ import annotations

import pytest

from benchkit.plugin.progress import Progress, clock_text
from benchkit.spec import IdeaSpec
from benchkit.spec.payloads import RunPayload
from benchkit.spec.run_record import RunPoint, RunRecord, RunResult

SPEC = IdeaSpec(name="p", module="m.py", tracks=("x",), grids={}, seeds=(0,), epochs={})

class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def run(outcome="passed", reused=False, *, seconds=None, nodeid="", track=""):
    """An arm run's payload as the controller receives it."""
    return RunPayload(outcome=outcome, message=None, nodeid=nodeid, spec=SPEC, record=RunRecord(
        point=RunPoint(arm="idea", track=track, cfg={}, seed=0), outcome=outcome, reused=reused,
        result=RunResult(val=1.0, test=1.0, diverged=False, seconds=seconds)))


def test_progress_counts_trained_runs_and_estimates_from_the_rate_after_the_first():
    clock = Clock()
    p = Progress(clock)
    p.planned({"to_train": 5, "arm_runs_selected": 7})
    clock.now += 30                   # set-up: not part of the rate
    p.seen(run(reused=True))
    p.seen(run())
    assert p.line() == "benchkit: 1/5 runs trained, 1 reused | 0:30 elapsed"  # no rate yet
    clock.now += 10
    p.seen(run(outcome="failed"))
    p.seen(run("skipped"))   # a merge's missing run: not trained
    assert (p.done, p.trained, p.failed) == (2, 1, 1)
    assert p.left_s() == 30.0         # 10 s a run, 3 runs left
    assert p.line() == ("benchkit: 2/5 runs trained (1 failed), 1 reused | 0:40 elapsed | "
                        "about 0:30 left")
    assert p.line(brief=True).startswith("benchkit: 2/5 runs trained (1 failed) | 0:40")
    for _ in range(3):
        p.seen(run())
    assert "left" not in p.line() and p.line().startswith("benchkit: 5/5 runs trained")


def test_time_left_weighs_each_arm_tests_runs_by_their_own_mean_time():
    """A bench whose idea runs cost 10x its baseline runs, the slow ones last: the estimate
    weighs what is left by each group's mean, at the wall rate of the runs so far (-n 2:
    two runs at a time)."""
    clock = Clock()
    p = Progress(clock)
    base, idea = "m.py::test_baseline|tabular", "m.py::test_idea|tabular"
    p.planned({"to_train": 8, "to_train_by_group": {base: 4, idea: 4}})

    def finish(arm, seconds, seed):
        p.seen(run(track="tabular", seconds=seconds,
                   nodeid=f"m.py::test_{arm}[tabular-lr=0.01-seed{seed}]"))

    for seed in range(4):             # two workers: two 1-s baseline runs each wall second
        clock.now += 0.5
        finish("baseline", 1.0, seed)
    assert p.left_s() == pytest.approx(4 * 1.0 * 1.5 / 3)   # idea not started: the mean
    clock.now += 5.0
    finish("idea", 10.0, 0)
    clock.now += 5.0
    finish("idea", 10.0, 1)
    # 2 idea runs of 10 s left, at 11.5 s of wall for 23 s of work since the first run: 10 s
    # (two workers run them side by side); the session's mean wall time per run said 4.6 s
    assert p.left_s() == pytest.approx(2 * 10.0 * 11.5 / 23.0) == pytest.approx(10.0)
    assert 11.5 / 5 * 2 == pytest.approx(4.6)


def test_without_group_counts_the_estimate_is_the_rate_per_run():
    clock = Clock()
    p = Progress(clock)
    p.planned({"to_train": 4})
    for _ in range(2):
        clock.now += 3
        p.seen(run(seconds=3.0, nodeid="m.py::t[x]", track="x"))
    assert p.left_s() == 6.0


def test_clock_text():
    assert [clock_text(s) for s in (0, 5.4, 65, 3723)] == ["0:00", "0:05", "1:05", "1:02:03"]


class Terminal:
    """What the progress line uses of pytest's terminal reporter and writer."""

    def __init__(self, tty: bool):
        self.text, self.tty = "", tty

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    @property
    def width_of_current_line(self):   # pytest's writer: -1 once the line holds a "\r"
        line = self.text.rsplit("\n", 1)[-1]
        return -1 if "\r" in line else len(line)


class Config:
    def __init__(self, verbosity, terminal):
        self.verbosity, self.terminal = verbosity, terminal
        self.pluginmanager = self

    def get_verbosity(self):
        return self.verbosity

    def get_plugin(self, name):
        return self.terminal

    def get_terminal_writer(self):
        return self.terminal


class Report:
    def __init__(self, outcome="passed"):
        self.when, self.outcome = "call", outcome
        self.passed, self.failed, self.skipped = (outcome == o for o in
                                                  ("passed", "failed", "skipped"))


def session(verbosity, tty, outcomes, to_train=4):
    from benchkit.plugin.progress import ProgressReporter

    terminal, clock = Terminal(tty), Clock()
    shown = ProgressReporter(Config(verbosity, terminal), clock)
    shown.planned({"to_train": to_train})
    for outcome in outcomes:
        clock.now += 61
        terminal.write("." if outcome == "passed" else "F")   # pytest's letter comes first
        shown.seen(run(outcome))
        shown.pytest_runtest_logreport(Report(outcome))
    return terminal.text


def test_a_tty_line_is_rewritten_while_only_dots_follow_it():
    text = session(0, True, ["passed"] * 3)
    assert text.count("\n") == 1 and text.count("\r") == 5   # one line, rewritten twice
    assert text.endswith("\rbenchkit: 3/4 runs trained | 3:03 elapsed | about 1:01 left ")
    failed = session(0, True, ["passed", "failed", "passed"])  # the F stays on screen
    assert "F\n\rbenchkit: 2/4" in failed and failed.count("\n") == 2


def test_without_a_tty_plain_lines_and_quieter_with_q():
    text = session(0, False, ["passed"] * 4)
    assert "\r" not in text
    assert text.splitlines()[-1] == "benchkit: 4/4 runs trained | 4:04 elapsed"
    assert len([ln for ln in text.splitlines() if ln.startswith("benchkit")]) == 4
    quiet = session(-1, False, ["passed"] * 4, to_train=40)   # every 5 minutes or 20 runs
    assert len([ln for ln in quiet.splitlines() if ln.startswith("benchkit")]) == 1
    assert "benchkit" not in session(-2, False, ["passed"] * 4)
    assert session(1, True, ["passed"]).count("\r") == 0   # -v: a line per test, no rewriting


def test_collection_counts_the_runs_to_train_per_arm_test_and_track(pytester):
    from idea_modules import FAST, HARMS

    pytester.makepyfile(test_const=HARMS)
    rec = pytester.inline_run(*FAST, "--collect-only")
    config = rec.getcalls("pytest_collection_finish")[0].session.config
    counts = config.pluginmanager.get_plugin("benchkit-session").collection
    assert counts["to_train"] == 12
    groups = {"test_const.py::test_baseline|tabular": 6, "test_const.py::test_idea|tabular": 6}
    assert counts["to_train_by_group"] == groups
    rec = pytester.inline_run(*FAST)   # the results name the same groups as they arrive
    config = rec.getcalls("pytest_collection_finish")[0].session.config
    progress = config.pluginmanager.get_plugin("benchkit-progress").progress
    assert {g: len(t) for g, t in progress.seconds_by_group.items()} == groups
