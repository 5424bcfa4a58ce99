"""Default models of the tracks: plain ``nn.Module`` s, nothing benchkit-specific.

They are built from the global torch RNG, which benchkit seeds from the run's seed before the
test body runs: the baseline and the idea of one seed start from the same weights wherever
their shapes match.
"""
from __future__ import annotations

import torch
from torch import nn


def mlp_tiny(n_in: int = 10, hidden: int = 64, n_out: int = 1) -> nn.Sequential:
    """10-64-64-1 ReLU MLP: ``Linear, ReLU, Linear, ReLU, Linear``."""
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, n_out),
    )


def mlp_tanh(n_in: int = 10, hidden: int = 64, n_out: int = 1) -> nn.Sequential:
    """10-64-64-1 tanh MLP: ``Linear, Tanh, Linear, Tanh, Linear`` (tabular's default at
    ``hidden=128``: the best of six MLPs on its mixture teacher, docs/tracks.md)."""
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.Tanh(),
        nn.Linear(hidden, hidden), nn.Tanh(),
        nn.Linear(hidden, n_out),
    )


class RNNSmall(nn.Module):
    """GRU(64) over a window ``(batch, time, features)``, linear head on the last hidden state."""

    def __init__(self, n_in: int = 3, hidden: int = 64, n_out: int = 3):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def rnn_small(n_in: int = 3, hidden: int = 64, n_out: int = 3) -> RNNSmall:
    return RNNSmall(n_in, hidden, n_out)


def window_mlp(window: int = 16, n_in: int = 3, hidden: int = 128, n_out: int = 3,
               depth: int = 2) -> nn.Sequential:
    """An MLP on a flattened window ``(batch, window, n_in)``: ``Flatten``, then ``depth``
    ``Linear, Tanh`` layers of width ``hidden`` and a linear head to ``n_out``; dynamics'
    window-MLP floor (at its defaults: window * n_in - 128 - 128 - n_out)."""
    layers: list[nn.Module] = [nn.Flatten()]
    for i in range(depth):
        layers += [nn.Linear(window * n_in if i == 0 else hidden, hidden), nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(hidden, n_out))


class CausalBlock(nn.Module):
    """A pre-norm transformer block: ``x + attn(norm1(x))`` then ``x + mlp(norm2(x))``, with
    causal multi-head self-attention (``scaled_dot_product_attention``, no dropout). With
    ``window``, a position attends only to itself and the ``window - 1`` positions before it."""

    def __init__(self, width: int, heads: int, mlp_ratio: int = 4, window: int | None = None):
        super().__init__()
        self.heads, self.window = heads, window
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, mlp_ratio * width), nn.GELU(),
                                 nn.Linear(mlp_ratio * width, width))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, w = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        if self.window is None:
            out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            lag = torch.arange(t, device=x.device)
            lag = lag[:, None] - lag[None, :]
            mask = (lag >= 0) & (lag < self.window)
            out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(out.transpose(1, 2).reshape(b, t, w))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class CharTransformer(nn.Module):
    """A causal character model: token + learned position embeddings, ``layers`` pre-norm
    blocks, a final LayerNorm and a linear head; ``(batch, time)`` token ids to
    ``(batch, time, vocab)`` next-character logits. With ``window``, each prediction depends
    on the last ``window`` characters only (a neural order-``window`` Markov model, the peer
    of the ``window + 1``-gram): the first block attends to that many positions, the later
    ones each position to itself."""

    def __init__(self, vocab: int, width: int = 64, layers: int = 2, heads: int = 4,
                 context: int = 64, window: int | None = None):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(context, width) * 0.02)
        self.blocks = nn.ModuleList(
            CausalBlock(width, heads, window=window if i == 0 or window is None else 1)
            for i in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position[:tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def char_transformer(vocab: int, context: int = 64, window: int | None = None,
                     width: int = 96) -> CharTransformer:
    """2 layers, width 96, 4 heads; ``window`` as :class:`CharTransformer`'s (None: all of
    the context)."""
    return CharTransformer(vocab, width=width, layers=2, heads=4, context=context, window=window)


class MNIST1DMLP(nn.Module):
    """The MNIST-1D paper's MLP: ``h = relu(W1 x)``, ``h = h + relu(W2 h)``, ``W3 h``
    (40-100-100-10, a residual middle layer), as in the ``mnist1d`` repository's models."""

    def __init__(self, n_in: int = 40, hidden: int = 100, n_classes: int = 10):
        super().__init__()
        self.linear1 = nn.Linear(n_in, hidden)
        self.linear2 = nn.Linear(hidden, hidden)
        self.linear3 = nn.Linear(hidden, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear1(x).relu()
        h = h + self.linear2(h).relu()
        return self.linear3(h)


def mnist1d_mlp() -> MNIST1DMLP:
    return MNIST1DMLP()


class MNIST1DCNN(nn.Module):
    """The MNIST-1D paper's CNN: three ReLU convolutions with stride 2 (kernel 5, 3, 3; 25
    channels; 40 positions -> 19 -> 10 -> 5) and a linear head on the flattened features."""

    def __init__(self, channels: int = 25, length: int = 40, n_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(1, channels, 5, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, stride=2, padding=1), nn.ReLU())
        with torch.no_grad():
            flat = self.features(torch.zeros(1, 1, length)).numel()
        self.head = nn.Linear(flat, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x.unsqueeze(1)).flatten(1))


def mnist1d_cnn() -> MNIST1DCNN:
    return MNIST1DCNN()


class MNIST1DGRU(nn.Module):
    """The MNIST-1D paper's GRU: bidirectional, 6 hidden units, over the 40 positions as a
    sequence of scalars, a linear head on every step's output (flattened)."""

    def __init__(self, hidden: int = 6, length: int = 40, n_classes: int = 10):
        super().__init__()
        self.gru = nn.GRU(1, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden * length, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x.unsqueeze(-1))
        return self.head(out.flatten(1))


def mnist1d_gru() -> MNIST1DGRU:
    return MNIST1DGRU()


def mnist1d_logistic() -> nn.Linear:
    """Logistic regression as a network: one linear layer, 40 -> 10 logits."""
    return nn.Linear(40, 10)
