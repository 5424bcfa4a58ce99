"""Where a track's paired A/A variance comes from: init, minibatch order, data sample and
test-set sampling noise, each varied alone with the others held fixed (Bouthillier et al.,
"Accounting for Variance in Machine Learning Benchmarks", MLSys 2021).

Every run is the track's default model at one fixed config (``--lr``, default: the track's
grid where it has one config, else the config its committed A/A bench selected), trained as the
plugin trains a run (``loop.fit``: the track's optimizer, schedule, batch size and epochs); the
init stream is ``torch.manual_seed`` before the model is built, the minibatch order is
``loop.train``'s ``seed``. Per data seed s:

* init: ``--k`` models from init streams s + k * OFFSET (k = 0 .. K-1), order and data of s;
* order: K - 1 more models with order seeds s + k * OFFSET, init and data of s;
* data: one model with init and order streams fixed at FIXED for every data seed (the same
  initial weights and order on every seed's sample).

Each model is scored on the track's test split and on ``--fresh`` examples drawn afresh from
the same distribution ("population" score: its test-set noise is n_test / n_fresh smaller).
The A/A bench's paired difference (two inits, shared data and order) has variance
2 * (within-seed variance of the test score over inits); of that, the test-set sampling noise
is the mean over init pairs of var(per-example loss difference) / n_test, and the rest is the
inits' difference in population score. The JSON gives each source's sd, the paired sd and its
test-noise share, the paired sd projected to other test-set sizes, and the fraction of fresh
examples two inits' models disagree on (one right, one wrong). Writes
benchmarks/results/tracks/variance_<track>.json.

Resumable: the file is written after each data seed, and a later call with the same settings
(track, lr, epochs, test and fresh sizes, k) trains only the seeds it lacks; past ``--limit``
wall seconds no new seed is started, so a long study is several calls under 10 minutes each.
``committed_aa_inits`` adds a source that costs no training: the per-seed test scores of the
track's committed A/A benches (benchmarks/results/tracks/aa*/aa/<track>), one score per init
stream (the baseline's and each idea's) where every arm selected the same config; their pooled
within-seed variance is the inits' variance at the test-set size of those benches.

    nice -n 15 .venv/bin/python benchmarks/tracks/variance.py --track tabular --seeds 6 --k 4
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "tracks"
AA = RESULTS / "aa" / "aa"
SETTINGS = ("track", "lr", "epochs", "n_test", "n_fresh", "k")  # a resumed file must match
OFFSET = 1_000_003   # test_aa.py's idea init offset: the k-th stream is seed + k * OFFSET
FIXED = 777_777      # the init and order stream every data seed shares in the data source
FRESH_SEED = 10 ** 9  # fresh test sets come from seeds FRESH_SEED + s: none a bench uses
PROJECT_SIZES = (1000, 2000, 5000, 10000, 20000)


def fresh_test(track: str, seed: int, n: int):
    """``n`` examples ``(x, y)`` (numpy) from the distribution of ``seed``'s test split, none of
    them in it, in the same units (dynamics: its train split's normalisation)."""
    if track == "tabular":
        from benchkit.tracks import tabular
        return tabular.sample(np.random.default_rng([FRESH_SEED, seed]), n)
    if track == "dynamics":
        from benchkit.tracks import dynamics
        # windows() draws its sizes' splits in order from one stream: a longer test split
        # starts with the track's test windows (checked below), the rest are fresh
        sizes = (dynamics.N_TRAIN, dynamics.N_VAL, dynamics.N_TEST + n)
        x, y = dynamics.windows(seed, sizes=sizes)[2]
        assert np.array_equal(x[:dynamics.N_TEST], dynamics.arrays(seed)[2][0])
        return x[dynamics.N_TEST:], y[dynamics.N_TEST:]
    if track == "mnist1d":
        from benchkit.tracks import mnist1d
        return mnist1d.generate(FRESH_SEED + seed, n)
    raise SystemExit(f"variance.py: no fresh test set for track {track!r}; valid: tabular, "
                     "dynamics, mnist1d")


def per_example(track, pred, y) -> np.ndarray:
    """The track's metric per example (its mean is the metric: checked by the caller)."""
    if track.metric_name == "mse":
        return ((pred - y) ** 2).reshape(len(y), -1).mean(dim=1).double().numpy()
    if track.metric_name == "accuracy":
        return (pred.argmax(dim=1) == y).double().numpy()
    raise SystemExit(f"variance.py: no per-example form of metric {track.metric_name!r}")


def train_one(track, data, fresh, *, lr: float, init: int, order: int):
    """One run: per-example losses on the test split and on the fresh set."""
    import torch

    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    seed_everything(init)
    model = track.model()
    diverged, _ = loop.train(model, data.train, track, lr=lr, epochs=track.epochs,
                             batch_size=track.batch_size, seed=order, schedule=track.schedule)
    if diverged:
        raise SystemExit(f"variance.py: run init {init} order {order} diverged at lr {lr}")
    model.eval()
    with torch.no_grad():
        test = per_example(track, model(data.test.x), data.test.y)
        assert math.isclose(test.mean(), loop.evaluate(model, data.test, track), rel_tol=1e-5)
        fresh_losses = per_example(track, model(fresh[0]), fresh[1])
    return test, fresh_losses


def pooled_var(groups: list[list[float]]) -> float:
    """Pooled within-group sample variance."""
    num = sum(sum((v - statistics.fmean(g)) ** 2 for v in g) for g in groups if len(g) > 1)
    df = sum(len(g) - 1 for g in groups if len(g) > 1)
    return num / df


def committed_aa_inits(track) -> dict | None:
    """The inits' variance from the committed A/A benches of ``track`` (module docstring): the
    per-seed test scores of every init stream at the config both arms of a bench selected, of
    the protocol with the most streams, with the pooled within-seed sd, the paired sd it implies
    (sqrt 2 x) and the test-set size; None without two streams of one protocol and config."""
    by_protocol: dict[str, dict[int, list[float]]] = {}  # init offset -> per-seed scores
    for path in sorted(RESULTS.glob(f"aa*/aa/{track.name}/bench_report.json")):
        report = json.loads(path.read_text())
        if report["baseline"]["best_cfg"] != report["idea_config"]:
            continue
        key = {k: report["protocol"][k] for k in ("n_test", "epochs", "seeds")}
        streams = by_protocol.setdefault(json.dumps({**key, "cfg": report["idea_config"]}), {})
        folder = path.parents[2].name  # test_aa.py's folders name their offsets
        number = int(folder.rsplit("_", 1)[1]) if folder != "aa" else 0
        streams[number if folder.startswith("aa_baseline_") else 0] = (
            report["baseline"]["full"]["per_seed"])
        streams[number if folder.startswith("aa_offset_") else OFFSET] = report["idea"]["per_seed"]
    if not by_protocol:
        return None
    protocol, streams = max(by_protocol.items(), key=lambda kv: len(kv[1]))  # the most streams
    unique = {tuple(v): k for k, v in sorted(streams.items())}
    if len(unique) < 2:
        return None
    groups = [list(vals) for vals in zip(*unique)]
    var = pooled_var(groups)
    chosen = json.loads(protocol)
    return {"init_offsets": sorted(unique.values()), "n_test": chosen["n_test"],
            "cfg": chosen["cfg"], "seeds": len(groups), "df": sum(len(g) - 1 for g in groups),
            "sd_init_test": math.sqrt(var), "paired_sd_test": math.sqrt(2 * var)}


def summarise(track, by_seed: dict, data_runs: list, n_test: int, n_fresh: int) -> dict:
    """Each source's sd and the paired A/A decomposition (module docstring)."""
    init_test = [[r["test"] for r in by_seed[s]["init"]] for s in by_seed]
    init_fresh = [[r["fresh"] for r in by_seed[s]["init"]] for s in by_seed]
    order_fresh = [[by_seed[s]["init"][0]["fresh"]] + [r["fresh"] for r in by_seed[s]["order"]]
                   for s in by_seed]
    noise_diff = [p for s in by_seed for p in by_seed[s]["pair_noise_var"]]  # per pair, n_test
    one_model_noise = [r["test_noise_sd"] for s in by_seed for r in by_seed[s]["init"]]
    paired_var = 2 * pooled_var(init_test)
    paired_var_fresh = 2 * pooled_var(init_fresh)
    noise_var = statistics.fmean(noise_diff)
    # the population part: the fresh scores' paired variance less their own (small) test noise
    pop_var = max(0.0, paired_var_fresh - noise_var * n_test / n_fresh)
    mean = statistics.fmean(v for g in init_test for v in g)
    return {
        "mean_test": mean,
        "sd_init_population": math.sqrt(pooled_var(init_fresh)),
        "sd_order_population": math.sqrt(pooled_var(order_fresh)),
        "sd_data_population": statistics.stdev(r["fresh"] for r in data_runs),
        "sd_test_set_one_model": statistics.median(one_model_noise),
        "paired_sd_test": math.sqrt(paired_var),
        "paired_sd_fresh": math.sqrt(paired_var_fresh),
        "paired_test_noise_sd": math.sqrt(noise_var),
        "paired_population_sd": math.sqrt(pop_var),
        "test_noise_share_of_paired_var": noise_var / (noise_var + pop_var),
        "paired_sd_projected_by_n_test": {
            str(n): math.sqrt(pop_var + noise_var * n_test / n) for n in PROJECT_SIZES},
        "init_pairs_disagree_fresh": statistics.fmean(
            p for s in by_seed for p in by_seed[s].get("pair_disagree_fresh", [math.nan])),
        "degrees_of_freedom_init": sum(len(g) - 1 for g in init_test),
    }


def main() -> None:
    from benchkit import tracks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", required=True)
    ap.add_argument("--seeds", type=int, default=3, help="data seeds 0 .. N-1")
    ap.add_argument("--k", type=int, default=3, help="inits (and orders) per data seed")
    ap.add_argument("--fresh", type=int, default=20000, help="examples of the fresh test set")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--limit", type=float, default=420,
                    help="wall seconds after which no new data seed is started (default 420)")
    args = ap.parse_args()
    if args.k < 2 or args.seeds < 2:
        raise SystemExit("variance.py: --k and --seeds must be at least 2")
    import torch

    torch.set_num_threads(1)
    track = tracks.get(args.track)
    lr = args.lr
    if lr is None and len(track.grid) == 1:
        lr = float(track.grid[0]["lr"])
    elif lr is None:
        report = json.loads((AA / track.name / "bench_report.json").read_text())
        lr = float(report["baseline"]["best_cfg"]["lr"])
    path = RESULTS / f"variance_{track.name}.json"
    settings = {"track": track.name, "lr": lr, "epochs": track.epochs,
                "n_test": len(track.data(0).test), "n_fresh": args.fresh, "k": args.k}
    out = json.loads(path.read_text()) if path.exists() else {}
    if {k: out.get(k) for k in SETTINGS} != settings:
        if out:
            raise SystemExit(f"variance.py: {path.name} holds a study with other settings "
                             f"({ {k: out.get(k) for k in SETTINGS} }); move it aside to start "
                             f"one with {settings}")
        out = {**settings, "per_seed": {}, "data_source": [], "cpu_seconds": 0.0,
               "wall_seconds": 0.0}
    t0 = time.perf_counter()
    for s in range(args.seeds):
        if str(s) in out["per_seed"]:
            continue
        if time.perf_counter() - t0 > args.limit:
            print(f"stopped at --limit {args.limit:g} s before seed {s}: call again to go on")
            break
        wall, cpu = time.perf_counter(), time.process_time()
        out["per_seed"][str(s)], data_run = study_seed(track, s, lr, args.k, args.fresh)
        out["data_source"].append({"seed": s, **data_run})
        out["cpu_seconds"] = round(out["cpu_seconds"] + time.process_time() - cpu, 1)
        out["wall_seconds"] = round(out["wall_seconds"] + time.perf_counter() - wall, 1)
        write(path, out, track, args)


def study_seed(track, s: int, lr: float, k: int, n_fresh: int) -> tuple[dict, dict]:
    """One data seed's runs (module docstring): its init and order groups, the test noise and
    fresh disagreement of each init pair, and its data-source run."""
    import torch

    data = track.data(s)
    n_test = len(data.test)
    fx, fy = fresh_test(track.name, s, n_fresh)
    fresh = (torch.from_numpy(fx), torch.from_numpy(fy))

    def one(init: int, order: int) -> tuple[dict, np.ndarray, np.ndarray]:
        test, fr = train_one(track, data, fresh, lr=lr, init=init, order=order)
        return ({"init": init, "order": order, "test": float(test.mean()),
                 "fresh": float(fr.mean()),
                 "test_noise_sd": float(test.std(ddof=1) / math.sqrt(len(test)))}, test, fr)

    inits = [one(s + j * OFFSET, s) for j in range(k)]
    orders = [one(s, s + j * OFFSET)[0] for j in range(1, k)]
    data_run = one(FIXED, FIXED)[0]
    pairs = list(itertools.combinations(inits, 2))
    seed = {"init": [r for r, _, _ in inits], "order": orders,
            "pair_noise_var": [float(np.var(a[1] - b[1], ddof=1) / n_test) for a, b in pairs],
            "pair_disagree_fresh": [float(np.mean(a[2] != b[2])) if track.metric_name ==
                                    "accuracy" else math.nan for a, b in pairs]}
    print(s, [round(r["test"], 5) for r, _, _ in inits],
          [round(r["fresh"], 5) for r, _, _ in inits], flush=True)
    return seed, data_run


def write(path: Path, out: dict, track, args) -> None:
    """The study so far, with its summary once two seeds are in."""
    by_seed = {int(s): v for s, v in sorted(out["per_seed"].items(), key=lambda kv: int(kv[0]))}
    out["command"] = (f"python benchmarks/tracks/variance.py --track {track.name} --seeds "
                      f"{args.seeds} --k {args.k} --fresh {args.fresh}"
                      + (f" --lr {args.lr:g}" if args.lr is not None else ""))
    out["seeds"] = sorted(by_seed)
    if len(by_seed) >= 2:
        out["summary"] = summarise(track, by_seed, out["data_source"], out["n_test"],
                                   out["n_fresh"])
    out["committed_aa_inits"] = committed_aa_inits(track)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out.get("summary"), indent=1))

if __name__ == "__main__":
    main()
