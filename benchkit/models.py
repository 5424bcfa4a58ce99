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


class CNNDigits(nn.Module):
    """Two 3x3 convolutions (16 and 32 channels, ReLU), a 2x2 max-pool and a linear head:
    ``(batch, 1, 8, 8)`` images to 10 class logits."""

    def __init__(self, channels: tuple[int, int] = (16, 32), n_classes: int = 10):
        super().__init__()
        c1, c2 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Linear(c2 * 4 * 4, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def cnn_digits() -> CNNDigits:
    return CNNDigits()
