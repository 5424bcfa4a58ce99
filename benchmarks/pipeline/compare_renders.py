"""Render every committed report with an earlier revision's code and with this tree's, and
compare the outputs: summary.md byte for byte, the plots pixel for pixel (a PNG is identical
when its decoded pixels are: issue 51 changed the PNG encoder, not the pixels).

Behaviour check for the report/ layer in the pipeline refactors (issue 43), beside
compare_reports.py (which checks the report JSON): ``python -m benchkit render`` writes each
committed report's summary.md and plots from its bench_report.json; a refactor changes none of
them. The earlier revision is checked out in a temporary git worktree.

    PYTHONPATH=$PWD python benchmarks/pipeline/compare_renders.py d7f65ba

Exits 1 and names each file that differs, or that one side did not write.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ("reports", "benchmarks/results")


def rendered(code: Path, into: Path) -> dict[str, bytes]:
    """Every file ``benchkit render`` writes for the committed reports copied into ``into``,
    run with the benchkit at ``code``: {path relative to ``into``: bytes}."""
    for folder in REPORTS:
        shutil.copytree(ROOT / folder, into / folder,
                        ignore=shutil.ignore_patterns("summary.md", "*.png"))
    env = {**os.environ, "PYTHONPATH": str(code), "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-m", "benchkit", "render", *(str(into / f) for f in REPORTS)],
                   cwd=code, env=env, check=True, stdout=subprocess.DEVNULL)
    return {str(p.relative_to(into)): p.read_bytes() for p in sorted(into.rglob("*"))
            if p.name == "summary.md" or p.suffix == ".png"}


def same(path: str, old: bytes | None, new: bytes | None) -> bool:
    """Whether the two renders of ``path`` say the same: equal bytes, or, for a PNG, equal
    pixels (RGBA; an opaque RGB image reads as alpha 255)."""
    if old == new:
        return True
    if old is None or new is None or not path.endswith(".png"):
        return False
    import io

    import numpy as np
    from PIL import Image

    old_px, new_px = (np.asarray(Image.open(io.BytesIO(b)).convert("RGBA")) for b in (old, new))
    return old_px.shape == new_px.shape and bool((old_px == new_px).all())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier revision (a commit, branch or tag)")
    rev = parser.parse_args().rev
    with tempfile.TemporaryDirectory() as tmp:
        old_code = Path(tmp, "code")
        subprocess.run(["git", "worktree", "add", "--detach", str(old_code), rev], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            old = rendered(old_code, Path(tmp, "old"))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_code)], cwd=ROOT,
                           check=True, capture_output=True)
        new = rendered(ROOT, Path(tmp, "new"))
    differ = sorted(p for p in old.keys() | new.keys() if not same(p, old.get(p), new.get(p)))
    for path in differ:
        print(f"differs: {path}")
    print(f"{len(old.keys() | new.keys()) - len(differ)} of {len(old.keys() | new.keys())} "
          f"rendered file(s) identical to {rev}'s; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
