"""A sharded session's collection: the items of shard K/N kept, the rest deselected, by the
assignment of :func:`benchkit.spec.shard.shard_of`."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from benchkit.spec.idea import IdeaSpec
from benchkit.spec.shard import shard_of


def split(items: list[pytest.Item], shard: tuple[int, int],
          spec_of: Callable[[pytest.Item], IdeaSpec | None]
          ) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """(kept, deselected) items of shard ``(K, N)``: an arm run is kept when its unit falls to
    shard K; a mechanism test of a benched idea is deselected (the final session runs it, for
    the report); every other test is kept. ``spec_of(item)`` is the item's IdeaSpec or None."""
    k, n = shard
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        spec = spec_of(item)
        if spec is None:
            kept.append(item)
            continue
        param = getattr(getattr(item, "callspec", None), "params", {}).get("run")
        if param is None:
            (dropped if item.get_closest_marker("mechanism") else kept).append(item)
            continue
        _, track, _, seed = param
        mine = shard_of(spec.name, list(spec.tracks), list(spec.seeds), track, seed, n) == k
        (kept if mine else dropped).append(item)
    return kept, dropped
