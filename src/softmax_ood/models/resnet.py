"""ResNet with basic (two 3x3 conv) residual blocks, in CIFAR and ImageNet layouts.

* depth in {8, 14, 20, 32, 44, 56, 110}: the CIFAR ResNet-(6n+2) of He et al. Sec. 4.2, three
  stages of n blocks with widths ``base_width * (1, 2, 4)`` (``base_width`` default 16).
* depth in {18, 34}: the ImageNet layer counts ``[2, 2, 2, 2]`` / ``[3, 4, 6, 3]`` with widths
  ``base_width * (1, 2, 4, 8)`` (``base_width`` default 64) on a CIFAR stem (3x3 conv, stride 1,
  no max-pool), the variant commonly used on 32x32 images (about 11.2M / 21.3M parameters).

Down-sampling shortcuts are 1x1 conv + BN projections (He et al.'s option B) in both layouts;
the original CIFAR networks used parameter-free zero-padding (option A), so the CIFAR variants
here have slightly more parameters (ResNet-20: 272,474 vs 269,722 for 10 classes).

:see Paper: He et al., "Deep Residual Learning for Image Recognition", CVPR 2016,
    https://arxiv.org/abs/1512.03385
"""

from __future__ import annotations

from torch import Tensor, nn

from .heads import ClassifierNet, _drop_rate, _init_conv_bn, _positive_int, make_head

__all__ = ["BasicBlock", "ResNet", "CIFAR_DEPTHS", "IMAGENET_LAYERS"]

#: depth -> blocks per stage (three stages, n = (depth - 2) / 6).
CIFAR_DEPTHS: dict[int, list[int]] = {d: [(d - 2) // 6] * 3 for d in (8, 14, 20, 32, 44, 56, 110)}
#: depth -> blocks per stage (four stages).
IMAGENET_LAYERS: dict[int, list[int]] = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3]}


class BasicBlock(nn.Module):
    """``conv3x3-BN-ReLU-conv3x3-BN`` plus shortcut, then ReLU (He et al. 2016, Fig. 2)."""

    expansion = 1

    def __init__(self, in_chans: int, out_chans: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_chans, out_chans, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_chans)
        self.conv2 = nn.Conv2d(out_chans, out_chans, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_chans)
        self.relu = nn.ReLU(inplace=True)
        if stride != 1 or in_chans != out_chans:
            self.shortcut: nn.Module = nn.Sequential(
                nn.Conv2d(in_chans, out_chans, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_chans),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class ResNet(ClassifierNet):
    """ResNet-``depth`` with basic blocks and global average pooling.

    ``forward_features`` returns the globally average-pooled output of the last stage (each
    block ends with a ReLU), ``num_features == base_width * 4`` (CIFAR layout) or
    ``base_width * 8`` (ImageNet layout).

    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param depth: one of 8, 14, 20, 32, 44, 56, 110 (CIFAR layout) or 18, 34 (ImageNet layout).
    :param base_width: width of the first stage; ``None`` means 16 (CIFAR) or 64 (ImageNet).
    :param drop_rate: dropout probability applied to the features right before the classifier
        (not applied when ``forward_head(..., pre_logits=True)``).
    :param head: ``"linear"`` or ``"godin"`` (see :func:`~softmax_ood.models.heads.make_head`).
    :raises ValueError: unsupported ``depth`` (the message lists the allowed depths).
    :see Paper: He et al., "Deep Residual Learning for Image Recognition", CVPR 2016,
        https://arxiv.org/abs/1512.03385
    """

    def __init__(
        self,
        num_classes: int,
        in_chans: int,
        depth: int,
        base_width: int | None = None,
        drop_rate: float = 0.0,
        head: str = "linear",
    ):
        super().__init__()
        self.num_classes = _positive_int("num_classes", num_classes)
        in_chans = _positive_int("in_chans", in_chans)
        is_int = isinstance(depth, int) and not isinstance(depth, bool)
        if is_int and depth in CIFAR_DEPTHS:
            layers, default_width, mults = CIFAR_DEPTHS[depth], 16, (1, 2, 4)
        elif is_int and depth in IMAGENET_LAYERS:
            layers, default_width, mults = IMAGENET_LAYERS[depth], 64, (1, 2, 4, 8)
        else:
            allowed = sorted([*CIFAR_DEPTHS, *IMAGENET_LAYERS])
            raise ValueError(f"unsupported ResNet depth {depth!r}; allowed depths: {allowed}")
        self.depth = int(depth)
        width = default_width if base_width is None else _positive_int("base_width", base_width)
        self.drop_rate = _drop_rate(drop_rate)

        self.stem = nn.Sequential(
            nn.Conv2d(in_chans, width, 3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        )
        stages: list[nn.Module] = []
        prev = width
        for i, (n_blocks, mult) in enumerate(zip(layers, mults, strict=True)):
            out = width * mult
            blocks = []
            for j in range(n_blocks):
                stride = 2 if (i > 0 and j == 0) else 1
                blocks.append(BasicBlock(prev, out, stride))
                prev = out
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.num_features = prev
        self.head_drop = nn.Dropout(self.drop_rate)
        self.classifier = make_head(head, self.num_features, self.num_classes)
        _init_conv_bn(self)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.pool(self.stages(self.stem(x)))
