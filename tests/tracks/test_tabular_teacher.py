"""tabular's mixture teacher (issue 54): differently shaped components, each centred and scaled
to its declared sd, summed; the track's data draw from all of them."""
from __future__ import annotations

import numpy as np
import pytest

from benchkit.tracks import tabular


def test_each_component_enters_centred_at_its_declared_sd():
    x = np.random.default_rng(7).normal(size=(50_000, tabular.N_FEATURES))
    for part in tabular.PARTS:
        values = tabular.teacher(x, (part,))
        assert abs(values.mean()) < 0.03, part
        assert values.std() == pytest.approx(tabular._PART_SD[part], rel=0.03), part


def test_the_teacher_is_the_sum_of_its_components():
    x = np.random.default_rng(8).normal(size=(100, tabular.N_FEATURES))
    parts = sum(tabular.teacher(x, (p,)) for p in tabular.PARTS)
    assert np.allclose(tabular.teacher(x), parts)


def test_the_components_are_not_one_shape():
    """No component is close to a rescaled copy of another (each explains little of another's
    variance), so the mixture is not one family's function."""
    x = np.random.default_rng(9).normal(size=(20_000, tabular.N_FEATURES))
    values = np.stack([tabular.teacher(x, (p,)) for p in tabular.PARTS])
    corr = np.corrcoef(values)
    off_diagonal = np.abs(corr[~np.eye(len(tabular.PARTS), dtype=bool)])
    assert off_diagonal.max() < 0.5


def test_an_unknown_component_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown parts \\['nope'\\]; valid: tanh, relu"):
        tabular.teacher(np.zeros((1, tabular.N_FEATURES)), ("nope",))


def test_a_component_alone_draws_the_same_inputs():
    """The inputs and noise come from the seed's streams whatever the teacher, so a component's
    data differ from the mixture's only in the target."""
    mixture, alone = tabular.arrays(3), tabular.arrays(3, ("relu",))
    for (x, y), (xa, ya) in zip(mixture, alone):
        assert np.array_equal(x, xa) and not np.array_equal(y, ya)
