"""The idea module's declaration (``pytest.mark.bench``), parsed and validated.

Every mistake here is reported as a collection error that says what is wrong and what is valid,
before anything trains.
"""
from __future__ import annotations

import itertools
import math
import numbers
import re
from dataclasses import dataclass, field

ARMS = ("baseline", "idea")
DEFAULT_SEEDS = 8
MIN_SEEDS = 2
BENCH_KWARGS = ("name", "track", "grid", "seeds", "claim", "margin", "looks", "boundary",
                "test", "max_seeds", "claim_type", "budget_tolerance", "budget_waiver", "frontier", "extend",
                "futility")
CLAIM_TYPES = ("superiority", "non-inferiority", "equivalence")
CONTROL = "control:"  # a control arm's label: "control:<name>"
DEFAULT_EXTEND = 2  # grid steps an edge selection may add per axis and side (benchkit.verdict.extension)


class SpecError(ValueError):
    """A mistake in an idea module's declaration."""


FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def check_folder_name(value, what: str) -> None:
    """An idea's or a track's name names a folder under the report directory: a short name of
    safe characters, so that it can never point outside it or break a terminal or a file
    system."""
    if not isinstance(value, str) or not FOLDER_NAME.fullmatch(value):
        raise SpecError(f"{what}={value!r:.120} cannot name a report folder; valid: 1 to 100 "
                        "letters, digits, '_', '-' or '.', starting with a letter or digit")


@dataclass(frozen=True)
class IdeaSpec:
    name: str
    module: str                 # the module's nodeid, e.g. ideas/test_x.py
    tracks: tuple[str, ...]
    grids: dict                 # track -> tuple of cfg dicts, in grid order
    seeds: tuple[int, ...]
    epochs: dict                # track -> epochs used
    claim: str | None = None
    margin: float | None = None
    looks: tuple[int, ...] = ()  # the planned seed counts, in order: (seeds,) unless declared
    looks_declared: bool = False  # looks= (or max_seeds=) in pytest.mark.bench
    boundary: str = "union"  # how the looks share alpha (benchkit.stats.sequential)
    test: str = "mean"  # the paired test that decides (benchkit.stats.signtest)
    overrides: dict = field(default_factory=dict)  # --bench-seeds/--bench-epochs given: exploratory
    protocols: dict = field(default_factory=dict)  # track -> Track.protocol(epochs)
    mechanism_tests: tuple[str, ...] = ()  # the module's functions marked mechanism
    arm_tests: tuple[tuple[str, str], ...] = ()  # (arm, qualname of its test function)
    arms: tuple[str, ...] = ARMS  # baseline, idea, then each "control:<name>" in module order
    claim_type: str = "superiority"
    budget_tolerance: dict = field(default_factory=dict)  # budget -> relative tolerance
    budget_waiver: dict = field(default_factory=dict)     # budget -> the stated reason
    frontier: dict | None = None  # {axis: [values]}: every arm is benched at each value
    extend: int = DEFAULT_EXTEND  # the edge-extension limit (benchkit.verdict.extension)
    declared_grids: dict = field(default_factory=dict)  # track -> the grid as declared
    futility: float | None = None  # the non-binding futility threshold (benchkit.stats.futility)

    def points(self):
        """(track, cfg, seed) of every run an arm makes, in a stable order."""
        for track in self.tracks:
            for cfg in self.grids[track]:
                for seed in self.seeds:
                    yield track, cfg, seed

    def to_plain(self) -> dict:
        return {
            "name": self.name, "module": self.module, "tracks": list(self.tracks),
            "grids": {t: [dict(c) for c in g] for t, g in self.grids.items()},
            "seeds": list(self.seeds), "epochs": dict(self.epochs), "claim": self.claim,
            "margin": self.margin, "looks": list(self.looks),
            "looks_declared": self.looks_declared, "boundary": self.boundary, "test": self.test,
            "overrides": dict(self.overrides),
            "protocols": self.protocols, "mechanism_tests": list(self.mechanism_tests),
            "arm_tests": dict(self.arm_tests),
            "arms": list(self.arms), "claim_type": self.claim_type,
            "budget_tolerance": dict(self.budget_tolerance),
            "budget_waiver": dict(self.budget_waiver),
            "frontier": ({k: list(v) for k, v in self.frontier.items()}
                         if self.frontier else None),
            "extend": self.extend, "futility": self.futility,
            "declared_grids": {t: [dict(c) for c in g]
                               for t, g in (self.declared_grids or self.grids).items()},
        }


def family_seeds_needed(family_size: int, alpha: float) -> int:
    """The fewest seeds whose smallest two-sided sign-flip p, 2^(1-n), passes Holm's first
    step (alpha / family_size) in a family of ``family_size`` tracks."""
    n = MIN_SEEDS
    while 2.0 ** (1 - n) >= alpha / family_size:
        n += 1
    return n


def unreachable_family(n_seeds: int, family_size: int, alpha: float,
                       comparators: int = 1) -> str | None:
    """Why ``n_seeds`` cannot give a significant result in a family of ``family_size``
    tracks, each comparing the idea with ``comparators`` arms (the baseline and each control),
    at ``alpha`` (None when they can): said at collection and in the report."""
    needed = family_seeds_needed(family_size * comparators, alpha)
    if n_seeds >= needed:
        return None
    where = f" after Holm over {family_size} track(s)" if family_size > 1 else ""
    if comparators > 1:
        where = (f" after Holm over {family_size * comparators} comparisons ({family_size} "
                 f"track(s) x the baseline and {comparators - 1} control(s))")
    return (f"only {n_seeds} seeds cannot reach p < {alpha:g}{where} (the smallest possible "
            f"two-sided p is {2.0 ** (1 - n_seeds):.4g} with the sign-flip test); {needed} seeds or "
            "more can")


def parse_looks(kw: dict, where: str) -> tuple[int, ...]:
    """The planned looks of ``pytest.mark.bench``: ``looks=(8, 16)``, strictly increasing seed
    counts, each tested at its own level so that all of them together keep alpha. The
    shorthand ``max_seeds=M`` means looks at the declared seeds and at M (resolved by the
    caller, which knows the seeds); only one of the two may be given. () when neither is."""
    valid = (f"valid: looks=(8, 16), strictly increasing integers >= {MIN_SEEDS}, or "
             f"max_seeds=16 (one look at seeds, one at max_seeds); not both")
    if "looks" in kw and "max_seeds" in kw:
        raise SpecError(f"{where}: looks= and max_seeds= both given; {valid}")
    if "max_seeds" in kw:
        m = kw["max_seeds"]
        if isinstance(m, bool) or not isinstance(m, int) or m < MIN_SEEDS:
            raise SpecError(f"{where}: max_seeds={m!r} must be an integer >= {MIN_SEEDS}: the "
                            f"most seeds you plan to bench over all sessions; {valid}")
        return (m,)
    if "looks" not in kw:
        return ()
    looks = kw["looks"]
    if isinstance(looks, (str, bytes)) or not isinstance(looks, (list, tuple)) or not looks or \
            any(isinstance(n, bool) or not isinstance(n, int) or n < MIN_SEEDS for n in looks) \
            or any(b <= a for a, b in zip(looks, looks[1:])):
        raise SpecError(f"{where}: looks={looks!r}; {valid}")
    return tuple(looks)


def cfg_id(cfg: dict) -> str:
    return "-".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in cfg.items())


def run_id(track: str, cfg: dict, seed: int) -> str:
    return f"{track}-{cfg_id(cfg)}-seed{seed}"


def parse_grid(grid, where: str) -> tuple[dict, ...]:
    """A grid is a dict of non-empty value lists (their product, in order) or a list of dicts."""
    valid = ("valid: a dict of non-empty lists such as {'lr': [1e-3, 3e-3]}, "
             "or a non-empty list of dicts such as [{'lr': 1e-3}, {'lr': 3e-3}]")
    if isinstance(grid, dict):
        if not grid:
            raise SpecError(f"{where}: grid is empty; {valid}")
        for key, values in grid.items():
            if not isinstance(key, str):
                raise SpecError(f"{where}: grid key {key!r} is not a string; {valid}")
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise SpecError(f"{where}: grid[{key!r}] = {values!r} is not a list; {valid}")
            if not list(values):
                raise SpecError(f"{where}: grid[{key!r}] is an empty list; {valid}")
        keys = list(grid)
        configs = [dict(zip(keys, combo)) for combo in itertools.product(*grid.values())]
    elif isinstance(grid, (list, tuple)):
        if not grid:
            raise SpecError(f"{where}: grid is empty; {valid}")
        if not all(isinstance(c, dict) and c for c in grid):
            raise SpecError(f"{where}: grid {grid!r} is not a list of non-empty dicts; {valid}")
        configs = [dict(c) for c in grid]
    else:
        raise SpecError(f"{where}: grid {grid!r} is a {type(grid).__name__}; {valid}")
    for cfg in configs:
        for key, value in cfg.items():
            if not isinstance(value, (str, bool, numbers.Real)) or (
                    isinstance(value, float) and not math.isfinite(value)):
                raise SpecError(f"{where}: grid value {key}={value!r} must be a finite number, "
                                "a bool or a string")
        if "lr" in cfg:
            lr = cfg["lr"]
            if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not lr > 0:
                raise SpecError(f"{where}: learning rate lr={lr!r} must be a positive number")
        for key in ("epochs", "batch_size"):
            if key in cfg and (not isinstance(cfg[key], int) or cfg[key] < 1):
                raise SpecError(f"{where}: {key}={cfg[key]!r} must be a positive integer")
    configs = [{k: (float(v) if isinstance(v, numbers.Real) and not isinstance(v, (bool, int))
                    else v) for k, v in c.items()} for c in configs]
    if len({cfg_id(c) for c in configs}) != len(configs):
        raise SpecError(f"{where}: grid has duplicate configs: {[cfg_id(c) for c in configs]}")
    return tuple(configs)


def parse_bench_marker(mark, module: str, *, seeds_override: int | None,
                       epochs_override: int | None) -> IdeaSpec:
    """Validate ``pytest.mark.bench(...)`` of ``module`` against the track registry."""
    from benchkit import tracks as registry  # torch: only where runs are collected

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
        raise SpecError(f"{where}: no track given; known tracks: {', '.join(registry.names())}")
    track_names = (track_arg,) if isinstance(track_arg, str) else tuple(track_arg)
    if not track_names or not all(isinstance(t, str) for t in track_names):
        raise SpecError(f"{where}: track={track_arg!r} must be a track name or a list of names; "
                        f"known tracks: {', '.join(registry.names())}")
    if len(set(track_names)) != len(track_names):
        raise SpecError(f"{where}: track={track_arg!r} names a track twice")
    for t in track_names:
        check_folder_name(t, f"{where}: track")
        if t not in registry.names():
            raise SpecError(f"{where}: unknown track {t!r}; known tracks: "
                            f"{', '.join(registry.names())}")
        why = registry.get(t).missing()
        if why:
            raise SpecError(f"{where}: {why}")
    grids = {}
    for t in track_names:
        grid = kw.get("grid")
        grids[t] = parse_grid(grid, where) if grid is not None else registry.get(t).grid
    looks = parse_looks(kw, where)
    declared_seeds = kw.get("seeds", looks[0] if "looks" in kw else DEFAULT_SEEDS)
    for n_seeds in (declared_seeds, seeds_override):
        if n_seeds is not None and (isinstance(n_seeds, bool) or not isinstance(n_seeds, int)
                                    or n_seeds < MIN_SEEDS):
            raise SpecError(f"{where}: seeds={n_seeds!r}: need an integer >= {MIN_SEEDS} (paired "
                            "statistics need two pairs at least; 6 or more can reach p < 0.05)")
    if "max_seeds" in kw:  # the shorthand: this look, then one at max_seeds
        if looks[-1] < declared_seeds:
            raise SpecError(f"{where}: max_seeds={looks[-1]} is below seeds={declared_seeds}: "
                            "it must be >= seeds: the most seeds you plan to bench over all looks")
        looks = tuple(sorted({declared_seeds, looks[-1]}))
    from benchkit.stats.sequential import parse_boundary

    boundary = parse_boundary(kw, where, looks)
    from benchkit.stats.futility import parse_futility
    from benchkit.stats.signtest import parse_test
    n_seeds = declared_seeds if seeds_override is None else seeds_override
    overrides = {k: v for k, v in (("seeds", seeds_override), ("epochs", epochs_override))
                 if v is not None}
    claim = kw.get("claim")
    if claim is not None and not isinstance(claim, str):
        raise SpecError(f"{where}: claim must be a string, got {type(claim).__name__}")
    margin = kw.get("margin")
    if margin is not None:
        if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not (
                0 < margin < 1):
            raise SpecError(f"{where}: margin={margin!r} must be a number in (0, 1): the "
                            "non-inferiority margin relative to the baseline mean")
        margin = float(margin)
    extend = kw.get("extend", DEFAULT_EXTEND)
    if isinstance(extend, bool) or not isinstance(extend, int) or extend < 0:
        raise SpecError(f"{where}: extend={extend!r} must be an integer >= 0: how many grid "
                        "steps an arm's selection at the edge of an axis may add on that side "
                        f"(default {DEFAULT_EXTEND}; 0 turns the extension off)")
    epochs = {t: int(epochs_override or registry.get(t).epochs) for t in track_names}
    from benchkit.verdict.fairness import parse_fairness  # claim type, budgets, frontier

    fair = parse_fairness(kw, where, margin)
    if fair["frontier"]:
        (axis, values), = fair["frontier"].items()
        for t, grid in grids.items():
            if any(axis in cfg for cfg in grid):
                raise SpecError(f"{where}: frontier axis {axis!r} is also a grid key; name "
                                "the axis apart from the grid (it reaches the arm as run.cfg["
                                f"{axis!r}] and run.frontier)")
            grids[t] = tuple({**cfg, axis: v} for v in values for cfg in grid)
    return IdeaSpec(
        name=name, module=module, tracks=track_names, grids=grids,
        seeds=tuple(range(n_seeds)), epochs=epochs, claim=claim, margin=margin,
        looks=looks or (declared_seeds,), looks_declared=bool(looks), boundary=boundary,
        test=parse_test(kw, where),
        overrides=overrides,
        extend=extend, declared_grids=dict(grids),
        futility=parse_futility(kw, where, looks or (declared_seeds,), fair["claim_type"]),
        protocols={t: registry.get(t).protocol(epochs[t]) for t in track_names}, **fair,
    )


def arm_label(mark, where: str) -> str:
    """The arm an ``arm`` mark declares: ``baseline``, ``idea`` or ``control:<name>``."""
    valid = ("valid: pytest.mark.arm('baseline'), pytest.mark.arm('idea') (one each) and any "
             "number of pytest.mark.arm('control', name='<name>'), each on a test taking the "
             "run fixture")
    if len(mark.args) != 1 or mark.args[0] not in ARMS + ("control",):
        raise SpecError(f"{where} is marked arm({', '.join(map(repr, mark.args))}): unknown "
                        f"arm; {valid}")
    arm, kwargs = mark.args[0], dict(mark.kwargs)
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
