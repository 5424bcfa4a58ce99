"""The leaderboard's statistics (rendered by ``python -m benchkit leaderboard``): many ideas benched
against one baseline, ranked, with p-values adjusted across the ideas so that
each verdict holds however many ideas are on a board. Report records in; the boards out as the
JSON ``--json`` writes (:class:`Leaderboard`, a record whose JSON is generated from its fields).

A **board** is every idea benched against the same baseline runs: same track, same selected
baseline config and, seed by seed, the same stored baseline run (its ``digest``: the run's
result bits under its store key, shared by every module whose baseline is the same code). Ideas
whose baseline runs differ anywhere (other seeds, other config, other results) go on separate
boards, and the output says which and why; a report without run digests (written before runs
recorded them), without a comparison, or whose idea lacks a finite result at a seed where the
baseline has one (a diverged run is not dropped silently) cannot be placed at all.

On a board, each idea's per-seed paired improvement (baseline - idea when lower is better,
idea - baseline otherwise) is tested by the two-sided sign-flip test benchkit decides with
(selection-aware over the report's sweeps, :mod:`benchkit.stats.selection`), and
the ideas' p-values are adjusted by **Holm** over the board's ideas. Holm is chosen over a
many-to-one max-T with joint sign flips although the ideas share the baseline (positively
correlated differences, where max-T gains power): flipping the signs of a seed's whole vector
of differences is only valid when that vector is centrally symmetric, which exchangeable arms
with skewed run-to-run noise do not give (with three i.i.d. skewed arms, (I1 - B, I2 - B) and
(B - I1, B - I2) differ in their third moments). Holm needs only what each bench already
assumes, each idea's differences being symmetric under its null, and controls the family-wise
error at alpha under any dependence between the ideas. A verdict is ``helps``/``harms`` when
the Holm-adjusted p is below alpha (the reports' alpha), else ``inconclusive``; when even the
all-same-sign p times the board's size cannot fall below alpha, the board says so.

Every difference is the reports' ``idea - baseline`` (negative is better when lower is
better); the interval per idea is the test's own (its inversion, selection-aware) at the level
that idea's verdict was decided at, alpha x p / p_adjusted (Holm's step level), so it excludes 0
exactly when the idea's adjusted p is below alpha: the same rule as a report's ``ci95``.
Never imports torch.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from benchkit.codec import JsonRecord
from benchkit.spec.idea import cfg_id
from benchkit.spec.run_record import JsonDict
from benchkit.stats.multiplicity import benjamini_hochberg
from benchkit.stats.paired import holm, min_p_value, sign_flip_p_value
from benchkit.stats import selection
from benchkit.stats.signflip import sign_flip_ci
from benchkit.verdict import sweeps
from benchkit.verdict.build import finite_or_none
from benchkit.verdict.decision import decided_level, practical_verdict
from benchkit.verdict.records import Report

ADJUSTMENT = "holm"
# family-wise error / false discovery rate
ADJUSTMENTS: dict[str, Callable[[Sequence[float]], list[float]]] = {
    "holm": holm, "bh": benjamini_hochberg}
UNREACHABLE = ("with {n} seeds the smallest sign-flip p is {p:.3g}; times {m} ideas (Holm's first "
               "step) it is not below alpha {alpha:g}: no idea on this board can be significant")


@dataclass(frozen=True)
class BoardIdea(JsonRecord):
    """One idea's row on a board, best first (``rank`` 1)."""

    name: str
    report: str
    n_pairs: int
    delta_mean: float
    idea_wins: int
    p_value: float
    p_adjusted: float
    verdict: str
    interval: list[float | None]
    interval_level: float
    report_verdict: str
    exploratory: bool
    rank: int


@dataclass(frozen=True)
class BoardBaseline(JsonRecord):
    """The baseline runs a board's ideas share."""

    config: JsonDict
    seeds: list[int]
    digests: list[str]


@dataclass(frozen=True)
class Board(JsonRecord):
    """The ideas benched against one set of baseline runs, ranked."""

    track: str
    metric: str | None
    direction: str
    baseline: BoardBaseline
    alpha: float
    adjustment: str
    family_size: int
    ideas: list[BoardIdea]
    notes: list[str]


@dataclass(frozen=True)
class Unplaced(JsonRecord):
    """An idea that could not be put on a board, and why."""

    name: str
    track: str
    report: str
    reason: str


@dataclass(frozen=True)
class CrossTrack(JsonRecord):
    """One idea's aggregate over the tracks it is on (:func:`aggregate`)."""

    name: str
    tracks: list[str]
    normalised_improvement: float
    interval: list[float]
    probability_of_improvement: float
    poi_interval: list[float]
    bootstrap: int


@dataclass(frozen=True)
class Leaderboard(JsonRecord):
    """:func:`build`'s result; its ``to_json`` is the file ``python -m benchkit leaderboard
    --json`` writes."""

    adjustment: str
    boards: list[Board]
    unplaced: list[Unplaced]
    aggregate: list[CrossTrack]


@dataclass(frozen=True)
class BoardKey:
    """What ideas on one board share: track, the baseline's selected config (its cfg_id),
    metric and direction, and the baseline's (seed, digest) runs."""

    track: str
    baseline_config: str
    metric: str
    lower: bool
    baseline_runs: tuple[tuple[int, str], ...]


class Entry:
    """One idea on one track, read from its report's record."""

    def __init__(self, name: str, path: Path, report: Report):
        self.name, self.path, self.report = name, path, report
        self.track: str = report.track
        self.lower = report.direction == "lower"
        comp = report.comparison
        self.alpha = float((comp.alpha if comp else None) or report.protocol.get("alpha") or 0.05)
        self.seeds: list[int] = []
        self.improvements: list[float] = []
        self.baseline_values: list[float] = []
        self.baseline_runs: list[tuple[int, str]] = []
        self.baseline_cfg: JsonDict | None = report.baseline.best_cfg

    def pair(self) -> str | None:
        """Fill seeds, improvements and baseline_runs from the run rows; the reason it cannot
        be placed on a board, or None. Idempotent."""
        self.seeds, self.improvements, self.baseline_runs, self.baseline_values = [], [], [], []
        r = self.report
        if r.frontier:
            return ("a frontier report: its comparison pools each seed over the frontier's "
                    "points, so it has no single baseline run per seed to share with other "
                    "ideas; its points are compared in its own report (frontier.points)")
        if r.comparison is None:
            return "incomplete report (no comparison)"
        rows = r.runs
        if not rows:
            return "the report has no run rows"
        base = {x.seed: x for x in rows if x.arm == "baseline" and x.cfg == self.baseline_cfg}
        idea = {x.seed: x for x in rows if x.arm == "idea" and x.cfg == r.idea_config}
        seeds = sorted(s for s, b in base.items() if finite_or_none(b.test) is not None)
        missing = [s for s in seeds if s not in idea or finite_or_none(idea[s].test) is None]
        if missing:
            return (f"the idea has no finite test result at seed(s) {', '.join(map(str, missing))}"
                    " (diverged, failed or not run) where the baseline has one")
        for seed in seeds:
            b, i = base[seed], idea[seed]
            digest = None if b.origin is None else b.origin.digest
            if not digest:
                return ("its baseline runs carry no digest (written before runs recorded their "
                        "store digest): re-bench it to place it")
            assert b.test is not None and i.test is not None   # finite, checked above
            self.seeds.append(seed)
            self.improvements.append(b.test - i.test if self.lower else i.test - b.test)
            self.baseline_runs.append((seed, digest))
            self.baseline_values.append(b.test)
        if len(self.seeds) < 2:
            return f"fewer than 2 seeds with a finite baseline result ({len(self.seeds)})"
        return None

    def placed_cfg(self) -> JsonDict:
        """The baseline's selected config of an idea :meth:`pair` placed (it has one: without
        it no baseline run matches)."""
        if self.baseline_cfg is None:
            raise ValueError(f"{self.name}: not placed on a board (no baseline config)")
        return self.baseline_cfg

    def board_key(self) -> BoardKey:
        """The board this idea goes on (call after :meth:`pair` placed it)."""
        return BoardKey(self.track, cfg_id(self.placed_cfg()),
                        str(self.report.metric), self.lower, tuple(self.baseline_runs))


def board_p_values(improvements: list[list[float]]) -> tuple[list[float], list[float]]:
    """(each idea's two-sided sign-flip p, the Holm-adjusted p over the board), in input order."""
    ps = [sign_flip_p_value(d) for d in improvements]
    return ps, holm(ps)


def idea_p(entry: Entry) -> float:
    """The two-sided p of the idea's paired differences by the test its report decides with:
    selection-aware over the report's sweeps when its seeds are the board's, else the plain
    sign-flip test (a report whose runs do not give full sweeps)."""
    sw = _sweeps(entry)
    if sw is not None:
        return selection.p_value(sw, "lower" if entry.lower else "higher")
    return sign_flip_p_value(entry.improvements)


def idea_interval(entry: Entry, level: float) -> list[float | None]:
    """That test's interval of idea - baseline (the reports' sign: negative is better when
    lower is better) at ``level``; an unbounded end is None."""
    sw = _sweeps(entry)
    if sw is not None:
        return list(selection.interval(sw, "lower" if entry.lower else "higher", level))
    lo, hi = sign_flip_ci(entry.improvements, level)  # of the improvement
    if not entry.lower:
        return [lo, hi]
    return [None if hi is None else -hi, None if lo is None else -lo]


def _sweeps(entry: Entry) -> selection.Sweeps | None:
    report = entry.report
    seeds = report.protocol.get("seeds")
    if report.comparison is not None and report.comparison.selection_aware \
            and seeds == entry.seeds:
        return sweeps.of_record(report)
    return None


def verdict(p_adjusted: float, mean_improvement: float, alpha: float) -> str:
    """helps / harms when the adjusted p is below alpha, by the sign of the mean improvement:
    the report's rule (:func:`benchkit.verdict.decision.practical_verdict`, the one home of
    the verdict words), on the improvement (positive: the idea is better)."""
    return practical_verdict(p_adjusted, -mean_improvement, "lower", alpha)


def rank_board(entries: list[Entry], alpha: float, adjustment: str = ADJUSTMENT) -> Board:
    """The board of ideas that share one baseline: each idea's sign-flip p, adjusted over the
    board, verdict and interval; ranked by mean improvement (best first). Differences are the
    reports' idea - baseline; each interval is the test's at the level the idea's verdict was
    decided at, alpha x p / p_adjusted, so it excludes 0 exactly when p_adjusted < alpha."""
    ps = [idea_p(e) for e in entries]
    adj = ADJUSTMENTS[adjustment](ps)
    rows: list[BoardIdea] = []
    for e, p, pa in zip(entries, ps, adj):
        mean = sum(e.improvements) / len(e.improvements)
        level = decided_level(alpha, p, pa)
        rows.append(BoardIdea(
            name=e.name, report=str(e.path), n_pairs=len(e.seeds),
            delta_mean=-mean if e.lower else mean, idea_wins=sum(d > 0 for d in e.improvements),
            p_value=p, p_adjusted=pa, verdict=verdict(pa, mean, alpha),
            interval=idea_interval(e, level), interval_level=level,
            report_verdict=str(e.report.practical_verdict),
            exploratory=bool(e.report.exploratory), rank=0))
    sign = 1.0 if entries[0].lower else -1.0  # best first: the most negative delta when lower
    rows.sort(key=lambda r: (sign * r.delta_mean, r.name))
    rows = [dataclasses.replace(r, rank=k) for k, r in enumerate(rows, 1)]
    first = entries[0]
    n = len(first.seeds)
    notes = []
    if min_p_value(n) * len(entries) >= alpha:
        notes.append(UNREACHABLE.format(n=n, p=min_p_value(n), m=len(entries), alpha=alpha))
    return Board(track=first.track, metric=first.report.metric,
                 direction=first.report.metric_direction,
                 baseline=BoardBaseline(config=first.placed_cfg(), seeds=first.seeds,
                                        digests=[d for _, d in first.baseline_runs]),
                 alpha=alpha, adjustment=adjustment, family_size=len(entries), ideas=rows,
                 notes=notes)


def _difference(key: BoardKey, other: BoardKey) -> str:
    """Why two boards' baselines differ, in words."""
    if (key.metric, key.lower) != (other.metric, other.lower):
        return "another metric or direction"
    if key.baseline_config != other.baseline_config:
        return f"another baseline config ({key.baseline_config} vs {other.baseline_config})"
    a, b = dict(key.baseline_runs), dict(other.baseline_runs)
    if set(a) != set(b):
        return f"other baseline seeds ({sorted(a)} vs {sorted(b)})"
    diff = [s for s in a if a[s] != b[s]]
    return f"other baseline runs (different results at seed(s) {', '.join(map(str, diff))})"


def build(entries: list[Entry], alpha: float | None = None,
          adjustment: str = ADJUSTMENT) -> Leaderboard:
    """Every board (ideas grouped by identical baseline runs) and the ideas not placed;
    ``adjustment`` across a board's ideas: "holm" (family-wise error, the default) or "bh"
    (Benjamini-Hochberg: false discovery rate, for large boards)."""
    if adjustment not in ADJUSTMENTS:
        raise ValueError(f"adjustment must be one of {sorted(ADJUSTMENTS)}, got {adjustment!r}")
    unplaced: list[Unplaced] = []
    groups: dict[BoardKey, list[Entry]] = {}
    for e in entries:
        why = e.pair()
        if why is None:
            groups.setdefault(e.board_key(), []).append(e)
        else:
            unplaced.append(Unplaced(e.name, e.track, str(e.path), why))
    boards: list[Board] = []
    first_of_track: dict[str, BoardKey] = {}
    for key in sorted(groups, key=lambda k: (k.track, -len(groups[k]), k.baseline_config,
                                             k.baseline_runs)):
        members = sorted(groups[key], key=lambda e: (e.name, str(e.path)))
        names = [e.name for e in members]
        if len(set(names)) < len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            for e in members:
                unplaced.append(Unplaced(e.name, e.track, str(e.path),
                                         f"idea {', '.join(dup)} appears in more than one "
                                         "report against these baseline runs; keep one"))
            continue
        level = alpha if alpha is not None else min(e.alpha for e in members)
        board = rank_board(members, level, adjustment)
        if len({e.alpha for e in members}) > 1 and alpha is None:
            board.notes.append(f"the reports' alphas differ; the smallest, {level:g}, is used")
        if key.track in first_of_track:
            board.notes.append("not on the first board of this track: "
                               + _difference(key, first_of_track[key.track]))
        else:
            first_of_track[key.track] = key
        boards.append(board)
    placed = [e for e in entries if e.seeds and e.name in
              {r.name for b in boards if b.track == e.track for r in b.ideas}]
    return Leaderboard(adjustment, boards, unplaced, aggregate(placed))


BOOTSTRAP = 2000  # paired bootstrap resamples of the cross-track aggregate (seeded)


def aggregate(entries: list[Entry], *, seed: int = 0) -> list[CrossTrack]:
    """For each idea placed on boards of two or more tracks: the mean over tracks of its
    normalised improvement (per seed, improvement / |baseline mean| on that track, so tracks
    in other units weigh alike) and its probability of improvement (the share of seeds on which
    the idea is better, ties counting half, averaged over tracks), each with a 95% percentile
    interval from a paired bootstrap that resamples seeds within each track (a seed's idea and
    baseline runs stay together). Descriptive: not adjusted across ideas, no verdict."""
    import numpy as np

    by_idea: dict[str, list[Entry]] = {}
    for e in entries:
        by_idea.setdefault(e.name, []).append(e)
    out: list[CrossTrack] = []
    for name in sorted(by_idea):
        tracks = sorted(by_idea[name], key=lambda e: e.track)
        if len({e.track for e in tracks}) < 2 or len(tracks) != len({e.track for e in tracks}):
            continue
        rng = np.random.default_rng(seed)
        scores: list[tuple[float, np.ndarray]] = []
        wins: list[tuple[float, np.ndarray]] = []
        for e in tracks:
            scale = abs(sum(e.baseline_values) / len(e.baseline_values)) or 1.0
            d = np.asarray(e.improvements) / scale
            w = (d > 0) + 0.5 * (d == 0)
            pick = rng.integers(0, len(d), size=(BOOTSTRAP, len(d)))
            scores.append((d.mean(), d[pick].mean(axis=1)))
            wins.append((w.mean(), w[pick].mean(axis=1)))

        def summary(parts: list[tuple[float, np.ndarray]]) -> tuple[float, list[float]]:
            boot = np.mean([b for _, b in parts], axis=0)
            return (float(np.mean([m for m, _ in parts])),
                    [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))])

        score, score_ci = summary(scores)
        poi, poi_ci = summary(wins)
        out.append(CrossTrack(name, [e.track for e in tracks], score, score_ci, poi, poi_ci,
                              BOOTSTRAP))
    return out
