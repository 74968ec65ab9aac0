"""Multi-layer perceptron on flattened images.

The cheapest family, for CPU-sized smoke runs and the toy experiments; it is the classic
feed-forward baseline of Hendrycks & Gimpel, who first reported the max-softmax OOD baseline on
MNIST with such networks.

:see Paper: Hendrycks & Gimpel, "A Baseline for Detecting Misclassified and Out-of-Distribution
    Examples in Neural Networks", ICLR 2017, https://arxiv.org/abs/1610.02136
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor, nn

from .heads import ClassifierNet, _drop_rate, _positive_int, _positive_ints, make_head

__all__ = ["MLP"]


class MLP(ClassifierNet):
    """Flatten, then ``Linear -> ReLU [-> Dropout]`` for each hidden width, then the head.

    ``forward_features`` returns the output of the last hidden block (after ReLU and dropout),
    so ``num_features == hidden[-1]``. There is no dropout between the features and the head.

    :param num_classes: number of output classes.
    :param in_chans: number of input channels.
    :param image_size: input height = width; the input must be ``(N, in_chans, image_size,
        image_size)``.
    :param hidden: widths of the hidden layers, at least one.
    :param drop_rate: dropout probability after every hidden ReLU.
    :param head: ``"linear"`` or ``"godin"`` (see :func:`~softmax_ood.models.heads.make_head`).
    :see Paper: Hendrycks & Gimpel, ICLR 2017, https://arxiv.org/abs/1610.02136
    """

    def __init__(
        self,
        num_classes: int,
        in_chans: int,
        image_size: int,
        hidden: Sequence[int] = (256, 256),
        drop_rate: float = 0.0,
        head: str = "linear",
    ):
        super().__init__()
        self.num_classes = _positive_int("num_classes", num_classes)
        in_chans = _positive_int("in_chans", in_chans)
        image_size = _positive_int("image_size", image_size)
        widths = _positive_ints("hidden", hidden, "hidden width")
        self.drop_rate = _drop_rate(drop_rate)

        layers: list[nn.Module] = [nn.Flatten(1)]
        prev = in_chans * image_size * image_size
        for w in widths:
            layers += [nn.Linear(prev, w), nn.ReLU(inplace=True)]
            if self.drop_rate > 0:
                layers.append(nn.Dropout(self.drop_rate))
            prev = w
        self.features = nn.Sequential(*layers)
        self.num_features = prev
        self.classifier = make_head(head, self.num_features, self.num_classes)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.features(x)
