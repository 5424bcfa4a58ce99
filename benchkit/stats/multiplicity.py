"""False-discovery-rate adjustment of a family of p-values (the leaderboard's ``bh`` option;
the verdicts' family-wise adjustment is Holm's, :func:`benchkit.stats.paired.holm`).
numpy only; plain floats out."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from benchkit.stats.values import finite_array


def benjamini_hochberg(p_values: ArrayLike) -> list[float]:
    """Benjamini-Hochberg step-up adjusted p-values (q-values), in input order: sorted
    ascending, the k-th (1-based) of m gets min over j >= k of m * p_(j) / j, capped at 1.
    Rejecting q < alpha controls the false discovery rate at alpha for independent or
    positively dependent tests (not the family-wise error: Holm does that)."""
    p = finite_array(p_values, "p_values")
    m = len(p)
    order = np.argsort(p, kind="stable")
    q = m * p[order] / np.arange(1, m + 1)
    adj = np.minimum(1.0, np.minimum.accumulate(q[::-1])[::-1])
    out = np.empty(m)
    out[order] = adj
    return [float(x) for x in out]
