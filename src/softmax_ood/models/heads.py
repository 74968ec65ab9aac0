"""Classifier heads shared by every model family, plus small helpers used by all model files.

Two heads are available through :func:`make_head`:

* ``"linear"``: a plain :class:`torch.nn.Linear` producing ordinary logits.
* ``"godin"``: :class:`GodinHead`, the decomposed-confidence head of Generalized ODIN.

:class:`ClassifierNet` is the base class of every model: it provides ``forward_head``,
``forward`` and ``get_classifier`` on top of each family's own ``forward_features``.

:see Paper: Hsu et al., "Generalized ODIN: Detecting Out-of-Distribution Image Without
    Learning from Out-of-Distribution Data", CVPR 2020, https://arxiv.org/abs/2002.11297
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["ClassifierNet", "GodinHead", "make_head", "HEADS"]

HEADS: tuple[str, ...] = ("linear", "godin")


def _positive_int(name: str, value: Any) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 1, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _positive_ints(name: str, value: Any, item_name: str) -> list[int]:
    """Return ``value``, a non-empty sequence of integers >= 1, as a list of ``int``.

    :raises ValueError: ``value`` is a string / bytes, not a sequence, or empty (message names
        ``name``), or an item is not an integer >= 1 (message names ``item_name``).
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"{name} must be a non-empty sequence of ints, got {value!r}")
    return [_positive_int(item_name, v) for v in value]


def _depth_6n_plus_4(family: str, depth: Any, examples: str) -> int:
    """Return ``depth`` if it is an integer ``6n + 4`` with ``n >= 1`` (WRN, DenseNet-BC).

    :param family: architecture name used in the error message, e.g. ``"WideResNet"``.
    :param examples: valid depths quoted in the error message, e.g. ``"10, 16, 22"``.
    :raises ValueError: ``depth`` is not an ``int`` (``bool`` included), or ``depth < 10``, or
        ``(depth - 4) % 6 != 0``.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 10 or (depth - 4) % 6 != 0:
        raise ValueError(
            f"unsupported {family} depth {depth!r}; need (depth - 4) % 6 == 0 and "
            f"depth >= 10 (e.g. {examples})"
        )
    return depth


def _drop_rate(value: Any) -> float:
    """Return ``value`` as a float in ``[0, 1)``, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value < 1.0:
        raise ValueError(f"drop_rate must be a real number in [0, 1), got {value!r}")
    return float(value)


def _init_conv_bn(module: nn.Module) -> None:
    """Deterministic (given ``torch.manual_seed``) init of every conv / BN layer in ``module``.

    Convolutions: Kaiming normal, ``mode="fan_out"``, ReLU gain (He et al. 2015; what the
    ResNet / WRN / DenseNet reference code does), bias zero. Batch norm: weight 1, bias 0.
    Linear layers keep PyTorch's default init; :class:`GodinHead` initialises itself.
    """
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.modules.batchnorm._BatchNorm) and m.affine:
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


class GodinHead(nn.Module):
    """Generalized-ODIN decomposed-confidence head (cosine similarity variant, "DeConf-C").

    With penultimate features :math:`\\phi = \\phi(x)`:

    .. math::
        h_i(x) = \\cos(w_i, \\phi) = \\frac{w_i^\\top \\phi}{\\|w_i\\| \\, \\|\\phi\\|}, \\qquad
        g(x) = \\sigma\\big(\\mathrm{BN}(w_g^\\top \\phi + b_g)\\big), \\qquad
        f_i(x) = \\frac{h_i(x)}{g(x)}

    :meth:`forward` returns the quotient logits :math:`f_i` that are trained with plain
    cross-entropy; :meth:`cosine` returns :math:`h_i`, and GODIN scores OOD by
    :math:`\\max_i h_i(x)`.

    ``g`` is a sigmoid of a batch-normalised scalar, as in Hsu et al. (Sec. 3.1) and in the
    widely used re-implementation; the LogitNorm paper's description of the baseline writes
    :math:`\\exp` instead of the sigmoid. Because of ``BatchNorm1d``, training-mode forward passes
    need a batch of at least 2. Hsu et al. exclude ``h`` from weight decay; that is the
    optimiser's business, the weights live in ``self.h`` for that purpose.

    :param in_features: width of :math:`\\phi(x)`.
    :param num_classes: number of classes :math:`C`.
    :param eps: stabiliser added to both norms (``1e-4`` in the reference code).
    :see Paper: Hsu et al., "Generalized ODIN", CVPR 2020, https://arxiv.org/abs/2002.11297
    :see Implementation: https://github.com/guyera/Generalized-ODIN-Implementation
        (``code/deconfnet.py``: ``CosineDeconf`` and ``DeconfNet``)
    """

    def __init__(self, in_features: int, num_classes: int, eps: float = 1e-4):
        super().__init__()
        self.in_features = _positive_int("in_features", in_features)
        self.num_classes = _positive_int("num_classes", num_classes)
        self.eps = float(eps)
        self.h = nn.Linear(self.in_features, self.num_classes, bias=False)
        self.g = nn.Sequential(nn.Linear(self.in_features, 1), nn.BatchNorm1d(1), nn.Sigmoid())
        # As in the reference CosineDeconf; the scale of w is irrelevant to the cosine anyway.
        nn.init.kaiming_normal_(self.h.weight, nonlinearity="relu")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, num_classes={self.num_classes}, eps={self.eps}"

    def cosine(self, phi: Tensor) -> Tensor:
        """Return :math:`h(x)`, the ``(N, C)`` cosine similarities in ``[-1, 1]``."""
        phi_n = phi / (torch.linalg.vector_norm(phi, dim=1, keepdim=True) + self.eps)
        w = self.h.weight
        w_n = w / (torch.linalg.vector_norm(w, dim=1, keepdim=True) + self.eps)
        return F.linear(phi_n, w_n)

    def denominator(self, phi: Tensor) -> Tensor:
        """Return :math:`g(x)`, shape ``(N, 1)``, values in ``(0, 1)``."""
        return self.g(phi)

    def forward(self, phi: Tensor) -> Tensor:
        """Return the logits :math:`h(x) / g(x)`, shape ``(N, C)``."""
        return self.cosine(phi) / self.denominator(phi)


def make_head(kind: str, in_features: int, num_classes: int) -> nn.Module:
    """Build the final classifier layer.

    :param kind: ``"linear"`` (:class:`torch.nn.Linear`) or ``"godin"`` (:class:`GodinHead`).
    :param in_features: width of the penultimate features.
    :param num_classes: number of output classes.
    :raises ValueError: unknown ``kind`` or non-positive sizes.
    """
    in_features = _positive_int("in_features", in_features)
    num_classes = _positive_int("num_classes", num_classes)
    if kind == "linear":
        return nn.Linear(in_features, num_classes)
    if kind == "godin":
        return GodinHead(in_features, num_classes)
    raise ValueError(f"unknown head {kind!r}; expected one of {list(HEADS)}")


class ClassifierNet(nn.Module):
    """Base class of the model zoo: penultimate features, then an optional dropout, then a head.

    A subclass builds its layers in ``__init__``, sets ``num_classes``, ``num_features`` and
    ``classifier`` (from :func:`make_head`), and implements :meth:`forward_features`. A family
    that applies dropout right before the classifier registers it as ``self.head_drop``;
    families without one simply do not define it, so no submodule is added.
    """

    num_classes: int
    num_features: int
    classifier: nn.Module

    def forward_features(self, x: Tensor) -> Tensor:
        """Return the pooled, flattened penultimate features, shape ``(N, num_features)``."""
        raise NotImplementedError

    def forward_head(self, features: Tensor, pre_logits: bool = False) -> Tensor:
        """Return the ``(N, num_classes)`` logits of ``features``, or ``features`` unchanged if
        ``pre_logits`` (head dropout, where the family has one, is skipped too)."""
        if pre_logits:
            return features
        head_drop = self._modules.get("head_drop")
        if head_drop is not None:
            features = head_drop(features)
        return self.classifier(features)

    def forward(self, x: Tensor) -> Tensor:
        """Return ``forward_head(forward_features(x))``."""
        return self.forward_head(self.forward_features(x))

    def get_classifier(self) -> nn.Module:
        """Return the final layer (:class:`torch.nn.Linear` or :class:`GodinHead`)."""
        return self.classifier
