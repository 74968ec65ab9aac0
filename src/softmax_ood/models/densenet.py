"""DenseNet-BC: densely connected network with bottleneck layers and compression 0.5.

A 3x3 stem conv to ``2 * growth_rate`` channels, three dense blocks of ``n = (depth - 4) / 6``
bottleneck layers (``BN-ReLU-conv1x1(4k)-BN-ReLU-conv3x3(k)``, output concatenated to the
input), separated by transition layers (``BN-ReLU-conv1x1`` halving the width, then 2x2 average
pooling), then BN-ReLU and global average pooling. DenseNet-BC-100 with k = 12 (~0.77M
parameters for 10 classes) is the DenseNet of the ODIN / Energy / LogitNorm experiments.

:see Paper: Huang et al., "Densely Connected Convolutional Networks", CVPR 2017,
    https://arxiv.org/abs/1608.06993
:see Implementation: https://github.com/hendrycks/outlier-exposure (``CIFAR/models/densenet.py``)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .heads import (
    ClassifierNet,
    _depth_6n_plus_4,
    _drop_rate,
    _init_conv_bn,
    _positive_int,
    make_head,
)

__all__ = ["BottleneckLayer", "Transition", "DenseNetBC"]

_COMPRESSION = 0.5
_BOTTLENECK_WIDTH = 4  # bottleneck conv produces 4 * growth_rate channels


class BottleneckLayer(nn.Module):
    """``BN-ReLU-conv1x1-[dropout]-BN-ReLU-conv3x3-[dropout]``, concatenated to the input."""

    def __init__(self, in_chans: int, growth_rate: int, drop_rate: float = 0.0):
        super().__init__()
        inter = _BOTTLENECK_WIDTH * growth_rate
        self.bn1 = nn.BatchNorm2d(in_chans)
        self.conv1 = nn.Conv2d(in_chans, inter, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(inter)
        self.conv2 = nn.Conv2d(inter, growth_rate, 3, padding=1, bias=False)
        self.drop_rate = drop_rate

    def forward(self, x: Tensor) -> Tensor:
        out = self.conv1(F.relu(self.bn1(x)))
        if self.drop_rate > 0:
            out = F.dropout(out, p=self.drop_rate, training=self.training)
        out = self.conv2(F.relu(self.bn2(out)))
        if self.drop_rate > 0:
            out = F.dropout(out, p=self.drop_rate, training=self.training)
        return torch.cat([x, out], dim=1)


class Transition(nn.Module):
    """``BN-ReLU-conv1x1-[dropout]-AvgPool2d(2)``.

    Pooling uses ``ceil_mode=True`` so a 1x1 map stays 1x1 instead of collapsing to 0x0
    (identical to the usual pooling for even sizes).
    """

    def __init__(self, in_chans: int, out_chans: int, drop_rate: float = 0.0):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_chans)
        self.conv = nn.Conv2d(in_chans, out_chans, 1, bias=False)
        self.drop_rate = drop_rate

    def forward(self, x: Tensor) -> Tensor:
        out = self.conv(F.relu(self.bn(x)))
        if self.drop_rate > 0:
            out = F.dropout(out, p=self.drop_rate, training=self.training)
        return F.avg_pool2d(out, 2, ceil_mode=True)


class DenseNetBC(ClassifierNet):
    """DenseNet-BC-``depth`` with growth rate ``k`` (Huang et al. 2017).

    ``forward_features`` returns the globally average-pooled output of the final BN-ReLU;
    ``num_features`` is the width after the third dense block (342 for depth 100, k = 12).
    There is no dropout between the features and the head.

    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param depth: total depth with ``(depth - 4) % 6 == 0`` (10, 16, 22, ..., 100, ...), giving
        ``(depth - 4) // 6`` bottleneck layers per dense block.
    :param growth_rate: channels added by each layer, ``k``.
    :param drop_rate: dropout probability after every convolution inside dense blocks and
        transitions (Huang et al. use 0.2 only when training without augmentation).
    :param head: ``"linear"`` or ``"godin"`` (see :func:`~softmax_ood.models.heads.make_head`).
    :raises ValueError: ``depth`` not of the form ``6n + 4`` with ``n >= 1``.
    :see Paper: Huang et al., "Densely Connected Convolutional Networks", CVPR 2017,
        https://arxiv.org/abs/1608.06993
    """

    def __init__(
        self,
        num_classes: int,
        in_chans: int,
        depth: int,
        growth_rate: int = 12,
        drop_rate: float = 0.0,
        head: str = "linear",
    ):
        super().__init__()
        self.num_classes = _positive_int("num_classes", num_classes)
        in_chans = _positive_int("in_chans", in_chans)
        self.depth = _depth_6n_plus_4("DenseNet-BC", depth, "10, 40, 100, 190")
        self.growth_rate = _positive_int("growth_rate", growth_rate)
        self.drop_rate = _drop_rate(drop_rate)
        n = (self.depth - 4) // 6
        k = self.growth_rate

        width = 2 * k
        self.stem = nn.Conv2d(in_chans, width, 3, stride=1, padding=1, bias=False)
        layers: list[nn.Module] = []
        for block in range(3):
            for _ in range(n):
                layers.append(BottleneckLayer(width, k, self.drop_rate))
                width += k
            if block < 2:
                out = int(width * _COMPRESSION)
                layers.append(Transition(width, out, self.drop_rate))
                width = out
        self.blocks = nn.Sequential(*layers)
        self.final_act = nn.Sequential(nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.num_features = width
        self.classifier = make_head(head, self.num_features, self.num_classes)
        _init_conv_bn(self)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.pool(self.final_act(self.blocks(self.stem(x))))
