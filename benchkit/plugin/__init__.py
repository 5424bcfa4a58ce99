"""The pytest plugin (entry point ``benchkit.plugin``): options and hooks (:mod:`.hooks`, whose
hooks this package re-exports, so that pytest finds them here), activation (:mod:`.activation`), an
arm test's run (:mod:`.fixture`), the controller (:mod:`.controller`, :mod:`.aggregate`), per-run
isolation (:mod:`.isolation`) and time limits (:mod:`.timeouts`), settings (:mod:`.settings`) and
shards (:mod:`.shard`). The only layer that imports pytest; it may import every other layer (torch
lazily: importing it imports no torch)."""
from benchkit.plugin.hooks import *  # noqa: F401,F403
