"""Which charlm configuration both trains out and beats its 5-gram floor by 10%? One training
run per call, on one thread, appended as a JSON line to the results file.

The run is the track's training path (``benchkit.training.loop.train``, cosine, batch 32,
seeded as a run) with the configuration changed: model width/depth, dropout, optimizer and
weight decay, epochs, the number of train windows, the context, or the text (``stdlib``: the
top-level modules of the running Python's standard library, sorted and joined, instead of
``pydoc_data.topics``). Recorded: validation at eight points of training, the relative
validation gain from 3/4 of the epochs to the end (``benchkit.verdict.convergence``'s rule;
over 1% flags "still improving"), test bits per character beside the same blocks' 4- and
5-gram floors, and the margin over the 5-gram (``(5-gram - test) / 5-gram``).

    nice -n 10 .venv/bin/python benchmarks/tracks/charlm_configs.py --width 96 \\
        --n-train 5600 --optimizer adamw --weight-decay 0.1 [--epochs 16] [--seed 0]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "results" / "tracks" / "charlm_configs.jsonl"


def dropout_transformer(vocab: int, width: int, layers: int, heads: int, context: int,
                        p: float):
    """``CharTransformer`` with dropout on the embeddings and on both residual branches of
    every block (torch is imported by main)."""
    from torch import nn

    from benchkit.tracks.models import CharTransformer

    class Model(CharTransformer):
        def __init__(self):
            super().__init__(vocab, width=width, layers=layers, heads=heads, context=context)
            self.drop = nn.Dropout(p)

        def forward(self, tokens):
            x = self.drop(self.embed(tokens) + self.position[:tokens.shape[1]])
            for block in self.blocks:
                x = x + self.drop(block.attention(block.norm1(x)))
                x = x + self.drop(block.mlp(block.norm2(x)))
            return self.head(self.norm(x))

    return Model()


def stdlib_ids() -> np.ndarray:
    import sysconfig

    from benchkit.tracks import charlm

    root = Path(sysconfig.get_paths()["stdlib"])
    return charlm.encode("".join(f.read_text(encoding="utf-8", errors="replace")
                                 for f in sorted(root.glob("*.py"))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("width", 64), ("layers", 2), ("heads", 4), ("context", 64),
                          ("n-train", 3072), ("n-val", 512), ("n-test", 1024),
                          ("epochs", 16), ("batch", 32), ("seed", 0)):
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--optimizer", choices=("adam", "adamw"), default="adam")
    ap.add_argument("--text", choices=("topics", "stdlib"), default="topics")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    import torch

    from benchkit.tracks import charlm, floors
    from benchkit.tracks.base import Split
    from benchkit.tracks.models import CharTransformer
    from benchkit.training import loop
    from benchkit.training.run import seed_everything

    torch.set_num_threads(1)
    ids = stdlib_ids() if a.text == "stdlib" else charlm.tokens()
    blocks = charlm.blocks(a.seed, (a.n_train, a.n_val, a.n_test), a.context, ids)
    floor = floors.ngram_bits(*(b.astype(np.int64) for b in blocks), vocab=charlm.VOCAB,
                              orders=5)
    train, val, test = (Split(torch.from_numpy(b[:, :-1].astype(np.int64)),
                              torch.from_numpy(b[:, 1:].astype(np.int64))) for b in blocks)
    track = dataclasses.replace(charlm.TRACK, epochs=a.epochs, batch_size=a.batch)
    seed_everything(a.seed)
    if a.dropout > 0:
        model = dropout_transformer(charlm.VOCAB, a.width, a.layers, a.heads, a.context,
                                    a.dropout)
    else:
        model = CharTransformer(charlm.VOCAB, width=a.width, layers=a.layers, heads=a.heads,
                                context=a.context)
    every = max(1, a.epochs // 8)
    vals: dict[int, float] = {}

    def on_epoch(done: int) -> None:
        if done % every == 0 or done == a.epochs:
            vals[done] = loop.evaluate(model, val, track)

    t0 = time.perf_counter()
    loop.train(model, train, track, lr=a.lr, epochs=a.epochs, batch_size=a.batch,
               seed=a.seed, schedule="cosine", weight_decay=a.weight_decay,
               optimizer=a.optimizer, on_epoch=on_epoch)
    seconds = time.perf_counter() - t0
    start = max(1, int(0.75 * a.epochs))
    test_bits = loop.evaluate(model, test, track)
    row = {"command": "python benchmarks/tracks/charlm_configs.py " + " ".join(sys.argv[1:]),
           "config": {k: v for k, v in vars(a).items() if k != "out"},
           "params": sum(p.numel() for p in model.parameters()),
           "seconds": round(seconds, 1),
           "train_bits_first_512": loop.evaluate(model, Split(train.x[:512], train.y[:512]),
                                                 track),
           "val_by_epoch": vals, "test": test_bits,
           "last_quarter_gain": (vals[start] - vals[a.epochs]) / vals[start]
           if start in vals else None,
           "floors": {k: floor[k] for k in ("4-gram", "5-gram")},
           "margin_over_5gram": (floor["5-gram"] - test_bits) / floor["5-gram"]}
    print(json.dumps(row), flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
