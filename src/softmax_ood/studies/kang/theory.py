"""Sec. 4.2's theory checked on a toy (Theorem 4.1, Propositions 4.1 and 4.2).

The paper's setting: homogeneous ReLU networks ``f(W; x) = W_L relu(... relu(W_1 x))`` (no
biases), inputs in the unit ball, labels in {-1, +1}, gradient descent with a small step on the
exponential loss ``sum_i exp(-y_i f(W; x_i))``; for Proposition 4.2 the same network plus one
output bias ``b``. The toy:

* **Task**: ``d`` = :data:`DIM` inputs of norm 1. A training input lies in the first
  :data:`SPAN` coordinates, its first coordinate ``y (0.5 + |n|)`` (``n`` standard normal: the
  classes separate through the origin), the other ``SPAN - 1`` standard normal, then scaled to
  norm 1; ``P(y = +1)`` = :data:`POSITIVE` (imbalanced: the exponential loss's OCS
  ``0.5 log(p / (1 - p))`` is not 0). Held-out ID inputs are fresh draws of the same law.
* **Shift**: an ID input rotated by the angle ``t`` towards a random unit direction of the
  orthogonal complement (coordinates ``SPAN..d-1``): ``cos t x + sin t o``, still of norm 1,
  at ``t`` in :data:`ANGLES` (0 is the ID input; 90 degrees lies wholly outside the span the
  network was trained on).
* **Training**: full-batch normalised gradient descent on ``log sum_i exp(-y_i f(x_i))`` (the
  exponential loss's gradient divided by the loss, then scaled to length :data:`LR`: the
  directions of gradient flow on the exponential loss, at a step that neither vanishes as the
  loss does nor blows up as the weights grow; plain GD at a fixed step either left seeds unfitted
  or killed the ReLUs), He-normal initialisation, :data:`STEPS` steps, the seed of the row;
  float64, CPU, one thread, deterministic (about 4 s per seed).
* **Networks**: a shallow ``L'`` = :data:`SHALLOW` and a deeper ``L`` = :data:`DEEP` layer net
  (width :data:`WIDTH`), both bias-free; and the deeper one with an output bias (Prop. 4.2).

What is measured per seed (one frame row per seed and quantity, :func:`theory_frame`):

* ``fitted`` -- the share of training points with margin ``y f(x) > 0`` (the theorems assume the
  network fits the data).
* ``prop41_bound`` -- Proposition 4.1's inequality on the training points: for every hidden
  layer ``j`` and point, ``||f_j(x)|| prod_{k > j} ||W_k||_2 / (y f(x))``; its minimum over
  points and layers. Cauchy-Schwarz makes it at least 1 (a sanity row).
* ``feature_norm_ratio`` -- the last hidden layer's feature norm on the shifted inputs at the
  largest angle over that on held-out ID inputs (mean over inputs): Proposition 4.1's high ID
  norms and Theorem 4.1's drop on P_OOD.
* ``rank_share_trained`` / ``rank_share_init`` -- Theorem 4.1's low-rank solution: the top
  singular value's share of the squared Frobenius norm, averaged over the hidden-to-hidden
  layers ``W_2 .. W_{L-1}`` of the deeper net, after training and at its initialisation.
* ``rank_share_shallow`` -- the same share for the shallow net's layers ``W_2 .. W_{L'-1}``
  (needs ``L' >= 3``): "exacerbated by increasing depth".
* ``output_ratio@<t>`` -- ``E|f(x_t)| / E|f(x)|`` over held-out ID inputs, deeper bias-free net
  (Theorem 4.1: outputs collapse where the rank-one projection is small); ``projection@<t>``
  -- the same ratio of ``||A_1 x||`` (``A_1``: projection on the top right singular vector of
  ``W_1``), the ``epsilon`` of the theorem at the first layer.
* ``bias_sign_agrees`` -- Proposition 4.2: 1 if the trained output bias has the sign of the sum
  of the labels of the margin points (the points within :data:`MARGIN_BAND` of the smallest
  margin ``y f(W; x)``), else 0; ``margin_label_sum`` that sum; ``bias`` the bias.
* ``ocs_sign_agrees`` -- with the bias: 1 if the output at 90 degrees has the OCS's sign (the
  remark after Prop. 4.2: the bias approximates the OCS when the margin points' labels mimic the
  marginal), else 0; ``bias_share@90`` -- ``|b| / E|f(x_90) + b|``: how much of the OOD output
  the bias is.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

DIM = 20  #: input dimension d
SPAN = 5  #: the training inputs' coordinates (the rest is the OOD complement)
POSITIVE = 0.7  #: P(y = +1): an imbalanced marginal, so the OCS is not 0
N_TRAIN = 200
N_TEST = 500
WIDTH = 32  #: m, hidden width
SHALLOW = 3  #: L'
DEEP = 5  #: L > L'
LR = 0.3  #: step length of normalised gradient descent (the step is LR in parameter norm)
STEPS = 600
ANGLES = (0.0, 30.0, 60.0, 80.0, 90.0)
MARGIN_BAND = 0.05  #: margin points: within 5 % of the smallest margin


def exponential_ocs(p: float = POSITIVE) -> float:
    """The constant ``c`` minimising ``p exp(-c) + (1 - p) exp(c)``: ``0.5 log(p / (1 - p))``."""
    return 0.5 * math.log(p / (1.0 - p))


def _inputs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = np.where(rng.random(n) < POSITIVE, 1.0, -1.0)
    z = rng.normal(0.0, 1.0, (n, SPAN))
    z[:, 0] = y * (0.5 + np.abs(z[:, 0]))
    x = np.zeros((n, DIM))
    x[:, :SPAN] = z
    return x / np.linalg.norm(x, axis=1, keepdims=True), y


def _shifted(x: np.ndarray, angle: float, rng: np.random.Generator) -> np.ndarray:
    o = np.zeros_like(x)
    o[:, SPAN:] = rng.normal(0.0, 1.0, (len(x), DIM - SPAN))
    o /= np.linalg.norm(o, axis=1, keepdims=True)
    a = math.radians(angle)
    return math.cos(a) * x + math.sin(a) * o


def _init(seed: int, depth: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    dims = [DIM] + [WIDTH] * (depth - 1) + [1]
    return [
        torch.randn(dims[i + 1], dims[i], generator=g, dtype=torch.float64) * math.sqrt(2 / dims[i])
        for i in range(depth)
    ]


def _forward(ws, b, x):
    import torch

    h, feats = x, []
    for w in ws[:-1]:
        h = torch.relu(h @ w.T)
        feats.append(h)
    out = (h @ ws[-1].T)[:, 0]
    return (out + b if b is not None else out), feats


def train(seed: int, depth: int, bias: bool, x: np.ndarray, y: np.ndarray):
    """The weights (and the output bias, or ``None``) after :data:`STEPS` steps."""
    import torch

    ws = [w.clone().requires_grad_(True) for w in _init(seed, depth)]
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True) if bias else None
    params = ws + ([b] if bias else [])
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(STEPS):
        out, _ = _forward(ws, b, xt)
        loss = torch.logsumexp(-yt * out, 0)
        grads = torch.autograd.grad(loss, params)
        norm = torch.sqrt(sum((g**2).sum() for g in grads)).clamp_min(1e-12)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p -= LR * g / norm
    return [w.detach() for w in ws], (b.detach() if bias else None)


def _rank_share(ws) -> float:
    import torch

    shares = []
    for w in ws[1:-1]:
        s = torch.linalg.svdvals(w)
        shares.append(float(s[0] ** 2 / (s**2).sum()))
    return float(np.mean(shares)) if shares else math.nan


def _seed_rows(seed: int) -> list[dict]:
    import torch

    rng = np.random.default_rng(seed)
    x, y = _inputs(rng, N_TRAIN)
    xh, _ = _inputs(rng, N_TEST)
    shifted = {t: _shifted(xh, t, np.random.default_rng(seed + 10_000)) for t in ANGLES}
    rows: dict[str, float] = {}
    deep, _ = train(seed, DEEP, False, x, y)
    shallow, _ = train(seed, SHALLOW, False, x, y)
    biased, b = train(seed, DEEP, True, x, y)
    with torch.no_grad():
        xt = torch.from_numpy(x)
        out, feats = _forward(deep, None, xt)
        margin = torch.from_numpy(y) * out
        rows["fitted"] = float((margin > 0).double().mean())
        norms = [float(torch.linalg.matrix_norm(w, 2)) for w in deep]
        worst = math.inf
        for j, f in enumerate(feats):  # f = f_j, the input of W_{j+2} (0-based deep[j + 1])
            after = math.prod(norms[j + 1 :])
            ok = margin > 0
            if ok.any():
                worst = min(worst, float((f.norm(dim=1)[ok] * after / margin[ok]).min()))
        rows["prop41_bound"] = worst
        base_out, base_feats = _forward(deep, None, torch.from_numpy(xh))
        v1 = torch.linalg.svd(deep[0])[2][0]
        base_proj = (torch.from_numpy(xh) @ v1).abs().mean()
        for t in ANGLES:
            o, f = _forward(deep, None, torch.from_numpy(shifted[t]))
            rows[f"output_ratio@{t:g}"] = float(o.abs().mean() / base_out.abs().mean())
            rows[f"projection@{t:g}"] = float(
                (torch.from_numpy(shifted[t]) @ v1).abs().mean() / base_proj
            )
        top = max(ANGLES)
        _, f_top = _forward(deep, None, torch.from_numpy(shifted[top]))
        rows["feature_norm_ratio"] = float(
            f_top[-1].norm(dim=1).mean() / base_feats[-1].norm(dim=1).mean()
        )
        rows["rank_share_trained"] = _rank_share(deep)
        rows["rank_share_init"] = _rank_share(_init(seed, DEEP))
        rows["rank_share_shallow"] = _rank_share(shallow)
        fb, _ = _forward(biased, None, xt)
        yb = torch.from_numpy(y)
        rows["fitted_bias"] = float((yb * (fb + b) > 0).double().mean())
        # the margin points as Prop. 4.2 writes them: argmin_j y_j f(W; x_j), f without the bias
        m = yb * fb
        band = m <= m.min() + MARGIN_BAND * m.min().abs()
        label_sum = float(yb[band].sum())
        bias = float(b[0])
        rows["bias"] = bias
        rows["margin_label_sum"] = label_sum
        rows["bias_sign_agrees"] = float(np.sign(bias) == np.sign(label_sum) and label_sum != 0)
        o90, _ = _forward(biased, b, torch.from_numpy(shifted[top]))
        rows["ocs_sign_agrees"] = float(
            (np.sign(o90.numpy()) == np.sign(exponential_ocs())).mean() > 0.5
        )
        rows[f"bias_share@{top:g}"] = float(abs(bias) / o90.abs().mean())
    return [{"seed": seed, "quantity": k, "value": v} for k, v in rows.items()]


def theory_frame(seeds) -> pd.DataFrame:
    """One row per seed and quantity (``seed``, ``quantity``, ``value``): the toy's measurements
    (module docstring). Deterministic: float64, one CPU thread, every draw seeded."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows = [r for s in seeds for r in _seed_rows(int(s))]
    finally:
        torch.set_num_threads(threads)
    return pd.DataFrame(rows, columns=["seed", "quantity", "value"])


def settings() -> dict:
    """The toy's settings (its provenance record)."""
    names = ("DIM", "SPAN", "POSITIVE", "N_TRAIN", "N_TEST", "WIDTH", "SHALLOW", "DEEP", "LR")
    out = {n.lower(): globals()[n] for n in names}
    return {**out, "steps": STEPS, "angles": list(ANGLES), "margin_band": MARGIN_BAND}
