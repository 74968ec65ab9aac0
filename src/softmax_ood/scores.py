"""Post-hoc OOD scores.

CONTRACT: every score returns an ``(N,)`` tensor where HIGHER = MORE IN-DISTRIBUTION.
(pytorch-ood uses the opposite sign for the same names; OpenOOD's ``conf`` uses ours.)

* Logit scores take ``(N, C)`` logits: :func:`msp`, :func:`energy`, :func:`max_logit`.
* :func:`odin` needs the network and input gradients.
* :func:`gradnorm` and :func:`godin_score` take penultimate features and the classifier head.
* One class per score in the registry :data:`SCORES` (:class:`Score`: what it needs, which head
  it is defined for, an optional fit step); :func:`compute_scores` is the one dispatcher.

Hyperparameters that the papers tune (ODIN :math:`T, \\epsilon`) have no defaults in code;
they come from the workflow config, tuned on validation splits.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .entries import check_kwargs, lookup
from .softmax import max_log_odds

__all__ = [
    "msp",
    "msp_log_odds",
    "energy",
    "max_logit",
    "odin_perturbation",
    "odin",
    "gradnorm",
    "godin_score",
    "Score",
    "ScoreInputs",
    "SCORES",
    "build_score",
    "apply_scores",
    "compute_scores",
    "forward_batches",
    "head_kind",
]


# --------------------------------------------------------------------------- input checks


def _check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(
            f"{name} must be finite and {'>= 0' if allow_zero else '> 0'}, got {value!r}"
        )
    return value


def _check_batch_size(batch_size: Any) -> int:
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    return int(batch_size)


def _check_2d(name: str, t: Any) -> None:
    if not isinstance(t, Tensor) or t.ndim != 2 or not t.is_floating_point():
        shape = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
        raise ValueError(f"{name} must be a floating-point tensor of shape (N, C), got {shape}")


@contextmanager
def _eval_mode(model: nn.Module) -> Iterator[None]:
    """Run ``model`` in eval mode, then restore every submodule's own training flag."""
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for m, flag in flags:
            m.training = flag


# --------------------------------------------------------------------------- logit scores


def msp(logits: Tensor, temperature: float = 1.0) -> Tensor:
    """Maximum softmax probability. HIGHER = MORE IN-DISTRIBUTION.

    .. math::
        s(x) = \\max_c \\frac{e^{z_c / T}}{\\sum_j e^{z_j / T}}

    :param logits: ``(N, C)`` logits :math:`z`.
    :param temperature: :math:`T > 0` (1 for the MSP baseline).
    :return: ``(N,)`` float64 scores in ``[1/C, 1]`` (they saturate at 1; rank with
        :func:`msp_log_odds`).
    :see Paper: Hendrycks & Gimpel, "A Baseline for Detecting Misclassified and
        Out-of-Distribution Examples", ICLR 2017, https://arxiv.org/abs/1610.02136
    """
    _check_2d("logits", logits)
    temperature = _check_positive("temperature", temperature)
    return torch.softmax(logits.double() / temperature, dim=1).amax(dim=1)


def msp_log_odds(logits: Tensor, temperature: float = 1.0) -> Tensor:
    """The MSP as a tie-free score: :math:`\\log \\frac{s}{1-s}` of :func:`msp`, float64.
    HIGHER = MORE IN-DISTRIBUTION.

    Strictly increasing in the MSP, so FPR95, AUROC and AUPR are the MSP's; but it does not
    saturate: at a logit gap of about 17 (float32) or 37 (float64) the MSP itself rounds to
    exactly 1 and every such sample ties (LogitNorm under SGD reaches logit norms of 45).
    Computed as :math:`z_{\\max}/T - \\operatorname{LSE}_{j \\ne \\max}(z_j/T)`
    (:func:`softmax_ood.softmax.max_log_odds`).

    :param logits: ``(N, C)`` logits.
    :param temperature: :math:`T > 0`.
    :return: ``(N,)`` float64 scores.
    """
    _check_2d("logits", logits)
    temperature = _check_positive("temperature", temperature)
    return max_log_odds(logits.double() / temperature, dim=1)


def energy(logits: Tensor, temperature: float = 1.0) -> Tensor:
    """Negative free energy. HIGHER = MORE IN-DISTRIBUTION.

    .. math::
        s(x) = -E(x; T) = T \\log \\sum_c e^{z_c / T}

    As :math:`T \\to 0^+` this tends to :math:`\\max_c z_c` (within :math:`T \\log C`).

    :param logits: ``(N, C)`` logits :math:`z`.
    :param temperature: :math:`T > 0` (1 in the paper).
    :return: ``(N,)`` scores.
    :see Paper: Liu et al., "Energy-based Out-of-distribution Detection", NeurIPS 2020,
        https://arxiv.org/abs/2010.03759
    """
    _check_2d("logits", logits)
    temperature = _check_positive("temperature", temperature)
    return temperature * torch.logsumexp(logits / temperature, dim=1)


def max_logit(logits: Tensor) -> Tensor:
    """Maximum logit. HIGHER = MORE IN-DISTRIBUTION.

    .. math::
        s(x) = \\max_c z_c

    :param logits: ``(N, C)`` logits :math:`z`.
    :return: ``(N,)`` scores.
    :see Paper: Hendrycks et al., "Scaling Out-of-Distribution Detection for Real-World
        Settings", ICML 2022, https://arxiv.org/abs/1911.11132
    """
    _check_2d("logits", logits)
    return logits.amax(dim=1)


# --------------------------------------------------------------------------- ODIN


def _channel_std(std: float | Sequence[float], x: Tensor) -> Tensor:
    """``std`` as a tensor broadcastable against ``x`` along dim 1 (the channel axis)."""
    try:
        s = torch.as_tensor(std, dtype=x.dtype, device=x.device).flatten()
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"std must be a float or a sequence of floats, got {std!r}") from err
    if s.numel() == 0 or not bool(torch.all(torch.isfinite(s) & (s > 0))):
        raise ValueError(f"std entries must be finite and > 0, got {std!r}")
    if s.numel() == 1:
        return s.reshape(())
    if x.ndim < 2 or s.numel() != x.shape[1]:
        raise ValueError(
            f"std has {s.numel()} entries but the input has {x.shape[1] if x.ndim > 1 else 'no'} "
            f"channels (dim 1 of shape {tuple(x.shape)})"
        )
    return s.reshape((1, -1) + (1,) * (x.ndim - 2))


def odin_perturbation(
    model: nn.Module,
    x: Tensor,
    *,
    temperature: float,
    eps: float,
    std: float | Sequence[float],
) -> Tensor:
    """ODIN input preprocessing: one signed-gradient step that raises the softmax score.

    .. math::
        \\tilde{x} = x - \\epsilon \\, \\frac{\\operatorname{sign}\\left(-\\nabla_x
        \\log S_{\\hat{y}}(x; T)\\right)}{\\sigma_c},
        \\qquad \\hat{y} = \\arg\\max_c f_c(x)

    Follows the reference code: ``gradient = (ge(grad, 0) - 0.5) * 2`` (a zero gradient counts
    as +1), channel ``c`` divided by ``std[c]``, then ``x - eps * gradient``. The cross-entropy
    is summed over the batch so each sample's gradient equals the batch-size-1 reference.
    Only ``x`` is differentiated (``torch.autograd.grad``), so parameter ``.grad`` is untouched.
    The model is run as it is; :func:`odin` switches it to eval mode.

    :param model: network mapping ``x`` to ``(N, C)`` logits.
    :param x: input batch ``(N, C_in, ...)`` in the normalised space the model sees.
    :param temperature: :math:`T > 0`.
    :param eps: step size :math:`\\epsilon \\ge 0` in un-normalised pixel units.
    :param std: per-channel normalisation std (sequence indexed by dim 1 of ``x``) or a float.
    :return: perturbed input :math:`\\tilde{x}`, detached, same shape as ``x``.
    :see Paper: Liang et al., "Enhancing The Reliability of Out-of-distribution Image Detection
        in Neural Networks", ICLR 2018, https://arxiv.org/abs/1706.02690, Eq. (2).
    :see Implementation: https://github.com/facebookresearch/odin (``code/calData.py``)
    """
    temperature = _check_positive("temperature", temperature)
    eps = _check_positive("eps", eps, allow_zero=True)
    x = x.detach()
    std_t = _channel_std(std, x)
    x_in = x.clone().requires_grad_(True)
    with torch.enable_grad():
        outputs = model(x_in)
        labels = outputs.detach().argmax(dim=1)
        loss = F.cross_entropy(outputs / temperature, labels, reduction="sum")
        (grad,) = torch.autograd.grad(loss, x_in)
    gradient = torch.ge(grad, 0).to(x.dtype)
    gradient = (gradient - 0.5) * 2
    gradient = gradient / std_t
    return x - eps * gradient


def odin(
    model: nn.Module,
    x: Tensor,
    *,
    temperature: float,
    eps: float,
    std: float | Sequence[float],
    batch_size: int = 512,
) -> Tensor:
    """ODIN score: MSP at temperature :math:`T` of the perturbed input. HIGHER = MORE IN-DISTRIBUTION.

    .. math::
        s(x) = \\max_c S_c(\\tilde{x}; T), \\qquad
        S_c(x; T) = \\frac{e^{f_c(x)/T}}{\\sum_j e^{f_j(x)/T}}

    with :math:`\\tilde{x}` from :func:`odin_perturbation`, returned as its log-odds
    (:func:`msp_log_odds`: same ranking, no float ties). With ``eps = 0`` this is
    ``msp_log_odds(model(x), T)``. The model runs in eval mode and its training flags are restored
    afterwards; no parameter gradients are accumulated.

    :param model: network mapping ``x`` to ``(N, C)`` logits.
    :param x: input batch, on the model's device.
    :param temperature: :math:`T > 0`; no default (paper: 1000, set in config).
    :param eps: :math:`\\epsilon \\ge 0`; no default (paper: 0.0014 for DenseNet/CIFAR-10, config).
    :param std: per-channel normalisation std of the input pipeline, or a float.
    :param batch_size: samples per forward/backward pass (does not change the result).
    :return: ``(N,)`` float64 scores, the log-odds of the tempered MSP.
    :see Paper: Liang et al., ICLR 2018, https://arxiv.org/abs/1706.02690
    """
    batch_size = _check_batch_size(batch_size)
    scores = []
    with _eval_mode(model):
        for xb in x.split(batch_size):
            x_tilde = odin_perturbation(model, xb, temperature=temperature, eps=eps, std=std)
            with torch.no_grad():
                scores.append(msp_log_odds(model(x_tilde), temperature))
    return torch.cat(scores)


# --------------------------------------------------------------------------- GradNorm


def _linear_head(classifier: Any, num_classes: int | None, score: str) -> nn.Linear:
    if hasattr(classifier, "cosine"):
        raise ValueError(
            f"{score} is defined for a linear last layer; got a GODIN head "
            f"({type(classifier).__name__}). Use the 'godin' score for GODIN models."
        )
    if not isinstance(classifier, nn.Linear):
        raise ValueError(f"{score} needs an nn.Linear classifier, got {type(classifier).__name__}")
    if num_classes is not None and num_classes != classifier.out_features:
        raise ValueError(
            f"num_classes={num_classes} does not match the classifier's "
            f"{classifier.out_features} outputs"
        )
    return classifier


def gradnorm(
    features: Tensor,
    classifier: nn.Linear,
    *,
    temperature: float = 1.0,
    num_classes: int | None = None,
) -> Tensor:
    """GradNorm, closed form. HIGHER = MORE IN-DISTRIBUTION.

    The score is the :math:`L_1` norm of the gradient, w.r.t. the last-layer weight
    :math:`W`, of the KL divergence between the uniform distribution :math:`u = 1/C` and the
    tempered softmax. For :math:`z = W\\phi + b` and :math:`p = \\operatorname{softmax}(z/T)`,
    :math:`\\partial \\mathcal{L} / \\partial W = \\tfrac{1}{T}(p - u)\\phi^\\top` is rank one, so

    .. math::
        \\mathcal{L} = -\\frac{1}{C}\\sum_{c=1}^C \\log p_c, \\qquad
        s(x) = \\left\\| \\frac{\\partial \\mathcal{L}}{\\partial W} \\right\\|_1
        = \\frac{1}{T} \\, \\|p - u\\|_1 \\, \\|\\phi\\|_1

    This follows the paper's :math:`D_{KL}(u \\| p)`. The reference code uses all-ones targets
    (``targets = torch.ones((N, num_classes))``), which multiplies every score by :math:`C`:
    a constant factor that leaves rankings and every OOD metric unchanged.
    Equals the literal per-sample backward loop (the oracle in ``tests/test_scores.py``).

    :param features: ``(N, D)`` penultimate features :math:`\\phi(x)`.
    :param classifier: the last layer, an ``nn.Linear`` with weight ``(C, D)``.
    :param temperature: :math:`T > 0` (1 in the paper).
    :param num_classes: optional check that the head has this many outputs.
    :return: ``(N,)`` scores, ``>= 0``.
    :raises ValueError: for a GODIN head (cosine classifier) or any non-linear head.
    :see Paper: Huang et al., "On the Importance of Gradients for Detecting Distributional
        Shifts in the Wild", NeurIPS 2021, https://arxiv.org/abs/2110.00218, Eq. (4)-(5).
    :see Implementation: https://github.com/deeplearning-wisc/gradnorm_ood (``test_ood.py``)
    """
    head = _linear_head(classifier, num_classes, "gradnorm")
    _check_2d("features", features)
    temperature = _check_positive("temperature", temperature)
    # float64: at large logit norms the float32 softmax rounds to one-hot and scores tie
    features = features.double()
    bias = None if head.bias is None else head.bias.double()
    logits = F.linear(features, head.weight.double(), bias)
    p = torch.softmax(logits / temperature, dim=1)
    u = 1.0 / logits.shape[1]
    return (p - u).abs().sum(dim=1) * features.abs().sum(dim=1) / temperature


# --------------------------------------------------------------------------- GODIN


def godin_score(features: Tensor, head: Any) -> Tensor:
    """GODIN score: maximum cosine similarity to a class weight. HIGHER = MORE IN-DISTRIBUTION.

    .. math::
        s(x) = \\max_i h_i(x) = \\max_i \\frac{w_i^\\top \\phi(x)}{\\|w_i\\| \\, \\|\\phi(x)\\|}

    :param features: ``(N, D)`` penultimate features :math:`\\phi(x)`.
    :param head: a GODIN head exposing ``.cosine(features) -> (N, C)``.
    :return: ``(N,)`` scores in ``[-1, 1]``.
    :raises ValueError: if ``head`` has no ``cosine`` method (e.g. a plain ``nn.Linear``).
    :see Paper: Hsu et al., "Generalized ODIN", CVPR 2020, https://arxiv.org/abs/2002.11297
    """
    if not callable(getattr(head, "cosine", None)):
        raise ValueError(
            f"the godin score needs a GODIN head with a .cosine() method, got {type(head).__name__}"
        )
    _check_2d("features", features)
    return head.cosine(features).amax(dim=1)


# --------------------------------------------------------------------------- the registry


def head_kind(model: nn.Module) -> str:
    """``"godin"`` for a GODIN head (has ``cosine``), else ``"linear"``."""
    return "godin" if hasattr(model.get_classifier(), "cosine") else "linear"


@dataclass
class ScoreInputs:
    """What a score may use for one batch: the model, its input, penultimate features and
    logits (computed once per batch and shared by every score), and the input normalisation
    std (for input-gradient scores)."""

    model: nn.Module
    x: Tensor
    features: Tensor
    logits: Tensor
    std: float | Sequence[float] = 1.0
    batch_size: int = 512


class Score:
    """One post-hoc OOD score (OpenOOD's postprocessor pattern). HIGHER = MORE IN-DISTRIBUTION.

    ``needs`` names what :meth:`__call__` reads from :class:`ScoreInputs` (``logits``,
    ``features``, ``head`` = the last layer, ``input_grad`` = gradients w.r.t. the input);
    ``head`` is the classifier head the score is defined for (``None``: any). No score fits
    anything on validation data (a feature-density score would need a fit step, and
    :func:`apply_scores` a call of it, added together). The constructor takes the score's
    hyperparameters, which come from the config (its keyword names are what the config may
    set).
    """

    needs: ClassVar[frozenset[str]] = frozenset()
    head: ClassVar[str | None] = None

    def supports(self, model: nn.Module) -> bool:
        """Whether the score is defined for ``model`` (its head kind)."""
        return self.head is None or head_kind(model) == self.head

    def __call__(self, inp: ScoreInputs) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError


class MSPScore(Score):
    """Maximum softmax probability, ranked by its log-odds (:func:`msp_log_odds`: the MSP's
    order without float ties). HIGHER = MORE IN-DISTRIBUTION."""

    needs = frozenset({"logits"})

    def __init__(self, temperature: float = 1.0) -> None:
        self.temperature = _check_positive("temperature", temperature)

    def __call__(self, inp: ScoreInputs) -> Tensor:
        return msp_log_odds(inp.logits, self.temperature)


class EnergyScore(Score):
    """Negative free energy (:func:`energy`). HIGHER = MORE IN-DISTRIBUTION."""

    needs = frozenset({"logits"})

    def __init__(self, temperature: float = 1.0) -> None:
        self.temperature = _check_positive("temperature", temperature)

    def __call__(self, inp: ScoreInputs) -> Tensor:
        return energy(inp.logits, self.temperature)


class MaxLogitScore(Score):
    """Maximum logit (:func:`max_logit`). HIGHER = MORE IN-DISTRIBUTION."""

    needs = frozenset({"logits"})

    def __init__(self) -> None:
        pass

    def __call__(self, inp: ScoreInputs) -> Tensor:
        return max_logit(inp.logits)


class OdinScore(Score):
    """ODIN (:func:`odin`): tempered MSP of the input moved one signed-gradient step, the step
    divided by the normalisation std. HIGHER = MORE IN-DISTRIBUTION."""

    needs = frozenset({"input_grad"})

    def __init__(self, temperature: float, eps: float) -> None:
        self.temperature = _check_positive("temperature", temperature)
        self.eps = _check_positive("eps", eps, allow_zero=True)

    def __call__(self, inp: ScoreInputs) -> Tensor:
        return odin(
            inp.model,
            inp.x,
            temperature=self.temperature,
            eps=self.eps,
            std=inp.std,
            batch_size=inp.batch_size,
        )


class GradNormScore(Score):
    """GradNorm (:func:`gradnorm`), defined for a linear last layer. HIGHER = MORE IN-DISTRIBUTION."""

    needs = frozenset({"features", "head"})
    head = "linear"

    def __init__(self, temperature: float = 1.0) -> None:
        self.temperature = _check_positive("temperature", temperature)

    def __call__(self, inp: ScoreInputs) -> Tensor:
        return gradnorm(inp.features, inp.model.get_classifier(), temperature=self.temperature)


class GodinScore(Score):
    """GODIN's max cosine (:func:`godin_score`), defined for a GODIN head. HIGHER = MORE IN-DISTRIBUTION."""

    needs = frozenset({"features", "head"})
    head = "godin"

    def __init__(self) -> None:
        pass

    def __call__(self, inp: ScoreInputs) -> Tensor:
        return godin_score(inp.features, inp.model.get_classifier())


#: Every score by name (the config's ``scores:`` keys).
SCORES: dict[str, type[Score]] = {
    "msp": MSPScore,
    "energy": EnergyScore,
    "maxlogit": MaxLogitScore,
    "odin": OdinScore,
    "gradnorm": GradNormScore,
    "godin": GodinScore,
}


def build_score(name: str, params: dict[str, Any] | None) -> Score:
    """``SCORES[name](**params)`` after checking ``params`` against the constructor."""
    cls = lookup("score", SCORES, name)
    params = {} if params is None else dict(params)
    check_kwargs("score", name, cls, params)
    return cls(**params)


@torch.no_grad()
def forward_batches(
    model: nn.Module,
    x: Tensor,
    batch_size: int,
    *,
    bf16: bool = False,
    channels_last: bool = False,
) -> tuple[Tensor, Tensor]:
    """``(features, logits)`` of ``model`` on ``x`` in eval mode, ``batch_size`` at a time
    (training flags restored afterwards): the library's one batched forward pass (evaluation,
    the scores, and training's per-epoch validation through :func:`softmax_ood.train.predict_logits`).
    ``bf16``: under bf16 autocast on ``x``'s device; ``channels_last``: each image batch in
    channels-last layout."""
    batch_size = _check_batch_size(batch_size)
    feats, logits = [], []
    autocast = torch.autocast(device_type=x.device.type, dtype=torch.bfloat16, enabled=bf16)
    with _eval_mode(model), autocast:
        for xb in x.split(batch_size):
            if channels_last and xb.dim() == 4:
                xb = xb.contiguous(memory_format=torch.channels_last)
            f = model.forward_features(xb)
            feats.append(f)
            logits.append(model.forward_head(f))
    return torch.cat(feats), torch.cat(logits)


def apply_scores(
    chosen: dict[str, Score],
    model: nn.Module,
    x: Tensor,
    *,
    std: float | Sequence[float] = 1.0,
    batch_size: int = 512,
    features: Tensor | None = None,
    logits: Tensor | None = None,
) -> dict[str, np.ndarray]:
    """Every score in ``chosen`` on inputs ``x`` as float64 arrays, HIGHER = MORE
    IN-DISTRIBUTION: the one dispatcher (evaluation and :func:`compute_scores` use it).

    Features and logits are computed once and shared by all scores (pass them when the caller
    has them already); the model runs in eval mode and its training flags are restored.
    """
    batch_size = _check_batch_size(batch_size)
    if not isinstance(x, Tensor) or x.ndim < 1:
        raise ValueError(f"x must be a tensor of shape (N, ...), got {type(x).__name__}")
    for label, score in chosen.items():
        if not score.supports(model):
            raise ValueError(
                f"score {label!r} is defined for a {score.head} last layer, but the model has a "
                f"{head_kind(model)} head"
            )
    if features is None or logits is None:
        features, logits = forward_batches(model, x, batch_size)
    inp = ScoreInputs(model, x, features, logits, std=std, batch_size=batch_size)
    with _eval_mode(model):
        return {
            label: score(inp).detach().double().cpu().numpy() for label, score in chosen.items()
        }


def compute_scores(
    name: str | Score,
    model: nn.Module,
    x: Tensor,
    params: dict[str, Any] | None = None,
    *,
    std: float | Sequence[float] = 1.0,
    batch_size: int = 512,
) -> np.ndarray:
    """One registered score (a name with ``params``, or a built :class:`Score`) on inputs
    ``x``, through :func:`apply_scores`. HIGHER = MORE IN-DISTRIBUTION.

    :raises ValueError: unknown score, unknown or missing parameter, a model whose head the
        score is not defined for, bad batch size.
    """
    score = name if isinstance(name, Score) else build_score(name, params)
    label = name if isinstance(name, str) else type(name).__name__
    if isinstance(x, Tensor) and len(x) == 0:
        return np.empty((0,), dtype=np.float64)
    return apply_scores({label: score}, model, x, std=std, batch_size=batch_size)[label]
