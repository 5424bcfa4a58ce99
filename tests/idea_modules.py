"""The one builder of the idea modules that pytester tests write (issue 52: they were copied
strings): :func:`idea_module` gives a module's source (its imports, its ``pytestmark`` bench
mark: :func:`bench`, then its parts in order), :func:`arm` one arm, and the parts many tests
share are here (:data:`BASELINE`, :data:`IDEA_SAME`, :data:`RECORDED_ARMS`, ...). Imported by
name (``from idea_modules import ...``; ``tests/`` is on ``sys.path``).

A mark option is a value written with ``repr`` (``seeds=3``, ``grid={"lr": [1e-2]}``); a
:class:`Source` is written as it is: an expression the mark must see as written (one a test
feeds the plugin to see it refused). A part is source text, dedented, so it may be written
indented where it is.
"""
from __future__ import annotations

import inspect
import textwrap

LR = {"lr": [1e-2]}   # one learning rate: a bench's grid when the test does not tune
FIT = "run.fit(run.track.model())"   # an arm that trains the track's model


class Source(str):
    """A mark option written as it is (``Source("iter([3e-3])")``), not as its repr."""

    def __repr__(self) -> str:
        return str(self)


def bench(name: str, *, track: object = "tabular", grid: object = LR, seeds: object = 2,
          **options: object) -> str:
    """The ``pytestmark = pytest.mark.bench(...)`` line of the options in this order (an option
    that is None is left out: the mark's default)."""
    given = {"name": name, "track": track, "grid": grid, "seeds": seeds, **options}
    return ("pytestmark = pytest.mark.bench("
            + ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None) + ")\n")


def arm(kind: str, body: str = FIT, *, name: str | None = None, fn: str | None = None,
        params: str = "run") -> str:
    """One arm: ``@pytest.mark.arm(kind)`` (with ``name`` for a control) on ``def test_<fn>``
    (``fn`` defaults to the control's name, else the kind) taking ``params``, ``body``
    (dedented, any indentation after its first line) under it."""
    label = f'"{kind}"' + (f', name="{name}"' if name else "")
    return (f"\n@pytest.mark.arm({label})\ndef test_{fn or name or kind}({params}):\n"
            + textwrap.indent(inspect.cleandoc(body), "    ") + "\n")


def idea_module(name: str, *parts: str, imports: str = "import pytest", **options: object
                ) -> str:
    """An idea module's source: ``imports`` (lines), its bench mark (:func:`bench` of ``name``
    and ``options``), then ``parts`` (arms, helpers, module globals), each dedented, in
    order."""
    return (textwrap.dedent(imports).strip() + "\n\n" + bench(name, **options)
            + "".join("\n" + textwrap.dedent(part).strip("\n") + "\n" for part in parts))


# the imports of a module whose arms train, and the file its arms touch to show they ran
TORCH = '''
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

TRAINED = Path(__file__).with_name("trained")   # touched by arm bodies: proves training ran
'''
FAST = ["--bench-epochs", "1"]

BASELINE = arm("baseline", "TRAINED.touch()\n" + FIT)
IDEA_SAME = arm("idea", "TRAINED.touch()\n" + FIT)
# arms that record fixed values (no training): the idea 0.5 better on every seed
RECORDED_ARMS = (arm("baseline", "run.record(val=1.0 + run.seed, test=1.0 + run.seed)")
                 + arm("idea", "run.record(val=0.5 + run.seed, test=0.5 + run.seed)"))
# both arms best at a grid's lowest lr (so the grid is extended below it)
EDGE_ARMS = (arm("baseline", 'run.record(val=1.0 + run.cfg["lr"], test=1.0 + 0.01 * run.seed)'
                             "   # best at the lowest lr")
             + arm("idea", 'run.record(val=1.0 + run.cfg["lr"], test=0.9 + 0.01 * run.seed)'))
# a constant predictor that harms on purpose (its budget waived): an idea that loses
CONST_MODEL = '''
class Const(nn.Module):
    """Ignores its input: predicts one learned number."""
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.bias.expand(x.shape[0], 1)
'''
HARMS = idea_module("const", BASELINE, CONST_MODEL, arm("idea", "run.fit(Const())"),
                    imports=TORCH, seeds=6,
                    budget_waiver={"params": "a constant predictor: its harm is the point"})


def idea_source(name: str, idea_body: str = FIT, *, seeds: int = 2, track: str = "tabular",
                imports: str = "") -> str:
    """A small idea module: one lr, ``seeds`` seeds, a baseline that trains the track's model,
    ``idea_body`` as the idea arm, ``imports`` after pytest's."""
    return idea_module(name, arm("baseline"), arm("idea", idea_body),
                       imports="import pytest\n" + textwrap.dedent(imports), track=track,
                       seeds=seeds)
