"""The Fig. 4 mechanism analysis of Kang et al. (Sec. 4.1) for feed-forward chains.

Write the network as :math:`f(x) = g_{i+1}(\\sigma(W_i \\phi_i(x) + b_i))` for each affine layer
``i`` (``Linear`` or ``Conv2d``, with a directly following eval-mode batch norm folded in), where
:math:`\\phi_i(x)` is the layer's input. Three quantities:

* :func:`norm_ratios` -- per layer, :math:`E_{OOD}\\|W_i \\phi_i(x)\\|^2 / E_{train}\\|W_i
  \\phi_i(x)\\|^2` (Fig. 4, first column; bias excluded, the whole flattened map for a conv),
  with the standard deviation over the evaluation samples of the per-sample ratio (the paper's
  error bars are "the standard deviation taken over the test distribution");
* :func:`subspace_share` -- per sample, the share of the representation's squared norm inside
  the span of the top ``rank`` right singular vectors of the layer's weight matrix,
  :math:`\\|\\phi_j V_{top} V_{top}^\\top\\|^2 / \\|\\phi_j\\|^2` (second column; ``Linear`` layers
  only). The paper does not say how many singular vectors are "top": ``rank`` is an explicit
  argument, and :func:`energy_rank` gives the smallest rank holding a fraction of
  :math:`\\|W_j\\|_F^2`;
* :func:`accumulated_constants` -- the network output when layer ``k``'s input contribution is
  zeroed, :math:`g_{k+1}(\\sigma(b_k))` (third/fourth columns), to compare with the OCS (map it
  with :func:`softmax_ood.studies.kang.ocs.predict` first).

Supported models: the project's :class:`~softmax_ood.models.mlp.MLP`,
:class:`~softmax_ood.models.cnn.SmallCNN` and :class:`~softmax_ood.models.convnet.ConvNet`
(Kang et al.'s MNIST network), and any (nested) :class:`torch.nn.Sequential` of
``Linear``, ``Conv2d``, ``BatchNorm1d/2d`` (only directly after an affine layer), ``ReLU``,
``Flatten``, ``Identity``, ``Dropout``, ``MaxPool2d``, ``AvgPool2d``, ``AdaptiveAvgPool2d``.

Residual and dense networks (ResNet, WRN, DenseNet: the paper's CIFAR-10 Fig. 4 uses ResNet-20)
are not chains; for any model with ``forward_features`` and a ``Linear`` ``classifier`` the three
quantities are still defined: :func:`norm_ratios` records :math:`\\|W\\phi\\|^2` of every
``Conv2d``/``Linear`` by forward hooks (the layer's output minus its bias; a following batch norm
is not folded in), :func:`subspace_share` and :func:`energy_rank` read the classifier (layer -1,
its input the pooled features), and :func:`accumulated_constants` is defined at the classifier
(layer -1: its bias). Deeper constants need the skip paths carried through and are rejected.

Limits: the network is run in evaluation semantics whatever its mode (dropout is the identity,
batch norm uses its running statistics; a batch norm without running statistics is rejected);
the GODIN head is rejected; pooling is applied as the fixed map it is (max-pooling is not linear, so "the
contribution of the bias" after it is the constant pushed through it, exactly as
:math:`g_{k+1}(\\sigma(b_k))` is defined). The weight matrix of a ``Linear`` with a folded batch
norm is :math:`\\mathrm{diag}(\\gamma / \\sqrt{v + \\epsilon}) W`.

:see Paper: Kang, Setlur, Tomlin & Levine, ICLR 2024, https://arxiv.org/abs/2310.00873,
    Sec. 4.1, Fig. 4, App. C.2.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "AffineLayer",
    "accumulated_constants",
    "affine_layer_names",
    "chain",
    "energy_rank",
    "layer_sq_norms",
    "norm_ratios",
    "subspace_share",
]

_FIXED = (nn.Flatten, nn.Identity, nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d)
_BATCH = 1024


@dataclass
class AffineLayer:
    """``Linear`` / ``Conv2d`` with an optional folded eval-mode batch norm; ``name`` is e.g.
    ``"linear2"`` (type and position among the affine layers)."""

    module: nn.Linear | nn.Conv2d
    bn: nn.BatchNorm1d | nn.BatchNorm2d | None
    name: str

    def _bn_scale_shift(self) -> tuple[Tensor, Tensor] | None:
        if self.bn is None:
            return None
        bn = self.bn
        scale = 1.0 / torch.sqrt(bn.running_var + bn.eps)
        if bn.affine:
            scale = scale * bn.weight
        shift = -bn.running_mean * scale
        if bn.affine:
            shift = shift + bn.bias
        return scale, shift

    def _view(self, v: Tensor, ndim: int) -> Tensor:
        return v.view(1, -1, *([1] * (ndim - 2)))

    def weight_apply(self, phi: Tensor) -> Tensor:
        """:math:`W \\phi` without bias (batch-norm scale included)."""
        m = self.module
        if isinstance(m, nn.Linear):
            out = F.linear(phi, m.weight)
        else:
            out = F.conv2d(phi, m.weight, None, m.stride, m.padding, m.dilation, m.groups)
        ss = self._bn_scale_shift()
        return out if ss is None else out * self._view(ss[0], out.ndim)

    def constant(self, like: Tensor) -> Tensor:
        """The bias term :math:`b` (folded batch-norm shift included), broadcast to ``like``."""
        m = self.module
        b = m.bias if m.bias is not None else torch.zeros(m.weight.shape[0], dtype=like.dtype)
        ss = self._bn_scale_shift()
        if ss is not None:
            b = b * ss[0] + ss[1]
        return torch.zeros_like(like) + self._view(b, like.ndim)

    def __call__(self, phi: Tensor) -> Tensor:
        out = self.weight_apply(phi)
        return out + self.constant(out)

    def matrix(self) -> Tensor:
        """The ``(out, in)`` weight matrix of a ``Linear`` layer (batch-norm scale folded)."""
        if not isinstance(self.module, nn.Linear):
            raise ValueError(f"{self.name} is not a Linear layer; the subspace share needs one")
        w = self.module.weight
        ss = self._bn_scale_shift()
        return w if ss is None else w * ss[0][:, None]


def _flatten(modules) -> list[nn.Module]:
    out: list[nn.Module] = []
    for m in modules:
        if isinstance(m, nn.Sequential):
            out += _flatten(m)
        else:
            out.append(m)
    return out


def chain(model: nn.Module) -> list[Any]:
    """The model as a list of steps: :class:`AffineLayer` objects and fixed modules
    (``ReLU``, pooling, ``Flatten``, ...); dropout is dropped (evaluation semantics).

    :raises ValueError: unsupported model or module (the message names it).
    """
    from ...models.cnn import SmallCNN
    from ...models.convnet import ConvNet
    from ...models.mlp import MLP

    if isinstance(model, MLP | SmallCNN | ConvNet):
        if not isinstance(model.classifier, nn.Linear):
            raise ValueError(
                f"only a linear head is supported, got {type(model.classifier).__name__}"
            )
        modules = _flatten(model.features) + _flatten(getattr(model, "pool", nn.Sequential()))
        modules.append(model.classifier)
    elif type(model) is nn.Sequential:
        modules = _flatten(model)
    else:
        raise ValueError(
            f"unsupported model {type(model).__name__}; expected MLP, SmallCNN, ConvNet or "
            "nn.Sequential"
        )
    steps: list[Any] = []
    n_affine = 0
    for m in modules:
        if isinstance(m, nn.Linear | nn.Conv2d):
            kind = "linear" if isinstance(m, nn.Linear) else "conv"
            steps.append(AffineLayer(m, None, f"{kind}{n_affine}"))
            n_affine += 1
        elif isinstance(m, nn.BatchNorm1d | nn.BatchNorm2d):
            if not steps or not isinstance(steps[-1], AffineLayer) or steps[-1].bn is not None:
                raise ValueError("batch norm is supported only directly after a Linear/Conv2d")
            if m.running_mean is None or m.running_var is None:
                raise ValueError("batch norm without running statistics is not supported")
            steps[-1].bn = m
        elif isinstance(m, nn.ReLU):
            steps.append(nn.ReLU())
        elif isinstance(m, nn.Dropout):
            continue
        elif isinstance(m, _FIXED):
            steps.append(m)
        else:
            raise ValueError(f"unsupported module {type(m).__name__} in the chain")
    if not any(isinstance(s, AffineLayer) for s in steps):
        raise ValueError("the model has no Linear or Conv2d layer")
    return steps


def _affine_positions(steps) -> list[int]:
    return [i for i, s in enumerate(steps) if isinstance(s, AffineLayer)]


def _layer_index(steps, layer: int) -> int:
    pos = _affine_positions(steps)
    if (
        isinstance(layer, bool)
        or not isinstance(layer, numbers.Integral)
        or not (-len(pos) <= layer < len(pos))
    ):
        raise ValueError(
            f"layer must be an integer in [{-len(pos)}, {len(pos) - 1}], got {layer!r}"
        )
    return pos[int(layer)]


def _tensor(x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        x = torch.from_numpy(np.asarray(x))
    return x.to(torch.get_default_dtype())


def _head_only(model: nn.Module) -> bool:
    """True for a model that is not a chain but has ``forward_features`` and a ``Linear``
    classifier (residual / dense networks): analysed by hooks and at its head."""
    try:
        chain(model)
        return False
    except ValueError:
        if isinstance(getattr(model, "classifier", None), nn.Linear) and hasattr(
            model, "forward_features"
        ):
            return True
        raise


def _affine_modules(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """Every ``Conv2d`` / ``Linear`` of a non-chain model, named as :func:`chain` names them."""
    mods = [m for m in model.modules() if isinstance(m, nn.Linear | nn.Conv2d)]
    return [
        (f"{'linear' if isinstance(m, nn.Linear) else 'conv'}{i}", m) for i, m in enumerate(mods)
    ]


class _EvalMode:
    """Evaluation semantics for the duration of a block (the mode is restored after)."""

    def __init__(self, model: nn.Module):
        self.model, self.was = model, model.training

    def __enter__(self):
        self.model.eval()

    def __exit__(self, *exc):
        self.model.train(self.was)


def _check_head_layer(model: nn.Module, layer: int) -> None:
    if layer not in (-1, len(_affine_modules(model)) - 1):
        raise ValueError(
            f"{type(model).__name__} is not a feed-forward chain: only its classifier "
            f"(layer -1) can be analysed, got layer {layer!r}"
        )


def affine_layer_names(model: nn.Module) -> list[str]:
    """Names of the affine layers in forward order, e.g. ``["linear0", "linear1", "linear2"]``."""
    if _head_only(model):
        return [n for n, _ in _affine_modules(model)]
    return [s.name for s in chain(model) if isinstance(s, AffineLayer)]


@torch.no_grad()
def _hooked_sq_norms(model: nn.Module, x: Tensor) -> np.ndarray:
    """:func:`layer_sq_norms` of a non-chain model: each layer's output minus its bias."""
    mods = [m for _, m in _affine_modules(model)]
    rows = []
    with _EvalMode(model):
        for start in range(0, len(x), _BATCH):
            got: list[Tensor] = []

            def hook(mod, _inp, out, got=got):
                if mod.bias is not None:
                    out = out - mod.bias.view(1, -1, *([1] * (out.dim() - 2)))
                got.append(out.flatten(1).pow(2).sum(1).double())

            handles = [m.register_forward_hook(hook) for m in mods]
            try:
                model(x[start : start + _BATCH])
            finally:
                for h in handles:
                    h.remove()
            rows.append(torch.stack(got, dim=1))
    return torch.cat(rows).numpy()


def _run(steps, x: Tensor, record: bool = False) -> tuple[Tensor, list[Tensor]]:
    inputs: list[Tensor] = []
    h = x
    for s in steps:
        if record and isinstance(s, AffineLayer):
            inputs.append(h)
        h = s(h)
    return h, inputs


@torch.no_grad()
def layer_sq_norms(model: nn.Module, x: Any) -> np.ndarray:
    """Per-sample :math:`\\|W_i \\phi_i(x)\\|^2` of every affine layer, ``(N, L)`` float64."""
    x = _tensor(x)
    if _head_only(model):
        return _hooked_sq_norms(model, x)
    steps = chain(model)
    rows = []
    for start in range(0, len(x), _BATCH):
        _, inputs = _run(steps, x[start : start + _BATCH], record=True)
        affine = [s for s in steps if isinstance(s, AffineLayer)]
        rows.append(
            torch.stack(
                [
                    lay.weight_apply(phi).flatten(1).pow(2).sum(1)
                    for lay, phi in zip(affine, inputs, strict=True)
                ],
                dim=1,
            ).double()
        )
    return torch.cat(rows).numpy()


def norm_ratios(model: nn.Module, x_train: Any, x_eval: Any) -> pd.DataFrame:
    """Fig. 4, first column: one row per affine layer with ``layer`` (index), ``name``,
    ``ratio_mean`` = :math:`E_{eval}\\|W\\phi\\|^2 / E_{train}\\|W\\phi\\|^2` and ``ratio_std``
    (std over the evaluation samples of the per-sample ratio, ``ddof=1``), as a DataFrame."""
    ref = layer_sq_norms(model, x_train).mean(axis=0)
    ratios = layer_sq_norms(model, x_eval) / ref[None, :]
    names = affine_layer_names(model)
    std = ratios.std(axis=0, ddof=1) if len(ratios) > 1 else np.zeros(len(names))
    return pd.DataFrame(
        {
            "layer": np.arange(len(names)),
            "name": names,
            "ratio_mean": ratios.mean(axis=0),
            "ratio_std": std,
        }
    )


@torch.no_grad()
def energy_rank(model: nn.Module, layer: int, fraction: float) -> int:
    """Smallest ``r`` whose top-``r`` singular values hold ``fraction`` of
    :math:`\\|W\\|_F^2` for the ``Linear`` layer ``layer``."""
    if not (isinstance(fraction, numbers.Real) and 0.0 < fraction <= 1.0):
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    if _head_only(model):
        _check_head_layer(model, layer)
        s = torch.linalg.svdvals(model.classifier.weight.double())
    else:
        steps = chain(model)
        s = torch.linalg.svdvals(steps[_layer_index(steps, layer)].matrix().double())
    energy = torch.cumsum(s**2, 0) / (s**2).sum()
    return (
        int(torch.searchsorted(energy, torch.tensor(float(fraction), dtype=energy.dtype) - 1e-12))
        + 1
    )


@torch.no_grad()
def subspace_share(model: nn.Module, x: Any, layer: int, rank: int) -> np.ndarray:
    """Per-sample share :math:`\\|\\phi V_{top} V_{top}^\\top\\|^2 / \\|\\phi\\|^2` of the input
    :math:`\\phi` of ``Linear`` layer ``layer`` inside the span of its top ``rank`` right
    singular vectors, ``(N,)`` float64; NaN where :math:`\\phi = 0`."""
    head = _head_only(model)
    if head:
        _check_head_layer(model, layer)
        w = model.classifier.weight.double()
    else:
        steps = chain(model)
        idx = _layer_index(steps, layer)
        w = steps[idx].matrix().double()
    if (
        isinstance(rank, bool)
        or not isinstance(rank, numbers.Integral)
        or not (1 <= rank <= min(w.shape))
    ):
        raise ValueError(f"rank must be an integer in [1, {min(w.shape)}], got {rank!r}")
    _, _, vh = torch.linalg.svd(w, full_matrices=False)
    v_top = vh[: int(rank)].T  # (in, rank)
    x = _tensor(x)
    out = []
    for start in range(0, len(x), _BATCH):
        if head:
            with _EvalMode(model):
                phi = model.forward_features(x[start : start + _BATCH]).double()
        else:
            _, inputs = _run(steps[: idx + 1], x[start : start + _BATCH], record=True)
            phi = inputs[-1].double()
        total = phi.pow(2).sum(1)
        inside = (phi @ v_top).pow(2).sum(1)
        out.append(torch.where(total > 0, inside / total, torch.full_like(total, float("nan"))))
    return torch.cat(out).numpy()


@torch.no_grad()
def accumulated_constants(model: nn.Module, layer: int, x_example: Any) -> np.ndarray:
    """Network output with :math:`W_k \\phi_k(x)` zeroed at affine layer ``k = layer``:
    :math:`g_{k+1}(\\sigma(b_k))`, the raw ``(m,)`` output (independent of the input).

    :param x_example: at least one input, used only for the shapes of the feature maps.
    """
    if _head_only(model):  # a residual / dense network: defined at its classifier only
        _check_head_layer(model, layer)
        return model.classifier.bias.detach().double().numpy()
    steps = chain(model)
    idx = _layer_index(steps, layer)
    x = _tensor(x_example)[:1]
    _, inputs = _run(steps[: idx + 1], x, record=True)
    lay = steps[idx]
    h = lay.constant(lay.weight_apply(inputs[-1]))
    for s in steps[idx + 1 :]:
        h = s(h)
    return h[0].double().numpy()
