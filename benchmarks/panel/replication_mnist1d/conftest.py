"""The mnist1d replication cases bench on the mnist1d track without its floors: a block's
report is read for its verdict and test figures only (benchmarks/panel/replication/conftest.py
says why), so the track is registered again with ``make_floors=None``: the same data, model,
grid, epochs and protocol."""
import dataclasses

from benchkit import tracks

tracks.register(dataclasses.replace(tracks.get("mnist1d"), make_floors=None), replace=True)
