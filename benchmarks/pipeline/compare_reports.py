"""Recompute reports through benchkit's pipeline and compare them with saved outputs.

Behaviour check for the pipeline refactors (issue 43): the per-seed numbers, statistics,
verdicts and report JSON of every committed report (``reports/`` and
``benchmarks/results/**``) and of a set of fixture reports must be the same before and after.

For every committed report it records (1) what ``verify`` recomputes from its run rows (the
comparisons and the lines that differ from the report: none expected), and (2) the report
rebuilt from its run rows through the whole pipeline (spec from the report, build, family
adjustment, decision). Fixture reports are built from hand-made payloads (tests/builders.py)
covering controls, margins, equivalence, sign/wilcoxon tests, looks with futility, frontiers,
grid extension, multi-track families and incomplete runs.

    PYTHONPATH=$PWD python benchmarks/pipeline/compare_reports.py --save benchmarks/pipeline/before
    PYTHONPATH=$PWD python benchmarks/pipeline/compare_reports.py benchmarks/pipeline/before

The second form exits 1 and names each case whose JSON differs (text, key order included).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchkit.cli import recheck
from benchkit.cli.verify import family
from benchkit.report import bench_report
from benchkit.spec import IdeaSpec
from benchkit.spec.payloads import MechanismPayload, RunPayload, payload_from_json
from benchkit.stats import signtest
from benchkit.verdict import pipeline

ROOT = Path(__file__).resolve().parents[2]
# the fields a session adds from outside the runs and the plan (time, machine, store)
VOLATILE = ("created", "provenance", "store", "floors")


def pipeline_reports(spec: IdeaSpec, payloads: list[RunPayload],
                     mechanisms: list[MechanismPayload], alpha: float) -> list[dict]:
    """Every report of ``spec``'s tracks, decided, as the plugin makes them (without floors,
    provenance and store, which come from outside the runs)."""
    return [r.to_json() for r in pipeline.idea_reports(spec, payloads, mechanisms, alpha=alpha)]


def records_of(plains: list[dict]) -> list:
    """The payloads' JSON as the controller receives it: their records (the JSON edge)."""
    return [p for p in map(payload_from_json, plains) if p is not None]


def dumps(value) -> str:
    return json.dumps(value, indent=1, allow_nan=False) + "\n"


# ------------------------------------------------------------------ committed reports
def committed() -> list[Path]:
    return sorted(ROOT.glob("reports/*/*/bench_report.json")) + sorted(
        ROOT.glob("benchmarks/results/**/bench_report.json"))


def spec_of(report: dict) -> IdeaSpec:
    """The idea's spec as far as its report states it (one track: its own)."""
    protocol, track = report["protocol"], report["track"]
    sequential, extensions = report["sequential"], report["grid_extensions"]
    plain_protocol = {k: v for k, v in protocol.items() if k not in (
        "grid", "seeds", "alpha", "extend", "selection", "test", "margin", "claim_type")}
    test = next((t for t, name in signtest.NAMES.items() if name == protocol["test"]), "mean")
    controls = [c["arm"] for c in (report.get("controls") or {}).values()]
    frontier = report.get("frontier")
    mechanism_tests = sorted({t["test"].rsplit("::", 1)[-1].split("[", 1)[0]
                              for t in report["math_verification"]["tests"]})
    return IdeaSpec.from_plain({
        "name": report["name"], "module": report["module"], "tracks": [track],
        "grids": {track: protocol["grid"]}, "declared_grids": {
            track: extensions["declared_grid"]}, "seeds": protocol["seeds"],
        "epochs": {track: protocol["epochs"]}, "claim": report["claim"],
        "margin": protocol["margin"], "looks": sequential["looks"],
        "looks_declared": sequential["declared"], "boundary": sequential["boundary"],
        "test": test, "protocols": {track: plain_protocol},
        "mechanism_tests": mechanism_tests, "arms": ["baseline", "idea", *controls],
        "claim_type": protocol["claim_type"],
        "frontier": {frontier["axis"]: frontier["values"]} if frontier else None,
        "extend": extensions["limit"],
        "futility": (sequential["futility"] or {}).get("threshold"),
        "budget_waiver": dict((report.get("budgets") or {}).get("waivers") or {}),
        "budget_tolerance": {c["budget"]: c["tolerance"]
                             for c in (report.get("budgets") or {}).get("checks") or []}})


def payloads_of(report: dict, spec: IdeaSpec) -> tuple[list[dict], list[dict]]:
    """Run payloads from the report's rows (signatures completed from its mechanism section)
    and mechanism payloads from its math verification."""
    described = report["mechanism_signature"]["signatures"]
    plain = spec.to_plain()
    runs = []
    for k, row in enumerate(report["runs"]):
        signatures = {}
        for name, observed in (row.get("signatures") or {}).items():
            d = described.get(name) or {"predicted": 0.0, "tol": 0.0, "prediction": name}
            signatures[name] = {
                "observed": observed, "predicted": d["predicted"], "tol": d["tol"],
                "prediction": d["prediction"], "has_null": False, "null": None,
                "confirmed": observed is not None
                and abs(observed - d["predicted"]) <= d["tol"]}
        payload = {**row, "kind": "run", "message": None if row["outcome"] == "passed"
                   else "failed", "spec": plain, "track": report["track"],
                   "nodeid": f"{report['module']}::test_{row['arm']}[{k}]",
                   "signatures": signatures, "env": report.get("environment")}
        if row["outcome"] != "passed":
            payload.pop("val", None)
        runs.append(payload)
    mechanisms = [{"kind": "mechanism", "outcome": t["outcome"], "message": t["message"],
                   "nodeid": t["test"], "spec": plain}
                  for t in report["math_verification"]["tests"]]
    return runs, mechanisms


def committed_cases() -> dict[str, object]:
    out = {}
    for path in committed():
        name = str(path.parent.relative_to(ROOT)).replace("/", "__")
        report = bench_report.load_report(path)
        record = bench_report.read_report(path)
        members = family(path, record)
        comps, problems = recheck.comparisons(record)
        out[f"verify__{name}"] = {"comparisons": comps and [c.to_json() for c in comps],
                                  "problems": problems,
                                  "verdict_lines": recheck.verdicts(record, members)}
        spec = spec_of(report)
        runs, mechanisms = payloads_of(report, spec)
        rebuilt = pipeline_reports(spec, records_of(runs), records_of(mechanisms),
                                   alpha=report["protocol"]["alpha"])
        out[f"rebuilt__{name}"] = [_strip(r) for r in rebuilt]
    return out


# ------------------------------------------------------------------ fixture reports
def fixture_cases() -> dict[str, object]:
    sys.path.insert(0, str(ROOT / "tests"))  # tests/builders.py
    import builders as b

    out = {}
    for case, kwargs in {
            "helps": {}, "harms": {"effect": 0.3}, "null": {"effect": 0.0, "seeds": 6},
            "higher": {"direction": "higher", "effect": 0.3},
            "missing": {"missing": 1}, "failed": {"failed": 2},
            "diverged": {"diverge_idea_cfg": 1}, "signature-off": {"signature_ok": False},
            "mechanism-failed": {"mechanism_passed": False},
            "two-tracks": {"tracks": ("tabular", "dynamics")},
            "margin": {"margin": 0.05, "effect": 0.01},
    }.items():
        out[f"fixture__make_report__{case}"] = _strip(b.make_report(**kwargs))

    grid = b.GRID
    rng_base = [[1.0 + 0.1 * s + 0.3 * k for s in range(8)] for k in range(3)]

    def table(effects: dict, noise=0.0):
        rows = {}
        for (arm, k), shift in effects.items():
            rows[(arm, k)] = [(v + shift + noise * ((s * 7919 + k * 31) % 13 - 6) / 6,
                               v + shift + 0.02 * ((s * 104729 + k) % 5 - 2))
                              for s, v in enumerate(rng_base[k])]
        return rows
    arms3 = {("baseline", k): 0.0 for k in range(3)} | {("idea", k): -0.2 + 0.05 * k
                                                       for k in range(3)}
    variants = {
        "controls": ({"arms": ["baseline", "idea", "control:plain"]},
                     arms3 | {("control:plain", k): -0.1 for k in range(3)}),
        "sign": ({"test": "sign"}, arms3),
        "wilcoxon": ({"test": "wilcoxon"}, arms3),
        "equivalence": ({"margin": 0.5, "claim_type": "equivalence"},
                        {**arms3, **{("idea", k): 0.01 for k in range(3)}}),
        "noninferiority": ({"margin": 0.2, "claim_type": "non-inferiority"},
                           {**arms3, **{("idea", k): 0.05 for k in range(3)}}),
        "looks-futility": ({"looks": [4, 8, 16], "futility": 0.2, "seeds": 8},
                           {**arms3, **{("idea", k): 0.0 for k in range(3)}}),
        "looks-exact": ({"looks": [8, 16], "boundary": "exact", "seeds": 8}, arms3),
        "override": ({"overrides": {"seeds": 8}}, arms3),
        "sign-controls": ({"test": "sign", "arms": ["baseline", "idea", "control:c"]},
                          arms3 | {("control:c", k): 0.1 for k in range(3)}),
    }
    for case, (fields, effects) in variants.items():
        fields = dict(fields)
        seeds = fields.pop("seeds", 8)
        looks = fields.pop("looks", None)
        margin = fields.pop("margin", None)
        overrides = fields.pop("overrides", None)
        if "arms" in fields:
            fields["arms"] = list(fields["arms"])
        spec = b.make_spec(grid, seeds, margin=margin, looks=looks, overrides=overrides,
                           **fields)
        runs = b.runs_from(table(effects, noise=0.05), grid)
        out[f"fixture__spec__{case}"] = [_strip(r) for r in pipeline_reports(
            spec, runs, [], alpha=b.ALPHA)]

    # a frontier over two values of an axis, with a control
    fgrid = [{"lr": lr, "keep": keep} for keep in (0.25, 0.5) for lr in (0.01, 0.03)]
    spec = b.make_spec(fgrid, 6, frontier={"keep": [0.25, 0.5]},
                       arms=["baseline", "idea", "control:c"])
    runs = []
    for arm, shift in (("baseline", 0.0), ("idea", -0.1), ("control:c", 0.05)):
        for k, cfg in enumerate(fgrid):
            for s in range(6):
                v = 1.0 + 0.1 * s + 0.2 * k + shift + 0.03 * ((s * 31 + k * 7) % 5 - 2)
                runs.append(b.make_run(arm, cfg, s, v, v + 0.01 * (s % 3)))
    out["fixture__spec__frontier"] = [_strip(r) for r in pipeline_reports(
        spec, runs, [], alpha=b.ALPHA)]

    # the edge extension: the idea's best config sits at the grid's edge
    spec = b.make_spec(grid, 6, extend=2, declared_grids={b.TRACK: grid})
    rows = table({("baseline", k): 0.0 for k in range(3)} | {("idea", k): -0.05 * k
                                                             for k in range(3)})
    runs = b.runs_from({key: v[:6] for key, v in rows.items()}, grid)
    out["fixture__spec__extension"] = [_strip(r) for r in pipeline_reports(
        spec, runs, [], alpha=b.ALPHA)]

    for case, (base, idea) in {"paired8": (b.BASE8, b.IDEA8),
                               "paired-tie": (b.BASE8, list(b.BASE8))}.items():
        spec = b.make_spec(grid[:1], 8)
        out[f"fixture__paired__{case}"] = [_strip(r) for r in pipeline_reports(
            spec, b.one_config_runs(base, idea), [], alpha=b.ALPHA)]
    return out


def _strip(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in VOLATILE}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saved", nargs="?", help="a folder written by --save to compare with")
    parser.add_argument("--save", metavar="DIR", help="write every case's JSON to DIR")
    args = parser.parse_args()
    cases = {**committed_cases(), **fixture_cases()}
    if args.save:
        folder = Path(args.save)
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in cases.items():
            (folder / f"{name}.json").write_text(dumps(value), encoding="utf-8")
        print(f"{len(cases)} case(s) saved to {folder}")
    if not args.saved:
        return 0
    folder, differ, same = Path(args.saved), [], 0
    saved = {p.stem for p in folder.glob("*.json")}
    for name, value in cases.items():
        path = folder / f"{name}.json"
        if not path.exists():
            differ.append(f"{name}: not saved before")
            continue
        before = path.read_text(encoding="utf-8")
        if before == dumps(value):
            same += 1
        elif json.loads(before) == json.loads(dumps(value)):
            differ.append(f"{name}: the same values, another key order")
        else:
            differ.append(f"{name}: the JSON differs")
    differ += [f"{name}: saved before, not made now" for name in sorted(saved - set(cases))]
    for line in differ:
        print("DIFFER", line)
    print(f"{same} of {len(cases)} case(s) identical; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
