"""Training losses: cross-entropy, LogitNorm, logit penalty and GODIN.

Every loss is an ``nn.Module`` whose ``forward(logits, target)`` returns the scalar mean loss
over the batch. ``requires_head`` tells the trainer which classifier head the loss expects
(``"linear"`` or ``"godin"``).

Hyperparameters have no defaults in code: the values used in the papers (e.g. LogitNorm
:math:`\\tau = 0.04` on CIFAR-10) live in the workflow config and reach :func:`build_loss`
through ``params``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .entries import check_kwargs, lookup

__all__ = [
    "CrossEntropy",
    "LogitNormLoss",
    "LogitPenaltyLoss",
    "GodinLoss",
    "LOSSES",
    "build_loss",
]


def _check_real(name: str, value: Any, *, positive: bool) -> float:
    """Return ``value`` as a finite float, > 0 if ``positive`` else >= 0; ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (value <= 0 if positive else value < 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return value


class CrossEntropy(nn.Module):
    """Softmax cross-entropy, mean over the batch.

    .. math::
        \\mathcal{L}_{CE}(f, y) = -\\log \\frac{e^{f_y}}{\\sum_{i=1}^k e^{f_i}}
    """

    requires_head: ClassVar[str] = "linear"

    def __init__(self) -> None:
        super().__init__()

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits, target)


class LogitNormLoss(nn.Module):
    """LogitNorm: cross-entropy on logits normalised to the constant norm :math:`1/\\tau`.

    .. math::
        \\mathcal{L}_{LN}(f, y) = -\\log \\frac{e^{f_y / (\\tau (\\|f\\|_2 + \\epsilon))}}
        {\\sum_{i=1}^k e^{f_i / (\\tau (\\|f\\|_2 + \\epsilon))}}

    Follows the reference implementation line by line
    (``norms = ||x|| + 1e-7; logit_norm = x / norms / t; F.cross_entropy(logit_norm, target)``).
    Per-sample lower bound (Prop. 3.3): :math:`\\mathcal{L}_{LN} \\ge \\log(1 + (k-1) e^{-2/\\tau})`.
    The bound is not attained for any :math:`k \\ge 2`; the exact minimum, reached at the centred
    one-hot direction :math:`f \\propto (1, -\\tfrac{1}{k-1}, \\dots)`, is
    :math:`\\log(1 + (k-1) e^{-\\sqrt{k/(k-1)}/\\tau})`.

    :param tau: temperature :math:`\\tau > 0`; no default (paper: 0.04 on CIFAR-10, set in config).
    :param eps: stabiliser added to the norm, ``1e-7`` in the reference code.
    :see Paper: Wei et al., "Mitigating Neural Network Overconfidence with Logit Normalization",
        ICML 2022, https://arxiv.org/abs/2205.09310, Eq. (4).
    :see Implementation: https://github.com/hongxin001/logitnorm_ood (``common/loss_function.py``)
    """

    requires_head: ClassVar[str] = "linear"

    def __init__(self, tau: float, eps: float = 1e-7):
        super().__init__()
        self.tau = _check_real("LogitNormLoss tau", tau, positive=True)
        self.eps = _check_real("LogitNormLoss eps", eps, positive=False)

    def extra_repr(self) -> str:
        return f"tau={self.tau}, eps={self.eps}"

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        norms = torch.norm(logits, p=2, dim=-1, keepdim=True) + self.eps
        logit_norm = torch.div(logits, norms) / self.tau
        return F.cross_entropy(logit_norm, target)


class LogitPenaltyLoss(nn.Module):
    """Cross-entropy plus an :math:`L_2` penalty on the logit norm (Lagrangian baseline).

    .. math::
        \\mathcal{L}_{LP} = \\frac{1}{N} \\sum_{n=1}^N \\left[\\mathcal{L}_{CE}(f^{(n)}, y^{(n)})
        + \\lambda \\|f^{(n)}\\|_2\\right]

    :param lam: multiplier :math:`\\lambda \\ge 0`; no default (paper Table 9: 0.05, set in config).
    :see Paper: Wei et al., ICML 2022, Sec. 5, "Logit normalization vs. Logit penalty".
    """

    requires_head: ClassVar[str] = "linear"

    def __init__(self, lam: float):
        super().__init__()
        self.lam = _check_real("LogitPenaltyLoss lam", lam, positive=False)

    def extra_repr(self) -> str:
        return f"lam={self.lam}"

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        penalty = torch.norm(logits, p=2, dim=-1).mean()
        return F.cross_entropy(logits, target) + self.lam * penalty


class GodinLoss(nn.Module):
    """Plain cross-entropy on the logits of a GODIN head, :math:`f_i = h_i(x) / g(x)`.

    .. math::
        \\mathcal{L}_{GODIN}(x, y) = -\\log \\frac{e^{h_y(x)/g(x)}}{\\sum_i e^{h_i(x)/g(x)}},
        \\qquad h_i = \\cos(w_i, \\phi(x))

    The decomposition lives in the model head (``requires_head = "godin"``), not in the loss.

    :see Paper: Hsu et al., "Generalized ODIN", CVPR 2020, https://arxiv.org/abs/2002.11297
    """

    requires_head: ClassVar[str] = "godin"

    def __init__(self) -> None:
        super().__init__()

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits, target)


class RewardMSELoss(nn.Module):
    """Reward prediction by mean squared error, for selective classification.

    The network has ``k + 1`` outputs (:meth:`num_outputs`): the predicted reward of classifying
    the input as each of the ``k`` classes, then (last) the predicted reward of abstaining. The
    target reward vector of a sample with label :math:`y` is

    .. math::
        r_a = r_{\\mathrm{correct}} \\text{ if } a = y, \\quad r_{\\mathrm{wrong}} \\text{ for
        the other classes}, \\quad r_{k} = r_{\\mathrm{abstain}},

    and the loss is the MSE over the batch and all :math:`k + 1` actions,
    :math:`\\frac{1}{N(k+1)} \\sum_{n, a} (f_a(x_n) - r_a^{(n)})^2`. Its optimal constant solution
    is the mean reward of each action over the training labels.

    In supervised classification the reward of every action is known, so every action is
    regressed (Kang et al. Sec. 3.2: "minimizing the MSE loss between the predicted and ground
    truth rewards"); their Sec. 5.1 writes the same loss over logged ``(x, a, r)`` triples, one
    action per sample, which has the same optimal constant solution.

    :param correct_reward: reward of the correct class (paper: +1; set in config).
    :param wrong_reward: reward of a wrong class (paper: -4); must be below ``correct_reward``.
    :param abstain_reward: reward of abstaining (paper: 0).
    :see Paper: Kang, Setlur, Tomlin & Levine, "Deep Neural Networks Tend To Extrapolate
        Predictably", ICLR 2024, https://arxiv.org/abs/2310.00873, Sec. 3.2 and 5.
    """

    requires_head: ClassVar[str] = "linear"

    def __init__(self, correct_reward: float, wrong_reward: float, abstain_reward: float):
        super().__init__()
        self.correct_reward = self._finite("RewardMSELoss correct_reward", correct_reward)
        self.wrong_reward = self._finite("RewardMSELoss wrong_reward", wrong_reward)
        self.abstain_reward = self._finite("RewardMSELoss abstain_reward", abstain_reward)
        if not self.correct_reward > self.wrong_reward:
            raise ValueError(
                f"RewardMSELoss correct_reward ({self.correct_reward}) must exceed "
                f"wrong_reward ({self.wrong_reward})"
            )

    @staticmethod
    def _finite(name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return float(value)

    @staticmethod
    def num_outputs(num_classes: int) -> int:
        """``num_classes + 1``: one predicted reward per class, then abstain."""
        return int(num_classes) + 1

    @staticmethod
    def predict(outputs: Tensor) -> Tensor:
        """The class with the highest predicted reward (abstaining left aside): the classifier
        whose accuracy the training loop logs."""
        return outputs[:, :-1].argmax(dim=1)

    def extra_repr(self) -> str:
        return (
            f"correct_reward={self.correct_reward}, wrong_reward={self.wrong_reward}, "
            f"abstain_reward={self.abstain_reward}"
        )

    def reward_targets(self, target: Tensor, num_classes: int) -> Tensor:
        """The ``(N, num_classes + 1)`` float reward vectors of the integer labels ``target``."""
        onehot = F.one_hot(target.long(), num_classes).to(torch.get_default_dtype())
        rewards = self.wrong_reward + (self.correct_reward - self.wrong_reward) * onehot
        abstain = torch.full((rewards.shape[0], 1), self.abstain_reward, dtype=rewards.dtype)
        return torch.cat([rewards, abstain.to(rewards.device)], dim=1)

    def forward(self, outputs: Tensor, target: Tensor) -> Tensor:
        if outputs.ndim != 2 or outputs.shape[1] < 2:
            raise ValueError(
                "RewardMSELoss needs outputs of shape (N, num_classes + 1), "
                f"got {tuple(outputs.shape)}"
            )
        rewards = self.reward_targets(target, outputs.shape[1] - 1)
        return F.mse_loss(outputs, rewards.to(device=outputs.device, dtype=outputs.dtype))


class GaussianNLLLoss(nn.Module):
    """Gaussian negative log-likelihood of the label regressed as a number.

    The network has 2 outputs (:meth:`num_outputs`): the mean :math:`\\mu = f_0(x)` and the
    standard deviation :math:`\\sigma = \\operatorname{softplus}(f_1(x)) + \\sigma_{\\min}`
    (:meth:`mean_std`). With the label :math:`y` as a float,

    .. math::
        \\mathcal{L} = \\frac{1}{N} \\sum_n \\Bigl[\\tfrac12 \\log 2\\pi + \\log \\sigma_n
        + \\frac{(y_n - \\mu_n)^2}{2 \\sigma_n^2}\\Bigr].

    Kang et al. (App. B.4) write :math:`\\log \\sigma^2 + (y - \\mu)^2 / \\sigma^2`, twice this
    minus a constant: same minimiser, so the same optimal constant solution (mean and standard
    deviation of the training labels).

    :see Paper: Kang, Setlur, Tomlin & Levine, ICLR 2024, https://arxiv.org/abs/2310.00873,
        App. B.4.
    """

    requires_head: ClassVar[str] = "linear"
    min_std: ClassVar[float] = 1e-6  #: floor added to the softplus so log(sigma) stays finite

    def __init__(self) -> None:
        super().__init__()

    @staticmethod
    def num_outputs(num_classes: int) -> int:
        """2 (mean and standard deviation), whatever the number of classes."""
        return 2

    @classmethod
    def mean_std(cls, outputs: Tensor) -> tuple[Tensor, Tensor]:
        """``(mean, std)``, each ``(N,)``, of the ``(N, 2)`` network outputs."""
        if outputs.ndim != 2 or outputs.shape[1] != 2:
            raise ValueError(
                f"GaussianNLLLoss needs outputs of shape (N, 2), got {tuple(outputs.shape)}"
            )
        return outputs[:, 0], F.softplus(outputs[:, 1]) + cls.min_std

    @classmethod
    def predict(cls, outputs: Tensor, num_classes: int | None = None) -> Tensor:
        """The predicted class: the predicted mean rounded to the nearest label (clamped to
        ``[0, num_classes - 1]`` when given): what the training loop's accuracy counts."""
        mean, _ = cls.mean_std(outputs)
        pred = torch.round(mean).long().clamp(min=0)
        return pred if num_classes is None else pred.clamp(max=int(num_classes) - 1)

    def forward(self, outputs: Tensor, target: Tensor) -> Tensor:
        mean, std = self.mean_std(outputs)
        y = target.to(device=mean.device, dtype=mean.dtype)
        z = (y - mean) / std
        return (0.5 * math.log(2.0 * math.pi) + torch.log(std) + 0.5 * z * z).mean()


LOSSES: dict[str, type[nn.Module]] = {
    "ce": CrossEntropy,
    "logitnorm": LogitNormLoss,
    "logitpenalty": LogitPenaltyLoss,
    "godin": GodinLoss,
    "reward_mse": RewardMSELoss,
    "gaussian_nll": GaussianNLLLoss,
}


def build_loss(name: str, params: dict[str, Any] | None) -> nn.Module:
    """Instantiate ``LOSSES[name](**params)`` after checking ``params`` against its signature.

    :param name: a key of :data:`LOSSES`.
    :param params: keyword arguments for the loss; every argument without a default
        (``tau``, ``lam``) must be given explicitly. ``None`` means ``{}``.
    :raises ValueError: unknown loss name, unknown parameter key, missing required parameter,
        or an out-of-range value.
    """
    cls = lookup("loss", LOSSES, name)
    params = {} if params is None else dict(params)
    check_kwargs("loss", name, cls, params)
    return cls(**params)
