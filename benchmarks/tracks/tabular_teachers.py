"""Tabular's teachers against its floors and candidate baselines (issue 54, item 2).

For each teacher (the track's mixture, and each of its components alone) and each seed, the
floors (kernel ridge, boosted trees: the track's own grids, tuned on validation) and each
candidate model (on a component alone: the baseline, the default before issue 54 and a ReLU
MLP), trained as the plugin trains a run (``seed_everything``, batch, epochs and cosine
schedule of the track), its lr chosen on validation from its grid. Seeds default to 100-103 on
the mixture and 100-101 on each component, disjoint from the bench's 0-63, so choosing the
baseline here does not tune it on the seeds it is judged on. Writes
benchmarks/results/tracks/tabular_teachers.json (``--out``); each row has the run's CPU
seconds (``time.process_time``, one torch thread).

    nice -n 15 python benchmarks/tracks/tabular_teachers.py [--seeds 100 101] \
        [--component-seeds 100] [--teachers mixture relu] [--models "tanh 10-64-64-1"]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "tracks" / "tabular_teachers.json"
AA_REPORT = ROOT / "benchmarks" / "results" / "tracks" / "aa" / "aa" / "tabular"
AA_REPORT = AA_REPORT / "bench_report.json"
DOC = ROOT / "docs" / "tracks.md"
BEGIN, END = "<!-- tabular_teachers.py: begin -->", "<!-- tabular_teachers.py: end -->"
EPOCHS = 120


def mlp(activation: str, widths: tuple[int, ...]):
    """A ``make_model`` of an MLP 10 - widths - 1 with ``activation`` after each hidden layer."""
    from torch import nn

    act = {"tanh": nn.Tanh, "relu": nn.ReLU, "silu": nn.SiLU}[activation]

    def make():
        layers: list[nn.Module] = []
        n_in = 10
        for width in widths:
            layers += [nn.Linear(n_in, width), act()]
            n_in = width
        return nn.Sequential(*layers, nn.Linear(n_in, 1))
    return make


MODELS = {  # name: (activation, hidden widths, lr grid)
    "tanh 10-64-64-1": ("tanh", (64, 64), (2e-3, 5e-3, 1e-2)),
    "tanh 10-64-1": ("tanh", (64,), (5e-3, 1e-2, 2e-2)),
    "tanh 10-128-1": ("tanh", (128,), (5e-3, 1e-2, 2e-2)),
    "tanh 10-256-1": ("tanh", (256,), (5e-3, 1e-2, 2e-2)),
    "tanh 10-128-128-1": ("tanh", (128, 128), (1e-3, 2e-3, 5e-3)),
    "silu 10-128-128-1": ("silu", (128, 128), (1e-3, 2e-3, 5e-3)),
    "relu 10-128-128-1": ("relu", (128, 128), (1e-3, 2e-3, 5e-3)),
}


BASELINE = "tanh 10-128-128-1"  # the track's default model (tabular.HIDDEN), chosen here
ON_COMPONENTS = (BASELINE, "tanh 10-64-64-1", "relu 10-128-128-1")  # the default before, ReLU


def teachers() -> dict[str, tuple[str, ...]]:
    from benchkit.tracks import tabular
    return {"mixture": tabular.PARTS, **{p: (p,) for p in tabular.PARTS if p != "linear"}}


def data_of(seed: int, parts: tuple[str, ...]):
    import torch

    from benchkit.tracks import Data, Split, tabular
    return Data(*(Split(torch.from_numpy(x), torch.from_numpy(y))
                  for x, y in tabular.arrays(seed, parts)))


def train(name: str, data, seed: int) -> dict:
    """The model ``name`` at each lr of its grid: the lr best on validation, its val and test."""
    from benchkit.tracks import tabular
    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    activation, widths, lrs = MODELS[name]
    track = dataclasses.replace(tabular.TRACK, make_model=mlp(activation, widths))
    runs, start = [], time.process_time()
    for lr in lrs:
        seed_everything(seed)
        model = track.model()
        got = loop.fit(model, data, track, lr=lr, epochs=EPOCHS, batch_size=track.batch_size,
                       seed=seed, schedule=track.schedule)
        runs.append((got.val, got.test, lr))
    val, test, lr = min(runs)
    return {"val": val, "test": test, "lr": lr, "test_per_lr": {str(r[2]): r[1] for r in runs},
            "cpu_s_per_run": (time.process_time() - start) / len(lrs)}


def floors_of(seed: int, parts: tuple[str, ...]) -> dict:
    from benchkit.tracks import floors, tabular

    (x, y), (xv, yv), (xt, yt) = tabular.arrays(seed, parts)
    start = time.process_time()
    ridge = floors.kernel_ridge_mse(x, y, xv, yv, xt, yt, gammas=tabular.KERNEL_GAMMAS,
                                    penalties=tabular.KERNEL_PENALTIES)
    trees = floors.boosting_mse(x, y, xv, yv, xt, yt, grid=tabular.BOOSTING_GRID)
    return {"kernel ridge": ridge, "boosted trees": trees,
            "cpu_s": time.process_time() - start}


def _mean(values) -> float:
    return sum(values) / len(values)


def selection_table(rows: list[dict]) -> str:
    """The mixture's candidates: each one's test MSE per seed at its lr chosen on validation."""
    mixture = [r for r in rows if r["teacher"] == "mixture"]
    seeds = [r["seed"] for r in mixture]
    names = [n for n in MODELS if all(n in r["models"] for r in mixture)]
    lines = ["| model | " + " | ".join(f"seed {s}" for s in seeds)
             + " | mean | selected lr | CPU s a run |", "|---" * (len(seeds) + 4) + "|"]
    ranked = sorted(names, key=lambda n: _mean([r["models"][n]["test"] for r in mixture]))
    for name in ranked:
        got = [r["models"][name] for r in mixture]
        bold = "**" if name == BASELINE else ""
        lines.append(f"| {bold}{name}{bold} | " + " | ".join(f"{g['test']:.3f}" for g in got)
                     + f" | {bold}{_mean([g['test'] for g in got]):.3f}{bold} | "
                     + ", ".join(f"{g['lr']:g}" for g in got)
                     + f" | {_mean([g['cpu_s_per_run'] for g in got]):.2f} |")
    for floor in ("kernel ridge", "boosted trees"):
        got = [r["floors"][floor] for r in mixture]
        lines.append(f"| {floor} (floor) | " + " | ".join(f"{g:.3f}" for g in got)
                     + f" | {_mean(got):.3f} | — | — |")
    return "\n".join(lines)


def margin_table(rows: list[dict], mde: float) -> str:
    """Per teacher: the floors' and models' mean test MSE, and the baseline's margin over each
    floor in units of ``mde``."""
    lines = [f"| teacher | seeds | kernel ridge | boosted trees | {' | '.join(ON_COMPONENTS)} | "
             f"margin over kernel ridge, MDEs | over boosted trees, MDEs |",
             "|---" * (len(ON_COMPONENTS) + 6) + "|"]
    for teacher in teachers():
        mine = [r for r in rows if r["teacher"] == teacher]
        if not mine:
            continue
        ridge = _mean([r["floors"]["kernel ridge"] for r in mine])
        trees = _mean([r["floors"]["boosted trees"] for r in mine])
        models = {n: _mean([r["models"][n]["test"] for r in mine]) for n in ON_COMPONENTS}
        base = models[BASELINE]
        lines.append(f"| {teacher} | {', '.join(str(r['seed']) for r in mine)} | {ridge:.3f} | "
                     f"{trees:.3f} | " + " | ".join(f"{v:.3f}" for v in models.values())
                     + f" | {(ridge - base) / mde:+.1f} | {(trees - base) / mde:+.1f} |")
    return "\n".join(lines)


def doc_text() -> str:
    """docs/tracks.md's generated block: the selection and the per-teacher margins."""
    made = json.loads(OUT.read_text())
    rows = made["rows"]
    report = json.loads(AA_REPORT.read_text())
    mde = report["comparison"]["mde_power80"]
    training = sum(len(MODELS[n][2]) * m["cpu_s_per_run"] for r in rows
                   for n, m in r["models"].items())
    floors = sum(r["floors"]["cpu_s"] for r in rows)
    return (f"Model selection on the mixture (test MSE at the lr each model chose on "
            f"validation; `nice -n 15 {made['command'].strip()}`, {OUT.relative_to(ROOT)}; "
            f"CPU: {training:.0f} s of training and {floors:.0f} s of floors, one thread):"
            f"\n\n{selection_table(rows)}\n\n"
            f"Margins per teacher (mean test MSE over the seeds; the margin is the floor's "
            f"MSE minus the baseline's `{BASELINE}`, in units of the tabular A/A bench's "
            f"`mde_power80` {mde:.3g}, the mixture's at {report['n_seeds']} seeds):\n\n"
            f"{margin_table(rows, mde)}")


def cards():
    """benchmarks/tracks/cards.py, imported by path (the folder is not a package)."""
    import importlib.util

    name = "track_cards_for_teachers"
    if name not in sys.modules:  # dataclasses look their module up while it executes
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("cards.py"))
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102, 103])
    ap.add_argument("--component-seeds", type=int, nargs="+", default=[100, 101],
                    help="the seeds of each component alone")
    ap.add_argument("--teachers", nargs="+", help="default: all")
    ap.add_argument("--models", nargs="+", help="default: every model on the mixture, "
                    "ON_COMPONENTS on each component alone")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--doc", action="store_true", help="write docs/tracks.md's tables from "
                    "the JSON and the A/A report, train nothing")
    args = ap.parse_args()
    if args.doc:
        cards().replace_block(DOC, doc_text(), BEGIN, END)
        return
    torch.set_num_threads(1)
    chosen = {k: v for k, v in teachers().items() if not args.teachers or k in args.teachers}
    out = {"command": "python benchmarks/tracks/tabular_teachers.py " + " ".join(sys.argv[1:]),
           "epochs": EPOCHS, "rows": []}
    for teacher, parts in chosen.items():
        for seed in args.seeds if teacher == "mixture" else args.component_seeds:
            row = {"teacher": teacher, "seed": seed, "floors": floors_of(seed, parts),
                   "models": {}}
            data = data_of(seed, parts)
            names = args.models or (list(MODELS) if teacher == "mixture" else ON_COMPONENTS)
            for name in names:
                row["models"][name] = train(name, data, seed)
                print(teacher, seed, name, row["models"][name]["test"],
                      row["models"][name]["lr"], flush=True)
            print(teacher, seed, row["floors"], flush=True)
            out["rows"].append(row)
            args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
