"""The pytest plugin (entry point ``benchkit.plugin``): options and hooks (:mod:`.hooks`, whose
hooks this package re-exports, so that pytest finds them here), an idea module read into its
spec at collection (:mod:`.collection`), activation (:mod:`.activation`), an arm test's run
(:mod:`.fixture`), the controller (:mod:`.controller`), per-run isolation (:mod:`.isolation`)
and time limits (:mod:`.timeouts`), settings (:mod:`.settings`), progress (:mod:`.progress`), a
shard's items (:mod:`.shard`) and the audit in fresh pytest processes (:mod:`.fresh_audit`).
pytest glue only: the only layer that imports pytest, and each of its modules does. Imports
:mod:`benchkit.stats`, :mod:`benchkit.tracks`, :mod:`benchkit.spec`, :mod:`benchkit.store`,
:mod:`benchkit.training`, :mod:`benchkit.verdict` and :mod:`benchkit.report` (torch lazily:
importing it imports no torch)."""
from benchkit.plugin.hooks import *  # noqa: F401,F403
from benchkit.plugin.whole import *  # noqa: F401,F403
