"""The tabular track's floors, pinned: a faster floor must give the same numbers up to float
round-off, never other numbers. The first pins were taken before issue 51's changes (kernel
ridge's solve, the floor cache, the background computation); issue 54 gave tabular a mixture
teacher and re-centred kernel ridge's and boosting's grids, so PINNED are the floors of that
data, computed at the commit that made the change (the floor code itself unchanged)."""
from __future__ import annotations

import numpy as np
import pytest

from benchkit.tracks import floors, tabular

PINNED = {  # float.hex() of tabular.floors(seed) on the 10,000 test rows (issue 54's teacher)
    0: {"mean": "0x1.27fc58bf9a3f3p+2", "linear": "0x1.56d52067555e7p+1",
        "quadratic": "0x1.5cce8837cb533p+0", "kernel ridge": "0x1.b625347c60996p-1",
        "boosted trees": "0x1.489a81c4de187p+0"},
    1: {"mean": "0x1.2bd8a4fc46b02p+2", "linear": "0x1.6153720faa22fp+1",
        "quadratic": "0x1.56709c1e6ade3p+0", "kernel ridge": "0x1.b99792ff67ec2p-1",
        "boosted trees": "0x1.54923e9aae330p+0"},
}


def assert_pinned(got: dict, pinned: dict) -> None:
    assert sorted(got) == sorted(pinned)
    for name, value in pinned.items():
        assert got[name] == pytest.approx(float.fromhex(value), rel=1e-10, abs=0), name


@pytest.mark.slow  # kernel ridge and boosted trees on two seeds: seconds each
@pytest.mark.parametrize("seed", sorted(PINNED))
def test_tabular_floors_are_the_pinned_values(seed):
    tabular.floors.cache_clear()
    assert_pinned(tabular.floors(seed), PINNED[seed])


def lu_kernel_ridge(x, y, xv, yv, xt, yt, gammas, penalties):
    """The reference: one LU solve of (K + lam n I) per pair of the grids (the code at 815e9d0)."""
    mu, sd = x.mean(axis=0), x.std(axis=0)
    a, v, t = ((z - mu) / sd for z in (x, xv, xt))
    centre = y.mean(axis=0)
    best = (np.inf, np.inf)
    for g in gammas:
        gamma = g / a.shape[1]

        def k(p, q):
            d = (p * p).sum(1)[:, None] + (q * q).sum(1)[None, :] - 2.0 * (p @ q.T)
            return np.exp(-gamma * np.maximum(d, 0.0))

        for lam in penalties:
            coef = np.linalg.solve(k(a, a) + lam * len(a) * np.eye(len(a)), y - centre)
            err = float(np.mean((k(v, a) @ coef + centre - yv) ** 2))
            if err < best[0]:
                best = (err, float(np.mean((k(t, a) @ coef + centre - yt) ** 2)))
    return best


@pytest.mark.parametrize("outputs", [1, 3])
def test_kernel_ridge_is_the_lu_solve_of_each_pair_up_to_round_off(outputs):
    rng = np.random.default_rng(outputs)
    x, xv, xt = (rng.normal(size=(n, 4)) for n in (300, 100, 100))
    w = rng.normal(size=(4, outputs))
    y, yv, yt = (np.tanh(z @ w) + 0.1 * rng.normal(size=(len(z), outputs)) for z in (x, xv, xt))
    gammas, penalties = (0.2, 0.4, 0.8), (3e-6, 1e-5, 3e-5, 1e-3)
    want = lu_kernel_ridge(x, y, xv, yv, xt, yt, gammas, penalties)
    got = floors.kernel_ridge(x, y, xv, yv, xt, yt, gammas=gammas, penalties=penalties)
    assert got == pytest.approx(want, rel=1e-9, abs=0)


def test_spd_solve_falls_back_to_lu_where_the_matrix_is_not_positive_definite():
    matrix = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    rhs = np.array([[1.0], [0.0]])
    assert np.allclose(floors.spd_solver()(matrix.copy(), rhs), np.linalg.solve(matrix, rhs))


def test_kernel_ridge_gives_the_same_bits_on_the_first_call_of_a_process():
    """scipy imported inside the thread limit escaped it (its OpenBLAS on every core): the
    first call of a process gave other bits than the next (fails without spd_solver's
    import before single_thread)."""
    import subprocess
    import sys

    code = """
import numpy as np
from benchkit.tracks import floors
rng = np.random.default_rng(0)
x, xv, xt = (rng.normal(size=(n, 6)) for n in (1500, 200, 200))
y, yv, yt = (np.tanh(z[:, :1] * z[:, 1:2]) for z in (x, xv, xt))
print([floors.kernel_ridge(x, y, xv, yv, xt, yt)[1].hex() for _ in range(2)])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    first, second = eval(out)
    assert first == second
