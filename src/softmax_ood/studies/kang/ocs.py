"""Optimal constant solutions (OCS), prediction extractors and distances to the OCS.

The OCS is the prediction that minimises the average training loss when the network must ignore
its input, :math:`f^*_{\\mathrm{constant}} = \\arg\\min_f \\frac1N \\sum_i \\mathcal{L}(f, y_i)`
(Kang et al. Sec. 3.1). Each loss has its own *prediction space*, the space the OCS lives in:

==================  ==========================  ==========================================
loss                prediction (model outputs)  OCS from the training labels
==================  ==========================  ==========================================
``ce``              ``softmax(logits)``, (k,)   label marginal :math:`P(y = a)`
``reward_mse``      raw outputs, (k + 1,)       mean reward per action: class ``a``
                                                :math:`P(a) r_c + (1 - P(a)) r_w`; abstain
                                                :math:`r_{abs}` (last entry)
``gaussian_nll``    ``(mean, std)``, (2,)       mean and standard deviation of the labels
==================  ==========================  ==========================================

Distances (Sec. 3.2): mean over samples of :math:`KL(P_\\theta(y|x) \\| P_{OCS}(y))` for ``ce``
(categorical, from a float64 log-softmax) and ``gaussian_nll`` (closed-form Gaussian KL), and of
the squared Euclidean distance :math:`\\|f(x) - f^*\\|^2` for ``reward_mse``.

Every function taking ``outputs`` takes the **raw model outputs** (logits / predicted rewards /
``(mu, softplus-std)`` pre-activations), as a numpy array or a torch tensor.

Paper ambiguity resolved here: App. B.4 writes :math:`\\sigma^*_{constant} = \\frac1N \\sum_i
(y_i - \\mu^*)^2`, which is the variance; the minimiser of the Gaussian NLL is the standard
deviation :math:`\\sqrt{\\frac1N \\sum_i (y_i - \\mu^*)^2}` (population, ``ddof=0``), used here.

:see Paper: Kang, Setlur, Tomlin & Levine, "Deep Neural Networks Tend To Extrapolate
    Predictably", ICLR 2024, https://arxiv.org/abs/2310.00873, Sec. 3 and App. B.4.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...softmax import log_softmax

__all__ = [
    "LOSS_NAMES",
    "distance_to_ocs",
    "kl_categorical",
    "kl_gaussian",
    "mean_prediction",
    "ocs_cross_entropy",
    "ocs_gaussian",
    "ocs_loss",
    "ocs_reward",
    "optimal_constant_solution",
    "per_sample_distance",
    "predict",
    "squared_distance",
]

LOSS_NAMES: tuple[str, ...] = ("ce", "reward_mse", "gaussian_nll")
REWARD_KEYS: tuple[str, ...] = ("correct_reward", "wrong_reward", "abstain_reward")


# --------------------------------------------------------------------------- helpers
def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _labels(labels: Any, num_classes: int | None = None) -> np.ndarray:
    y = _numpy(labels)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {y.shape}")
    if num_classes is not None:
        if not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"class labels must be integers, got dtype {y.dtype}")
        if y.min() < 0 or y.max() >= num_classes:
            raise ValueError(f"class labels must lie in [0, {num_classes - 1}]")
    elif not np.isfinite(y.astype(np.float64)).all():
        raise ValueError("labels contain NaN or inf")
    return y


def _num_classes(num_classes: Any) -> int:
    if (
        isinstance(num_classes, bool)
        or not isinstance(num_classes, numbers.Integral)
        or (num_classes < 1)
    ):
        raise ValueError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    return int(num_classes)


def _outputs(outputs: Any, width: int | None = None, what: str = "outputs") -> np.ndarray:
    z = _numpy(outputs).astype(np.float64)
    if z.ndim != 2 or z.shape[0] == 0:
        raise ValueError(f"{what} must be a non-empty 2-D array (N, m), got shape {z.shape}")
    if width is not None and z.shape[1] != width:
        raise ValueError(f"{what} must have {width} columns, got {z.shape[1]}")
    if not np.isfinite(z).all():
        raise ValueError(f"{what} contain NaN or inf")
    return z


def _loss(loss: str) -> str:
    if loss not in LOSS_NAMES:
        raise ValueError(f"unknown loss {loss!r}; expected one of {list(LOSS_NAMES)}")
    return loss


def _softplus(z: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, z)


# --------------------------------------------------------------------------- OCS
def ocs_cross_entropy(labels: Any, num_classes: int) -> np.ndarray:
    """OCS of cross-entropy: the empirical label marginal, ``(num_classes,)`` float64."""
    k = _num_classes(num_classes)
    y = _labels(labels, k)
    return np.bincount(y, minlength=k).astype(np.float64) / len(y)


def ocs_reward(
    labels: Any,
    num_classes: int,
    *,
    correct_reward: float,
    wrong_reward: float,
    abstain_reward: float,
) -> np.ndarray:
    """OCS of the reward MSE: the mean reward of each action, ``(num_classes + 1,)``.

    Class ``a``: :math:`P(y=a)\\,r_{correct} + (1 - P(y=a))\\,r_{wrong}`; abstain (last):
    :math:`r_{abstain}`. Balanced 10 classes with ``(+1, -4, 0)``: ``-3.5`` per class, ``0``.
    """
    p = ocs_cross_entropy(labels, num_classes)
    rewards = p * float(correct_reward) + (1.0 - p) * float(wrong_reward)
    return np.append(rewards, float(abstain_reward))


def ocs_gaussian(labels: Any) -> np.ndarray:
    """OCS of the Gaussian NLL: ``[mean, std]`` of the (numeric) labels, std with ``ddof=0``."""
    y = _labels(labels).astype(np.float64)
    return np.array([y.mean(), y.std()])


def optimal_constant_solution(
    loss: str,
    labels: Any,
    num_classes: int,
    params: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """OCS of ``loss`` (a name of :data:`LOSS_NAMES`) from the training ``labels``.

    :param params: the loss parameters; ``reward_mse`` needs ``correct_reward``,
        ``wrong_reward`` and ``abstain_reward`` (the ``RewardMSELoss`` arguments), the others
        take none.
    """
    loss = _loss(loss)
    params = dict(params or {})
    if loss == "reward_mse":
        missing = [k for k in REWARD_KEYS if k not in params]
        if missing:
            raise ValueError(f"reward_mse OCS needs parameter(s) {missing}")
        return ocs_reward(labels, num_classes, **{k: params[k] for k in REWARD_KEYS})
    if params:
        raise ValueError(f"{loss} OCS takes no parameters, got {sorted(params)}")
    if loss == "ce":
        return ocs_cross_entropy(labels, num_classes)
    return ocs_gaussian(labels)


def ocs_loss(
    loss: str,
    labels: Any,
    num_classes: int,
    params: Mapping[str, Any] | None = None,
) -> float:
    """The training loss of the OCS itself, in closed form (the "fitted" premise's yardstick).

    ``ce``: the entropy of the label marginal, :math:`-\\sum_a p_a \\log p_a`;
    ``reward_mse``: the mean over the ``k + 1`` actions of the variance of each action's reward,
    :math:`\\frac{1}{k+1} \\sum_a p_a (1 - p_a) (r_c - r_w)^2` (abstaining always earns
    :math:`r_{abs}`, no variance); ``gaussian_nll``: :math:`\\tfrac12 \\log 2\\pi + \\log \\sigma +
    \\tfrac12` with :math:`\\sigma` the labels' standard deviation (``ddof=0``), as
    :class:`softmax_ood.losses.GaussianNLLLoss` computes it.
    """
    loss = _loss(loss)
    params = dict(params or {})
    k = _num_classes(num_classes)
    y = _labels(labels, k if loss != "gaussian_nll" else None)
    if loss == "gaussian_nll":
        sd = float(y.astype(np.float64).std())
        if sd <= 0:
            raise ValueError("the Gaussian-NLL OCS loss needs labels with a positive spread")
        return 0.5 * math.log(2.0 * math.pi) + math.log(sd) + 0.5
    p = ocs_cross_entropy(y, k)
    if loss == "ce":
        q = p[p > 0]
        return float(-(q * np.log(q)).sum())
    missing = [key for key in REWARD_KEYS if key not in params]
    if missing:
        raise ValueError(f"reward_mse OCS loss needs parameter(s) {missing}")
    gap = float(params["correct_reward"]) - float(params["wrong_reward"])
    return float((p * (1.0 - p)).sum() * gap**2 / (k + 1))


# --------------------------------------------------------------------------- predictions
def predict(loss: str, outputs: Any) -> np.ndarray:
    """Raw model outputs -> predictions in the OCS's space, float64 ``(N, m)``.

    ``ce``: softmax probabilities; ``reward_mse``: the outputs unchanged; ``gaussian_nll``:
    ``[mean, std]`` with ``std = softplus(f_1) + GaussianNLLLoss.min_std`` (as the loss).
    """
    loss = _loss(loss)
    if loss == "ce":
        return np.exp(log_softmax(_outputs(outputs), dim=1))
    if loss == "reward_mse":
        return _outputs(outputs)
    from ...losses import GaussianNLLLoss

    z = _outputs(outputs, 2)
    return np.stack([z[:, 0], _softplus(z[:, 1]) + GaussianNLLLoss.min_std], axis=1)


def mean_prediction(loss: str, outputs: Any) -> np.ndarray:
    """The average prediction over the samples (Fig. 2's blue bars), ``(m,)``."""
    return predict(loss, outputs).mean(axis=0)


# --------------------------------------------------------------------------- distances
def kl_categorical(logits: Any, ocs_probs: Any) -> np.ndarray:
    """Per-sample :math:`KL(\\mathrm{softmax}(z) \\| q)`, ``(N,)``, from a float64 log-softmax.

    :raises ValueError: ``q`` is not a probability vector with every entry > 0 (the KL to a
        class of zero OCS probability is infinite).
    """
    q = _numpy(ocs_probs).astype(np.float64)
    z = _outputs(logits, q.shape[0] if q.ndim == 1 else None, "logits")
    if q.ndim != 1 or not np.all(q > 0) or not math.isclose(q.sum(), 1.0, abs_tol=1e-9):
        raise ValueError("the OCS must be a probability vector with every entry > 0")
    logp = log_softmax(z, dim=1)
    return np.sum(np.exp(logp) * (logp - np.log(q)[None, :]), axis=1)


def kl_gaussian(mean: Any, std: Any, ocs_mean: float, ocs_std: float) -> np.ndarray:
    """Per-sample :math:`KL(N(\\mu, \\sigma^2) \\| N(\\mu^*, \\sigma^{*2})) = \\log\\frac{\\sigma^*}
    {\\sigma} + \\frac{\\sigma^2 + (\\mu - \\mu^*)^2}{2 \\sigma^{*2}} - \\frac12`."""
    mu = _numpy(mean).astype(np.float64)
    sd = _numpy(std).astype(np.float64)
    if not (float(ocs_std) > 0 and np.all(sd > 0)):
        raise ValueError("standard deviations must be > 0")
    s2 = float(ocs_std) ** 2
    return np.log(float(ocs_std) / sd) + (sd**2 + (mu - float(ocs_mean)) ** 2) / (2 * s2) - 0.5


def squared_distance(outputs: Any, ocs: Any) -> np.ndarray:
    """Per-sample :math:`\\|f(x) - f^*\\|_2^2`, ``(N,)``."""
    f = _numpy(ocs).astype(np.float64)
    z = _outputs(outputs, f.shape[0] if f.ndim == 1 else None)
    return np.sum((z - f[None, :]) ** 2, axis=1)


def per_sample_distance(loss: str, outputs: Any, ocs: Any) -> np.ndarray:
    """Per-sample distance of the predictions to the OCS for ``loss`` (module docstring)."""
    loss = _loss(loss)
    if loss == "ce":
        return kl_categorical(outputs, ocs)
    if loss == "reward_mse":
        return squared_distance(outputs, ocs)
    pred = predict("gaussian_nll", outputs)
    ocs = _numpy(ocs).astype(np.float64)
    if ocs.shape != (2,):
        raise ValueError(f"the gaussian_nll OCS must be [mean, std], got shape {ocs.shape}")
    return kl_gaussian(pred[:, 0], pred[:, 1], ocs[0], ocs[1])


def distance_to_ocs(loss: str, outputs: Any, ocs: Any) -> float:
    """Mean over samples of :func:`per_sample_distance` (Fig. 3's y axis)."""
    return float(per_sample_distance(loss, outputs, ocs).mean())
