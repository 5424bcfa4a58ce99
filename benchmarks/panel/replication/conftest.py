"""The replication cases import benchmarks/panel/panel_models.py, one folder up, and bench on
the tabular track without its floors.

A block's report is read for its verdict and test figures only (replication.py ``outcome``),
which no floor enters (floors are the summary's context: benchkit.report), so computing them
(3.5 to 5.7 CPU s a seed, measured on seeds 1000 and 1001; 8 seeds a block) is spent for
nothing. The track is registered again (``benchkit.tracks.register(..., replace=True)``, the
registry's own way to override a track) with ``make_floors=None``: the same data, model,
grid, epochs and protocol, and no floors.
"""
import dataclasses
import sys
from pathlib import Path

from benchkit import tracks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def floorless(name: str) -> tracks.Track:
    """Track ``name`` as registered, without floors."""
    return dataclasses.replace(tracks.get(name), make_floors=None)


tracks.register(floorless("tabular"), replace=True)
