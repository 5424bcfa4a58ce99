"""What a person reads: ``bench_report.json`` (its schema beside it, reading it back checked:
:mod:`.bench_report`), ``summary.md`` (:mod:`.summary`, :mod:`.summary_checks`,
:mod:`.sentences`), the plots (:mod:`.plots`), the terminal table (:mod:`.terminal`), how
numbers are written (:mod:`.fmt`) and the command that completes an incomplete bench
(:mod:`.nextstep`). Every reader takes the typed :class:`benchkit.verdict.records.Report`
(a file becomes one in :func:`.bench_report.read_report`); imports :mod:`benchkit.verdict`,
:mod:`benchkit.stats`, :mod:`benchkit.spec`, the track registry (:mod:`benchkit.tracks`: the
floors' ranking), the records' codec (:mod:`benchkit.codec`) and, for atomic writes,
:mod:`benchkit.store`."""
