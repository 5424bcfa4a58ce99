"""What the commands print: every line with its control characters escaped (report files and
paths are input), errors on stderr with exit status 2."""
from __future__ import annotations

import sys

from benchkit.report.bench_report import printable


def say(text: str = "", file=None) -> None:
    """Print ``text`` with its control characters escaped: report files and paths are input."""
    print("\n".join(printable(line) for line in str(text).split("\n")), file=file)


def error(message: str) -> int:
    say(f"benchkit: error: {message}", file=sys.stderr)
    return 2
