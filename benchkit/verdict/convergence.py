"""Is training over? Per-run validation curves, the "still improving" flag and its budget check.

``run.fit``'s standard loop takes the validation metric after the epochs of
:func:`benchkit.training.loop.curve_epochs` (a quarter, a half, three quarters and all of training,
deduplicated) and stores them as the run's ``curve``: ``[{"epoch": e, "val": v}, ...]``, one batched
forward each. An arm with its own loop (``run.batches``/``run.record``) has no curve.

The report's ``convergence`` section states the track's declaration (``Track.budget``:
``convergence``, its epochs aim at a trained-out model, or ``fixed``, a stated budget) and,
per arm, the median across seeds of the relative validation improvement over the last quarter
of training at the selected config, direction-aware (positive = better at the end). More than
:data:`STILL_IMPROVING` flags the arm: its comparison is at a budget where it was still learning,
which a report must say whatever the track declares.

The last quarter is a screen, and under a decaying schedule (cosine, linear) a blind one: the
learning rate is near zero there, so an under-trained run barely moves (tabular at 8 cosine
epochs: 0.8% over the last quarter, 17% better at 12 epochs), and the annealing alone can show
a trained-out run gaining a few percent. So on a track that declares its epochs trained out
(budget ``convergence``), each arm's selected config gets a **budget check** when the schedule
decays or the screen flags it: the config trained :data:`BUDGET_FACTOR` times the epochs (cfg
``epochs``), and each seed's relative validation gain over the selected run. The check is a
sequential three-way decision on the median gain (:func:`benchkit.stats.sequential.three_way`):
on :data:`CHECK_LOOKS` [0] of the bench's seeds, in the order it draws from its name and track
(:func:`check_order`), then :data:`CHECK_LOOKS` [1] only while undetermined, "still improving"
when every gain of the look and the one-sided t lower bound of their mean at
:data:`CHECK_LEVEL` are above the threshold, "trained out" when every gain and the upper bound
are below it less :func:`check_allowance` (validation chose the config on these very runs, so
they were luckier than longer runs of the same seeds), "undetermined" after the last look. Each
error is at most 1/8 whatever the gains' distribution, under 0.05 a look for normal gains
(docs/statistics.md). The second look is cut to what the bench affords (:func:`check_looks`):
an arm's check runs train at most :data:`CHECK_COST` of the epochs of its grid, so the checks
of every arm together stay within that share of the bench's. An arm whose runs do not train the
track's epochs (its own loop, its own epochs) gets no check: nothing shows that it would train
the check's. The config checked is the one selected at the bench's epochs, not one re-selected
at the longer budget: the question is whether the comparison that decided was made while its
arms were still learning, and re-selecting would train the whole grid again. Like the edge
extension, the check is a pure function of the runs: a session trains the checks its stored
runs call for (:mod:`benchkit.verdict.grids`), and until it has, the report says how to settle
it.
Pure Python: no torch.
"""
from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from benchkit import tracks
from benchkit.spec.idea import Config, cfg_id
from benchkit.spec.run_record import CurvePoint, RunResult
from benchkit.stats import sequential
from benchkit.verdict.sections import ArmConvergence, BudgetCheck, Convergence

Runs = Sequence[RunResult]                  # an arm's run results at one config, seed by seed
CheckRuns = Sequence[RunResult | None]      # a budget check's results, seed by seed (None: missing)


@dataclass(frozen=True)
class SelectedRuns:
    """An arm's selected config and its runs' results there, seed by seed, and the validation
    values its grid's configs were selected among, config by config, seed by seed (None:
    missing or diverged; empty: unknown, no allowance for the selection's luck)."""

    cfg: Config
    results: tuple[RunResult, ...]
    grid_vals: tuple[tuple[float | None, ...], ...] = ()

STILL_IMPROVING = 0.01  # a relative validation gain over the last quarter above this flags
BUDGET_FACTOR = 1.5     # a flagged arm's budget check trains ceil(1.5 x its epochs)
BUDGETS = ("convergence", "fixed")
DECAYING = ("cosine", "linear")  # schedules whose last quarter anneals: the screen is blind
CHECK_LOOKS = (3, 5)    # the check's looks: 3 of its drawn seeds, then 5 while undetermined
CHECK_COST = 0.2        # an arm's check runs train at most this share of its grid's epochs
CHECK_LEVEL = 0.05      # each look's one-sided t level per side; the sign condition: <= 1/8
DECISIONS = {"above": "still improving", "below": "trained out"}


def last_quarter_gain(curve: Sequence[CurvePoint] | None, direction: str) -> float | None:
    """Relative improvement of validation from the 3/4 point to the end of ``curve``
    (positive = better), or None when the curve has no 3/4 point before its end (fewer than 2
    epochs) or a value there is missing or zero."""
    if not curve:
        return None
    points = {p.epoch: p.val for p in curve}
    end = max(points)
    start = max(1, math.floor(0.75 * end))
    before, after = points.get(start), points[end]
    if start == end or before is None or after is None or before == 0:
        return None
    gain = (before - after) if direction == "lower" else (after - before)
    return float(gain / abs(before))


def median_gain(runs: Runs, direction: str) -> tuple[float | None, int]:
    """Median last-quarter gain over the runs with one, and how many had one."""
    gains = [g for g in (last_quarter_gain(r.curve, direction) for r in runs)
             if g is not None]
    return (statistics.median(gains) if gains else None), len(gains)


def check_cfg(cfg: Config, epochs: int) -> Config:
    """The budget check's config: ``cfg`` trained ceil(BUDGET_FACTOR x) its epochs (``cfg``'s
    own ``epochs`` when it has one, else the track's ``epochs``). Keys sorted, as every cfg
    is once it has crossed JSON (payloads, specs): the check's run is found by its cfg's id."""
    return dict(sorted({**cfg, "epochs": math.ceil(BUDGET_FACTOR * int(cfg.get("epochs", epochs)))
                        }.items()))


def checked(track: str, schedule: str | None) -> tuple[bool, bool]:
    """(whether the track's arms get budget checks at all, whether every arm does): checks
    verify a ``convergence`` declaration; under a decaying schedule the screen says nothing,
    so every arm is checked, otherwise only the flagged ones."""
    return declaration(track)[0] == "convergence", schedule in DECAYING


def checks_called_for(selected: Mapping[str, SelectedRuns], direction: str, epochs: int, *,
                      every: bool, threshold: float = STILL_IMPROVING) -> dict[str, Config]:
    """arm -> its budget check's config, for every arm (``every``) or each flagged one; never
    an arm without curves or whose curves do not end at its config's epochs (its own loop or
    its own epochs: nothing shows that it would train the check's)."""
    calls = {}
    for arm, chosen in selected.items():
        median, _ = median_gain(chosen.results, direction)
        if (median is not None and (every or median > threshold)
                and trains_the_epochs(chosen.results, int(chosen.cfg.get("epochs", epochs)))):
            calls[arm] = check_cfg(chosen.cfg, epochs)
    return calls


def trains_the_epochs(runs: Runs, epochs: int) -> bool:
    """Whether every run's curve ends at ``epochs`` (the config's): an arm that sets its own
    epochs would not train the check's either, so it gets none."""
    ends = [max(p.epoch for p in r.curve) for r in runs if r.curve]
    return bool(ends) and all(e == epochs for e in ends)


def check_order(seeds: Sequence[int], bench: str, track: str) -> list[int]:
    """The bench's ``seeds`` in the order its budget checks train them (a look of k seeds takes
    the first k): sorted by a hash of the bench's name, its track and the seed, so each bench
    draws its own checked seeds (benches that reuse a baseline do not all inherit one draw)
    and every session of a bench, shard or rerun, draws the same ones."""
    return sorted(seeds, key=lambda s: hashlib.sha256(
        f"{bench}\0{track}\0{int(s)}".encode()).digest())


def check_gains(runs: Runs, longer: CheckRuns, direction: str,
                epochs: int) -> list[float | None]:
    """Per seed, the check's relative validation gain over the selected run: None while its
    check run is missing, NaN when it cannot be measured (see :func:`budget_gain`)."""
    out: list[float | None] = []
    for r, x in zip(runs, longer):
        if x is None:
            out.append(None)
        else:
            g = budget_gain(r, x, direction, epochs)
            out.append(math.nan if g is None else g)
    return out


def check_looks(configs: int, seeds: int) -> tuple[int, ...]:
    """The budget check's looks on a bench whose arms train ``configs`` x ``seeds`` runs:
    :data:`CHECK_LOOKS`, the second cut to the most check runs (each :data:`BUDGET_FACTOR`
    times the epochs) within :data:`CHECK_COST` of the arm's grid epochs, and dropped when
    that is no more than the first; the first always (fewer seeds bound nothing)."""
    first, second = CHECK_LOOKS
    affordable = math.floor(round(CHECK_COST * configs * seeds / BUDGET_FACTOR, 9))
    second = min(second, affordable, seeds)
    return (first, second) if second > first else (first,)


def check_decision(runs: Runs, longer: CheckRuns, direction: str, epochs: int,
                   threshold: float = STILL_IMPROVING, *, configs: int,
                   allowance: float = 0.0) -> sequential.ThreeWay:
    """The budget check's sequential three-way decision on the per-seed gains (one per seed
    of ``runs``), at the looks a grid of ``configs`` configs affords (:func:`check_looks`);
    "trained out" below ``threshold - allowance`` (:func:`check_allowance`)."""
    return sequential.three_way(check_gains(runs, longer, direction, epochs), threshold,
                                looks=check_looks(configs, len(runs)), level=CHECK_LEVEL,
                                below=threshold - allowance)


def check_allowance(grid_vals: Sequence[Sequence[float | None]]) -> float:
    """How far the selected runs' luck can pull the check's gains down, relative to the
    validation values: validation chose the config among the grid's on these very runs, so
    they were luckier than a longer run of the same seed (at most
    :func:`benchkit.stats.sequential.selection_luck` of the configs with every seed's value,
    over their mean absolute value). 0 with fewer than two such configs."""
    rows = [[v for v in row if v is not None] for row in grid_vals]
    rows = [row for row, full in zip(rows, grid_vals)
            if len(row) == len(full) and all(math.isfinite(v) for v in row)]
    scale = statistics.fmean(abs(v) for row in rows for v in row) if rows else 0.0
    if len(rows) < 2 or not scale:
        return 0.0
    return sequential.selection_luck(rows) / scale


def budget_gain(run: RunResult | None, longer: RunResult | None, direction: str,
                epochs: int) -> float | None:
    """Relative validation gain of ``longer`` (the check's run, ``epochs`` long) over ``run``
    (positive = better); None when either is missing or not finite, or when ``longer`` did not
    train ``epochs`` (an arm that sets its own epochs cannot be lengthened)."""
    if run is None or longer is None:
        return None
    before, after = run.val, longer.val
    curve = longer.curve or ()
    if (not curve or max(p.epoch for p in curve) != epochs or before is None
            or after is None or not all(isinstance(v, (int, float)) and math.isfinite(v) and v
                                        for v in (before, after))):
        return None
    gain = (before - after) if direction == "lower" else (after - before)
    return float(gain / abs(before))


def section(track: str, selected: Mapping[str, SelectedRuns], direction: str,
            threshold: float = STILL_IMPROVING, *, epochs: int | None = None,
            schedule: str | None = None, longer: Callable[[str, Config], CheckRuns] | None = None,
            configs: int | None = None, seeds: Sequence[int] | None = None,
            bench: str | None = None) -> tuple[Convergence, list[str]]:
    """The report's ``convergence`` field and its warnings. ``selected``: arm -> its selected
    config and its runs' results there (one per seed). ``longer(arm, cfg)``: the results of a
    budget check config, seed by seed (None where missing); without it (or ``epochs``) no check is
    called for (a frontier, an exploratory session); with it, ``configs`` (the grid's
    configs per arm) sets the check's looks (:func:`check_looks`). ``schedule``: the
    track's. ``seeds`` (the bench's, as the runs are ordered) and ``bench`` (its name): the
    check takes them in :func:`check_order`; without them, in the runs' order."""
    budget, reason = declaration(track)
    arms: dict[str, ArmConvergence] = {}
    warnings: list[str] = []
    on, every = checked(track, schedule)
    calls = (checks_called_for(selected, direction, epochs, every=every, threshold=threshold)
             if on and longer is not None and epochs is not None else {})
    ids = None if seeds is None or bench is None else check_order(seeds, bench, track)
    for arm, chosen in selected.items():
        median, n = median_gain(chosen.results, direction)
        check = None
        if arm in calls and longer is not None:
            order = (range(len(chosen.results)) if ids is None or seeds is None
                     else [list(seeds).index(s) for s in ids])
            got = list(longer(arm, calls[arm]))
            check = _check([chosen.results[i] for i in order], calls[arm],
                           [got[i] for i in order], direction, threshold, configs, ids,
                           check_allowance(chosen.grid_vals))
        flagged: bool | None = median is not None and median > threshold
        if check is not None and check.decision in ("still improving", "trained out"):
            flagged = check.decision == "still improving"
        elif check is not None and check.decision == "undetermined":
            flagged = None
        arms[arm] = ArmConvergence(cfg=chosen.cfg, last_quarter_gain=median, seeds=n,
                                   still_improving=flagged, budget_check=check)
        name = f"the {arm}'s selected config {cfg_id(chosen.cfg)}"
        if check is not None and check.pending and not flagged:
            warnings.append(
                f"budget check pending: {name} has not been trained for {check.epochs} "
                f"epochs on the {check.called_seeds} seeds it checks{_seed_list(check)} yet; "
                f"under the {schedule} "
                "schedule the last quarter cannot show whether training was over: run the "
                "bench again to train it (stored runs are reused)")
        if flagged is None and check is not None:
            warnings.append(
                f"budget check undetermined: {name} trained {check.epochs} epochs gained "
                f"{_pct(check.gain)} on validation (mean of {check.seeds} seeds, one-sided "
                f"{_confidence(check.level)} bounds {_pct(check.lower)} to "
                f"{_pct(check.upper)}, threshold {threshold:.0%}{_below(check, threshold)}): "
                "whether it was still improving is not settled by the check's seeds (a "
                "decision needs every seed and the bound on one side)")
        if flagged:
            warnings.append(
                f"still improving: {name} gained "
                f"{_pct(median)} on validation over the last quarter of training (median of "
                f"{n} seeds; threshold {threshold:.0%}){_check_words(check)}; the track's "
                f"epochs are {'a fixed budget' if budget == 'fixed' else 'meant to converge'}")
    return Convergence(budget=budget, budget_reason=reason, threshold=threshold,
                       budget_factor=BUDGET_FACTOR, arms=arms), warnings


def _below(check: BudgetCheck, threshold: float) -> str:
    """Where "trained out" starts when the selection's luck moved it (its allowance)."""
    if not check.allowance:
        return ""
    return f", trained out below {_pct(threshold - check.allowance)} for the selection's luck"


def _seed_list(check: BudgetCheck) -> str:
    return f" ({', '.join(map(str, check.checked))})" if check.checked else ""


def _pct(x: float | None) -> str:
    return "?" if x is None else f"{x:.1%}"


def _confidence(level: float | None) -> str:
    """A one-sided bound's confidence, ``1 - level`` (None: a check written before it had one)."""
    return "?" if level is None else f"{1 - level:.0%}"


def _check(runs: Runs, cfg: Config, longer: CheckRuns, direction: str, threshold: float,
           configs: int | None, ids: Sequence[int] | None, allowance: float) -> BudgetCheck:
    """An arm's ``budget_check`` field: its config and epochs, the sequential decision, the
    mean gain and its bounds at the look that decided, and the per-seed gains so far, of the
    runs in check order (``ids``: their seeds, None when the order is the runs')."""
    if configs is None:
        raise ValueError("a budget check needs the grid's configs per arm (configs=)")
    decision = check_decision(runs, longer, direction, cfg["epochs"], threshold,
                              configs=configs, allowance=allowance)
    gains = check_gains(runs, longer, direction, cfg["epochs"])[:decision.called]
    return BudgetCheck(
        cfg=cfg, epochs=cfg["epochs"], gain=decision.mean, seeds=decision.seeds,
        pending=decision.decision == "pending",
        decision=("not measurable" if decision.decision == "undetermined"
                  and decision.lower is None else
                  DECISIONS.get(decision.decision, decision.decision)),
        lower=decision.lower, upper=decision.upper, level=CHECK_LEVEL, allowance=allowance,
        called_seeds=decision.called,
        checked=() if ids is None else tuple(int(s) for s in ids[:decision.called]),
        per_seed=tuple(None if g is None or not math.isfinite(g) else g for g in gains))


def _check_words(check: BudgetCheck | None) -> str:
    if check is None:
        return ""
    if check.decision == "still improving":
        return (f", and at {check.epochs} epochs it gained {_pct(check.gain)} more "
                f"(budget check, mean of {check.seeds} seeds, one-sided "
                f"{_confidence(check.level)} lower bound {_pct(check.lower)})")
    if check.pending:
        return (f"; a budget check at {check.epochs} epochs settles whether that is "
                "learning or the schedule's annealing: run the bench again to train it "
                "(stored runs are reused)")
    return (f"; its budget check at {check.epochs} epochs did not train that long (does "
            "the arm set its own epochs?)")


def declaration(track: str) -> tuple[str | None, str | None]:
    """The registered track's ``(budget, budget_reason)``; (None, None) when it is unknown
    here."""
    try:
        t = tracks.get(track)
    except KeyError:
        return None, None
    return t.budget, t.budget_reason
