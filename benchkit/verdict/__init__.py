"""The decision: runs and the declared plan in, a report dict out. Select each arm's config,
compare the arms (:mod:`.build`), decide at the planned level, apply the fairness rules (budgets,
control arms, signature nulls and claim types: :mod:`.fairness`), frontiers
(:mod:`.frontier`), the edge-extension of grids (:mod:`.extension`) and the convergence check
(:mod:`.convergence`). Pure Python and numpy: imports :mod:`benchkit.stats`,
:mod:`benchkit.spec` and the track registry, never the store, the report files or pytest."""
