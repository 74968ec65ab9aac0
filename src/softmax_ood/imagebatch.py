"""Image batches ``(N, C, H, W)`` in ``[0, 1]`` as the corruptions and the rotation of
:mod:`softmax_ood.corruptions` take them: the argument check and the way back to the caller's
type (numpy or torch), the layout changes, and bilinear sampling at float positions with the
border modes of the reference code (OpenCV's reflect-101, scipy's reflect, nearest, zeros).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_batch", "as_input_type", "bilinear", "fold_indices", "to_nchw", "to_nhwc"]


def as_batch(x: Any) -> tuple[np.ndarray, bool]:
    """``x`` as a float numpy array ``(N, C, H, W)`` in ``[0, 1]``, and whether it was a tensor."""
    to_torch = hasattr(x, "detach") and hasattr(x, "cpu")
    arr = x.detach().cpu().numpy() if to_torch else np.asarray(x)
    if arr.ndim != 4:
        raise ValueError(f"images must be a 4-D array (N, C, H, W), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(
            f"images must be a float array with values in [0, 1], got dtype {arr.dtype}"
        )
    if arr.size and not (np.isfinite(arr).all() and arr.min() >= 0.0 and arr.max() <= 1.0):
        raise ValueError("images must be finite with values in [0, 1]")
    return arr, to_torch


def as_input_type(out: np.ndarray, dtype, to_torch: bool):
    """``out`` as the caller's images were (:func:`as_batch`): a contiguous array of ``dtype``,
    a torch tensor if ``to_torch``."""
    out = np.ascontiguousarray(out, dtype=dtype)
    if to_torch:
        import torch

        return torch.from_numpy(out)
    return out


def fold_indices(idx: np.ndarray, n: int, mode: str) -> np.ndarray:
    """Map integer indices into ``[0, n)`` for the border ``mode``."""
    if mode == "nearest":
        return np.clip(idx, 0, n - 1)
    if n == 1:
        return np.zeros_like(idx)
    if mode == "mirror":  # reflect-101 (OpenCV default): d c b | a b c d | c b a
        period = 2 * (n - 1)
        idx = np.mod(idx, period)
        return np.where(idx >= n, period - idx, idx)
    if mode == "reflect":  # half-sample symmetric (scipy 'reflect'): b a | a b c d | d c
        period = 2 * n
        idx = np.mod(idx, period)
        return np.where(idx >= n, period - 1 - idx, idx)
    raise ValueError(f"unknown border mode {mode!r}")


def bilinear(x_nhwc: np.ndarray, rows: np.ndarray, cols: np.ndarray, mode: str) -> np.ndarray:
    """Sample ``x_nhwc`` ``(N, H, W, C)`` at float positions ``rows``/``cols`` ``(N, H', W')`` by
    bilinear interpolation; ``mode`` is a :func:`fold_indices` border or ``"constant"`` (zeros)."""
    n, h, w, _ = x_nhwc.shape
    r0 = np.floor(rows)
    c0 = np.floor(cols)
    fr = (rows - r0)[..., None]
    fc = (cols - c0)[..., None]
    r0 = r0.astype(np.int64)
    c0 = c0.astype(np.int64)
    batch = np.arange(n).reshape(n, 1, 1)
    out = np.zeros(rows.shape + (x_nhwc.shape[3],), dtype=np.float64)
    for dr, wr in ((0, 1.0 - fr), (1, fr)):
        for dc, wc in ((0, 1.0 - fc), (1, fc)):
            ri = r0 + dr
            ci = c0 + dc
            weight = wr * wc
            if mode == "constant":
                inside = (ri >= 0) & (ri < h) & (ci >= 0) & (ci < w)
                weight = weight * inside[..., None]
                ri = np.clip(ri, 0, h - 1)
                ci = np.clip(ci, 0, w - 1)
            else:
                ri = fold_indices(ri, h, mode)
                ci = fold_indices(ci, w, mode)
            out += weight * x_nhwc[batch, ri, ci]
    return out


def to_nhwc(x: np.ndarray) -> np.ndarray:
    """``(N, C, H, W)`` -> ``(N, H, W, C)``, contiguous."""
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def to_nchw(x: np.ndarray) -> np.ndarray:
    """``(N, H, W, C)`` -> ``(N, C, H, W)``, contiguous."""
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
