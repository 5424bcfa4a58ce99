"""The idea's declaration: ``pytest.mark.bench`` and ``pytest.mark.arm`` parsed and validated,
every argument of the marker included, into an :class:`IdeaSpec` (:mod:`.idea` holds the types
and the vocabulary shared by every layer: arms, ``cfg_id``, ``run_id``). Imports only the
track registry (:mod:`benchkit.tracks`, to check track names) and the records' codec
(:mod:`benchkit.codec`), never torch. One parser per
marker argument: :mod:`.arguments`; the marker as a whole: :mod:`.marker`; which shard trains
which runs: :mod:`.shard`. This package names
the public API of the old ``benchkit.spec`` module, so ``from benchkit.spec import ...`` keeps
working."""
from benchkit.spec.arguments import (BOUNDARIES, TESTS, parse_boundary, parse_fairness,
                                     parse_futility, parse_grid, parse_looks, parse_test)
from benchkit.spec.idea import (ARMS, BENCH_KWARGS, CLAIM_TYPES, CONTROL, DEFAULT_EXTEND,
                                DEFAULT_SEEDS, FOLDER_NAME, MIN_SEEDS, cfg_id, check_folder_name,
                                family_seeds_needed, IdeaSpec, run_id, SpecError,
                                unreachable_family)
from benchkit.spec.marker import arm_label, parse_bench_marker

__all__ = ["BOUNDARIES", "TESTS", "parse_boundary", "parse_fairness", "parse_futility",
           "parse_grid", "parse_looks", "parse_test", "ARMS", "BENCH_KWARGS", "CLAIM_TYPES",
           "CONTROL", "DEFAULT_EXTEND", "DEFAULT_SEEDS", "FOLDER_NAME", "MIN_SEEDS", "cfg_id",
           "check_folder_name", "family_seeds_needed", "IdeaSpec", "run_id", "SpecError",
           "unreachable_family", "arm_label", "parse_bench_marker"]
