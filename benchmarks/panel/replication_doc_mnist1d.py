"""docs/panel.md's mnist1d part of the replication section (replication_doc.py ``section``):
the cases of ``replication.py --cases-dir MNIST1D_CASES --results MNIST1D_RESULTS``, read from
that results JSON alone: pre-registration, power, level, CPU and what the panel costs, as for
tabular, with effects in test accuracy (higher is better)."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from replication import AA, AA_BLOCKS, BLOCK_SEEDS, CASE_BLOCKS, COMMAND, FIRST_BLOCK, \
    PREREG_OFFSET, PREREG_SEEDS, cases
from replication_doc import block_counts, level_rows, power_rows, prereg_rows

MNIST1D_CASES = "benchmarks/panel/replication_mnist1d"   # replication.py --cases-dir
MNIST1D_RESULTS = "benchmarks/results/panel/replication_mnist1d.json"
RUN_SECONDS = "benchmarks/results/tracks/run_seconds.json"
DIRECTION = "higher"   # mnist1d's test accuracy
FLAGS = f"--cases-dir {MNIST1D_CASES} --results {MNIST1D_RESULTS}"


def cpu_split(sessions: list[dict]) -> tuple[float, float, float]:
    """CPU seconds of the A/A's block sessions, of the pre-registration, and of the other
    cases' block sessions."""
    aa = sum(s["cpu_seconds"] for s in sessions if s["cases"] == [AA])
    prereg = sum(s["cpu_seconds"] for s in sessions if s["offset"] == PREREG_OFFSET)
    return aa, prereg, sum(s["cpu_seconds"] for s in sessions) - aa - prereg


def mnist1d_section(root: Path) -> list[str]:
    """The mnist1d lines of the replication section; nothing before its first block."""
    path = root / MNIST1D_RESULTS
    results = json.loads(path.read_text()) if path.is_file() else {}
    known = cases(root / MNIST1D_CASES)
    levels = level_rows(results, known)
    if not levels:
        return []
    others = [s for s in known if s != AA]
    sessions = results.get("sessions", [])
    aa_cpu, prereg_cpu, case_cpu = cpu_split(sessions)
    loads = [x for s in sessions for x in s["load_average_1min"]] or [0.0]
    counts, reached = block_counts(results, known)
    prereg, power = prereg_rows(results, known, DIRECTION), power_rows(results, known, DIRECTION)
    own = [s for s in others if not known[s].get("MARGIN")]
    margins = [s for s in others if known[s].get("MARGIN")]
    resume = (f"`{COMMAND} preregister {FLAGS} --cases {' '.join(others)}`, then `{COMMAND} "
              f"blocks {FLAGS} --cases {' '.join(own)} --case-blocks {CASE_BLOCKS}`"
              if own else "")
    if margins:   # a session of their own, once the arms they share are stored
        resume += (f", then `{COMMAND} blocks {FLAGS} --cases {' '.join(margins)} "
                   f"--case-blocks {CASE_BLOCKS}` (their runs are those blocks': a session of "
                   "their own reuses them, where in the same session two xdist workers may "
                   "train one run key at once, as blocks 1000-1024 did)")
    lines = [
        "### mnist1d", "",
        (f"The cases of `{MNIST1D_CASES}/` (the paper's CNN at its one-lr grid and 150 epochs, "
         f"no floors, as on tabular) on blocks of {BLOCK_SEEDS} seeds from {FIRST_BLOCK}: the "
         f"A/A on its first {AA_BLOCKS} blocks, each other case on its first {CASE_BLOCKS}, in "
         "sessions of their own that share one baseline arm (the A/A's, in code and seeds). "
         "Their effects were pre-registered on seeds "
         f"{PREREG_OFFSET}-{PREREG_OFFSET + PREREG_SEEDS - 1} before any of their blocks "
         "ran; of a case's candidates (a module gone: not chosen) the one kept is the one whose "
         f"predicted power at {BLOCK_SEEDS} seeds (planning sd) is nearest 0.8. Effects are "
         "idea - baseline test accuracy at the selected configs (higher is better: a "
         "positive effect helps)."), "",
        f"Regenerate: `{COMMAND} blocks {FLAGS} --cases {AA} --blocks {AA_BLOCKS}`"
        + (f"; {resume}" if resume else "") + f"; then `{COMMAND} docs` (a block in the "
        "results is not run again).", ""]
    if prereg:
        lines += [
            "| case | effect (idea - baseline accuracy at the selected configs) | sd (observed "
            f"/ planning) | verdict at {PREREG_SEEDS} seeds | predicted power at {BLOCK_SEEDS} "
            "seeds (planning / observed sd) |", "|---|---|---|---|---|", *prereg, ""]
    if power:
        lines += [
            "| case | expected | blocks (first seeds) | pre-registered effect (idea - baseline "
            "accuracy) | median block mde_power80 | detected: rate [95% Wilson] | predicted "
            "power (planning sd / observed sd) | opposite verdicts |",
            "|---|---|---|---|---|---|---|---|", *power, ""]
    lines += [
        "| case | blocks (first seeds) | helps | harms | every block's seeds pooled "
        "(idea - baseline accuracy, ± 2 SE) |", "|---|---|---|---|---|", *levels, "",
        (f"{len(sessions)} session(s), {aa_cpu + prereg_cpu + case_cpu:.0f} CPU s "
         f"({(aa_cpu + prereg_cpu + case_cpu) / 60:.1f} CPU-min: A/A blocks {aa_cpu:.0f}, "
         f"pre-registration {prereg_cpu:.0f}, the other cases' blocks {case_cpu:.0f}), "
         f"{sum(s['wall_seconds'] for s in sessions):.0f} s wall, on a 2-core machine shared "
         f"with other work (load {min(loads):.0f}-{max(loads):.0f}). Blocks per case against "
         f"issue 54's minimum: {counts}"
         + ("" if reached else ". **Not complete**: the commands above run the blocks still "
            "missing") + "."), "",
        mnist1d_cost(root, known), "", "What each mnist1d case asks:", "",
        *[f"- `{stem}` ({case['expected']}): {case['summary']}" for stem, case in known.items()],
        ""]
    return lines


def mnist1d_cost(root: Path, known: dict) -> str:
    """What the mnist1d panel costs in runs, from its measured CPU seconds a run: the A/A's
    blocks, the other cases' pre-registration and blocks (their idea arms and the baseline
    they share), and what the A/A's stored baseline would have saved."""
    from benchkit import tracks

    timed = json.loads((root / RUN_SECONDS).read_text())["mnist1d"]
    per_run = statistics.median(r["cpu_seconds"] for r in timed["runs"])
    grid = len(tracks.get("mnist1d").grid)
    arm = BLOCK_SEEDS * grid   # one arm's runs on one block
    # an idea arm of its own: each case but the A/A and the margin cases (another's arms)
    ideas = sum(1 for stem, c in known.items() if stem != AA and not c.get("MARGIN"))
    aa, prereg = 2 * AA_BLOCKS * arm, (1 + ideas) * PREREG_SEEDS * grid
    blocks = (1 + ideas) * CASE_BLOCKS * arm

    def cpu_min(runs: int) -> str:
        return f"{runs} runs, about {runs * per_run / 60:.0f} CPU-min"

    return (f"Cost: a run costs {per_run:.1f} CPU s (median of {len(timed['runs'])}, "
            f"`{RUN_SECONDS}`); at its {grid}-config grid an arm is {arm} runs a block. The "
            f"{AA_BLOCKS} A/A blocks are {cpu_min(aa)} of training; the {ideas} other idea "
            f"arms' pre-registration {cpu_min(prereg)}, their {CASE_BLOCKS} blocks "
            f"{cpu_min(blocks)} (with the baseline they share). The A/A blocks trained that "
            "baseline on the same seeds, but at an earlier benchkit, and the run key hashes "
            "benchkit's source, so those runs could not be reused (they would have saved "
            f"{cpu_min(arm * CASE_BLOCKS)}). The A/A's own runs cannot be shared: its two "
            "arms are the pair under test, and one baseline shared across blocks would make "
            "the blocks' outcomes dependent, so that a rejection count is no longer binomial.")
