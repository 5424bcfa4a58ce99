"""An idea benched on several tracks is one family: Holm-adjusted p, and a loud warning at
collection when the family cannot reach significance with the seeds given."""
from __future__ import annotations


from benchkit.stats import paired
from benchkit.spec import family_seeds_needed
from idea_modules import arm, idea_module
from sessions import run_session, validate_report

IDEA = idea_module("fam", arm("baseline"), arm("idea", "run.fit(run.track.model(), lr=3e-2)"),
                   track=["tabular", "dynamics"], seeds=6)


def test_family_seeds_needed_is_the_first_reachable_count():
    for family in (1, 2, 3, 5):
        n = family_seeds_needed(family, 0.05)
        assert paired.min_p_value(n) < 0.05 / family <= paired.min_p_value(n - 1)


def test_two_track_family_is_holm_adjusted_and_warns(pytester):
    """In this process only: the family is adjusted where reports are built, on the controller,
    with or without workers (tests/plugin/test_plugin_suite.py benches under -n 2)."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_fam=IDEA)
    result = run_session(pytester, "--bench-epochs", "1", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*6 seeds cannot reach p < 0.05 after Holm over 2 track(s)*"
                                 "7 seeds or more can*"])
    reports = {t: validate_report(pytester.path / "reports" / "fam" / t / "bench_report.json")
               for t in ("tabular", "dynamics")}
    ps = [reports[t]["comparison"]["p_value"] for t in ("tabular", "dynamics")]
    assert [reports[t]["comparison"]["p_adjusted"] for t in ("tabular", "dynamics")] == \
        paired.holm(ps)
    for report in reports.values():
        assert report["comparison"]["family_size"] == 2
        assert any("after Holm over 2 track(s)" in w for w in report["warnings"])
        assert report["practical_verdict"] == "inconclusive"  # 1/32 > 0.05/2: unreachable
