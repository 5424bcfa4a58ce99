"""Non-inferiority ("as good, but smaller") through the plugin, and atomic report writes."""
from __future__ import annotations

import json
import os

import pytest

from benchkit.store.atomic import write_atomic
from idea_modules import arm, idea_module
from sessions import assert_gate_exits, validate_report

def ni_module(extra: str) -> str:
    """The idea's ``run.fit`` given ``extra`` arguments, at a 5% margin."""
    return idea_module("ni", arm("baseline"), arm("idea", f"run.fit(run.track.model(){extra})"),
                       grid={"lr": [1e-2], "epochs": [1]}, seeds=6, margin=0.05)


@pytest.mark.parametrize("extra, verdict, exits", [
    ("", "non-inferior", {"non-inferior": 0, "helps": 1}),
    (", lr=1e-6", "harms", {"non-inferior": 1, "not-harms": 1}),   # an untrained idea
], ids=["same-as-baseline", "untrained"])
def test_margin_gives_a_non_inferior_verdict_and_gate(pytester, extra, verdict, exits):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_ni=ni_module(extra))
    # epochs in the grid, not --bench-epochs: an override session is exploratory
    assert_gate_exits(pytester, "ni", exits)
    report = validate_report(pytester.path / "reports/ni/tabular/bench_report.json")
    assert report["practical_verdict"] == verdict
    ni = report["comparison"]["noninferiority"]
    assert ni["margin_rel"] == 0.05
    assert ni["non_inferior"] is (verdict == "non-inferior")


def test_a_failed_write_leaves_the_old_report_whole(tmp_path, monkeypatch):
    path = tmp_path / "bench_report.json"
    write_atomic(path, json.dumps({"old": True}))

    def killed(src, dst):
        raise KeyboardInterrupt  # the process dies between writing and renaming
    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, json.dumps({"new": True}) * 1000)
    assert json.loads(path.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["bench_report.json"]  # no temp file left


# ------------------------------------------------------------ the test, by simulation
from benchkit.stats import paired  # noqa: E402
from benchkit.verdict import decision  # noqa: E402
import numpy as np  # noqa: E402

BENCHES = 2000


def _ni_rate(rng, n, *, base_mean, base_sd, idea_scale, noise_sd, margin=0.05,
             level=0.05, direction="lower"):
    """Fraction of simulated benches the non-inferiority test passes."""
    hits = 0
    for _ in range(BENCHES):
        b = rng.normal(base_mean, base_sd, n)
        i = idea_scale * b + rng.normal(0.0, noise_sd * np.abs(b), n)  # heteroscedastic noise
        if direction == "higher":
            i = (2 - idea_scale) * b + rng.normal(0.0, noise_sd * np.abs(b), n)
        hits += paired.noninferiority(b, i, direction=direction, margin=margin,
                                     alpha=level).non_inferior
    return hits / BENCHES


@pytest.mark.parametrize("direction", ["lower", "higher"])
@pytest.mark.parametrize("base_sd", [0.05, 0.4])   # the relative margin varies with the seed
def test_at_the_margin_the_test_passes_at_most_alpha(direction, base_sd):
    """An idea exactly (1 + margin) times the baseline on every seed in expectation: the
    relative margin is not a known constant (D4), yet the false 'non-inferior' rate stays
    within alpha + 2 SE."""
    rng = np.random.default_rng(17 if direction == "lower" else 18)
    rate = _ni_rate(rng, 8, base_mean=1.0, base_sd=base_sd, idea_scale=1.05,
                    noise_sd=0.03, direction=direction)
    se = np.sqrt(0.05 * 0.95 / BENCHES)
    assert rate <= 0.05 + 2 * se, rate


def test_at_the_look_level_not_alpha():
    """D2: at look 1 of (8, 16) the level is 0.031, and the rate follows it."""
    level = paired.look_levels([8], 16, 0.05)[0]
    rate = _ni_rate(np.random.default_rng(19), 8, base_mean=1.0, base_sd=0.1,
                    idea_scale=1.05, noise_sd=0.03, level=level)
    assert rate <= level + 2 * np.sqrt(level * (1 - level) / BENCHES), rate


@pytest.mark.slow
def test_a_small_harm_within_the_margin_passes_more_often_with_more_seeds():
    """D3: an idea 1% worse with a 5% margin: more seeds make it pass more often, and the
    verdict is non-inferior even where the harm is also significant."""
    rates = [_ni_rate(np.random.default_rng(20 + n), n, base_mean=1.0, base_sd=0.1,
                      idea_scale=1.01, noise_sd=0.04) for n in (6, 8, 12)]
    assert rates[0] < rates[1] < rates[2], rates
    assert decision.practical_verdict(0.001, +0.01, "lower", 0.05, non_inferior=True) == \
        "non-inferior"
    assert decision.practical_verdict(0.001, +0.01, "lower", 0.05, non_inferior=False) == "harms"


def test_one_sided_sign_flip_p_matches_enumeration():
    w = np.array([-0.3, -0.1, 0.2, -0.4, -0.2, 0.05])
    sums = [np.dot(s, w) for s in np.array(np.meshgrid(*[[1, -1]] * 6)).T.reshape(-1, 6)]
    assert paired.one_sided_sign_flip_p(w) == pytest.approx(np.mean(np.array(sums) <= w.sum()
                                                                   + 1e-12))
