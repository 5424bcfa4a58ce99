"""``python -m benchkit``: see :mod:`benchkit.cli.main`."""
from benchkit.cli.main import main

raise SystemExit(main())
