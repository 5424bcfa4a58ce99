"""What ``run.record``, ``run.signature`` and ``run.budget`` take as a number (issue 50): a
real number, a real numpy scalar or a one-element real array or tensor; anything else is one
clear error naming what is valid, never an OverflowError or a silent coercion."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from benchkit.training.run import to_float

WHAT = "run.record(val=...)"


@pytest.mark.parametrize("value, expected", [
    (1, 1.0), (2.5, 2.5), (np.float32(1.5), 1.5), (np.int64(3), 3.0), (np.array([2.0]), 2.0),
    (torch.tensor(1.5), 1.5), (torch.tensor([7]), 7.0), (10 ** 300, 1e300), (float("nan"), None),
])
def test_real_numbers_are_taken(value, expected):
    got = to_float(value, WHAT)
    assert type(got) is float
    assert got == expected or (expected is None and got != got)


@pytest.mark.parametrize("value, error, fragment", [
    (10 ** 400, ValueError, "run.record(val=...) = 100000000000000000000000000000... is "
     "beyond float range; valid: a real number with |x| < 1.8e308"),
    (1 + 2j, TypeError, "must be a real number, got complex: (1+2j); valid: a real number"),
    (np.complex128(1 + 0j), TypeError, "got complex: (1+0j)"),
    (torch.tensor(1 + 1j), TypeError, "got complex"),
    (np.str_("1.5"), TypeError, "got str: '1.5'"), (np.array(["1.5"]), TypeError, "got str"),
    ("1.0", TypeError, "got str"), (True, TypeError, "got bool"), (np.bool_(True), TypeError,
                                                                   "got bool"),
    (np.zeros(2), TypeError, "a single number, got an array of shape (2,)"),
])
def test_anything_else_is_one_clear_error(value, error, fragment):
    with pytest.raises(error) as info:
        to_float(value, WHAT)
    assert fragment in str(info.value) and len(str(info.value)) < 200
