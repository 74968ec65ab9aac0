"""Small VGG-style convolutional network for CPU-sized experiments.

Each stage is two ``conv3x3 -> BN -> ReLU`` layers (the VGG building block of Simonyan &
Zisserman, with batch norm); stages are separated by 2x2 max-pooling and the network ends with
global average pooling, so any input size >= 1 works.

:see Paper: Simonyan & Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
    Recognition", ICLR 2015, https://arxiv.org/abs/1409.1556
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor, nn

from .heads import (
    ClassifierNet,
    _drop_rate,
    _init_conv_bn,
    _positive_int,
    _positive_ints,
    make_head,
)

__all__ = ["SmallCNN"]


def _conv_bn_relu(in_chans: int, out_chans: int) -> list[nn.Module]:
    return [
        nn.Conv2d(in_chans, out_chans, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_chans),
        nn.ReLU(inplace=True),
    ]


class SmallCNN(ClassifierNet):
    """Stages of ``(conv3x3-BN-ReLU) x 2``, ``MaxPool2d(2)`` between stages, global average pool.

    Max-pooling uses ``ceil_mode=True`` so a 1x1 (or odd-sized) map never collapses to 0x0.
    ``forward_features`` returns the pooled output of the last stage, ``num_features ==
    channels[-1]``.

    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param channels: output width of each stage, at least one stage.
    :param drop_rate: dropout probability applied to the features right before the classifier
        (not applied when ``forward_head(..., pre_logits=True)``).
    :param head: ``"linear"`` or ``"godin"`` (see :func:`~softmax_ood.models.heads.make_head`).
    :see Paper: Simonyan & Zisserman, ICLR 2015, https://arxiv.org/abs/1409.1556
    """

    def __init__(
        self,
        num_classes: int,
        in_chans: int,
        channels: Sequence[int] = (32, 64),
        drop_rate: float = 0.0,
        head: str = "linear",
    ):
        super().__init__()
        self.num_classes = _positive_int("num_classes", num_classes)
        prev = _positive_int("in_chans", in_chans)
        widths = _positive_ints("channels", channels, "channel width")
        self.drop_rate = _drop_rate(drop_rate)

        layers: list[nn.Module] = []
        for i, w in enumerate(widths):
            layers += _conv_bn_relu(prev, w) + _conv_bn_relu(w, w)
            if i < len(widths) - 1:
                layers.append(nn.MaxPool2d(2, ceil_mode=True))
            prev = w
        self.features = nn.Sequential(*layers)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.num_features = prev
        self.head_drop = nn.Dropout(self.drop_rate)
        self.classifier = make_head(head, self.num_features, self.num_classes)
        _init_conv_bn(self)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.pool(self.features(x))
