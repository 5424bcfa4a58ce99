"""Which shard trains which runs: ``--bench-shard K/N`` trains a deterministic 1/N of every
selected idea's runs into the run store, and ``--bench-shard merge`` (or a plain session) writes
the reports from what the shards stored. This is the option's value and the assignment; the
session's items are split in :mod:`benchkit.plugin.shard`.

The unit of assignment is one seed of one idea on one track: both arms and every grid config
of a seed go to the same shard, so a seed's pair (baseline and idea at their selected configs)
trains on one machine. An idea's units, in track and seed order, are dealt round-robin from an
offset drawn from the idea's name: every shard gets the same number of units of each idea and
track (±1), hence about the same expected cost, and the assignment depends only on the run and
N, never on what else a session selects or where it runs.
"""
from __future__ import annotations

import hashlib

MERGE = "merge"
VALID = ("valid: K/N with integers 1 <= K <= N (e.g. --bench-shard 2/4), or merge (a final "
         "session that trains nothing and writes the reports from the shards' runs)")


def parse(value: str) -> tuple[int, int] | str:
    """``"K/N"`` -> ``(K, N)``; ``"merge"`` -> ``"merge"``; anything else is a ValueError
    naming the valid forms."""
    text = str(value).strip()
    if text == MERGE:
        return MERGE
    k_text, sep, n_text = text.partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ValueError(f"{value!r} is not a shard; {VALID}") from None
    if not sep or not 1 <= k <= n:
        raise ValueError(f"{value!r} is not a shard; {VALID}")
    return k, n


def label(shard: tuple[int, int]) -> str:
    """``(K, N)`` -> ``"K/N"``, as the option is written."""
    return f"{shard[0]}/{shard[1]}"


def shard_of(name: str, tracks: list[str], seeds: list[int], track: str, seed: int,
             n: int) -> int:
    """The shard (1..n) that trains the runs of idea ``name`` at (``track``, ``seed``)."""
    offset = int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)
    index = tracks.index(track) * len(seeds) + seeds.index(seed)
    return (index + offset) % n + 1
