"""``python -m benchkit``: see :mod:`benchkit.cli.commands`."""
from benchkit.cli.commands import main

raise SystemExit(main())
