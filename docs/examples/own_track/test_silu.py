"""SiLU in place of ReLU in each track's MLP: does the smoother activation help?"""
import pytest
from torch import nn

pytestmark = pytest.mark.bench(name="silu", track=["skdiabetes", "skdigits"],
                               claim="SiLU instead of ReLU improves the test metric")


def with_silu(model):
    """The same model (same initial weights) with every ReLU replaced by a SiLU."""
    for i, layer in enumerate(model):
        if isinstance(layer, nn.ReLU):
            model[i] = nn.SiLU()
    return model


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())


@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(with_silu(run.track.model()))
