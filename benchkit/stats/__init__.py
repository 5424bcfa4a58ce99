"""Pure statistics of a bench: arrays of per-seed results in, plain numbers out. The paired
sign-flip test and the selection-aware comparison (:mod:`.paired`), the sign test
(:mod:`.signtest`), intervals and planning figures of the sign-flip test (:mod:`.signflip`),
margin tests (:mod:`.equivalence`), exact sequential boundaries (:mod:`.sequential`) and the
futility stop (:mod:`.futility`). Imports numpy and scipy only, nothing else of benchkit
(``tests/test_layers.py`` checks)."""
