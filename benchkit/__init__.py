"""benchkit: does this ML idea beat a tuned baseline, and does it work for the reason it claims?

Ideas are pytest modules; the plugin (``benchkit.plugin``) trains both arms over paired seeds and
an equal learning-rate sweep and writes ``bench_report.json`` with paired statistics and verdicts.
"""
__version__ = "0.1.0"
