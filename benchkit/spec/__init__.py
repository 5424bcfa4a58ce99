"""The idea's declaration: ``pytest.mark.bench`` and ``pytest.mark.arm`` parsed and validated,
every argument of the marker included, into an :class:`IdeaSpec` (:mod:`.idea` holds the types
and the vocabulary shared by every layer: arms, ``cfg_id``, ``run_id``). Imports only the
track registry (:mod:`benchkit.tracks`, to check track names), never torch. This package names
the public API of the old ``benchkit.spec`` module, so ``from benchkit.spec import ...`` keeps
working."""
from benchkit.spec.idea import *  # noqa: F401,F403
from benchkit.spec.idea import SpecError  # noqa: F401
