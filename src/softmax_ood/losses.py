"""Training losses: cross-entropy, LogitNorm, logit penalty and GODIN.

Every loss is an ``nn.Module`` whose ``forward(logits, target)`` returns the scalar mean loss
over the batch. ``requires_head`` tells the trainer which classifier head the loss expects
(``"linear"`` or ``"godin"``).

Hyperparameters have no defaults in code: the values used in the papers (e.g. LogitNorm
:math:`\\tau = 0.04` on CIFAR-10) live in the workflow config and reach :func:`build_loss`
through ``params``.
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

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


LOSSES: dict[str, type[nn.Module]] = {
    "ce": CrossEntropy,
    "logitnorm": LogitNormLoss,
    "logitpenalty": LogitPenaltyLoss,
    "godin": GodinLoss,
}


def build_loss(name: str, params: dict[str, Any] | None) -> nn.Module:
    """Instantiate ``LOSSES[name](**params)`` after checking ``params`` against its signature.

    :param name: a key of :data:`LOSSES`.
    :param params: keyword arguments for the loss; every argument without a default
        (``tau``, ``lam``) must be given explicitly. ``None`` means ``{}``.
    :raises ValueError: unknown loss name, unknown parameter key, missing required parameter,
        or an out-of-range value.
    """
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; expected one of {sorted(LOSSES)}")
    cls = LOSSES[name]
    params = {} if params is None else dict(params)
    sig = inspect.signature(cls.__init__)
    accepted = [p for p in sig.parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(
            f"loss {name!r} got unknown parameter(s) {unknown}; accepted parameters: {accepted}"
        )
    missing = [
        p
        for p in accepted
        if sig.parameters[p].default is inspect.Parameter.empty and p not in params
    ]
    if missing:
        raise ValueError(
            f"loss {name!r} requires parameter(s) {missing} to be set explicitly "
            f"(no defaults in code); accepted parameters: {accepted}"
        )
    return cls(**params)
