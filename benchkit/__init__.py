"""benchkit: does this ML idea beat a tuned baseline, and does it work for the reason it claims?

Ideas are pytest modules; the plugin (``benchkit.plugin``) trains both arms over paired seeds and
an equal learning-rate sweep and writes ``bench_report.json`` with paired statistics and verdicts.

Layers (subpackages), checked by tests/test_layers.py: stats imports nothing of benchkit; tracks
nothing outside itself; spec imports tracks; store imports spec; training imports tracks and
store; verdict imports stats, spec and tracks; report imports verdict, stats, spec and store;
cli imports report, verdict, store, stats and spec; plugin may import everything (torch
lazily); no cycles, no import of another module's private name, only plugin imports pytest.
"""
__version__ = "0.1.0"
