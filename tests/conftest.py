"""Shared helpers of benchkit's plugin tests: read a written report and validate it; write the
source of an idea module and match the lines a session prints.

torch and benchkit are imported here, and an optimizer is stepped once (its first use imports
torch._dynamo), before any in-process ``pytester`` run: pytester drops the modules a run
imported when it ends, and torch's cannot be imported twice in one process. (Hypothesis's
plugin imports its internals at every terminal summary: imported here once, not once per run.)
"""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
import hypothesis.internal.observability  # noqa: F401  (see the docstring)
import torch

import benchkit
import benchkit.plugin.aggregate  # noqa: F401
import benchkit.training.run  # noqa: F401
import benchkit.tracks  # noqa: F401

_p = torch.zeros(1, requires_grad=True)
_p.sum().backward()
torch.optim.Adam([_p]).step()
del _p

SCHEMA_PATH = Path(benchkit.__file__).parent / "report" / "bench_report.schema.json"


SUITE_TIMEOUT = 120  # seconds: a hang fails one test with a traceback, not the CI job
# benchmarks/mutation.py runs the tests once per mutant: there the pytest sessions a test starts
# with pytester (seconds to a minute each; the suite itself runs them) are left out, and the
# rules are pinned by the in-process tests.
MUTATION_SKIP = "a pytester session: not run per mutant (benchmarks/mutation.py)"


def pytest_collection_modifyitems(items):
    """Every test of this suite without its own ``timeout`` marker gets SUITE_TIMEOUT
    (pytest-timeout). Not an ini setting: ideas/ shares the rootdir's ini, and a suite
    timeout there would stop real benches (their limit is --bench-timeout). Under mutmut,
    pytester tests are skipped (MUTATION_SKIP)."""
    here = Path(__file__).parent
    mutating = "MUTANT_UNDER_TEST" in os.environ
    for item in items:
        if here in item.path.parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SUITE_TIMEOUT))
        if mutating and "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=MUTATION_SKIP))


def validate_report(path) -> dict:
    """Load the report at ``path`` and validate it against the shipped JSON Schema (validation
    is skipped only while the package ships no schema yet)."""
    path = Path(path)
    assert path.is_file(), f"no report at {path}"
    report = json.loads(path.read_text(encoding="utf-8"))
    if SCHEMA_PATH.exists():
        import jsonschema

        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
        jsonschema.validators.validator_for(schema).check_schema(schema)
        jsonschema.validate(report, schema)
    return report


def report_path(root, name: str, track: str = "tabular", report_dir: str = "reports") -> Path:
    return Path(root) / report_dir / name / track / "bench_report.json"


@pytest.fixture(scope="session")
def read_report():
    """``read_report(root, name, track="tabular", report_dir="reports")``: the validated report
    a session run in ``root`` wrote."""
    def read(root, name, track="tabular", report_dir="reports"):
        return validate_report(report_path(root, name, track, report_dir))
    return read


# ------------------------------------------- idea modules for pytester sessions, and their output
FAST = ["--bench-epochs", "1"]

PRELUDE = '''\
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

TRAINED = Path(__file__).with_name("trained")   # touched by arm bodies: proves training ran
'''


def bench(name, *, track='"tabular"', grid='{"lr": [1e-2]}', seeds="2", extra=""):
    """The ``pytestmark = pytest.mark.bench(...)`` line; every argument is source text."""
    return (f"pytestmark = pytest.mark.bench(name={name!r}, track={track}, grid={grid}, "
            f"seeds={seeds}{extra})\n")


def module(mark: str, *bodies: str) -> str:
    return PRELUDE + mark + "".join(textwrap.dedent(b) for b in bodies)


BASELINE = '''
@pytest.mark.arm("baseline")
def test_baseline(run):
    TRAINED.touch()
    run.fit(run.track.model())
'''
IDEA_SAME = '''
@pytest.mark.arm("idea")
def test_idea(run):
    TRAINED.touch()
    run.fit(run.track.model())
'''

def esc(text: str) -> str:
    """``text`` as a literal fnmatch pattern (brackets and ? are special there)."""
    return "".join(f"[{c}]" if c in "[]?*" else c for c in text)


def line_with(*fragments: str) -> str:
    """An fnmatch pattern for one line containing the literal fragments in order."""
    return "*" + "*".join(esc(f) for f in fragments) + "*"


def no_traceback(result) -> None:
    text = "\n".join(result.outlines + result.errlines)
    assert "Traceback (most recent call last)" not in text, text
    assert "INTERNALERROR" not in text, text

