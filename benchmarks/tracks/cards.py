"""The track cards' tables, read from the A/A benches' reports and the per-seed floors, so that
no number in them is copied by hand.

Each track's A/A bench (benchmarks/tracks/test_aa.py, through the plugin at the default
protocol: the track's default seeds) leaves
benchmarks/results/tracks/aa/aa/<track>/bench_report.json. Its
``floors`` are means over the seeds; the per-seed floors (and the CPU seconds each seed's
floors cost) are in benchmarks/results/tracks/floors.json, made by ``--floors``. Per track the
summary gives the baseline's test mean at its selected config, the strongest floor (limits left
out), the margin between them in the bench's MDEs (issue 40's bar: at least 1), the achievable
limit where the track has one, the median seconds per run (the bench's, on the shared machine,
and the CPU seconds of a run on one thread, from benchmarks/results/tracks/run_seconds.json,
made by ``--time-runs``) and the A/A verdict; per seed, the strongest floor of that seed, the
baseline's test value and the margin in MDEs.

    python benchmarks/tracks/cards.py --floors [--floors-from DIR/.pytest_cache]
                                                 # results/tracks/floors.json
    python benchmarks/tracks/cards.py --time-runs 3   # results/tracks/run_seconds.json
    python benchmarks/tracks/cards.py --write    # regenerate docs/tracks.md's and README's tables
                                                 # (README's: benchmarks/tracks/readme_table.py)
    python benchmarks/tracks/cards.py            # print them
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchkit import tracks
from benchkit.report.fmt import sig
from benchkit.tracks.base import is_limit, strongest_floor

ROOT = Path(__file__).resolve().parents[2]
AA = ROOT / "benchmarks" / "results" / "tracks" / "aa" / "aa"
# a further A/A of a track, its idea arm on another init stream (test_aa.py's
# BENCHKIT_AA_INIT_OFFSET=N, --bench-report-dir benchmarks/results/tracks/aa_offset_<N>), or its
# baseline (BENCHKIT_AA_BASELINE_OFFSET=M, .../aa_baseline_<M>): folder prefix -> card label
REPLICATIONS = {"aa_offset_": "offset", "aa_baseline_": "baseline offset"}
FLOORS = ROOT / "benchmarks" / "results" / "tracks" / "floors.json"
RUN_SECONDS = ROOT / "benchmarks" / "results" / "tracks" / "run_seconds.json"
DOC = ROOT / "docs" / "tracks.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- cards.py: begin -->", "<!-- cards.py: end -->"


def _sibling(name: str):
    """benchmarks/tracks/<name>.py, imported by path (this file is run as a script and loaded
    by path from the tests, so the folder is not a package)."""
    import importlib.util

    module_name = f"track_cards_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name,
                                                      Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[module_name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[module_name]


@dataclass(frozen=True)
class SeedRow:
    seed: int
    floor_name: str
    floor: float
    baseline: float
    margin_mdes: float


@dataclass(frozen=True)
class Card:
    track: str
    metric: str
    lower: bool
    baseline: float
    floor_name: str
    floor: float
    limit: tuple[str, float] | None
    mde: float
    mde_rel_pct: float
    n_seeds: int
    margin_mdes: float
    seconds_per_run: float | None
    cpu_seconds_per_run: float | None  # median CPU s of a run on one thread (--time-runs)
    floor_cpu_seconds: float | None
    still_improving: bool
    check: dict | None
    verdict: str
    p_value: float
    seeds: tuple[SeedRow, ...]
    stale: str | None = None  # why the report does not speak for the track's protocol today
    retired: str = ""  # why the track is no yardstick any more (Track.retired): no bar to meet
    # (which arm's init offset, the offset, verdict, p) of each further A/A of the track
    replications: tuple[tuple[str, int, str, float], ...] = ()
    diffs: tuple[float, ...] = ()  # the deciding comparison's per-seed differences
    level: float = 0.05            # the level it was decided (and planned) at
    mde_power80: float | None = None

    @property
    def met(self) -> bool:
        return self.stale is None and not self.retired and self.margin_mdes >= 1.0

    @property
    def bar(self) -> str:
        return ("**retired**" if self.retired else "**not checked**" if self.stale is not None
                else "met" if self.met else "**NOT met**")


def margin(lower: bool, floor: float, value: float) -> float:
    """How much better ``value`` is than ``floor`` in the metric's direction."""
    return floor - value if lower else value - floor


def stale(report: dict) -> str | None:
    """Why ``report`` is not of its track's protocol today (None when it is)."""
    protocol = tracks.get(report["track"]).protocol()
    changed = sorted(k for k in protocol if report["protocol"].get(k) != protocol[k])
    if not changed:
        return None
    return ("the A/A report is of an earlier protocol (" + ", ".join(
        f"{k} {report['protocol'].get(k)} → {protocol[k]}" for k in changed) + ")")


def replications(track: str) -> tuple[tuple[str, int, str, float], ...]:
    """(label, offset, verdict, p) of each further A/A of ``track`` under benchmarks/results/
    tracks/aa_offset_<offset>/ (the idea arm's stream) and aa_baseline_<offset>/ (the
    baseline's), idea offsets first, each by offset."""
    found = []
    for prefix, label in REPLICATIONS.items():
        for path in (ROOT / "benchmarks" / "results" / "tracks").glob(
                f"{prefix}*/aa/{track}/bench_report.json"):
            report = json.loads(path.read_text(encoding="utf-8"))
            found.append((label, int(path.parents[2].name[len(prefix):]),
                          report["practical_verdict"], report["comparison"]["p_value"]))
    return tuple(sorted(found, key=lambda row: (row[0] != "offset", row[1])))


def card(report: dict, per_seed: dict[str, dict] | None, timed: dict | None = None) -> Card:
    """One track's figures from its A/A report, its per-seed floors (keyed by seed), its
    runs timed on one thread (its entry of run_seconds.json, None when not timed) and its
    further A/A benches' verdicts."""
    why = stale(report) if report["track"] in tracks.names() else None
    names = {frozenset(row["floors"]) for row in (per_seed or {}).values()}
    if why is None and names and names != {frozenset(report.get("floors") or {})}:
        why = (f"the A/A report's floors ({', '.join(report.get('floors') or {})}) are not the "
               "track's today")
    lower = report["metric_direction"].startswith("lower")
    direction = "lower" if lower else "higher"
    base = report["baseline"]["full"]["mean"]
    floors = report.get("floors") or {}
    strongest = strongest_floor(floors, direction)
    if strongest is None:
        raise SystemExit(f"{report['track']}: the A/A report has no floors")
    limits = [(k, v) for k, v in floors.items() if is_limit(k)]
    mde = report["comparison"]["mde"]
    best = report["baseline"]["best_cfg"]
    tests = {r["seed"]: r["test"] for r in report["runs"]
             if r["arm"] == "baseline" and r["cfg"] == best}
    rows = []
    for seed in report["protocol"]["seeds"]:
        seed_floors = (per_seed or {}).get(str(seed))
        if seed_floors is None or why is not None:
            continue
        name, value = strongest_floor(seed_floors["floors"], direction)
        rows.append(SeedRow(seed, name, value, tests[seed],
                            margin(lower, value, tests[seed]) / mde))
    arm = report["convergence"]["arms"]["baseline"]
    checks = [a["budget_check"]["cfg"] for a in report["convergence"]["arms"].values()
              if a.get("budget_check")]   # longer runs: not the protocol's time per run
    seconds = [r["seconds"] for r in report["runs"]
               if r.get("seconds") is not None and r["cfg"] not in checks]
    cpu = [s["cpu_seconds"] for s in (per_seed or {}).values() if s["cpu_seconds"] is not None]
    return Card(track=report["track"], metric=report["metric"], lower=lower, baseline=base,
                floor_name=strongest[0], floor=strongest[1],
                limit=limits[0] if limits else None, mde=mde,
                mde_rel_pct=report["comparison"]["mde_rel_pct"],
                n_seeds=len(report["comparison"]["per_seed_diffs"]),
                margin_mdes=margin(lower, strongest[1], base) / mde,
                seconds_per_run=statistics.median(seconds) if seconds else None,
                cpu_seconds_per_run=(statistics.median(r["cpu_seconds"] for r in timed["runs"])
                                     if timed and timed.get("runs") else None),
                floor_cpu_seconds=statistics.median(cpu) if cpu else None,
                still_improving=arm["still_improving"], check=arm.get("budget_check"),
                verdict=report["practical_verdict"], p_value=report["comparison"]["p_value"],
                seeds=tuple(rows), stale=why, replications=replications(report["track"]),
                retired=tracks.get(report["track"]).retired
                if report["track"] in tracks.names() else "",
                diffs=tuple(report["comparison"]["per_seed_diffs"]),
                level=report["comparison"].get("level") or 0.05,
                mde_power80=report["comparison"].get("mde_power80"))


def trained_out(c: Card) -> str:
    check = c.check
    measured = (f"; {check['epochs']} epochs: {100 * check['gain']:+.1f}%"
                if check and check.get("gain") is not None else
                "; budget check pending" if check else "")
    if check and check.get("gain") is None:
        return "**not known: budget check pending**"
    constant = c.track in tracks.names() and tracks.get(c.track).schedule == "constant"
    return (f"no: still improving{measured}" if c.still_improving
            else f"yes{measured}" if measured
            else "yes (constant schedule: no check)" if constant
            else "**budget check not run**")


def aa_verdicts(c: Card) -> str:
    """The A/A verdict (p), then each further A/A's, by the arm and init offset it changed."""
    further = "".join(f"; {label} {offset:,}: {verdict} ({p:.2g})"
                      for label, offset, verdict, p in c.replications)
    return f"{c.verdict} ({c.p_value:.2g}){further}"


def one_thread(c: Card) -> str:
    return "—" if c.cpu_seconds_per_run is None else f"{c.cpu_seconds_per_run:.1f}"


def summary_table(cards: list[Card]) -> str:
    lines = ["| track | metric | baseline | strongest floor | margin in MDEs (bar: 1) | "
             "limit | A/A MDE | s/run, bench | CPU s/run, one thread | floors, CPU s a seed | "
             "trained out? | A/A verdict (p); further A/As, by init offset |", "|---" * 12 + "|"]
    for c in cards:
        arrow = "↓" if c.lower else "↑"
        limit = "—" if c.limit is None else f"{c.limit[0][len('limit: '):]} {sig(c.limit[1], 3)}"
        run = "—" if c.seconds_per_run is None else f"{c.seconds_per_run:.1f}"
        if c.retired or c.stale is not None:
            why = f"**retired**: {c.retired}" if c.retired else f"**stale**: {c.stale}; not re-run"
            lines.append(f"| {c.track} | {c.metric} {arrow} | {why} | — | — ({c.bar}) | — | — | "
                         "— | — | — | — | — |")
            continue
        cpu = "—" if c.floor_cpu_seconds is None else f"{c.floor_cpu_seconds:.1f}"
        lines.append(
            f"| {c.track} | {c.metric} {arrow} | {sig(c.baseline, 4)} | {c.floor_name} "
            f"{sig(c.floor, 4)} | {c.margin_mdes:.1f} ({c.bar}) | {limit} | {sig(c.mde)} "
            f"({c.mde_rel_pct:.2g}%, {c.n_seeds} seeds) | {run} | {one_thread(c)} | {cpu} | "
            f"{trained_out(c)} | {aa_verdicts(c)} |")
    return "\n".join(lines)


def seed_table(c: Card) -> str:
    if c.retired:
        return f"*{c.track}: retired as a yardstick; no per-seed card.*"
    if c.stale is not None:
        return f"*{c.track}: {c.stale}; no per-seed card until its A/A bench is re-run.*"
    if not c.seeds:
        return f"*{c.track}: no per-seed floors (run `cards.py --floors`).*"
    lines = [f"**{c.track}, per seed** (MDE {sig(c.mde)}; the baseline at its selected "
             "config; margin = strongest floor − baseline in the metric's direction, in MDEs)",
             "", "| seed | strongest floor | baseline | margin in MDEs |", "|---|---|---|---|"]
    for r in c.seeds:
        lines.append(f"| {r.seed} | {r.floor_name} {sig(r.floor, 4)} | {sig(r.baseline, 4)} | "
                     f"{r.margin_mdes:+.1f} |")
    beat = sum(r.margin_mdes > 0 for r in c.seeds)
    lines.append(f"\nThe baseline beats that seed's strongest floor on {beat} of "
                 f"{len(c.seeds)} seeds, by at least one MDE on "
                 f"{sum(r.margin_mdes >= 1 for r in c.seeds)}.")
    return "\n".join(lines)


def readme_table(cards: list[Card]) -> str:
    """README's Tracks table (benchmarks/tracks/readme_table.py)."""
    return str(_sibling("readme_table").readme_table(cards))


def replace_block(path: Path, text: str, begin: str = BEGIN, end: str = END) -> None:
    """Put ``text`` between the markers ``begin`` and ``end`` of ``path`` (default: cards')."""
    doc = path.read_text(encoding="utf-8")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")


def block(path: Path, begin: str = BEGIN, end: str = END) -> str:
    """The generated text between the markers of ``path``."""
    return path.read_text(encoding="utf-8").split(begin, 1)[1].split(end, 1)[0].strip()


def generated(cards: list[Card]) -> str:
    return "\n\n".join([summary_table(cards), *(seed_table(c) for c in cards)])


def compute_floors(names: list[str], n_seeds: int | None = None, kept: Path | None = None,
                   timed: int = 2) -> None:
    """Each track's floors per seed of its A/A report (or of seeds 0 .. ``n_seeds`` - 1): read
    from the pytest cache at ``kept`` (the one the bench's sessions kept them in, under the key
    of the benchkit imported here: run with that tree's benchkit), else computed; and the CPU
    seconds the first ``timed`` seeds' floors cost, computed here."""
    from benchkit.training import provide_floor_trainer
    provide_floor_trainer()  # hands the tracks' trained floors their loop
    from benchkit.store.floor_cache import key

    out = json.loads(FLOORS.read_text()) if FLOORS.exists() else {}
    for name in names:
        seeds = (range(n_seeds) if n_seeds else
                 json.loads((AA / name / "bench_report.json").read_text())["protocol"]["seeds"])
        track, rows = tracks.get(name), {}
        before = (out.get(name) or {}).get("seeds") or {}
        for i, seed in enumerate(seeds):
            row: dict = {"floors": None,  # a timing kept from an earlier call stands
                         "cpu_seconds": (before.get(str(seed)) or {}).get("cpu_seconds")}
            if kept is not None:
                path = kept / "v" / key(track, seed)
                row["floors"] = json.loads(path.read_text()) if path.exists() else None
            if row["floors"] is None or i < timed:
                track.make_data(seed)          # data generation is not the floors' cost
                start = time.process_time()
                values = track.make_floors(seed)
                row["cpu_seconds"] = round(time.process_time() - start, 2)
                row["floors"] = row["floors"] or values
            rows[str(seed)] = row
        out[name] = {"command": "python benchmarks/tracks/cards.py --floors"
                     + (f" --seeds {n_seeds}" if n_seeds else "")
                     + (" --floors-from <the bench tree's .pytest_cache>" if kept else ""),
                     "seeds": rows}
        FLOORS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def time_runs(names: list[str], n_runs: int) -> None:
    """Train ``n_runs`` runs (seeds 0 .. n_runs - 1) of each track's default model at its A/A
    baseline's selected config, one torch thread, as the bench trains them, and write their CPU
    and wall seconds to RUN_SECONDS. CPU seconds (``time.process_time``) are what a quiet core
    would take: other processes on a shared machine inflate the wall time, not them."""
    import torch

    from benchkit.training.run import Run, seed_everything

    torch.set_num_threads(1)
    out = json.loads(RUN_SECONDS.read_text()) if RUN_SECONDS.exists() else {}
    for name in names:
        track = tracks.get(name)
        cfg = json.loads((AA / name / "bench_report.json").read_text())["baseline"]["best_cfg"]
        runs, load_before = [], os.getloadavg()[0]
        for seed in range(n_runs):
            track.data(seed)  # made once per process and seed: not a run's cost
            seed_everything(seed)
            run = Run(arm="baseline", track=track, cfg=cfg, seed=seed)
            cpu, wall = time.process_time(), time.perf_counter()
            run.fit(track.model())
            runs.append({"seed": seed, "cpu_seconds": round(time.process_time() - cpu, 2),
                         "wall_seconds": round(time.perf_counter() - wall, 2),
                         "test": run.test})
        out[name] = {"command": f"python benchmarks/tracks/cards.py --time-runs {n_runs}",
                     "cfg": cfg, "threads": 1,
                     "load_average_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
                     "runs": runs}
        RUN_SECONDS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def load_cards() -> list[Card]:
    """Every track's card from the committed A/A reports, floors.json and run_seconds.json."""
    paths = sorted(AA.glob("*/bench_report.json"))
    if not paths:
        sys.exit(f"no A/A reports under {AA}: run benchmarks/tracks/test_aa.py first")
    per_seed = json.loads(FLOORS.read_text()) if FLOORS.exists() else {}
    timed = json.loads(RUN_SECONDS.read_text()) if RUN_SECONDS.exists() else {}
    return [card(json.loads(p.read_text(encoding="utf-8")),
                 (per_seed.get(p.parent.name) or {}).get("seeds"), timed.get(p.parent.name))
            for p in paths]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floors", action="store_true", help="recompute the per-seed floors")
    ap.add_argument("--seeds", type=int, help="with --floors: seeds 0..N-1, not the report's")
    ap.add_argument("--floors-from", type=Path, help="with --floors: a pytest cache to read "
                    "the kept floors from")
    ap.add_argument("--timed", type=int, default=2, help="with --floors: time the floors of "
                    "this many seeds (default 2)")
    ap.add_argument("--tracks", nargs="+", help="with --floors or --time-runs: only these "
                    "tracks")
    ap.add_argument("--time-runs", type=int, metavar="N", help="time N runs per track on one "
                    "thread (results/tracks/run_seconds.json)")
    ap.add_argument("--write", action="store_true",
                    help="regenerate docs/tracks.md's and README's tables")
    args = ap.parse_args()
    names = args.tracks or sorted(p.parent.name for p in AA.glob("*/bench_report.json"))
    if args.floors:
        compute_floors(names, args.seeds, args.floors_from, args.timed)
    if args.time_runs:
        time_runs(names, args.time_runs)
    cards = load_cards()
    text = generated(cards)
    if not args.write:
        print(text)
        return
    replace_block(DOC, text)
    replace_block(README, readme_table(cards))


if __name__ == "__main__":
    main()
