"""The tracks' default models under their public name: ``from benchkit.models import rnn_small``.

They live in :mod:`benchkit.tracks.models` (the default model is part of a track); this module
only keeps the name idea modules and the README use.
"""
from benchkit.tracks.models import (CausalBlock, CharTransformer, RNNSmall,  # noqa: F401
                                    char_transformer, mlp_tanh, mlp_tiny, mnist1d_cnn,
                                    mnist1d_mlp, rnn_small)

__all__ = ["CausalBlock", "CharTransformer", "RNNSmall", "char_transformer", "mlp_tanh",
           "mlp_tiny", "mnist1d_cnn", "mnist1d_mlp", "rnn_small"]
