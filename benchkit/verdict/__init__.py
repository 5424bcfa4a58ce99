"""The decision: runs and the declared plan in, :class:`.records.Report` records out, in one order
(:mod:`.pipeline`). Select each arm's config and compare the arms (:mod:`.build`,
:mod:`.comparison`), decide once at the planned level (:mod:`.decision`, with the
control arms of :mod:`.controls`, the budgets of :mod:`.budgets` and the signature evidence of
:mod:`.mechanism`), frontiers (:mod:`.frontier`), the edge-extension of grids
(:mod:`.extension`), the convergence check (:mod:`.convergence`), what a session trains beyond
its declared grid from the stored results (:mod:`.grids`), the declared plan
(:mod:`.plan`) and the leaderboard's boards of many ideas (:mod:`.leaderboard`). Pure Python and
numpy: imports :mod:`benchkit.stats`, :mod:`benchkit.spec`, the track registry
(:mod:`benchkit.tracks`) and the records' codec (:mod:`benchkit.codec`), never the
store, the report files or pytest."""
