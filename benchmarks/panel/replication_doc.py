"""docs/panel.md's replication section (benchmarks/panel/replication.py ``docs``): from the
results JSON alone, each case's detection rate over its seed blocks with a Wilson interval
beside the power its pre-registration predicts, and each null's rejection rate per side beside
alpha / 2 with its binomial standard error.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

import numpy as np

from panel import TECHNIQUES_MARKER
from replication import (AA, AA_BLOCKS, BLOCK_SEEDS, CASE_BLOCKS, COMMAND, FIRST_BLOCK,
                         PREREG_OFFSET, PREREG_SEEDS, RESULTS, TRACK)

BEGIN, END = "<!-- replication.py: begin -->", "<!-- replication.py: end -->"
ALPHA = 0.05
Z = 1.959964  # the two-sided 95% normal quantile
LATE = "test_fewer_rows=6:16"   # the small harm's blocks (--limit): added after blocks 0-5 ran


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a binomial proportion k / n ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p, z2 = k / n, Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def level_check(k: int, n: int) -> tuple[float, bool]:
    """(the standard error of a side's rejection rate under alpha / 2, whether k / n lies
    within alpha / 2 +- 2 of them)."""
    side = ALPHA / 2
    se = math.sqrt(side * (1 - side) / n)
    return se, abs(k / n - side) <= 2 * se


def predicted(prereg: dict | None, margin_rel: float | None = None,
              direction: str = "lower") -> tuple[float, float] | None:
    """The power at BLOCK_SEEDS seeds that the pre-registration predicts from its per-seed
    differences at the selected configs (the estimand), their sd as the report's planning
    figures take it (the 80% upper bound,
    benchkit.stats.planning) and as observed: for a difference, the two-sided sign-flip
    test's at alpha for the pre-registered effect; for a margin (``margin_rel`` of the
    baseline's mean), the one-sided margin test's at alpha, as the report's margin check
    computes it (benchkit.verdict.margins), for the pre-registered effect, the margin lying on
    the worse side of the track's ``direction`` ("lower" or "higher" is better)."""
    from benchkit.stats import planning, signflip

    if not prereg or not prereg.get("selected_diffs"):
        return None
    d = np.asarray(prereg["selected_diffs"], dtype=float)
    sds = (planning.planning_sd(d), float(np.std(d, ddof=1)))
    if margin_rel is None:
        effect, level = abs(float(np.mean(d))), ALPHA
    else:  # the idea is shown within the margin on the worse side (``direction``: better)
        worse = float(np.mean(d)) * (1.0 if direction == "lower" else -1.0)
        effect, level = margin_rel * prereg["baseline_mean"] - worse, 2 * ALPHA
    return tuple(signflip.power(BLOCK_SEEDS, effect / sd, level) for sd in sds)  # type: ignore


def outcomes(results: dict, stem: str) -> list[dict]:
    """The complete outcomes of case ``stem`` over the blocks, in block order."""
    found = [b["outcomes"].get(stem) for b in sorted(results.get("blocks", []),
                                                      key=lambda b: b["offset"])]
    return [o for o in found if o and o["complete"]]


def offsets(results: dict, stem: str) -> str:
    """The first seeds of the blocks case ``stem`` completed, as runs of consecutive blocks
    (``1000-1040, 1048``: blocks at 1000, 1008, .., 1040 and 1048)."""
    starts = [b["offset"] for b in sorted(results.get("blocks", []), key=lambda b: b["offset"])
              if (b["outcomes"].get(stem) or {}).get("complete")]
    runs: list[list[int]] = []
    for start in starts:
        if runs and start == runs[-1][-1] + BLOCK_SEEDS:
            runs[-1].append(start)
        else:
            runs.append([start])
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs) or "none"


def fmt_rate(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.2f} [{lo:.2f}, {hi:.2f}]" if n else "n/a"


def effect_text(diffs: list[float], direction: str = "lower") -> str:
    """The mean of per-seed differences at the selected configs, and on how many seeds the
    idea is better (below 0 where the track's ``direction`` is "lower", as tabular's MSE;
    above where it is "higher", as mnist1d's accuracy)."""
    d = np.asarray(diffs, dtype=float)
    better = int(np.sum(d < 0 if direction == "lower" else d > 0))
    return f"{float(np.mean(d)):+.4f} ({better}/{len(d)} seeds better)"


def power_rows(results: dict, known: dict, direction: str = "lower") -> list[str]:
    """Each helps, harms or margin case: its blocks, pre-registered effect (better seeds
    counted in the track's ``direction``), detection rate and predicted power."""
    prereg = (results.get("preregistration") or [{}])[0].get("outcomes", {})
    rows = []
    for stem, case in known.items():
        if case["expected"] not in ("helps", "harms", "non-inferior"):
            continue
        got = outcomes(results, stem)
        hit = [o for o in got if (o["non_inferior"] if case["expected"] == "non-inferior"
                                  else o["verdict"] == case["expected"])]
        other = "helps" if case["expected"] == "harms" else "harms"
        wrong = sum(o["verdict"] == other for o in got)
        mine = prereg.get(stem)
        power = predicted(mine, case.get("MARGIN") if case["expected"] == "non-inferior"
                          else None, direction)
        effect = "n/a" if not mine else effect_text(mine["selected_diffs"], direction)
        mdes = [o["mde_power80"] for o in got if o["mde_power80"] is not None]
        rows.append(
            f"| `{stem}` | {case['expected']}"
            + (f" (margin {case['MARGIN']:.1%})" if case.get("MARGIN") else "")
            + f" | {offsets(results, stem)} | {effect} | "
            f"{f'{statistics.median(mdes):.4f}' if mdes else 'n/a'} | "
            f"{fmt_rate(len(hit), len(got))} | "
            + ("n/a" if power is None else f"{power[0]:.2f} / {power[1]:.2f}")
            + f" | {wrong} |")
    return rows


def prereg_rows(results: dict, known: dict, direction: str = "lower") -> list[str]:
    """Each pre-registered case: its effect, wins (in the track's ``direction``), sds and
    predicted power; a candidate whose module is gone was not chosen."""
    from benchkit.stats import planning

    rows = []
    for stem, o in sorted((results.get("preregistration") or [{}])[0].get("outcomes",
                                                                          {}).items()):
        if stem in known and known[stem]["expected"] == "non-inferior":
            continue   # a margin on another case's arms (its own runs are that case's)
        if not o or not o["complete"]:
            rows.append(f"| `{stem}` | incomplete | | | |")
            continue
        d = np.asarray(o["selected_diffs"], dtype=float)
        power = predicted(o)
        rows.append(f"| `{stem}`{'' if stem in known else ' (candidate, not chosen)'} | "
                    f"{effect_text(o['selected_diffs'], direction)} | "
                    f"{float(np.std(d, ddof=1)):.4f}"
                    f" / {planning.planning_sd(d):.4f} | {o['verdict']} | "
                    + ("n/a" if power is None else f"{power[0]:.2f} / {power[1]:.2f}") + " |")
    return rows


def level_rows(results: dict, known: dict) -> list[str]:
    rows = []
    for stem, case in known.items():
        if case["expected"] != "inconclusive":
            continue
        got = outcomes(results, stem)
        if not got:
            continue
        cells = []
        for side in ("helps", "harms"):
            k = sum(o["verdict"] == side for o in got)
            se, ok = level_check(k, len(got))
            lo, hi = wilson(k, len(got))
            cells.append(f"{k}/{len(got)} = {k / len(got):.3f} [{lo:.2f}, {hi:.2f}] "
                         f"({'within' if ok else 'OUTSIDE'} 0.025 ± {2 * se:.3f})")
        rows.append(f"| `{stem}` | {offsets(results, stem)} | {cells[0]} | {cells[1]} | "
                    f"{pooled([x for o in got for x in o['selected_diffs']])} |")
    return rows


def pooled(diffs: list[float]) -> str:
    """A null's per-seed differences over all its blocks pooled: their mean ± 2 standard
    errors (a check of the null with every block's seeds, which the per-block rejection
    counts, 0 or 1 expected in 20, cannot give) and how many lie above / below 0. The seeds
    are independent draws (data, init, order); within a block they share the config each arm
    selected, which the standard error, taken as for independent seeds, leaves out."""
    d = np.asarray(diffs, dtype=float)
    se = float(np.std(d, ddof=1) / math.sqrt(len(d))) if len(d) > 1 else math.nan
    return (f"{float(np.mean(d)):+.4f} ± {2 * se:.4f} over {len(d)} seeds "
            f"({int(np.sum(d > 0))} above 0, {int(np.sum(d < 0))} below)")


def block_counts(results: dict, known: dict) -> tuple[str, bool]:
    """Each case's completed blocks against issue 54's minimum (AA_BLOCKS for the A/A,
    CASE_BLOCKS for the others), and whether every case reached it."""
    need = {stem: AA_BLOCKS if stem == AA else CASE_BLOCKS for stem in known}
    got = {stem: len(outcomes(results, stem)) for stem in known}
    return (", ".join(f"`{stem}` {got[stem]}/{need[stem]}" for stem in known),
            all(got[s] >= need[s] for s in known))


def section(results: dict, known: dict, root: Path) -> str:
    from replication_doc_mnist1d import mnist1d_section   # it imports this module

    sessions = results.get("sessions", [])
    cpu = sum(s["cpu_seconds"] for s in sessions)
    prereg_cpu = sum(s["cpu_seconds"] for s in sessions if s["offset"] == PREREG_OFFSET)
    loads = [x for s in sessions for x in s["load_average_1min"]] or [0.0]
    counts, reached = block_counts(results, known)
    lines = [
        BEGIN, "", "## Power and level by replication", "",
        (f"Each case of `benchmarks/panel/replication/` benched through the plugin on disjoint "
         f"blocks of {BLOCK_SEEDS} seeds (`--bench-seed-offset`: block b is seeds "
         f"{FIRST_BLOCK} + {BLOCK_SEEDS}b ..), on {TRACK} at its grid and epochs. The modules of "
         "a block share one session, so their identical baseline arm trains once; across "
         "blocks the baseline's init stream changes with the seeds. A block session is "
         "exploratory (an offset and a seed count override the plan), so it has no grid "
         "extension and no budget check; its verdict is tested at alpha = 0.05 as the "
         "default protocol's would be. It computes no floors: no verdict reads one, so the "
         "cases' conftest registers tabular again without them (the pre-registration and "
         "the blocks at 1000-1040 computed them: 3.5 to 5.7 CPU s a seed, measured on seeds "
         "1000 and 1001). Effects were pre-registered on seeds "
         f"{PREREG_OFFSET}-{PREREG_OFFSET + PREREG_SEEDS - 1} (disjoint from the blocks and "
         "from the bench's own 0-63) before any block ran: the effect there, and the power at "
         f"{BLOCK_SEEDS} seeds that its per-seed sd predicts (the report's planning sd, its 80% "
         "upper bound; then the observed sd). Effects are the mean over seeds of idea minus "
         "baseline at the configs each arm selected (the estimand): the comparison's "
         "`delta_mean` is that of the binding paired test, which, where every config's p ties "
         "(all seeds one way), pitted the idea against the first baseline config in the "
         "reports these blocks wrote, not the selected one (at seeds 100-115, 200 extra rows: "
         "-0.137 against lr 1e-3, -0.029 against the selected 2e-3); benchkit now binds the "
         "tied test nearest the null."),
        "", f"Regenerate: `{COMMAND} preregister`, `{COMMAND} blocks --blocks {AA_BLOCKS} "
        f"--case-blocks {CASE_BLOCKS} --limit {LATE}`, then `{COMMAND} docs` (from `{RESULTS}` "
        "alone). The small harm was added after the blocks at 1000-1040 had run, whose "
        "baseline runs were not kept, so it runs on the ten blocks after them, which it "
        "shares with the A/A (chosen before they ran, as every block is).", "",
        "### Pre-registration", "",
        (f"Seeds {PREREG_OFFSET}-{PREREG_OFFSET + PREREG_SEEDS - 1}, one session, every case "
         "and the candidate sizes of the near-MDE positive; the candidate chosen is the one "
         f"whose predicted power at {BLOCK_SEEDS} seeds (planning sd) is nearest 0.8. The A/A "
         "needs none (its effect is zero by construction)."), "",
        "| case | effect (idea - baseline MSE at the selected configs) | sd (observed / "
        f"planning) | verdict at {PREREG_SEEDS} seeds | predicted power at {BLOCK_SEEDS} "
        "seeds (planning / observed sd) |", "|---|---|---|---|---|",
        *prereg_rows(results, known), "",
        "### Power", "",
        "| case | expected | blocks (first seeds) | pre-registered effect (idea - baseline "
        "MSE) | median block mde_power80 | detected: rate [95% Wilson] | predicted power "
        "(planning sd / observed sd) | opposite verdicts |", "|---|---|---|---|---|---|---|---|",
        *power_rows(results, known), "", "### Level", "",
        ("Rejections on each side for the nulls [95% Wilson], against alpha / 2 = 0.025 "
         "within two binomial standard errors."), "",
        "| case | blocks (first seeds) | helps | harms | every block's seeds pooled "
        "(idea - baseline MSE, ± 2 SE) |", "|---|---|---|---|---|",
        *level_rows(results, known), "",
        (f"{len(sessions)} session(s), {cpu:.0f} CPU s ({cpu / 60:.1f} CPU-min: training, "
         f"floors where computed, start-ups and reports; pre-registration {prereg_cpu:.0f}, "
         f"blocks {cpu - prereg_cpu:.0f}), {sum(s['wall_seconds'] for s in sessions):.0f} s "
         f"wall, on a 2-core machine shared with other work (load {min(loads):.0f}-"
         f"{max(loads):.0f}). Blocks per case against issue 54's minimum: {counts}"
         + ("" if reached else ". **Not complete**: the `blocks` command above runs "
            "the blocks still missing (the runs already trained are stored)") + "."),
        "", "What each case asks:", "",
        *[f"- `{stem}` ({case['expected']}): {case['summary']}" for stem, case in known.items()],
        "", *mnist1d_section(root), END]
    return "\n".join(lines) + "\n"


def with_section(page: str, text: str) -> str:
    """``page`` with its replication section replaced by ``text``; placed before the
    techniques' section (which runs to the end of the page) when it has none yet."""
    if BEGIN in page and END in page:
        head, rest = page.split(BEGIN, 1)
        return head + text.rstrip("\n") + rest.split(END, 1)[1]
    if TECHNIQUES_MARKER in page:
        head, rest = page.split(TECHNIQUES_MARKER, 1)
        return head.rstrip("\n") + "\n\n" + text + "\n" + TECHNIQUES_MARKER + rest
    return page.rstrip("\n") + "\n\n" + text


def write_docs(results: dict, known: dict, docs: Path, root: Path) -> None:
    docs.write_text(with_section(docs.read_text() if docs.is_file() else "",
                                 section(results, known, root)))
