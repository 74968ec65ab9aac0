"""Wide Residual Network WRN-d-k with pre-activation basic blocks.

A 3x3 stem conv to 16 channels, three groups of ``n = (d - 4) / 6`` blocks with widths
``16k, 32k, 64k`` (strides 1, 2, 2), then BN-ReLU and global average pooling. Dropout sits
between the two convolutions of every block, as in the paper; WRN-40-2 with dropout 0.3 is the
backbone of the Outlier Exposure / Energy / LogitNorm CIFAR experiments (~2.24M parameters for
10 classes).

Layout follows the reference PyTorch code used by those papers, including the pre-activation
being shared with the 1x1 projection shortcut when a block changes width.

:see Paper: Zagoruyko & Komodakis, "Wide Residual Networks", BMVC 2016,
    https://arxiv.org/abs/1605.07146
:see Implementation: https://github.com/hendrycks/outlier-exposure (``CIFAR/models/wrn.py``)
"""

from __future__ import annotations

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

__all__ = ["WideBasicBlock", "WideResNet"]


class WideBasicBlock(nn.Module):
    """Pre-activation block ``BN-ReLU-conv3x3-BN-ReLU-[dropout]-conv3x3`` plus shortcut.

    When the width or stride changes, the shortcut is a 1x1 conv applied to the *activated*
    input ``ReLU(BN(x))``; otherwise it is the identity on the raw input.
    """

    def __init__(self, in_chans: int, out_chans: int, stride: int, drop_rate: float = 0.0):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_chans)
        self.conv1 = nn.Conv2d(in_chans, out_chans, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_chans)
        self.conv2 = nn.Conv2d(out_chans, out_chans, 3, stride=1, padding=1, bias=False)
        self.relu = nn.ReLU(inplace=False)
        self.drop_rate = drop_rate
        self.equal_in_out = in_chans == out_chans and stride == 1
        self.shortcut = (
            None
            if self.equal_in_out
            else nn.Conv2d(in_chans, out_chans, 1, stride=stride, padding=0, bias=False)
        )

    def forward(self, x: Tensor) -> Tensor:
        act = self.relu(self.bn1(x))
        out = self.relu(self.bn2(self.conv1(act)))
        if self.drop_rate > 0:
            out = F.dropout(out, p=self.drop_rate, training=self.training)
        out = self.conv2(out)
        residual = x if self.shortcut is None else self.shortcut(act)
        return residual + out


class WideResNet(ClassifierNet):
    """WRN-``depth``-``widen_factor`` (Zagoruyko & Komodakis 2016).

    ``forward_features`` returns the globally average-pooled output of the final BN-ReLU,
    ``num_features == 64 * widen_factor``. There is no dropout between the features and the head.

    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param depth: total depth ``d`` with ``(d - 4) % 6 == 0`` (10, 16, 22, 28, 40, ...).
    :param widen_factor: width multiplier ``k``.
    :param drop_rate: dropout probability inside every block, between the two convolutions
        (the LogitNorm / OE WRN-40-2 uses 0.3).
    :param head: ``"linear"`` or ``"godin"`` (see :func:`~softmax_ood.models.heads.make_head`).
    :raises ValueError: ``depth`` not of the form ``6n + 4`` with ``n >= 1``.
    :see Paper: Zagoruyko & Komodakis, "Wide Residual Networks", BMVC 2016,
        https://arxiv.org/abs/1605.07146
    """

    def __init__(
        self,
        num_classes: int,
        in_chans: int,
        depth: int,
        widen_factor: int,
        drop_rate: float = 0.0,
        head: str = "linear",
    ):
        super().__init__()
        self.num_classes = _positive_int("num_classes", num_classes)
        in_chans = _positive_int("in_chans", in_chans)
        self.depth = _depth_6n_plus_4("WideResNet", depth, "10, 16, 22, 28, 40")
        self.widen_factor = _positive_int("widen_factor", widen_factor)
        self.drop_rate = _drop_rate(drop_rate)
        n = (self.depth - 4) // 6
        widths = [16, 16 * self.widen_factor, 32 * self.widen_factor, 64 * self.widen_factor]

        self.stem = nn.Conv2d(in_chans, widths[0], 3, stride=1, padding=1, bias=False)
        stages: list[nn.Module] = []
        prev = widths[0]
        for out, stride in zip(widths[1:], (1, 2, 2), strict=True):
            blocks = []
            for j in range(n):
                blocks.append(WideBasicBlock(prev, out, stride if j == 0 else 1, self.drop_rate))
                prev = out
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.final_act = nn.Sequential(nn.BatchNorm2d(prev), nn.ReLU(inplace=True))
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.num_features = prev
        self.classifier = make_head(head, self.num_features, self.num_classes)
        _init_conv_bn(self)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.pool(self.final_act(self.stages(self.stem(x))))
