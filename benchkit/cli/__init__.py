"""``python -m benchkit``: show, compare, render, leaderboard and verify reports that already
exist, without running anything (:mod:`.commands`; :mod:`.verify`, :mod:`.leaderboard`). Imports
:mod:`benchkit.report`, :mod:`benchkit.verdict`, :mod:`benchkit.store`, :mod:`benchkit.stats`
(the leaderboard's tests) and :mod:`benchkit.spec`; never torch."""
