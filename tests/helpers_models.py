"""Tiny hand-made models exposing the package's model interface, for score/loss tests.

Interface: ``forward_features(x) -> (N, D)``, ``forward_head(feats, pre_logits=False)``,
``get_classifier()``, and ``model(x) == forward_head(forward_features(x))``.
They do not import ``softmax_ood.models``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# 2 features -> 3 classes; class 0 points along +x, class 1 along +y, class 2 along -(x+y).
W_2x3 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
B_2x3 = torch.tensor([0.0, 0.5, -0.5])


class _FlagRecorder(nn.Module):
    """Identity that records the training flag it was called with."""

    def __init__(self) -> None:
        super().__init__()
        self.seen_training: list[bool] = []

    def forward(self, x: Tensor) -> Tensor:
        self.seen_training.append(self.training)
        return x


class LinearModel(nn.Module):
    """Features = flattened input; logits = ``W φ + b`` with fixed weights.

    Because the whole network is linear, input gradients can be written down by hand:
    :math:`\\nabla_x \\mathrm{CE}(z/T, \\hat y) = \\tfrac{1}{T} W^\\top (\\mathrm{softmax}(z/T) - e_{\\hat y})`.
    """

    def __init__(self, weight: Tensor = W_2x3, bias: Tensor | None = B_2x3) -> None:
        super().__init__()
        weight = torch.as_tensor(weight, dtype=torch.float64)
        n_cls, dim = weight.shape
        self.recorder = _FlagRecorder()
        self.fc = nn.Linear(dim, n_cls, bias=bias is not None, dtype=torch.float64)
        with torch.no_grad():
            self.fc.weight.copy_(weight)
            if bias is not None:
                self.fc.bias.copy_(torch.as_tensor(bias, dtype=torch.float64))

    def forward_features(self, x: Tensor) -> Tensor:
        return self.recorder(x.flatten(1))

    def forward_head(self, feats: Tensor, pre_logits: bool = False) -> Tensor:
        return feats if pre_logits else self.fc(feats)

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_head(self.forward_features(x))

    def get_classifier(self) -> nn.Linear:
        return self.fc


class TinyGodinHead(nn.Module):
    """GODIN-style head: ``h_i = cos(w_i, φ)``, ``g = sigmoid(v^T φ + c)``, logits ``h / g``."""

    def __init__(self, weight: Tensor = W_2x3) -> None:
        super().__init__()
        weight = torch.as_tensor(weight, dtype=torch.float64)
        n_cls, dim = weight.shape
        self.weight = nn.Parameter(weight.clone())
        self.g = nn.Linear(dim, 1, dtype=torch.float64)
        with torch.no_grad():
            self.g.weight.fill_(0.25)
            self.g.bias.fill_(0.1)

    def cosine(self, feats: Tensor) -> Tensor:
        return F.normalize(feats, dim=1) @ F.normalize(self.weight, dim=1).T

    def forward(self, feats: Tensor) -> Tensor:
        return self.cosine(feats) / torch.sigmoid(self.g(feats))


class TinyGodinModel(nn.Module):
    """Identity features followed by :class:`TinyGodinHead`."""

    def __init__(self, weight: Tensor = W_2x3) -> None:
        super().__init__()
        self.head = TinyGodinHead(weight)

    def forward_features(self, x: Tensor) -> Tensor:
        return x.flatten(1)

    def forward_head(self, feats: Tensor, pre_logits: bool = False) -> Tensor:
        return feats if pre_logits else self.head(feats)

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_head(self.forward_features(x))

    def get_classifier(self) -> TinyGodinHead:
        return self.head


def image_linear_model(
    channels: int = 3, height: int = 2, width: int = 2, n_cls: int = 3, seed: int = 0
) -> LinearModel:
    """A :class:`LinearModel` on ``(N, channels, height, width)`` inputs with seeded random weights."""
    gen = torch.Generator().manual_seed(seed)
    weight = torch.randn(n_cls, channels * height * width, generator=gen, dtype=torch.float64)
    bias = torch.randn(n_cls, generator=gen, dtype=torch.float64)
    return LinearModel(weight, bias)
