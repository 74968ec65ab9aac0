"""Model zoo: MLP, small CNN, Kang et al.'s MNIST ConvNet, ResNet, Wide ResNet and DenseNet-BC with a linear or GODIN head.

Every model exposes the same interface, which the rest of the package relies on:

* ``forward_features(x) -> (N, num_features)``: pooled, flattened penultimate features;
* ``forward_head(features, pre_logits=False) -> (N, num_classes)`` logits, or the features
  unchanged when ``pre_logits=True``;
* ``forward(x) == forward_head(forward_features(x))``;
* ``get_classifier()``: the final layer (``nn.Linear`` or :class:`GodinHead`);
* attributes ``num_features`` and ``num_classes``.

Build models through :func:`create_model`, which validates architecture keyword arguments
against the constructor signature so that a misspelled config key fails loudly.
"""

from __future__ import annotations

import inspect
from typing import Any

from torch import nn

from ..entries import check_kwargs, lookup
from .cnn import SmallCNN
from .convnet import ConvNet
from .densenet import DenseNetBC
from .heads import HEADS, GodinHead, make_head
from .mlp import MLP
from .resnet import ResNet
from .wrn import WideResNet

__all__ = [
    "MODELS",
    "HEADS",
    "create_model",
    "count_parameters",
    "GodinHead",
    "make_head",
    "MLP",
    "SmallCNN",
    "ConvNet",
    "ResNet",
    "WideResNet",
    "DenseNetBC",
]

MODELS: dict[str, type[nn.Module]] = {
    "mlp": MLP,
    "cnn": SmallCNN,
    "convnet": ConvNet,
    "resnet": ResNet,
    "wrn": WideResNet,
    "densenet": DenseNetBC,
}

_COMMON = ("num_classes", "in_chans", "image_size")


def create_model(
    family: str, *, num_classes: int, in_chans: int, image_size: int, **arch_kwargs: Any
) -> nn.Module:
    """Instantiate ``MODELS[family]`` after checking ``arch_kwargs`` against its signature.

    :param family: a key of :data:`MODELS`.
    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param image_size: input height = width; passed only to families whose constructor takes
        it (``mlp``), accepted and ignored by the convolutional families (global pooling).
    :param arch_kwargs: family-specific arguments, e.g. ``depth``, ``widen_factor``,
        ``drop_rate``, ``head``.
    :raises ValueError: unknown family, unknown keyword argument(s), missing required
        argument(s) (e.g. ``depth``), or an invalid value rejected by the constructor.
    """
    cls = lookup("architecture family", MODELS, family)
    params = inspect.signature(cls.__init__).parameters
    check_kwargs(
        "architecture family", family, cls, arch_kwargs, skip=("self", *_COMMON), word="argument"
    )
    kwargs: dict[str, Any] = dict(arch_kwargs, num_classes=num_classes, in_chans=in_chans)
    if "image_size" in params:
        kwargs["image_size"] = image_size
    return cls(**kwargs)


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Return the number of parameters of ``model`` (only those with ``requires_grad`` if
    ``trainable_only``)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
