"""The words for a null ``mechanism_ok`` say why it is null: no evidence stated at all, only
mechanism tests (which check the method, not the trained model), or signatures without a null."""
from __future__ import annotations

from builders import as_report

from benchkit.report.sentences import mechanism_sentence


def report(tests=(), signatures=None) -> dict:
    return {"mechanism_ok": None,
            "math_verification": {"tests": [{"test": f"m::t{k}", "outcome": o, "message": None}
                                            for k, o in enumerate(tests)]},
            "mechanism_signature": {"signatures": signatures or {}}}


def test_mechanism_tests_alone_are_no_evidence_from_the_trained_runs():
    said = mechanism_sentence(as_report(report(tests=("passed", "passed", "skipped"))))
    assert said.startswith("no mechanism evidence from the trained runs: 2 of 2 mechanism")
    assert "check the method, not the trained model" in said


def test_a_signature_without_a_null_and_no_evidence_at_all_are_told_apart():
    said = mechanism_sentence(as_report(report(signatures={"residual": {
        "prediction": None, "predicted": 0.0, "tol": 0.1, "observed": 0.0, "per_seed": [0.0],
        "confirmed": True, "status": "no_null", "discriminating": None, "null_per_seed": []}})))
    assert said == ("no mechanism evidence from the trained runs: signature(s) residual have no "
                    "null to discriminate against")
    assert mechanism_sentence(as_report(report())) == ("no mechanism evidence: the idea states no "
                                            "signature and no mechanism test")


def test_a_harm_is_stated_with_the_p_it_was_decided_on():
    """harms rests on Holm over every comparison (p_adjusted_harms); the track's helps p
    (p_adjusted, the largest over comparators) can be far larger and must not be the one
    quoted as '< level'."""
    from benchkit.report.sentences import practical_sentence
    from builders import make_report

    report = make_report(effect=0.6, seeds=8)
    assert report["practical_verdict"] == "harms", report["comparison"]["p_value"]
    report["comparison"].update(p_adjusted=0.140625, p_adjusted_harms=0.0234375)
    sentence = practical_sentence(as_report(report))
    assert "p = 0.0234 (Holm over every comparison of the idea) < level 0.05" in sentence
    assert "0.141" not in sentence


def test_a_non_inferior_comparison_without_a_level_is_still_put_in_words():
    """A comparison that names neither its look's level nor alpha (a hand-edited or partial
    report) gets its sentence, not a TypeError from comparing p with None."""
    from benchkit.report.sentences import practical_sentence

    comp = {"n_pairs": 8, "p_value": 0.3, "delta_mean": 0.01, "per_seed_diffs": [0.01] * 8,
            "mde": 0.02, "mde_rel_pct": 2.0,
            "level": None, "p_adjusted": None, "p_adjusted_harms": None,
            "noninferiority": {"margin_rel": 0.05, "margin_abs": None, "bound": None,
                               "p_value": 0.01, "non_inferior": True}}
    sentence = practical_sentence(as_report({"practical_verdict": "non-inferior",
                                             "comparison": comp,
                                   "baseline": {"full": {"mean": 1.0}}}))
    assert sentence.startswith("not significantly better at level ")
    assert "but shown to be worse by less than the margin of 5%" in sentence


def test_a_failing_signature_is_said_with_its_values_its_prediction_and_the_seeds_within():
    """mechanism_ok 0 names what failed and by how much in the summary's words (issue 54: the
    moment-preserving report said only the signature's name, not that 0.74-0.88 of the
    states kept their moments where at least 0.95 was predicted)."""
    signature = {"prediction": "at least 95% of states keep their moments", "predicted": 1.0,
                 "tol": 0.05, "observed": 0.7358, "per_seed": [0.7758, 0.7358, 0.8775, None],
                 "confirmed": False, "status": "not confirmed", "discriminating": True,
                 "null_per_seed": [0.0] * 4}
    made = report(signatures={"moments_kept_fraction": signature})
    made.update(mechanism_ok=0, n_seeds=4)
    said = mechanism_sentence(as_report(made))
    assert said == ("mechanism not confirmed: signature(s) not confirmed: moments_kept_fraction "
                    "0.7358 to 0.8775 over 3 seeds where 1 ± 0.05 was predicted (0 of 3 within; "
                    "not recorded on 1): \"at least 95% of states keep their moments\" does not "
                    "hold")
    # on a frontier a signature has a value per seed and point: runs, and some may be within
    made.update(n_seeds=2)
    signature["per_seed"] = [0.99, 0.7358, 0.8775, 0.98]
    said = mechanism_sentence(as_report(made))
    assert "0.7358 to 0.99 over 4 runs where" in said and "(2 of 4 within)" in said
    assert said.endswith("does not hold on every run")
