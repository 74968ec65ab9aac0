"""Fig. 8 (App. A): adversarial inputs, where the paper says reversion to the OCS does *not* hold.

The paper evaluates an MNIST cross-entropy classifier on an FGSM-generated set (Goodfellow et al.
2014): the adversarial set is more OOD than the training distribution, yet its predictions lie
*farther* from the OCS (Fig. 8, left), and its representations have a *greater* magnitude than the
original inputs' at every layer (Fig. 8, right). The paper gives no attack strength.

Here, per trained classifier (one job per seed, :func:`adversarial_frame`): the clean ID test
images of the grid (the ``id`` set, the study's ``eval_size`` subset) are attacked by one FGSM
step ``clip(x + eps sign(grad_x CE(f(x), y)), 0, 1)`` in pixel units at every ``eps`` of
``kang.adversarial.epsilons`` (the gradient of the model's own loss at the true label; eval
mode). Each set (``eps`` 0 is the clean set) gets its distance to the OCS (mean KL, as the grid
evaluation), its accuracy, its OOD score (the study's featurizer and discriminator against the
same ID reference as every grid set; per repeat) and, per affine layer, the ratio of its mean
squared representation norm to the clean set's (:func:`.features.norm_ratios`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = ["kind", "eval_set", "eps", "layer", "name", "value", "per_repeat"]


def fgsm(model, x: np.ndarray, y: np.ndarray, eps: float, meta: dict, batch_size: int = 512):
    """One FGSM step on raw images ``x`` in ``[0, 1]`` (the model normalises as it was trained):
    ``clip(x + eps sign(grad_x CE), 0, 1)``, float32."""
    import torch
    import torch.nn.functional as F

    out = []
    for i in range(0, len(x), batch_size):
        xb = torch.from_numpy(np.ascontiguousarray(x[i : i + batch_size], dtype=np.float32))
        xb.requires_grad_(True)
        mean = torch.tensor(meta["mean"], dtype=torch.float32).view(1, -1, 1, 1)
        std = torch.tensor(meta["std"], dtype=torch.float32).view(1, -1, 1, 1)
        loss = F.cross_entropy(model((xb - mean) / std), torch.from_numpy(y[i : i + batch_size]))
        (grad,) = torch.autograd.grad(loss, xb)
        out.append((xb.detach() + eps * grad.sign()).clamp(0.0, 1.0).numpy())
    return np.concatenate(out) if out else np.zeros_like(x, dtype=np.float32)


def _reference_features(data_dir: Path, featurizer: dict, discriminator: dict):
    """``(featurizer, features of the ID reference)``: the study's featurizer and the same ID
    reference as every grid set's OOD score (:func:`.discrimination.id_reference`)."""
    from ...discriminator import build_featurizer
    from .discrimination import id_reference
    from .grid import raw_split

    feat = build_featurizer(featurizer["name"], featurizer.get("params") or {})
    split = discriminator.get("id_split", "train")
    x_id = id_reference(raw_split(data_dir, f"id_{split}"), discriminator)
    return feat, feat(x_id)


def _prediction_rows(key: dict, out: np.ndarray, y: np.ndarray, ocs: np.ndarray) -> list[dict]:
    """The ``distance`` (mean KL to the OCS) and ``accuracy`` rows of one set's outputs."""
    from .ocs import per_sample_distance

    return [
        {**key, "kind": "distance", "value": float(per_sample_distance("ce", out, ocs).mean())},
        {**key, "kind": "accuracy", "value": float(np.mean(out.argmax(1) == y))},
    ]


def _norm_rows(key: dict, model, clean, xn, names: list[str]) -> list[dict]:
    """The ``norm_ratio`` rows of one set (normalised images ``xn``) against the clean set, one
    per affine layer (:func:`.features.norm_ratios`)."""
    from .features import norm_ratios

    return [
        {
            **key,
            "kind": "norm_ratio",
            "layer": int(r.layer),
            "name": names[int(r.layer)],
            "value": float(r.ratio_mean),
        }
        for r in norm_ratios(model, clean, xn).itertuples(index=False)
    ]


def adversarial_frame(
    model_path: str | Path,
    data_dir: str | Path,
    x: np.ndarray,
    y: np.ndarray,
    index: pd.DataFrame,
    *,
    epsilons,
    featurizer: dict,
    discriminator: dict,
    batch_size: int = 512,
) -> pd.DataFrame:
    """The long frame of one classifier (:data:`COLUMNS`): kinds ``distance``, ``accuracy``,
    ``ood_score`` (``per_repeat`` the discriminator repeats) per set ``fgsm@<eps>`` (``eps`` 0:
    the clean set) and ``norm_ratio`` per set and affine layer."""
    import json

    import torch

    from ...train import seed_everything
    from .discrimination import set_score
    from .evaluate import forward, grid_outputs, normalise, trained_images
    from .features import affine_layer_names
    from .ocs import optimal_constant_solution

    seed_everything(0, 1)
    data_dir = Path(data_dir)
    meta = json.loads((data_dir / "meta.json").read_text())
    idr = index[index["is_id"]].iloc[0]
    xc, yc = x[int(idr.start) : int(idr.stop)], y[int(idr.start) : int(idr.stop)].astype(np.int64)
    model, ckpt, _ = grid_outputs(model_path, xc[:1], batch_size)
    ocs = optimal_constant_solution(
        "ce", trained_images(ckpt, data_dir)[1], int(meta["num_classes"]), {}
    )
    feat, f_id = _reference_features(data_dir, featurizer, discriminator)
    clean = normalise(xc, ckpt["meta"])
    names = affine_layer_names(model)
    rows = []
    for eps in [0.0, *sorted(float(e) for e in epsilons)]:
        xa = xc if eps == 0 else fgsm(model, xc, yc, eps, ckpt["meta"], batch_size)
        name = f"fgsm@{eps:g}"
        xn = normalise(xa, ckpt["meta"])
        with torch.no_grad():
            out = forward(model, xn, batch_size)
        key = {"eval_set": name, "eps": eps, "layer": -1, "name": "", "per_repeat": []}
        rows += _prediction_rows(key, out, yc, ocs)
        res = set_score(f_id, feat(xa), discriminator, name)
        rows.append(
            {
                **key,
                "kind": "ood_score",
                "value": float(res.mean),
                "per_repeat": [float(v) for v in res.per_repeat],
            }
        )
        rows += _norm_rows(key, model, clean, xn, names)
    return pd.DataFrame(rows, columns=COLUMNS)
