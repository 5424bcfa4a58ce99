"""``python -m benchkit``: see :mod:`benchkit.cli`."""
from benchkit.cli import main

raise SystemExit(main())
