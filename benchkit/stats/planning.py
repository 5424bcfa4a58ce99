"""The planning figures of a comparison, of the test that decides it.

``mde_power80`` is the effect the deciding test detects 80% of the time on benches like this
one, whichever arm it favours, and ``seeds_needed`` the seeds at which the observed difference
would be that effect (a post-hoc figure: the observed difference is an estimate, so it is
labelled as such). Both are of the sign-flip test of the comparison's per-seed differences
(with a sweep, the binding paired test's, :mod:`benchkit.stats.selection`) for normal
differences whose sd is a one-sided 80% upper confidence bound of the observed sd
(:func:`planning_sd`: a few seeds' sd understates how new seeds vary, skewed ones the most).
With a sweep each side of the deciding test pits one arm, tuned on the other seeds, against
the other's fixed configs (helps: the idea tuned; harms: the comparator): the tuned arm pays
its tuning loss, one draw of it shared by the bench's seeds, so each side's figure adds its
bootstrapped mean to the effect and its spread to the sd (:func:`figures`); without it an
A/A bench's figure had a mean true power of 0.54-0.57 (docs/calibration.md,
benchmarks/calibration/planning_power.py). Under ``test="sign"`` or ``"wilcoxon"`` the
figures stay those of the mean test, and their names say so (``mde_power80_mean_test``,
``seeds_needed_mean_test``). numpy only; frozen records of plain values out.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from benchkit.codec import JsonRecord, as_json
from benchkit.stats import signflip

SD_CONFIDENCE = 0.8  # the sd bound: P(true sd <= bound) under normal differences
ASSUMPTION = ("planning figure: assumes normal per-seed differences whose sd is the one-sided "
              "80% upper confidence bound of the observed sd (the larger of the chi-square "
              "bound, n - 1 df, and Bonett's kurtosis-adjusted one), tested by the sign-flip "
              "test at the stated level")
MAX_SEEDS = 10000  # seeds_needed searches up to here (signflip.seeds_needed's max_n)
LOSS_ASSUMPTION = ("; with a sweep each side of the deciding test pits one arm, tuned on the "
                   "other seeds, against the other's fixed configs (helps: the idea tuned; "
                   "harms: the comparator), so the tuned arm's tuning loss (a bootstrap of its "
                   "selection on validation, the observed test means taken as true) is added: "
                   "its mean to the effect, its spread, shared by the seeds, to the sd; "
                   "mde_power80 is the larger side's figure")
POST_HOC = ("the observed delta_mean (post hoc: an estimate of the effect, not a planned "
            "target)")


@dataclass(frozen=True)
class PlanningBasis(JsonRecord):
    """A comparison's ``planning`` object: the level the figures are at, the fewest seeds that
    can reach it, the test they are of, what effect ``seeds_needed`` is for, the assumption,
    and, for a result that is not significant, the ``remedy``: what would let such a bench
    decide (:func:`remedy`). ``test`` and ``seeds_needed_for`` are None only in reports
    written before they were, ``remedy`` also where significant (absent from :meth:`to_json`
    then)."""

    level: float
    min_seeds: int
    test: str | None = field(default=None, kw_only=True, metadata=as_json(omit=True))
    seeds_needed_for: str | None = field(default=None, kw_only=True, metadata=as_json(omit=True))
    remedy: str | None = field(default=None, kw_only=True, metadata=as_json(omit=True))
    assumption: str = field(kw_only=True)


# the comparison's keys that hold the planning figures, in the report's order
KEYS = ("mde_power80", "seeds_needed", "mde_power80_mean_test", "seeds_needed_mean_test",
        "planning")


@dataclass(frozen=True)
class PlanningFigures:
    """The planning figures of a comparison: the effect the test detects 80% of the time
    (None where no effect is), the seeds that would detect the observed effect (None when
    significant) and their :class:`PlanningBasis`. ``of_mean_test``: the deciding test is another
    (sign, wilcoxon), so the figures are the mean test's and :meth:`to_json` names them so,
    with the deciding test's own figures null. Its JSON is written here, not generated: which
    keys it has depends on the deciding test."""

    mde_power80: float | None
    seeds_needed: int | None
    basis: PlanningBasis
    of_mean_test: bool = False
    JSON_KEYS: ClassVar[tuple[str, ...]] = KEYS   # inline in the comparison's object

    def to_json(self) -> dict[str, Any]:
        """The comparison's planning keys (a subset of :data:`KEYS`, in their order)."""
        if self.of_mean_test:
            return {"mde_power80": None, "seeds_needed": None,
                    "mde_power80_mean_test": self.mde_power80,
                    "seeds_needed_mean_test": self.seeds_needed, "planning": self.basis.to_json()}
        return {"mde_power80": self.mde_power80, "seeds_needed": self.seeds_needed,
                "planning": self.basis.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanningFigures:
        """The record of a comparison's planning keys (``data``: those of :data:`KEYS` it has),
        as :meth:`to_json` writes them; any other set of keys is refused."""
        if list(data) == ["mde_power80", "seeds_needed", "planning"]:
            return cls(data["mde_power80"], data["seeds_needed"],
                       PlanningBasis.from_json(data["planning"]))
        if (list(data) == list(KEYS) and data["mde_power80"] is None
                and data["seeds_needed"] is None):
            return cls(data["mde_power80_mean_test"], data["seeds_needed_mean_test"],
                       PlanningBasis.from_json(data["planning"]), of_mean_test=True)
        raise ValueError(f"a comparison's planning figures are {list(KEYS[:2] + KEYS[4:])} or, "
                         f"of the mean test under another, all of {list(KEYS)} with the first "
                         f"two null; got {dict(data)}")


def planning_sd(d: np.ndarray, confidence: float = SD_CONFIDENCE) -> float:
    """The one-sided ``confidence`` upper confidence bound of the sd of the differences ``d``:
    the larger of the normal-theory bound (:func:`chi_square_sd`: exact for normal
    differences) and Bonett's kurtosis-adjusted one (:func:`bonett_sd`: approximately right for
    skewed or heavy-tailed ones, where a few seeds' sd understates the sd the most); NaN below
    2 differences."""
    return max(chi_square_sd(d, confidence), bonett_sd(d, confidence))


def chi_square_sd(d: np.ndarray, confidence: float = SD_CONFIDENCE) -> float:
    """The normal-theory bound: sd * sqrt((n - 1) / chi2_{1 - confidence}(n - 1)); NaN below
    2 differences."""
    n = len(d)
    if n < 2:
        return math.nan
    from scipy import special  # scipy.stats.chi2.ppf's own formula: scipy.stats costs a
    # second to import in every session, scipy.special a third of that

    quantile = 2 * special.gammaincinv((n - 1) / 2, 1 - confidence)
    return float(np.std(d, ddof=1) * math.sqrt((n - 1) / quantile))


def bonett_sd(d: np.ndarray, confidence: float = SD_CONFIDENCE) -> float:
    """Bonett's (2006) upper bound of an sd that does not assume normal differences:
    sqrt(c s^2 exp(z se)), se = c sqrt((kurtosis - (n - 3) / n) / (n - 1)), c = n / (n - z),
    z the ``confidence`` normal quantile, the kurtosis n sum (d - m)^4 / (sum (d - mean)^2)^2
    about the mean trimmed by 1 / (2 sqrt(n - 4)) at each end (his small-sample choices).
    NaN below 5 differences (no trimmed mean), where the chi-square bound stands alone."""
    a = np.sort(np.asarray(d, dtype=float))
    n = len(a)
    if n < 5:
        return math.nan
    from scipy import special

    z = float(special.ndtri(confidence))
    cut = int(n / (2 * math.sqrt(n - 4)))  # as scipy.stats.trim_mean: int(proportion * n)
    m = float(a[cut:n - cut].mean())
    ss = float(np.sum((a - a.mean()) ** 2))
    if ss == 0:
        return 0.0
    kurtosis = n * float(np.sum((a - m) ** 4)) / ss ** 2
    c = n / (n - z)
    se = c * math.sqrt(max(kurtosis - (n - 3) / n, 0.0) / (n - 1))
    return math.sqrt(c * ss / (n - 1) * math.exp(z * se))


def figures(diffs: Any, delta: float, level: float, *, significant: bool,
            test: str = "mean", tuning_loss: np.ndarray | None = None,
            comparator_loss: np.ndarray | None = None,
            idea_better: bool = True) -> PlanningFigures:
    """The comparison's planning figures at ``level``: ``mde_power80``, ``seeds_needed`` (None
    when significant) and their :class:`PlanningBasis` (level, min_seeds, which test, the
    assumption, what effect seeds_needed is for, the remedy), of the sign-flip test of
    ``diffs`` at the sd bound of :func:`planning_sd`. With a sweep, draws of each side's tuning
    loss on benches of these seeds make them the deciding test's: ``tuning_loss``, the idea's
    (the helps side, :func:`benchkit.stats.selection.idea_tuning_loss`), and
    ``comparator_loss``, the comparator's (the harms side). A side's figure adds its loss's
    mean to the effect and its variance, one draw shared by the n seeds, to the sd as
    sqrt(sd^2 + n var); ``mde_power80`` is the larger side's (an effect of that size is
    detected 80% of the time whichever arm it favours), ``seeds_needed`` the side's that the
    observed difference is on (``idea_better``), both losses as they are at n seeds (more
    seeds select better: an upper figure). Empty or all-zero draws change nothing."""
    d = np.asarray(diffs, dtype=float)
    n, sd = len(d), planning_sd(d)
    sides = [_side(n, sd, draws) for draws in (tuning_loss, comparator_loss)]
    plain = signflip.mde_power80(n, sd, level)
    mdes = [None if m is None else loss + m
            for loss, side_sd in sides for m in [signflip.mde_power80(n, side_sd, level)]]
    mde = None if plain is None or None in mdes else max(m for m in mdes if m is not None)
    loss, side_sd = sides[0] if idea_better else sides[1]
    needed = None
    if not significant and abs(delta) > loss:
        needed = signflip.seeds_needed(abs(delta) - loss, side_sd, level, max_n=MAX_SEEDS)
    of_mean_test = test in ("sign", "wilcoxon")
    paid = any(side[0] for side in sides)
    name = ("intersection-union sign-flip test (its binding pair, with the tuned arm's tuning "
            "loss)" if paid else "sign-flip test")
    basis = PlanningBasis(level=level, min_seeds=signflip.min_pairs(level),
                          assumption=ASSUMPTION + (LOSS_ASSUMPTION if paid else ""),
                          test=("mean " if of_mean_test else "") + name,
                          seeds_needed_for=POST_HOC,
                          remedy=None if significant else remedy(
                              n, delta, level, needed, loss,
                              "idea" if idea_better else "comparator"))
    return PlanningFigures(mde, needed, basis, of_mean_test=of_mean_test)


def _side(n: int, sd: float, draws: np.ndarray | None) -> tuple[float, float]:
    """(the mean of a side's tuning loss ``draws``, the sd with their spread shared by the n
    seeds: sqrt(sd^2 + n var)); (0, sd) without any, or where every draw is 0."""
    loss = _loss(draws)
    if not loss or draws is None:
        return 0.0, sd
    return loss, math.sqrt(sd ** 2 + n * float(np.var(np.asarray(draws))))


def _loss(draws: np.ndarray | None) -> float:
    """The mean of the tuning loss ``draws`` (0 without any)."""
    return 0.0 if draws is None or len(draws) == 0 else float(np.mean(draws))


def remedy(n: int, delta: float, level: float, needed: int | None, loss: float = 0.0,
           tuned: str = "idea") -> str:
    """What would let a bench that did not decide decide, in words: the seeds at which any p
    can be below ``level``, else the seeds ``needed`` for the observed difference ``delta``,
    else why no seed count is enough: a zero difference, the ``tuned`` arm's mean tuning
    ``loss`` (at these seeds; the idea's on the helps side, the comparator's on the harms
    side) as large as the observed difference, or an effect too small for the noise."""
    first = signflip.min_pairs(level)
    if n < first:
        return (f"more seeds: at least {first} (with {n} no p can be below the level "
                f"{level:.4g})")
    if needed is not None:
        return f"more seeds: about {needed} (post hoc: for the observed difference)"
    if delta == 0 or not math.isfinite(delta):
        return ("none from more seeds: the observed difference is 0, so only a real effect "
                "(another idea) can be found")
    if loss >= abs(delta):
        gain = "its observed gain" if tuned == "idea" else "the idea's observed loss to it"
        return (f"give the {tuned} fewer configs, on an axis it uses: selecting among them on "
                f"validation costs it about {loss:.3g} on test with {n} seeds, as much as "
                f"{gain} ({abs(delta):.3g}); more seeds help only as far as they make "
                "validation pick its best config")
    return (f"none within {MAX_SEEDS} seeds: the observed difference ({abs(delta):.3g}) is "
            "too small for this noise; only a larger effect or a less noisy track helps")
