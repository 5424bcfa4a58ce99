"""Finished runs, kept so that nothing trains twice: where they live (:mod:`.backends`:
a directory or an fsspec URL), the run store keyed by what changes bits (:mod:`.runs`), the
record format, its checks and the record a stored run reads back as (:mod:`.records`), what
a run executed (:mod:`.trace`, :mod:`.fingerprint`), the software and hardware it ran on
(:mod:`.environment`, :mod:`.hardware`), provenance and atomic writes; an idea's stored
results by run (:mod:`.idea_results`) and its tracks' floors kept between sessions
(:mod:`.floor_cache`).
Imports the standard library, fsspec (optional) and of benchkit only :mod:`benchkit.spec`'s
vocabulary, the track registry (:mod:`benchkit.tracks`, for the floors) and the records' codec
(:mod:`benchkit.codec`); torch only lazily, to describe a device."""
