"""Numerically stable softmax, log-softmax, logsumexp and the softmax Jacobian.

Every function accepts a NumPy array or a torch tensor and returns the same kind.
Torch inputs are delegated to torch's own (stable, differentiable) kernels; NumPy
inputs use the max-shift :math:`S(z) = S(z - \\max_i z_i)`, which is exact by shift
invariance and keeps every exponent :math:`\\le 0` (no overflow, denominator :math:`\\ge 1`).

:see Paper: "The softmax function: properties" note (``shared/papers/softmax-properties-note.txt``),
    Properties 1-5 and "A numerically stable softmax".
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:  # torch is imported only when a tensor is passed: NumPy callers (tables,
    from torch import Tensor  # claims) never pay for importing it

__all__ = ["softmax", "log_softmax", "logsumexp", "softmax_jacobian", "max_log_odds"]

ArrayLike = TypeVar("ArrayLike", np.ndarray, "Tensor")


def _is_tensor(z) -> bool:
    """True for a torch tensor (without importing torch: a tensor exists only once it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(z, torch.Tensor)


def _finite_max(z: np.ndarray, dim: int) -> np.ndarray:
    """Row maxima used as the shift; a row that is all ``-inf`` (or ``±inf``) is shifted by 0."""
    m = np.max(z, axis=dim, keepdims=True)
    return np.where(np.isfinite(m), m, 0.0)


def _as_numpy(z) -> np.ndarray:
    z = np.asarray(z)
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    return z


def logsumexp(z: ArrayLike, dim: int = -1, keepdim: bool = False) -> ArrayLike:
    """Stable :math:`\\log \\sum_i e^{z_i}` along ``dim``.

    .. math::
        \\operatorname{LSE}(z) = m + \\log \\sum_i e^{z_i - m}, \\qquad m = \\max_i z_i

    :param z: NumPy array or torch tensor.
    :param dim: axis to reduce.
    :param keepdim: keep the reduced axis with size 1.
    :return: same type as ``z``.
    """
    if _is_tensor(z):
        import torch

        return torch.logsumexp(z, dim=dim, keepdim=keepdim)
    z = _as_numpy(z)
    m = _finite_max(z, dim)
    with np.errstate(divide="ignore"):  # log(0) = -inf for an all -inf row is the right answer
        out = m + np.log(np.sum(np.exp(z - m), axis=dim, keepdims=True))
    return out if keepdim else np.squeeze(out, axis=dim)


def log_softmax(z: ArrayLike, dim: int = -1, *, precise: bool = False) -> ArrayLike:
    """Stable log-softmax, :math:`\\log S(z)_i = z_i - \\operatorname{LSE}(z)`: the one
    log-softmax of the library (NumPy and torch).

    .. math::
        \\log S(z)_i = (z_i - m) - \\log \\sum_j e^{z_j - m}

    With ``precise`` (NumPy, rows of a 2-D array: the temperature fit and the calibrated
    probabilities) the arg-max term, exactly 1 after the shift, is taken out of the sum and
    ``log1p`` is used,

    .. math:: \\log S(z)_i = (z_i - m) - \\operatorname{log1p}\\Bigl(\\sum_{j \\ne j^*}
        e^{z_j - m}\\Bigr), \\qquad m = z_{j^*} = \\max_j z_j,

    so ``-log p`` of a very confident correct prediction stays accurate (``~1e-30`` rather
    than 0), which keeps the temperature objective strictly monotone where it should be.

    :param z: NumPy array or torch tensor.
    :param dim: class axis.
    :param precise: the ``log1p`` form above (a 2-D NumPy array, ``dim`` 1 or -1).
    :return: same type and shape as ``z``.
    """
    if _is_tensor(z):
        import torch

        if precise:
            raise ValueError("log_softmax(precise=True) takes a NumPy array")
        return torch.log_softmax(z, dim=dim)
    z = _as_numpy(z)
    if precise:
        if z.ndim != 2 or dim not in (1, -1):
            raise ValueError("log_softmax(precise=True) takes rows of a 2-D array (dim 1)")
        n = z.shape[0]
        jmax = np.argmax(z, axis=1)
        shifted = z - z[np.arange(n), jmax][:, None]
        e = np.exp(shifted)
        e[np.arange(n), jmax] = 0.0
        return shifted - np.log1p(e.sum(axis=1, keepdims=True))
    shifted = z - _finite_max(z, dim)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def softmax(z: ArrayLike, dim: int = -1) -> ArrayLike:
    """Stable softmax :math:`S(z)_i = e^{z_i} / \\sum_j e^{z_j}` computed as :math:`S(z - \\max z)`.

    .. math::
        S(z)_i = \\frac{e^{z_i - m}}{\\sum_j e^{z_j - m}}, \\qquad m = \\max_j z_j

    :param z: NumPy array or torch tensor.
    :param dim: class axis.
    :return: same type and shape as ``z``; entries in ``[0, 1]`` summing to 1 along ``dim``.
    """
    if _is_tensor(z):
        import torch

        return torch.softmax(z, dim=dim)
    z = _as_numpy(z)
    e = np.exp(z - _finite_max(z, dim))
    return e / np.sum(e, axis=dim, keepdims=True)


def softmax_jacobian(p: ArrayLike) -> ArrayLike:
    """Jacobian of the softmax expressed through its output :math:`p = S(z)`.

    .. math::
        J = \\frac{\\partial S(z)}{\\partial z} = \\operatorname{diag}(p) - p p^\\top,
        \\qquad J_{ie} = \\delta_{ie} p_i - p_i p_e

    :param p: probabilities with classes on the last axis, shape ``(..., C)``.
    :return: shape ``(..., C, C)``, same type as ``p``.
    :see Paper: softmax properties note, Property 4.
    """
    if _is_tensor(p):
        import torch

        return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
    p = _as_numpy(p)
    eye = np.eye(p.shape[-1], dtype=p.dtype)
    return p[..., :, None] * eye - p[..., :, None] * p[..., None, :]


def max_log_odds(z: ArrayLike, dim: int = -1) -> ArrayLike:
    """Log-odds of the largest softmax probability, in float64, without saturation.

    .. math::
        \\operatorname{logit}(\\max_i S(z)_i) = \\log \\frac{p_{\\max}}{1 - p_{\\max}}
        = z_{\\max} - \\operatorname{LSE}_{j \\ne \\arg\\max} z_j

    A strictly increasing function of the maximum softmax probability, so every rank metric
    (AUROC, FPR95, AUPR) is the MSP's; but where :math:`p_{\\max}` rounds to exactly 1 (float32
    from a logit gap of about 17, float64 from about 37) this keeps the exact order. The
    other classes' log-sum-exp is computed with the max-shift, so no gap overflows.
    One class only: :math:`+\\infty`.

    :param z: NumPy array or torch tensor of logits, classes along ``dim``.
    :param dim: class axis.
    :return: float64, ``z`` with ``dim`` reduced; same kind as ``z``.
    """
    if _is_tensor(z):
        import torch

        z64 = z.double()
        top, idx = z64.max(dim=dim, keepdim=True)
        rest = z64.scatter(dim, idx, float("-inf"))
        return (top - torch.logsumexp(rest, dim=dim, keepdim=True)).squeeze(dim)
    z64 = _as_numpy(z).astype(np.float64)
    idx = np.argmax(z64, axis=dim)
    top = np.take_along_axis(z64, np.expand_dims(idx, dim), axis=dim)
    rest = z64.copy()
    np.put_along_axis(rest, np.expand_dims(idx, dim), -np.inf, axis=dim)
    with np.errstate(divide="ignore"):
        out = top - logsumexp(rest, dim=dim, keepdim=True)
    return np.squeeze(out, axis=dim)
