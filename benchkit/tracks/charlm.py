"""``charlm``: a character-level language model on the documentation topics that ship with
every CPython (``pydoc_data.topics``, about 465k characters of English and code).

The text is the topics in sorted order, joined; characters are printable ASCII and newline
(96 tokens) plus one token for everything else. The text cut into blocks of ``CONTEXT + 1``
characters, from an offset drawn per seed; each seed draws disjoint blocks for train, val and
test (no character is in two splits). Input: the first ``CONTEXT`` characters of a block;
target: the same shifted by one. The metric is bits per character of the next-character
prediction over every position (lower is better). The text depends on the Python version (the
topics are regenerated with each release), so the version is part of the track's protocol, and
so of every run's key and report.

Budget ``convergence``: 24 epochs (4,200 AdamW steps of 32 windows, weight decay 0.1) under a
cosine schedule; each bench's budget check (the selected config at 36 epochs) says whether a
baseline was trained out. On seed 0 at lr 4e-2, the config validation selects, 36 epochs end
0.7% better on validation than 24 (benchmarks/results/tracks/charlm_configs.jsonl). The grid
centres on that lr: 8e-2 is far worse (validation 1.726 against 1.615), 2e-2 worse on all 8
seeds of the A/A bench. About 165 s a run on one core with a second run beside it. All 5,600
train windows the text gives after val and test; width 96. The floors are the n-gram models up
to the 5-gram, fitted on the same train blocks.
"""
from __future__ import annotations

import functools
import math
import platform

import numpy as np

from benchkit.tracks import floors as floor
from benchkit.tracks.base import Data, Split, Track

CONTEXT = 64
N_TRAIN, N_VAL, N_TEST = 5600, 512, 1024  # windows (blocks of CONTEXT + 1 characters)
VOCAB = 97                                # printable ASCII + newline, then "other"
NGRAM_ORDERS = 5                          # floors: unigram .. 5-gram
PYTHON = platform.python_version()
_DATA_SALT = 0xC4A2


def encode(text: str) -> np.ndarray:
    """``text`` as token ids (uint8): ' '..'~' -> 0..94, newline -> 95, other -> 96."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ids = np.full(codes.shape, VOCAB - 1, dtype=np.uint8)
    printable = (codes >= 32) & (codes < 127)
    ids[printable] = (codes[printable] - 32).astype(np.uint8)
    ids[codes == 10] = 95
    return ids


@functools.lru_cache(maxsize=1)
def tokens() -> np.ndarray:
    """The track's whole text (the topics in sorted order, joined) as :func:`encode` ids."""
    from pydoc_data.topics import topics

    return encode("".join(topics[key] for key in sorted(topics)))


def window_starts(seed: int, sizes: tuple[int, int, int] = (N_TRAIN, N_VAL, N_TEST),
                  context: int = CONTEXT, ids: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start offsets of the train, val and test blocks of ``seed``: blocks of ``context + 1``
    characters of ``ids`` (default: :func:`tokens`) on a grid with a per-seed offset, drawn
    without replacement (so disjoint). The defaults are the track's; other sizes are for
    benchmarks/tracks/charlm_configs.py."""
    ids = tokens() if ids is None else ids
    rng = np.random.default_rng([_DATA_SALT, seed])
    block = context + 1
    offset = int(rng.integers(block))
    n_blocks = (len(ids) - offset) // block
    chosen = rng.choice(n_blocks, size=sum(sizes), replace=False)
    starts = offset + block * chosen
    n_train, n_val, _ = sizes
    return starts[:n_train], starts[n_train:n_train + n_val], starts[n_train + n_val:]


def blocks(seed: int, sizes: tuple[int, int, int] = (N_TRAIN, N_VAL, N_TEST),
           context: int = CONTEXT, ids: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The train, val and test blocks of ``seed``: (n, context + 1) token ids (uint8)."""
    ids = tokens() if ids is None else ids
    return tuple(ids[starts[:, None] + np.arange(context + 1)]
                 for starts in window_starts(seed, sizes, context, ids))


@functools.lru_cache(maxsize=64)
def make_data(seed: int) -> Data:
    import torch

    splits = []
    for split in blocks(seed):
        ids = torch.from_numpy(split.astype(np.int64))
        splits.append(Split(ids[:, :-1], ids[:, 1:]))
    return Data(*splits)


def floors(seed: int) -> dict[str, float]:
    """Test bits per character of the unigram to 5-gram models fitted on the train blocks
    (each interpolated with the lower orders, weights chosen on validation)."""
    return floor.ngram_bits(*(b.astype(np.int64) for b in blocks(seed)), vocab=VOCAB,
                            orders=NGRAM_ORDERS)


def cross_entropy(logits, y):
    import torch.nn.functional as F
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def bits_per_char(logits, y):
    return cross_entropy(logits, y) / math.log(2)


def make_model():
    from benchkit.tracks.models import char_transformer  # torch is imported when a model is built
    return char_transformer(VOCAB, context=CONTEXT)


TRACK = Track(
    name="charlm",
    make_data=make_data,
    make_model=make_model,
    model_name="char_transformer",
    grid=({"lr": 2e-2, "weight_decay": 0.1}, {"lr": 4e-2, "weight_decay": 0.1},
          {"lr": 8e-2, "weight_decay": 0.1}),
    epochs=24,
    schedule="cosine",
    optimizer="adamw",
    budget="convergence",
    make_floors=floors,
    budget_reason="24 cosine epochs; on seed 0 at the selected lr 36 epochs end 0.7% better "
                  "on validation (benchmarks/results/tracks/charlm_configs.jsonl)",
    metric_name="bits_per_char",
    direction="lower",
    loss=cross_entropy,
    metric=bits_per_char,
    description=f"next character of pydoc_data.topics (the text of Python {PYTHON}), windows "
                f"of {CONTEXT}; char_transformer (2 pre-norm layers, width 96, 4 heads), "
                "AdamW 0.1, 24 epochs, cosine; test bits per character",
    extra_protocol={"text": f"pydoc_data.topics of Python {PYTHON}", "context": CONTEXT,
                    "vocab": VOCAB, "n_train": N_TRAIN, "n_val": N_VAL, "n_test": N_TEST},
)
