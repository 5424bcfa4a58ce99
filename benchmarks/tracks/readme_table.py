"""README's Tracks table, from the track cards (benchmarks/tracks/cards.py) and the CPU the A/A
benches cost (benchmarks/results/tracks/aa_cpu.json, made by benchmarks/tracks/aa_cpu.py).

Per track: what it is, its baseline against the strongest floor (the margin in A/A MDEs), the
seeds a bench runs by default (``Track.seeds``), the A/A bench's ``mde_power80`` at them (the
effect the deciding test finds 80% of the time, as the report plans it: normal differences at
the 80% upper bound of the observed sd, benchkit.stats.planning.planning_sd), the power of that
bench for effects of 1, 2 and 5% of the baseline mean (points, for an accuracy), and the CPU the
bench cost (its sessions' sum). A figure the track's A/A bench at its default seeds has not
measured is a dash. Below it, every committed idea report (reports/) of an earlier protocol
than its track's today, by the same staleness test as the cards.
"""
from __future__ import annotations

import json
from pathlib import Path

from benchkit import tracks
from benchkit.report.fmt import sig
from benchkit.spec import DEFAULT_SEEDS

ROOT = Path(__file__).resolve().parents[2]
AA_CPU = ROOT / "benchmarks" / "results" / "tracks" / "aa_cpu.json"
REPORTS = ROOT / "reports"
EFFECTS = (0.01, 0.02, 0.05)  # shares of the baseline mean (points of accuracy: 0.01 each)
# README's row: what the track is, in a few words (the rest of the row is measured)
DATA_MODEL = {
    "dynamics": "noisy Lorenz-63 windows, the state 5 steps ahead · GRU(64)",
    "mnist1d": "MNIST-1D, generated per seed (`benchkit[tracks]`) · the paper's CNN",
    "tabular": "10-feature regression on a mixture teacher (tanh, ReLU, sinusoid, bump, "
               "products, linear), 2,000 train / 10,000 test rows · `mlp_tanh` 10-128-128-1"}


def default_seeds(track: str) -> int:
    """The seeds a bench on ``track`` runs when its mark declares none."""
    return tracks.get(track).seeds or DEFAULT_SEEDS


def effect_size(card, share: float) -> float:
    """An effect of ``share`` in the track's units: of the baseline mean, or accuracy points."""
    return share if card.metric == "accuracy" else share * abs(card.baseline)


def effect_label(card, share: float) -> str:
    return f"{100 * share:g} pt" if card.metric == "accuracy" else f"{100 * share:g}%"


def power_line(card) -> str:
    """The A/A bench's power for each effect of EFFECTS, at its seeds and planning sd."""
    import numpy as np

    from benchkit.stats import planning, signflip

    sd = planning.planning_sd(np.asarray(card.diffs, dtype=float))
    return ", ".join(
        f"{effect_label(card, share)}: "
        f"{signflip.power(len(card.diffs), effect_size(card, share) / sd, card.level):.2f}"
        for share in EFFECTS)


def bench_cpu(track: str) -> tuple[float, int, bool] | None:
    """(CPU seconds, sessions, whether some session's CPU went unrecorded) of the A/A bench of
    ``track`` at its protocol today: the sum of aa_cpu.json's sessions of that protocol whose
    CPU was recorded (a killed session's is null), None unless one of them is the bench at the
    default seeds that ran to its end (exit status 0, nothing incomplete or interrupted)."""
    log = json.loads(AA_CPU.read_text()) if AA_CPU.exists() else {}
    protocol = tracks.get(track).protocol()
    sessions = [e for e in log.get(track, []) if e["protocol"] == protocol]
    whole = [e for e in sessions if not e["block"] and e["exit_status"] == 0
             and e["seeds"] == default_seeds(track) and not any(
                 word in e["pytest_last_line"] for word in ("incomplete", "nterrupt"))]
    if not whole:
        return None
    recorded = [e["cpu_seconds"] for e in sessions if e["cpu_seconds"] is not None]
    return sum(recorded), len(sessions), len(recorded) < len(sessions)


def row(card) -> str:
    track = tracks.get(card.track)
    arrow = "↓" if card.lower else "↑"
    epochs = f"{track.epochs}" + ("" if track.schedule == "constant" else f", {track.schedule}")
    head = (f"| `{card.track}` | {DATA_MODEL.get(card.track, '')} | {card.metric} {arrow} | "
            f"{epochs} | {default_seeds(card.track)} |")
    if card.retired:
        return (f"{head} **retired** as a yardstick: {card.retired.split(';')[0]}; "
                "docs/tracks.md | — | — | — |")
    if card.stale is not None:
        return f"{head} A/A bench not re-run since the change: docs/tracks.md | — | — | — |"
    met = "" if card.met else " (**below the bar of 1**)"
    floors = (f"{sig(card.baseline, 3)} vs {card.floor_name} {sig(card.floor, 3)} "
              f"({card.margin_mdes:.1f}{met})")
    if card.n_seeds != default_seeds(card.track):
        return (f"{head} {floors} | A/A at {card.n_seeds} seeds, not the default: not "
                "measured | — | — |")
    mde = ("—" if card.mde_power80 is None else
           f"{sig(card.mde_power80)} ({100 * card.mde_power80 / abs(card.baseline):.2g}%)")
    cpu = bench_cpu(card.track)
    cost = "—" if cpu is None else ("≥ " if cpu[2] else "") + f"{cpu[0] / 60:.1f}"
    return f"{head} {floors} | {mde} | {power_line(card)} | {cost} |"


def stale_reports() -> list[str]:
    """Each committed idea report whose protocol is not its track's today: path and changes."""
    out = []
    for path in sorted(REPORTS.glob("*/*/bench_report.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        if report.get("track") not in tracks.names():
            continue
        protocol = tracks.get(report["track"]).protocol()
        changed = [f"{k} {report['protocol'].get(k)} → {v}" for k, v in protocol.items()
                   if report["protocol"].get(k) != v]
        if changed:
            out.append(f"`{path.parent.relative_to(ROOT).as_posix()}` ({', '.join(changed)})")
    return out


# what the table means, under it; the stale reports, if any, end its last line
LEGEND = """\
Floors: the strongest standard methods (kernel ridge, boosted trees, an SVM, analogues, an MLP)
tuned on each seed's splits; bar: the baseline beats the strongest by one A/A MDE. A mark without
`seeds=` runs its track's default seeds (8 if unset; several tracks: the most); the rest of a row
is the track's A/A bench at them, its CPU the sessions' sum ([docs/tracks.md](docs/tracks.md); \
known answers: [docs/panel.md](docs/panel.md))."""


def readme_table(cards: list) -> str:
    lines = ["| track | data · model | metric | epochs | default seeds | baseline vs strongest "
             "floor (margin in A/A MDEs) | A/A MDE, 80% power (% of the mean) | power for an "
             "effect of 1, 2, 5% (accuracy: points) | CPU-min a bench |", "|---" * 9 + "|"]
    lines += [row(c) for c in cards]
    stale = stale_reports()
    legend = LEGEND + ("" if not stale else " **Stale** (an earlier protocol than the track's; "
                       "not re-benched): " + "; ".join(stale) + ".")
    return "\n".join(lines + ["", legend])
