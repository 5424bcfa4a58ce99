"""Power and level by replication (issue 54, item 3): each case of benchmarks/panel/replication/
benched through the plugin on disjoint seed blocks (``--bench-seed-offset``), its detection
rate with a Wilson interval beside the power its pre-registration predicts, and the nulls'
rejection rate on each side beside alpha / 2.

Stages, each a plugin session per seed block (one at a time, ``-n 2``), resumable (a block in
the results is not run again; runs are stored):

    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/replication.py preregister
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/replication.py blocks --blocks 20 \\
        --case-blocks 10
    PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/replication.py docs

``preregister`` benches every case on seeds PREREG_OFFSET .. + PREREG_SEEDS - 1, disjoint from
the blocks: each case's effect (delta_mean) and paired sd there are its pre-registered effect
and the predicted power at BLOCK_SEEDS seeds. ``blocks`` benches block b on seeds
FIRST_BLOCK + BLOCK_SEEDS * b ..: the A/A case on ``--blocks`` blocks, the others on the first
``--case-blocks`` (``--limit STEM=K``: that case on its first K; ``STEM=J:K``: on blocks J ..
K - 1), block by block; the modules of one block share one session, so their identical
baseline arms train once.
``docs`` writes this script's section of docs/panel.md (replication_doc.py). Every session's
CPU (its processes' user + system time) goes to the results JSON as it ends.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from panel import DOCS, ROOT, module_literals

CASES = Path(__file__).resolve().parent / "replication"
RESULTS = "benchmarks/results/panel/replication.json"
REPORTS = "scratch/replication"   # block reports: read into RESULTS, not committed
TRACK = "tabular"
BLOCK_SEEDS = 8
FIRST_BLOCK = 1000   # block b: seeds FIRST_BLOCK + 8b ..; the bench's own seeds are 0-63
PREREG_OFFSET, PREREG_SEEDS = 100, 16   # seeds 100-115: pre-registration
AA = "test_aa"   # the case run on every block
AA_BLOCKS, CASE_BLOCKS = 20, 10   # issue 54's minimum blocks: A/A, and each near-MDE case
COMMAND = "PYTHONPATH=$PWD .venv/bin/python benchmarks/panel/replication.py"


def cases(folder: Path = CASES) -> dict[str, dict]:
    """Each case module's stem -> its ``expected`` verdict, bench ``name`` and ``track``, its
    ``MARGIN`` (non-inferiority cases) and the first paragraph of its docstring."""
    out = {}
    for path in sorted(folder.glob("test_*.py")):
        found, summary = module_literals(path, ("expected", "MARGIN"))
        if not all(isinstance(found.get(k), str) for k in ("expected", "name", "track")):
            raise ValueError(f"{path.name}: a replication case states expected = '...' and "
                             "pytest.mark.bench(name=..., track=...) as literals")
        out[path.stem] = {**found, "summary": summary}
    return out


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def session(stems: list[str], seeds: int, offset: int, report_dir: str, workers: int,
            folder: Path = CASES) -> dict:
    """One plugin session of the case modules ``stems`` on seeds offset .. offset + seeds - 1:
    its command, CPU (user + system of every process it started), wall, load, exit status and
    last line."""
    files = [str((folder / f"{s}.py").relative_to(ROOT)) for s in stems]
    command = [sys.executable, "-m", "pytest", *files, "-n", str(workers), "-q", "-p",
               "no:randomly", f"--bench-seeds={seeds}", f"--bench-seed-offset={offset}",
               f"--bench-report-dir={report_dir}"]
    cpu, wall, load = children_cpu(), time.perf_counter(), os.getloadavg()[0]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return {"offset": offset, "seeds": seeds, "cases": stems,
            "command": "python " + " ".join(command[1:]),
            "cpu_seconds": round(children_cpu() - cpu, 1),
            "wall_seconds": round(time.perf_counter() - wall, 1),
            "load_average_1min": [round(load, 1), round(os.getloadavg()[0], 1)],
            "rc": done.returncode, "last_line": lines[-1] if lines else ""}


def outcome(report: dict) -> dict:
    """What the replication keeps of one case's report on one block: the verdict and test
    figures, and ``selected_diffs``, each seed's idea minus baseline at the configs each arm
    selected (the estimand's per-seed values; the comparison's ``per_seed_diffs`` are the
    binding paired test's, which may pit the idea against another baseline config)."""
    c = report.get("comparison") or {}
    ni = c.get("noninferiority") or {}
    idea, base = (report.get("idea") or {}), ((report.get("baseline") or {}).get("full") or {})
    selected = ([a - b for a, b in zip(idea["per_seed"], base["per_seed"])]
                if idea.get("per_seed") and base.get("per_seed") else None)
    return {"selected_diffs": selected,
            "verdict": report.get("practical_verdict") if report.get("complete") else None,
            "complete": bool(report.get("complete")), "seeds": report["protocol"]["seeds"],
            "delta": c.get("delta_mean"), "p": c.get("p_value"),
            "per_seed_diffs": c.get("per_seed_diffs"), "mde_power80": c.get("mde_power80"),
            "wins": c.get("idea_wins"), "non_inferior": ni.get("non_inferior"),
            "margin_abs": ni.get("margin_abs"),
            "baseline_mean": ((report.get("baseline") or {}).get("full") or {}).get("mean"),
            "train_seconds": round(sum(r.get("seconds") or 0.0 for r in report["runs"]), 1)}


def read_block(report_dir: Path, stems: list[str], known: dict) -> dict:
    """Each case's :func:`outcome` from the reports a session wrote (None: no report)."""
    out = {}
    for stem in stems:
        path = report_dir / known[stem]["name"] / known[stem]["track"] / "bench_report.json"
        out[stem] = outcome(json.loads(path.read_text())) if path.is_file() else None
    return out


def run_stage(results: dict, key: str, plan: list[tuple[int, int, list[str]]], workers: int,
              save, folder: Path = CASES) -> None:
    """Bench each (offset, seeds, cases) of ``plan``, only the cases not yet in
    ``results[key]`` for that offset, saving after each session."""
    known = cases(folder)
    blocks = {b["offset"]: b for b in results.setdefault(key, [])}
    for offset, seeds, stems in plan:
        todo = [s for s in stems if s not in blocks.get(offset, {}).get("outcomes", {})]
        if not todo:
            continue
        report_dir = f"{REPORTS}/{key}/{offset}"
        ran = session(todo, seeds, offset, report_dir, workers, folder)
        results.setdefault("sessions", []).append(ran)
        if offset not in blocks:
            blocks[offset] = {"offset": offset, "outcomes": {}}
            results[key].append(blocks[offset])
        blocks[offset]["outcomes"].update(read_block(ROOT / report_dir, todo, known))
        save()
        print(json.dumps({k: ran[k] for k in ("offset", "cpu_seconds", "wall_seconds", "rc",
                                               "last_line")}), flush=True)


def reread(results: dict, folder: Path = CASES) -> None:
    """Every outcome read again from its block's reports (after :func:`outcome` changed)."""
    known = cases(folder)
    for key in ("preregistration", "blocks"):
        for block in results.get(key, []):
            block["outcomes"].update(read_block(ROOT / REPORTS / key / str(block["offset"]),
                                                list(block["outcomes"]), known))


def block_spans(stems: list[str], aa_blocks: int, case_blocks: int,
                limits: list[str]) -> dict[str, range]:
    """The blocks each case runs on: the A/A case's first ``aa_blocks``, the others' first
    ``case_blocks``, unless ``limits`` says ``STEM=K`` (its first K) or ``STEM=J:K`` (blocks
    J .. K - 1: a case added late runs on blocks whose baseline is trained or being trained
    for the A/A, not on earlier ones whose baseline was never stored). Which blocks is fixed
    before any runs, never by outcomes. ValueError: a limit that is none of these."""
    spans = {s: range(aa_blocks if s == AA else case_blocks) for s in stems}
    for item in limits:
        stem, _, value = item.partition("=")
        first, _, end = value.partition(":") if ":" in value else ("0", "", value)
        span = (range(int(first), int(end)) if first.isdigit() and end.isdigit()
                and stem in spans else None)
        if span is None:
            raise ValueError(f"{item!r}: give STEM=K or STEM=J:K (integers, 0 <= J), STEM one "
                             f"of {sorted(spans)}")
        spans[stem] = span
    return spans


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage", choices=("preregister", "blocks", "reread", "docs"))
    ap.add_argument("--blocks", type=int, default=AA_BLOCKS, help="A/A blocks")
    ap.add_argument("--case-blocks", type=int, default=CASE_BLOCKS,
                    help="blocks of the other cases")
    ap.add_argument("--limit", nargs="+", default=[], metavar="STEM=K",
                    help="run case STEM on its first K blocks only (what the budget allows), "
                         "or STEM=J:K on blocks J .. K - 1")
    ap.add_argument("--cases", nargs="+", help="case stems (default: all of them)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--cases-dir", type=Path, default=CASES,
                    help="the folder of case modules (another track's panel: "
                         "benchmarks/panel/replication_mnist1d, with its own --results)")
    ap.add_argument("--docs", default=DOCS)
    args = ap.parse_args(argv)
    try:
        folder = args.cases_dir.resolve()
        known = cases(folder)
    except ValueError as exc:
        print(f"replication: {exc}", file=sys.stderr)
        return 1
    stems = args.cases or sorted(known)
    unknown = sorted(set(stems) - set(known))
    if unknown:
        print(f"replication: unknown case(s) {unknown}; valid: {sorted(known)}", file=sys.stderr)
        return 1
    record = ROOT / args.results
    results = json.loads(record.read_text()) if record.is_file() else {}

    def save() -> None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(results, indent=1) + "\n")

    if args.stage == "preregister":
        run_stage(results, "preregistration", [(PREREG_OFFSET, PREREG_SEEDS, stems)],
                  args.workers, save, folder)
    elif args.stage == "blocks":
        try:
            spans = block_spans(stems, args.blocks, args.case_blocks, args.limit)
        except ValueError as exc:
            print(f"replication: --limit {exc}", file=sys.stderr)
            return 1
        plan = [(FIRST_BLOCK + BLOCK_SEEDS * b, BLOCK_SEEDS,
                 [s for s in stems if b in spans[s]])
                for b in range(max((r.stop for r in spans.values()), default=0))]
        run_stage(results, "blocks", plan, args.workers, save, folder)
    elif args.stage == "reread":
        reread(results, folder)
        save()
    elif folder != CASES:
        print("replication: docs are written for the tabular panel only (its cases and "
              f"results); {folder.name}'s blocks are kept in {args.results}", file=sys.stderr)
        return 1
    else:
        from replication_doc import write_docs
        write_docs(results, known, ROOT / args.docs, ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
