"""A small deterministic version of benchmarks/calibration/calibration.py (6 seed blocks of 6 seeds,
1 epoch, the tabular track's 3-config grid): identical init streams must give exactly zero
differences, different init streams a real (nonzero, not all significant) null, and a large
injected effect must be detected. Fails if pairing (same data, order and init per seed) or
validation selection breaks."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from benchkit import tracks

ROOT = Path(__file__).resolve().parents[2]
BLOCKS, SEEDS, EPOCHS, ALPHA = 6, 6, 1, 0.05
LARGE_SD = 1.0  # injected noise sd: raises the idea's expected test MSE by 1.0


def _load_calibration():
    spec = importlib.util.spec_from_file_location(
        "benchkit_calibration", ROOT / "benchmarks" / "calibration" / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cal = _load_calibration()
# benchmarks/calibration/ is on sys.path once calibration.py is loaded
import calibration_doc  # noqa: E402
import calibration_sim as sim  # noqa: E402
import calibration_summary  # noqa: E402

TRACK = tracks.get("tabular")
GRID = [{"lr": 1e-3}, {"lr": 3e-3}, {"lr": 1e-2}]  # the grid the documented calibration ran on
#                                                      (docs/calibration.md), not the default


def _seeds(b: int) -> list[int]:
    return list(range(SEEDS * b, SEEDS * (b + 1)))


@pytest.fixture(scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def null_blocks(one_thread):
    return [cal.run_block(TRACK, _seeds(b), GRID, EPOCHS) for b in range(BLOCKS)]


@pytest.fixture(scope="module")
def analysed(null_blocks):
    return [cal.analyse_block(blk, TRACK, alpha=ALPHA, noise_sd=[0.0, LARGE_SD])
            for blk in null_blocks]


@pytest.mark.slow
def test_identical_init_streams_give_exactly_zero_diffs(one_thread):
    for b in range(BLOCKS):
        blk = cal.run_block(TRACK, _seeds(b), GRID, EPOCHS, same_stream=True)
        for k in range(len(GRID)):
            assert blk["idea"]["val"][k] == blk["baseline"]["val"][k], (b, GRID[k])
            assert blk["idea"]["test"][k] == blk["baseline"]["test"][k], (b, GRID[k])
        res = cal.analyse_block(blk, TRACK, alpha=ALPHA, noise_sd=[])
        assert res["selected"]["idea"] == res["selected"]["baseline"]
        assert res["diffs"] == [0.0] * SEEDS and res["p"] == 1.0
        assert res["p_by_config"] == [1.0] * len(GRID)


@pytest.mark.slow
def test_different_init_streams_give_a_real_null(null_blocks, analysed):
    for blk, res in zip(null_blocks, analysed):
        assert not res.get("incomplete")
        for k in range(len(GRID)):  # every run differs from its pair: the init did change
            diffs = np.subtract(blk["idea"]["test"][k], blk["baseline"]["test"][k])
            assert np.all(diffs != 0), (blk["seeds"], GRID[k])
            assert all(map(math.isfinite, blk["baseline"]["test"][k] + blk["idea"]["test"][k]))
        # each arm's config is its best validation mean (never chosen on test)
        for arm in ("baseline", "idea"):
            means = [np.mean(v) for v in blk[arm]["val"]]
            assert res["selected"][arm] == int(np.argmin(means))
            assert blk[arm]["val"] != blk[arm]["test"]
    p = np.array([r["p"] for r in analysed])
    # under H0 each block rejects with probability 1/32: 3 or more of 6 would be a 1e-3 event
    assert np.sum(p < ALPHA) <= 2, p
    assert np.max(p) >= 0.25, p
    assert all(p_ == pytest.approx(cal.paired.sign_flip_p_value(r["diffs"]))
               for p_, r in zip(p, analysed))


@pytest.mark.slow
def test_predictions_are_the_evaluated_ones(null_blocks):
    blk = null_blocks[0]
    for k in range(len(GRID)):
        for seed, pred, test in zip(blk["seeds"], blk["idea"]["pred"][k], blk["idea"]["test"][k]):
            y = TRACK.data(seed).test.y.double().numpy().reshape(-1)
            assert np.mean((pred - y) ** 2) == pytest.approx(test, rel=1e-5)


def test_injected_effect(analysed):
    for res in analysed:
        zero, large = res["power"]
        # zero noise is the null comparison again (recomputed in float64: same p)
        assert zero["p"] == res["p"]
        np.testing.assert_allclose(zero["diffs"], res["diffs"], rtol=1e-5, atol=1e-6)
        assert large["delta"] > 0.5  # expected +1.0 in MSE
    detected = sum(r["power"][1]["verdict"] == "idea worse (significant)" for r in analysed)
    assert detected >= BLOCKS - 1, [r["power"][1]["diffs"] for r in analysed]


def test_selection_follows_validation_not_test():
    # synthetic block: validation prefers config 1 for the baseline and 0 for the idea;
    # test would prefer the opposite. The comparison must use the validation choices.
    seeds = [0, 1, 2, 3, 4, 5]
    n_test = len(TRACK.data(0).test)
    blk = {"seeds": seeds, "grid": GRID[:2],
           "baseline": {"val": [[2.0] * 6, [1.0] * 6], "test": [[0.5] * 6, [3.0] * 6]},
           "idea": {"val": [[1.0] * 6, [2.0] * 6], "test": [[3.0] * 6, [0.5] * 6],
                    "pred": [[np.zeros(n_test)] * 6] * 2}}
    res = cal.analyse_block(blk, TRACK, alpha=ALPHA, noise_sd=[])
    assert res["selected"] == {"baseline": 1, "idea": 0}
    assert res["diffs"] == [0.0] * 6  # 3.0 - 3.0: the test-selected pair would give 0.0 too...
    blk["idea"]["test"][0] = [2.0] * 6  # ...so make the validation-selected pair differ
    res = cal.analyse_block(blk, TRACK, alpha=ALPHA, noise_sd=[])
    assert res["diffs"] == [-1.0] * 6 and res["verdict"] == "idea better (significant)"
    # a diverged config is not eligible; an arm with no eligible config gets no verdict
    blk["idea"]["val"][0][3] = math.nan
    assert cal.analyse_block(blk, TRACK, alpha=ALPHA, noise_sd=[])["selected"]["idea"] == 1
    blk["idea"]["val"][1][0] = math.nan
    assert cal.analyse_block(blk, TRACK, alpha=ALPHA, noise_sd=[]).get("incomplete")


def test_summary_of_the_small_run(analysed):
    s = calibration_summary.summarize(analysed, alpha=ALPHA, n_seeds=SEEDS, grid=GRID,
                                      n_test=len(TRACK.data(0).test), sim_reps=2000)
    assert s["complete_blocks"] == BLOCKS
    assert s["fpr"]["expected_exact"] == 2.0 ** -5  # 6 seeds: only p = 1/32 is below 0.05
    lo, hi = s["fpr"]["selected"]["ci95"]
    assert 0.0 <= lo <= s["fpr"]["selected"]["rate"] <= hi <= 1.0
    assert s["null_diffs"]["exact_zeros"] == 0
    large = s["power"][1]
    assert large["delta_true"] == LARGE_SD ** 2
    assert large["predicted_sign_flip_normal"] > 0.9 and large["predicted_t"] > 0.9


# ------------------------------------------------ docs/calibration.md is rendered from the JSON

def test_the_committed_document_is_the_rendering_of_the_committed_json():
    """docs/calibration.md is `calibration.py --doc`'s output: a hand edit, or a JSON file
    rewritten without re-rendering, fails here (re-render with `calibration.py --doc`)."""
    rendered = calibration_doc.render(calibration_doc.load())
    assert calibration_doc.DOC.read_text() == rendered


def test_the_document_reads_its_numbers_from_the_json():
    data = calibration_doc.load()
    data["runs"][0]["summary"]["fpr"]["selected"]["k"] = 9
    data["sequential"]["conditions"]["normal, H0"]["union"]["rate"] = 0.0123
    text = calibration_doc.render(data)
    assert "| 9/200 = 0.045 [" in text and "**14/400 = 0.035 [" in text
    assert "| normal, H0 | 0.0123 [" in text


def test_the_statistics_code_path_at_tiny_reps():
    """`calibration.py --statistics`'s simulations (minus the planning figures, which take
    tens of seconds) at a few benches each: deterministic, the interval agrees with p, and
    the renderer turns them into its sections."""
    look1 = cal.paired.look_levels([8, 16], 16, 0.05)[0]
    iv = sim.interval_statistics(12, look1)
    again = sim.interval_statistics(12, look1)
    assert iv == again
    assert iv["agreement"]["benches"] == 12
    assert sum(iv["agreement"]["disagreements"].values()) == 0
    for row in iv["coverage"]:
        assert row["signflip_ci_disagrees_with_p"]["k"] == 0
        assert 0.9 < row["exact_coverage"] < 1 and row["covered"]["n"] == 12
    st = {"sim_reps": 30, "look1_level": look1, "interval": iv,
          "spending": sim.spending_statistics(30),
          "margins": {"noninferiority_at_margin": sim.noninferiority_at_margin(30, look1),
                      "harm_within_margin": sim.harm_within_margin(6, seeds=(8, 12)),
                      "tost_at_margin": sim.tost_at_margin(30)}}
    assert st["margins"]["tost_at_margin"] == sim.tost_at_margin(30)
    for key in ("interval", "spending", "margins"):
        st[key]["seconds"] = 0.0
    assert [r["level"] for r in st["margins"]["noninferiority_at_margin"]] == \
        [0.05, 0.05, look1, 0.05, 0.05]
    assert all(r["non_inferior"]["n"] == 30 for r in st["margins"]["noninferiority_at_margin"])
    text = "\n".join([calibration_doc.spending_section(st), calibration_doc.interval_section(st),
                      calibration_doc.margins_section(st)])
    assert "disagreed in: 0 at level 0.05, 0 at level 0.01, 0 at level 0.03101" in text
    assert "| 8 | 5% worse | " in text and "| higher | 8 | 0.05 | 0.05 | " in text
