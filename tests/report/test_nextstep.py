"""One command finishes a bench: --bench-fresh trains the grid extension its stored runs call
for, and a session left incomplete names the command that completes it."""
from __future__ import annotations

from benchkit.report.nextstep import next_steps, without
from benchkit.report import plots
from builders import as_report
from idea_modules import EDGE_ARMS, TORCH, idea_module
from sessions import line_with, run_session


def edge_module(**options) -> str:
    return idea_module("edge", EDGE_ARMS, imports=TORCH, grid={"lr": [1e-3, 2e-3, 4e-3]},
                       extend=1, **options)


def test_without_drops_flags_and_valued_options_in_both_forms():
    args = ["ideas", "--bench-fresh", "--bench-shard", "merge", "-n", "2", "--bench-shard=1/2"]
    assert without(args, "--bench-fresh", "--bench-shard") == ["ideas", "-n", "2"]


def report(pending=(), missing=()):
    return None, as_report({"name": "i", "track": "t", "incomplete": {
        "reasons": [], "pending": list(pending), "missing": list(missing), "failed": []}})


def test_next_steps_name_the_command_that_completes_the_bench():
    fresh = next_steps([report(pending=["lr=1"])], ["ideas", "--bench-fresh"], fresh=True,
                       merge=False)
    assert len(fresh) == 1 and "i t: `pytest ideas` trains the grid extension (lr=1): 0 run(s) " \
        "under this plan" in fresh[0] and "one more session" in fresh[0]
    merged = next_steps([report(missing=["idea[t-lr=0.1-seed3]", "baseline[t-lr=0.1-seed1]"])],
                        ["ideas", "--bench-store=s", "--bench-shard=merge"],
                        fresh=False, merge=True)
    assert "2 run(s) of this merge are not in the store (i t seed(s) 1, 3; a shard " in merged[0]
    assert "`pytest ideas --bench-store=s` trains the missing runs" in merged[0]
    # every incomplete report gets its line, a plain session's too (issue 50): the same command
    plain = next_steps([report(pending=["lr=1"], missing=["idea[t-lr=1-seed0]"])],
                       ["ideas", "-k", "idea", "ideas/test_x.py::test_idea"], fresh=False,
                       merge=False)
    assert plain == ["benchkit: NEXT: i t: `pytest ideas ideas/test_x.py` trains the grid "
                     "extension (lr=1): 1 run(s); stored runs are reused; should those runs "
                     "call for more (the extended grid's selection at its edge again, a budget "
                     "check's next look), that report asks for one more session"]
    assert next_steps([(None, as_report({"incomplete": None}))], [], fresh=True,
                      merge=True) == []


def test_one_bench_fresh_session_retrains_the_extension_and_leaves_the_old_plan(
        pytester, read_report, monkeypatch):
    """A plan changed after a look (here looks=, as a smoke at fewer seeds= does) and a grid
    extension pending: one --bench-fresh session retrains every run the report needs, the
    extension the stored runs call for included, under the new plan; its progress shows."""
    monkeypatch.setattr(plots, "write_plots", lambda folder, report: "not drawn in this test")
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_edge=edge_module())
    run_session(pytester, "-p", "no:randomly")
    assert read_report(pytester.path, "edge")["incomplete"]["pending"] == ["lr=0.0005"]
    pytester.makepyfile(test_edge=edge_module(looks=(2, 3)))
    result = run_session(pytester, "-p", "no:randomly", "--bench-fresh")
    result.stdout.fnmatch_lines([line_with("benchkit: 1/16 runs trained | ", " elapsed"),
                                 line_with("benchkit: 16/16 runs trained | "),
                                 "benchkit: 16 run(s) trained, 0 reused from the run store"])
    final = read_report(pytester.path, "edge")
    assert final["complete"] and not final.get("exploratory")
    assert final["baseline"]["best_cfg"] == {"lr": 0.0005}


class Terminal:
    def __init__(self, errors):
        self.stats, self.lines = ({"error": ["x"]} if errors else {}), []

    def write_line(self, line, **markup):
        self.lines.append(line)


def test_no_deselection_hint_after_a_collection_error(pytestconfig):
    """Under -n a collection error leaves no arm run selected: the error says why, and a
    '(-k/-m?)' hint beside it would send the user the wrong way."""
    from benchkit.plugin.controller import BenchSession

    session = object.__new__(BenchSession)   # only what the summary of an empty session reads
    session.settings, session.payloads = type("S", (), {"shard": None})(), {}
    session.collection = {"bench_modules": 1, "arm_runs_selected": 0, "to_train": 0}
    said = {}
    for errors in (True, False):
        tr = Terminal(errors)
        session.pytest_terminal_summary(tr, 0, pytestconfig)
        said[errors] = tr.lines
    assert said[True] == [] and "(-k/-m?)" in said[False][0]
