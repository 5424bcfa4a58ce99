"""Pure statistics of a bench: arrays of per-seed results in, plain numbers out. The paired
sign-flip test and the comparison of the selected configs (:mod:`.paired`), the selection-aware test
over every config a comparator could be tuned to, each arm cross-fitted (:mod:`.selection`,
:mod:`.crossfit`, :mod:`.pairtest`), the sign test
(:mod:`.signtest`), intervals and planning figures of the sign-flip test (:mod:`.signflip`), margin
tests (:mod:`.equivalence`), exact sequential boundaries (:mod:`.sequential`) and the futility stop
(:mod:`.futility`), with their shared input checks and JSON floats (:mod:`.values`). Imports numpy
and scipy, and of benchkit only :mod:`benchkit.codec` (its records' JSON; ``tests/test_layers.py``
checks)."""
