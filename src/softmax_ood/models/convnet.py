"""Kang et al.'s MNIST network: two 3x3 convolutions, then two fully connected layers, ReLU.

``Conv(c1) -> ReLU -> Conv(c2) -> ReLU -> MaxPool2d(2) [-> Dropout] -> Flatten -> Linear(hidden)
-> ReLU [-> Dropout] -> head``: the shape of Kang et al.'s App. B.2 table ("2 convolution layers
followed by 2 fully connected layers, ReLU nonlinearities"), which is the PyTorch MNIST example's
network (32 and 64 channels, 128 hidden units, unpadded convolutions, 2x2 max-pooling). No batch
norm. ``forward_features`` returns the hidden layer's output (``num_features == hidden``); the
head is the second fully connected layer. A plain feed-forward chain, so the Fig. 4 mechanism
analysis (:mod:`softmax_ood.studies.kang.features`) reads it layer by layer.

:see Paper: Kang, Setlur, Tomlin & Levine, "Deep Neural Networks Tend To Extrapolate
    Predictably", ICLR 2024, https://arxiv.org/abs/2310.00873, App. B.2 and App. C.2 (Fig. 13)
:see Implementation: https://github.com/pytorch/examples/blob/main/mnist/main.py
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor, nn

from .heads import ClassifierNet, _drop_rate, _positive_int, _positive_ints, make_head

__all__ = ["ConvNet"]


class ConvNet(ClassifierNet):
    """Two unpadded 3x3 convolutions, 2x2 max-pooling, one hidden fully connected layer, head.

    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param image_size: input height = width, at least 6 (two 3x3 convolutions and a 2x2 pool).
    :param channels: widths of the two convolutions (the paper's network: 32, 64).
    :param hidden: width of the first fully connected layer (the paper's network: 128).
    :param drop_rate: dropout probability after the pooling and after the hidden layer.
    :param head: ``"linear"`` or ``"godin"`` (see :func:`~softmax_ood.models.heads.make_head`).
    """

    def __init__(
        self,
        num_classes: int,
        in_chans: int,
        image_size: int,
        channels: Sequence[int] = (32, 64),
        hidden: int = 128,
        drop_rate: float = 0.0,
        head: str = "linear",
    ):
        super().__init__()
        self.num_classes = _positive_int("num_classes", num_classes)
        in_chans = _positive_int("in_chans", in_chans)
        image_size = _positive_int("image_size", image_size)
        widths = _positive_ints("channels", channels, "channel width")
        if len(widths) != 2:
            raise ValueError(f"channels must name the two convolutions' widths, got {channels!r}")
        if image_size < 6:
            raise ValueError(f"image_size must be at least 6 for this network, got {image_size}")
        hidden = _positive_int("hidden", hidden)
        self.drop_rate = _drop_rate(drop_rate)
        side = (image_size - 4) // 2
        layers: list[nn.Module] = [
            nn.Conv2d(in_chans, widths[0], 3),
            nn.ReLU(inplace=True),
            nn.Conv2d(widths[0], widths[1], 3),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        ]
        if self.drop_rate > 0:
            layers.append(nn.Dropout(self.drop_rate))
        layers += [nn.Flatten(1), nn.Linear(widths[1] * side * side, hidden), nn.ReLU(inplace=True)]
        if self.drop_rate > 0:
            layers.append(nn.Dropout(self.drop_rate))
        self.features = nn.Sequential(*layers)
        self.num_features = hidden
        self.classifier = make_head(head, self.num_features, self.num_classes)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.features(x)
