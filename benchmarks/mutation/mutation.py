"""Mutation score of the decision core: does a changed rule fail a test?

Runs mutmut (configured in pyproject.toml's [tool.mutmut]: the decision modules and the tests
that pin them) on a copy of the working tree, so the checkout never holds mutmut's `mutants/`,
then classifies every mutant and writes benchmarks/results/mutation/<module>.json: one file per
module, so modules can be measured one at a time; the totals printed cover every module
recorded there. Kinds:

- killed: a test failed (or timed out) with the mutant in place;
- survived: every selected test passed, or no test exercised the mutated function;
- message: a survivor whose only change is a string literal with a space in it (a message
  for people, never a key, a verdict name or a gate name): listed, not counted as a rule.

score = killed / (killed + survived), message mutants left out of both. Mutants are killed by
the in-process tests: tests/conftest.py skips the pytester sessions while mutmut runs.
Needs `pip install mutmut==3.8.1` (the `mutation` extra). Usage:
    python benchmarks/mutation/mutation.py [--max-children 2] [--keep DIR]
"""
from __future__ import annotations

import argparse
import ast
import difflib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the functions that turn runs into verdicts and gates: their mutants are the score
DECISION_FUNCTIONS = {
    "benchkit.stats.paired": ["summarize", "min_p_value", "sign_flip_p_value", "mde", "ci95",
                              "effect_size", "idea_wins", "holm", "noninferiority", "compare",
                              "select_config", "spent_alpha", "look_levels"],
    "benchkit.stats.values": ["checked_direction"],
    "benchkit.verdict.build": ["arm_sweep", "selected_index", "build_report"],
    "benchkit.report.session": ["aggregate_session", "gate_failure"],
    "benchkit.spec.marker": ["parse_bench_marker"],
    "benchkit.spec.arguments": ["parse_grid"],
    "benchkit.spec.idea": ["family_seeds_needed", "unreachable_family"],
    "benchkit.stats.signflip": ["min_pairs", "sign_flip_ci", "power", "mde_power80",
                                "seeds_needed"],
    "benchkit.verdict.budgets": ["tolerance_of"],
    "benchkit.report.reading": ["unmatched_reason", "non_discriminating"],
    "benchkit.verdict.controls": ["adjusted"],
    "benchkit.verdict.decision": ["practical_verdict", "better", "system_verdict", "claim_verdict",
                                  "decision_of", "verdicts_against", "decide_against_all",
                                  "futility_advice"],
    "benchkit.verdict.mechanism": ["mechanism_signature", "math_verification", "evidence_ok",
                                   "signature_status", "mechanism_ok"],
    "benchkit.verdict.extension": ["axes", "log_spaced", "next_value", "extended", "selected_edges",
                                   "resolve"],
    "benchkit.stats.selection": ["sweeps", "axis_classes", "effective_grids", "blocked",
                                 "flip_rows", "_select", "_batch_diffs", "p_value", "one_sided_p",
                                 "interval", "margin_test", "noninferiority", "tost",
                                 "critical_effects", "mde_power80", "seeds_needed"],
    "benchkit.verdict.sweeps": ["from_runs", "groups_of", "decide_by_selection", "favoured_arm"],
    "benchkit.verdict.frontier": ["build_frontier_report"],
    "benchkit.verdict.margins": ["unresolved_margin"],
    "benchkit.verdict.convergence": ["last_quarter_gain", "check_cfg", "checked",
                                     "checks_called_for", "trains_the_epochs", "check_gains",
                                     "check_decision", "budget_gain", "section"],
    "benchkit.verdict.grids": ["grids_from_store", "checks_from_store"],
    "benchkit.report.nextstep": ["without", "missing_seeds", "next_steps"],
    "benchkit.store.runs": ["RunStore.key"],
}
OUT = ROOT / "benchmarks" / "results" / "mutation"  # one <module>.json per measured module
KILLED = {"killed", "timeout", "segfault"}
SURVIVED = {"survived", "no tests"}
NAME = re.compile(r"^\s*(?P<name>\S+__mutmut_\d+): (?P<status>.+?)\s*$")


def mangled(module: str, func: str) -> str:
    """mutmut's name of a function's mutants, less ``__mutmut_<n>``: ``module.x_func``, or
    ``module.xǁClassǁmethod`` for ``Class.method``."""
    cls, _, name = func.rpartition(".")
    return f"{module}.xǁ{cls}ǁ{name}" if cls else f"{module}.x_{func}"


def module_of(mutant: str) -> str:
    return re.split(r"\.x[_ǁ]", mutant, maxsplit=1)[0]


def sampled(work: Path, prefixes: list[str],
            every: dict[str, int]) -> tuple[list[str], dict[str, int]]:
    """Every K-th mutant (by number; K = ``every[module]``, else ``every[""]``) of each
    function named by ``prefixes``, from the mutants mutmut generated in ``work`` (a --keep
    folder of an earlier run), and how many mutants each module has in all."""
    names = []
    for meta in (work / "mutants").rglob("*.py.meta"):
        names += json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    chosen, population = [], {}
    for prefix in prefixes:
        mine = sorted((n for n in names if n.startswith(prefix + "__mutmut_")),
                      key=lambda n: int(n.rpartition("_")[2]))
        chosen += mine[::every.get(module_of(prefix), every[""])]
        population[module_of(prefix)] = population.get(module_of(prefix), 0) + len(mine)
    return chosen, population


def copy_tree(dest: Path) -> None:
    """Tracked and untracked-but-not-ignored files: what CI would check out, plus edits."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def mutant_sources(work: Path) -> dict[str, tuple[str, str]]:
    """mutant name -> (original function source, mutated function source), read from the
    trampolined modules mutmut writes under mutants/."""
    out = {}
    for path in (work / "mutants").rglob("*.py"):
        rel = path.relative_to(work / "mutants").with_suffix("")
        module = ".".join(rel.parts)
        text = path.read_text(encoding="utf-8")
        if "__mutmut_" not in text:
            continue
        lines = text.splitlines()
        funcs = {}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and "__mutmut_" in node.name:
                funcs[node.name] = "\n".join(lines[node.lineno - 1:node.end_lineno])
        for name, src in funcs.items():
            base, _, tag = name.rpartition("__mutmut_")
            if tag.isdigit() and f"{base}__mutmut_orig" in funcs:
                out[f"{module}.{name}"] = (funcs[f"{base}__mutmut_orig"], src)
    return out


def _strings_blanked(tree: ast.AST) -> str:
    """The tree with every string literal emptied and the function's own name dropped."""
    class Blank(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.Constant("") if isinstance(node.value, str) else node

        def visit_FunctionDef(self, node):
            node.name = "f"
            return self.generic_visit(node)
    return ast.dump(Blank().visit(tree))


def is_message_only(original: str, mutated: str) -> bool:
    """Only string literals changed, and each changed original literal contains a space."""
    try:
        a, b = ast.parse(_dedent_def(original)), ast.parse(_dedent_def(mutated))
    except SyntaxError:
        return False
    before = [n.value for n in ast.walk(a)
              if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    after = [n.value for n in ast.walk(b)
             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if _strings_blanked(a) != _strings_blanked(b):  # (blanks the trees in place)
        return False
    changed = [x for x, y in zip(before, after) if x != y]
    return bool(changed) and all(" " in x for x in changed)


def _dedent_def(src: str) -> str:
    lines = src.splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    return "\n".join(line[indent:] for line in lines)


def diff(original: str, mutated: str) -> str:
    a = _dedent_def(original).splitlines()[1:]  # the def lines differ by the mutant's name
    b = _dedent_def(mutated).splitlines()[1:]
    changed = [ln for ln in difflib.unified_diff(a, b, lineterm="", n=0)
               if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return " | ".join(ln.strip() for ln in changed)[:300]


def recorded(by_module: dict[str, dict], folder: Path) -> dict:
    """Write this run's modules to folder/<module>.json (replacing earlier runs of them) and
    return the totals over every module recorded there, so that modules can be measured one
    at a time, also by people working in parallel."""
    folder.mkdir(parents=True, exist_ok=True)
    for module, counts in by_module.items():
        (folder / f"{module}.json").write_text(json.dumps(counts, indent=2) + "\n",
                                               encoding="utf-8")
    modules = {p.stem: json.loads(p.read_text(encoding="utf-8"))
               for p in sorted(folder.glob("*.json"))}
    killed = sum(c["killed"] for c in modules.values())
    survived = sum(c["survived"] for c in modules.values())
    return {"killed": killed, "survived": survived,
            "score": round(killed / (killed + survived), 4) if killed + survived else None,
            "modules": {m: c["score"] for m, c in modules.items()}}


def table(folder: Path) -> str:
    """The markdown table of every module recorded in `folder` (for benchmarks/README.md)."""
    rows = ["| module | killed | survived | score | measured by | seconds |",
            "|---|---|---|---|---|---|"]
    killed = survived = 0
    for path in sorted(folder.glob("*.json")):
        c = json.loads(path.read_text(encoding="utf-8"))
        killed, survived = killed + c["killed"], survived + c["survived"]
        sample = c.get("sample")
        score = f"{c['score']:.3f}" + (f" (sample: 1 in {sample['every']} of "
                                       f"{sample['mutants']} mutants; SE {sample['se']})"
                                       if sample else "") + (
            f"; {c['not_run']} of the sample not run" if c.get("not_run") else "")
        rows.append(f"| {path.stem} | {c['killed']} | {c['survived']} | {score} | "
                    f"`{c.get('command', '?')}` | {c.get('seconds', '?')} |")
    if killed + survived:
        rows.append(f"| **all recorded** | {killed} | {survived} | "
                    f"**{killed / (killed + survived):.3f}** | | |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (run again with "
                    "the same folder, mutmut reuses its test stats: one module at a time "
                    "without collecting them again)")
    ap.add_argument("--only", metavar="MODULE", action="append",
                    help="mutate only this module's decision functions "
                         "(e.g. benchkit.verdict.build); repeatable; the score then covers "
                         "only them")
    ap.add_argument("--sample", action="append", default=[], metavar="[MODULE=]K",
                    help="run every K-th mutant of each function only (of MODULE's, when "
                         "named; repeatable; needs a --keep folder where mutmut generated the "
                         "mutants): the score is then an estimate, recorded with its sample")
    ap.add_argument("--collect", action="store_true",
                    help="run nothing: record what the --keep folder's runs have measured")
    ap.add_argument("--table", action="store_true",
                    help="print the markdown table of the recorded modules and exit")
    args = ap.parse_args(argv)
    if args.table:
        print(table(OUT))
        return 0
    unknown = set(args.only or ()) - set(DECISION_FUNCTIONS)
    if unknown:
        ap.error(f"--only {sorted(unknown)}: valid modules are {sorted(DECISION_FUNCTIONS)}")
    mutmut = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which("mutmut")
    if mutmut is None:
        print("mutation.py: mutmut is not installed; pip install mutmut==3.8.1", file=sys.stderr)
        return 2
    every = {"": 1}
    for item in args.sample:
        module, _, k = item.rpartition("=")
        if not k.isdigit() or int(k) < 1:
            ap.error(f"--sample {item}: give K or MODULE=K, K a whole number >= 1")
        every[module] = int(k)
    sampling = any(k > 1 for k in every.values())
    if (sampling or args.collect) and args.keep is None:
        ap.error("--sample and --collect need the --keep folder of an earlier run")
    work = args.keep or Path(tempfile.mkdtemp(prefix="benchkit-mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    prefixes = [mangled(module, func) for module, funcs in DECISION_FUNCTIONS.items()
                if not args.only or module in args.only for func in funcs]
    patterns = [f"{prefix}__mutmut_*" for prefix in prefixes]
    population: dict[str, int] = {}
    if sampling:
        patterns, population = sampled(work, prefixes, every)
    if not args.collect:
        copy_tree(work)
        # Every process must import the mutated package, not the editable install. The folder
        # must exist before mutmut starts: Python caches a sys.path entry that is missing at
        # the first import as "nothing here", and would then never look in it again.
        (work / "mutants").mkdir(exist_ok=True)
        env = {**os.environ, "PYTHONPATH": str(work / "mutants")}
        run = subprocess.run([mutmut, "run", "--max-children", str(args.max_children),
                              *patterns], cwd=work, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            print(run.stdout[-3000:], run.stderr[-3000:], sep="\n", file=sys.stderr)
            return run.returncode
    seconds = time.monotonic() - start
    chosen = set(patterns) if sampling else None
    listing = subprocess.run([mutmut, "results", "--all", "true"], cwd=work, capture_output=True,
                             text=True, check=True).stdout
    sources = mutant_sources(work)
    rows = []
    not_run: dict[str, int] = {}  # asked for, no result (a run stopped early: --collect)
    for line in listing.splitlines():
        m = NAME.match(line)
        if not m:
            continue
        name, status = m["name"], m["status"]
        if args.only and module_of(name) not in args.only:
            continue  # a kept folder (--keep) also lists the modules of earlier runs
        if chosen is not None and name not in chosen or not name.startswith(
                tuple(p + "__mutmut_" for p in prefixes)):
            continue
        if status == "not checked":
            not_run[module_of(name)] = not_run.get(module_of(name), 0) + 1
            continue
        original, mutated = sources.get(name, ("", ""))
        kind = ("killed" if status in KILLED else
                "message" if status in SURVIVED and is_message_only(original, mutated) else
                "survived" if status in SURVIVED else status)
        rows.append({"mutant": name, "status": status, "kind": kind,
                     "diff": diff(original, mutated) if original else ""})
    by_module: dict[str, dict[str, int]] = {}
    for r in rows:
        module = module_of(r["mutant"])
        counts = by_module.setdefault(module, {"killed": 0, "survived": 0, "message": 0})
        if r["kind"] in counts:
            counts[r["kind"]] += 1
    for counts in by_module.values():
        rule = counts["killed"] + counts["survived"]
        counts["score"] = round(counts["killed"] / rule, 4) if rule else None
    ran = {"command": " ".join(["python benchmarks/mutation/mutation.py", "--max-children",
                                str(args.max_children), *(f"--only {m}" for m in args.only or ()),
                                *(f"--sample {k}" for k in args.sample)]),
           "seconds": None if args.collect else round(seconds, 1)}
    if args.collect:
        ran["command"] += " (its results so far, recorded by --collect)"
    for module, counts in by_module.items():
        counts.update(ran, survivors=[r for r in rows if r["kind"] == "survived"
                                      and module_of(r["mutant"]) == module],
                      message_mutants=[r for r in rows if r["kind"] == "message"
                                       and module_of(r["mutant"]) == module])
        if not_run.get(module):
            counts["not_run"] = not_run[module]
        k = every.get(module, every[""])
        if sampling and k > 1:  # a systematic sample: the score's binomial SE beside it
            rule = counts["killed"] + counts["survived"]
            p = counts["score"] or 0.0
            counts["sample"] = {"every": k, "mutants": population.get(module),
                                "se": round(math.sqrt(p * (1 - p) / rule), 4) if rule else None}
    version = subprocess.run([mutmut, "--version"], capture_output=True, text=True).stdout
    for counts in by_module.values():
        counts["mutmut"] = version.strip()
    result = recorded(by_module, OUT)
    print(f"{len(rows)} mutants in {seconds:.0f} s; every module measured so far: "
          f"{result['killed']} killed, {result['survived']} survived, score {result['score']}")
    for module, c in sorted(by_module.items()):
        print(f"  {module:28s} killed {c['killed']:4d}  survived {c['survived']:3d}  "
              f"message {c['message']:3d}  score {c['score']}")
    for r in (r for c in by_module.values() for r in c["survivors"]):
        print(f"  SURVIVED {r['mutant']} ({r['status']}): {r['diff']}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
