"""``pytest.mark.bench`` and ``pytest.mark.arm`` of an idea module, parsed and validated
against the track registry.

Every mistake here is reported as a collection error that says what is wrong and what is valid,
before anything trains.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from benchkit.spec.arguments import (check_ids, check_value, in_float_range, parse_boundary,
                                     parse_fairness, parse_futility, parse_grid, parse_looks,
                                     parse_test, real_number)
from benchkit.spec.idea import (ARMS, BENCH_KWARGS, CONTROL, DEFAULT_EXTEND, DEFAULT_SEEDS,
                                MAX_GRID, MAX_INT, MAX_RUNS, MAX_SEEDS, MIN_SEEDS, IdeaSpec,
                                SpecError, check_folder_name)


class Mark(Protocol):
    """What a pytest mark is here (``pytest.Mark``'s fields; spec/ does not import pytest): the
    user's arguments, any objects, checked by the parsers."""

    @property
    def args(self) -> tuple[Any, ...]: ...

    @property
    def kwargs(self) -> Mapping[str, Any]: ...


def parse_bench_marker(mark: Mark, module: str, *, seeds_override: int | None,
                       epochs_override: int | None, seed_offset: int = 0) -> IdeaSpec:
    """Validate ``pytest.mark.bench(...)`` of ``module`` against the track registry.
    ``seed_offset`` (``--bench-seed-offset``) moves the seeds to ``offset .. offset + S - 1``:
    an override (exploratory) that each protocol records, so that its runs' store keys and
    its report name the block, and a block's runs never stand in for another's."""
    from benchkit import tracks  # numpy and the track modules: only when collected

    where = f"{module}: pytest.mark.bench"
    if mark.args:
        raise SpecError(f"{where} takes keyword arguments only ({', '.join(BENCH_KWARGS)}), "
                        f"got positional {mark.args!r}")
    unknown = set(mark.kwargs) - set(BENCH_KWARGS)
    if unknown:
        raise SpecError(f"{where}: unknown argument(s) {sorted(unknown)}; valid: "
                        f"{', '.join(BENCH_KWARGS)}")
    kw = mark.kwargs
    default_name = module.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
    name = kw.get("name", default_name)
    check_folder_name(name, f"{where}: name")
    track_arg = kw.get("track")
    if track_arg is None:
        raise SpecError(f"{where}: no track given; known tracks: {', '.join(tracks.names())}")
    track_names = (track_arg,) if isinstance(track_arg, str) else tuple(track_arg) \
        if isinstance(track_arg, (list, tuple)) else ()
    if not track_names or not all(isinstance(t, str) for t in track_names):
        raise SpecError(f"{where}: track={track_arg!r} must be a track name or a list of names; "
                        f"known tracks: {', '.join(tracks.names())}")
    if len(set(track_names)) != len(track_names):
        raise SpecError(f"{where}: track={track_arg!r} names a track twice")
    for t in track_names:
        check_folder_name(t, f"{where}: track")
        if t not in tracks.names():
            raise SpecError(f"{where}: {tracks.unknown(t)}")
        why = tracks.get(t).missing()
        if why:
            raise SpecError(f"{where}: {why}")
    grids = {}
    for t in track_names:
        grid = kw.get("grid")
        grids[t] = parse_grid(grid, where) if grid is not None else tracks.get(t).grid
    looks = parse_looks(kw, where)
    declared_seeds = kw.get("seeds", looks[0] if "looks" in kw else default_seeds(track_names))
    for n_seeds in (declared_seeds, seeds_override):
        if n_seeds is not None and (isinstance(n_seeds, bool) or not isinstance(n_seeds, int)
                                    or n_seeds < MIN_SEEDS):
            raise SpecError(f"{where}: seeds={n_seeds!r}: need an integer >= {MIN_SEEDS} (paired "
                            "statistics need two pairs at least; 6 or more can reach p < 0.05)")
        if n_seeds is not None and n_seeds > MAX_SEEDS:
            raise SpecError(f"{where}: seeds={n_seeds!r}: need an integer in [{MIN_SEEDS}, "
                            f"{MAX_SEEDS}] (each seed trains every config of every arm)")
    if "max_seeds" in kw:  # the shorthand: this look, then one at max_seeds
        if looks[-1] < declared_seeds:
            implied = "" if "seeds" in kw else " (the track's default: declare seeds= to change it)"
            raise SpecError(f"{where}: max_seeds={looks[-1]} is below seeds={declared_seeds}"
                            f"{implied}: it must be >= seeds: the most seeds you plan to bench "
                            "over all looks")
        looks = tuple(sorted({declared_seeds, looks[-1]}))
    boundary = parse_boundary(kw, where, looks)
    n_seeds = declared_seeds if seeds_override is None else seeds_override
    overrides = {k: v for k, v in (("seeds", seeds_override), ("epochs", epochs_override),
                                   ("seed-offset", seed_offset or None)) if v is not None}
    claim = kw.get("claim")
    if claim is not None and not isinstance(claim, str):
        raise SpecError(f"{where}: claim must be a string, got {type(claim).__name__}")
    margin = kw.get("margin")
    if margin is not None:
        if not real_number(margin) or not 0 < margin < 1:
            raise SpecError(f"{where}: margin={margin!r} must be a number in (0, 1): the "
                            "non-inferiority margin relative to the baseline mean")
        margin = float(margin)
    reference = kw.get("margin_reference")
    if reference is not None:
        if margin is None or not real_number(reference) or not (in_float_range(reference)
                                                                and reference > 0):
            raise SpecError(f"{where}: margin_reference={reference!r:.60} must be a number > 0 "
                            "given with margin=: the value, fixed before the bench, that the "
                            "margin is relative to (1.0 makes the margin absolute, in the "
                            "metric's units)")
        reference = float(reference)
    extend = kw.get("extend", DEFAULT_EXTEND)
    if isinstance(extend, bool) or not isinstance(extend, int) or not 0 <= extend <= MAX_GRID:
        raise SpecError(f"{where}: extend={extend!r:.60} must be an integer in [0, {MAX_GRID}]: "
                        "how many grid steps an arm's selection at the edge of an axis may add "
                        "on that side "
                        f"(default {DEFAULT_EXTEND}; 0 turns the extension off)")
    epochs = {t: int(epochs_override or tracks.get(t).epochs) for t in track_names}
    for t, n in epochs.items():   # an own track's: the records hold it
        if not 1 <= n <= MAX_INT:
            raise SpecError(f"{where}: track {t!r} declares epochs={n!r:.60}; valid: an integer "
                            f"in [1, {MAX_INT}]")
    fair = parse_fairness(kw, where, margin)
    if fair["frontier"]:
        (axis, values), = fair["frontier"].items()
        for t, grid in grids.items():
            if any(axis in cfg for cfg in grid):
                raise SpecError(f"{where}: frontier axis {axis!r} is also a grid key; name "
                                "the axis apart from the grid (it reaches the arm as run.cfg["
                                f"{axis!r}] and run.frontier)")
            grids[t] = tuple({**cfg, axis: v} for v in values for cfg in grid)
    for t, grid in grids.items():
        check_ids(grid, where)
        for cfg in grid:   # a track's own grid too (an own track's is not parsed above)
            for key, value in cfg.items():
                check_value(value, f"grid value {key}", where)
        if len(grid) * n_seeds > MAX_RUNS:
            raise SpecError(f"{where}: {len(grid)} configs x {n_seeds} seeds on {t} is "
                            f"{len(grid) * n_seeds} runs per arm; valid: at most {MAX_RUNS} "
                            "(fewer configs or seeds)")
    return IdeaSpec(
        name=name, module=module, tracks=track_names, grids=grids,
        seeds=tuple(range(seed_offset, seed_offset + n_seeds)), epochs=epochs, claim=claim,
        margin=margin,
        margin_reference=reference,
        looks=looks or (declared_seeds,), looks_declared=bool(looks), boundary=boundary,
        test=parse_test(kw, where),
        overrides=overrides,
        extend=extend, declared_grids=dict(grids),
        futility=parse_futility(kw, where, looks or (declared_seeds,), fair["claim_type"]),
        protocols={t: {**tracks.get(t).protocol(epochs[t]),
                       **({"seed_offset": seed_offset} if seed_offset else {})}
                   for t in track_names}, **fair,
    )


def default_seeds(track_names: tuple[str, ...]) -> int:
    """The seeds of a bench mark that declares none: the most any of its tracks asks for
    (``Track.seeds``, so that every track's comparison has the power its track aims at),
    benchkit's DEFAULT_SEEDS for a track that asks for none."""
    from benchkit import tracks

    return max(tracks.get(t).seeds or DEFAULT_SEEDS for t in track_names)


def arm_label(mark: Mark, where: str) -> str:
    """The arm an ``arm`` mark declares: ``baseline``, ``idea`` or ``control:<name>``."""
    valid = ("valid: pytest.mark.arm('baseline'), pytest.mark.arm('idea') (one each) and any "
             "number of pytest.mark.arm('control', name='<name>'), each on a test taking the "
             "run fixture")
    arm = mark.args[0] if len(mark.args) == 1 else None
    if not isinstance(arm, str) or arm not in ARMS + ("control",):
        raise SpecError(f"{where} is marked arm({', '.join(map(repr, mark.args))}): unknown "
                        f"arm; {valid}")
    kwargs = dict(mark.kwargs)
    if arm != "control":
        if kwargs:
            raise SpecError(f"{where}: arm({arm!r}) takes no keyword arguments, got "
                            f"{sorted(kwargs)}; {valid}")
        return arm
    name = kwargs.pop("name", None)
    if kwargs or not isinstance(name, str) or not name or any(c in name for c in "[]:/ "):
        raise SpecError(f"{where}: a control arm needs name='<name>' (a non-empty string "
                        f"without spaces, ':', '/' or brackets) and nothing else, got "
                        f"{mark.kwargs!r}; {valid}")
    return CONTROL + name
