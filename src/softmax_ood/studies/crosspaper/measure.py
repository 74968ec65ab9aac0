"""The cross-paper frames: the shift grid (Kang's, on a declared image budget) plus Ulmer's rays,
the discriminator's OOD score of every set, and the LogitNorm study's networks on both.

Nothing here re-implements another study: the grid is :func:`softmax_ood.studies.kang.grid.
build_grid` (the core's corruptions and rotation), the OOD score is :func:`softmax_ood.studies.
kang.discrimination.score_group` (the core's discriminator and the floor battery of the far sets),
the OCS and the distance to it are :mod:`softmax_ood.studies.kang.ocs`'s, the network outputs go
through :func:`softmax_ood.studies.kang.evaluate.grid_outputs`, and the OOD score of a model is
the core's :data:`softmax_ood.scores.SCORES` entry.

Rays (Ulmer & Cinà, Theorem 1: ``x = alpha * x'``, ``alpha -> infinity``) are drawn in the
network's input space, i.e. on the normalised image ``x' = (x - m) / s``: ``alpha * x'`` is the raw
image ``m + alpha (x - m)``, a ray from the ID mean image through a test image. ``alpha = 1`` is the
test image itself.

Frames (one row per ...):

* ``levels`` -- evaluation set of the grid (Kang's index columns; rays are group ``ray``);
* ``ood_scores`` -- evaluation set: the discriminator's OOD score (per repeat) and, for the far
  sets, the floor battery;
* ``shift`` -- (loss, seed, evaluation set): mean KL of the raw-logit softmax to the OCS (the
  label marginal), the same for the normalised logits ``z / (tau ||z||)``, mean MSP, accuracy,
  share of decisions changed vs the clean image, mean raw logit norm;
* ``rays`` -- (loss, seed, alpha): raw-logit MSP (mean, share above ``confident``), the largest
  normalised logit (``max_i |z_i| / (tau ||z||)``), the normalised-logit MSP, the mean raw logit
  norm, and how far the core's MSP score lies from the raw and from the normalised logits' MSP;
* ``fit`` -- (loss, seed): final training loss (the run's last epoch, ``curve.tsv``) and the
  loss of the OCS on the images it was trained on;
* ``seddik`` -- (c) Seddik et al.'s Theorem 4.8 on each network's penultimate features: the
  Seddik study's Fig. 5 frame (:func:`softmax_ood.studies.seddik.experiments.fig5_networks` on
  :func:`softmax_ood.studies.seddik.features.extract_network_features`, its panels ``weights``,
  ``logits``, ``logit_moments``, ``accuracy``, ``statistics``) of every network, with a leading
  ``loss`` column (:func:`seddik_frame`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # torch is imported by the functions that run a network, not with the module
    import torch

__all__ = [
    "FAMILY_OF",
    "build_grid",
    "evaluate_runs",
    "grid_spec",
    "ray_alphas",
    "score_grid",
    "seddik_frame",
    "seddik_kwargs",
]

#: the fitted premise's name of each core loss family (:data:`analysis.premises.LOSS_FLOORS`)
FAMILY_OF = {"ce": "ce", "logitnorm": "logit_norm"}
RAY = "ray"


def grid_spec(section: dict, far_ood: list[str]) -> dict:
    """The spec :func:`softmax_ood.studies.kang.grid.build_grid` reads, from this study's
    section: its corruptions, severities, rotations and image budget, the pipeline's far sets."""
    g = section["grid"]
    return {
        "corruptions": list(g["corruptions"]),
        "severities": list(g["severities"]),
        "rotations": list(g["rotations"]),
        "far_ood": list(far_ood),
        "eval_size": int(g["eval_size"]),
        "reference_size": int(g["reference_size"]),
        "corruption_seed": int(g["corruption_seed"]),
    }


def ray_alphas(rays: dict) -> np.ndarray:
    """The scale factors of the rays: ``n_alphas`` log-spaced from 10^min to 10^max."""
    return np.logspace(rays["min_exponent"], rays["max_exponent"], int(rays["n_alphas"]))


def _ray_images(x: np.ndarray, meta: dict, alpha: float) -> np.ndarray:
    """Raw images ``m + alpha (x - m)`` (the normalised image scaled by ``alpha``)."""
    m = np.asarray(meta["mean"], dtype=np.float64).reshape(1, -1, 1, 1)
    return (m + float(alpha) * (x.astype(np.float64) - m)).astype(np.float32)


def build_grid(data_dir, section: dict, far_ood: list[str]):
    """``(x, y, index)``: Kang's grid of this study's shifts, the far sets (the first
    ``grid.eval_size`` images of each) and the rays' images at the ``axis.ray_alphas`` (group
    ``ray``, the first ``rays.n_points`` test images) for the shared axis."""
    import json

    from ..kang.grid import INDEX_COLUMNS, raw_split
    from ..kang.grid import build_grid as kang_grid

    x, y, index = kang_grid(data_dir, grid_spec(section, []))
    meta = json.loads((Path(data_dir) / "meta.json").read_text())
    budget = int(section["grid"]["eval_size"])
    n = int(section["rays"]["n_points"])
    x0 = raw_split(data_dir, "id_test")[:n]
    y0 = np.load(Path(data_dir) / "id_test_y.npy", allow_pickle=False)[:n].astype(np.int64)
    # the far sets on the same image budget (Kang's grid would take them whole), then the rays
    extra = [
        (f"far:{name}", "far_ood", math.nan, raw_split(data_dir, f"ood_{name}")[:budget], None)
        for name in far_ood
    ]
    extra += [
        (f"{RAY}@{float(a):g}", RAY, float(a), _ray_images(x0, meta, a), y0)
        for a in section["axis"]["ray_alphas"]
    ]
    xs, ys, rows, start = [x], [y], [], len(x)
    for name, group, level, xi, yi in extra:
        yi = np.full(len(xi), -1, dtype=np.int64) if yi is None else yi
        rows.append(
            {
                "eval_set": name,
                "shift": group,
                "group": group,
                "level": level,
                "start": start,
                "stop": start + len(xi),
                "labelled": group == RAY,
                "is_id": False,
                "change": math.nan,
                "change_per_image": [],
            }
        )
        xs.append(np.asarray(xi, dtype=np.float32))
        ys.append(yi)
        start += len(xi)
    index = pd.concat([index, pd.DataFrame(rows, columns=INDEX_COLUMNS)], ignore_index=True)
    return np.concatenate(xs), np.concatenate(ys), index


def score_grid(data_dir, x: np.ndarray, index: pd.DataFrame, discriminator: dict) -> pd.DataFrame:
    """The discriminator's OOD score of every set of the grid, group by group (Kang's
    :func:`~softmax_ood.studies.kang.discrimination.score_group`)."""
    from ..kang.discrimination import score_group
    from ..kang.grid import raw_split

    d = dict(discriminator)
    x_id = raw_split(data_dir, f"id_{d.get('id_split', 'train')}")
    featurizer = {"name": d.pop("featurizer"), "params": dict(d.pop("featurizer_params"))}
    groups = list(dict.fromkeys(index["group"]))
    frames = [
        score_group(x_id, x, index, g, featurizer=featurizer, discriminator=d) for g in groups
    ]
    return pd.concat(frames, ignore_index=True)


def _normalised(z: np.ndarray, tau: float, eps: float = 1e-7) -> np.ndarray:
    """LogitNorm's normalised logits ``z / (tau (||z|| + eps))`` (the loss's own formula)."""
    return z / (tau * (np.linalg.norm(z, axis=1, keepdims=True) + eps))


def _msp(z: np.ndarray) -> np.ndarray:
    from ..kang.ocs import predict

    return predict("ce", z).max(axis=1)


def _core_msp_score(z: np.ndarray) -> np.ndarray:
    """The core's MSP score (log-odds of the MSP) of logits ``z``, float64."""
    import torch

    from ...scores import SCORES, ScoreInputs

    t = torch.from_numpy(z)
    return SCORES["msp"]()(ScoreInputs(model=None, x=t, features=t, logits=t)).numpy()


def _log_odds(z: np.ndarray) -> np.ndarray:
    """``log(p_max / (1 - p_max))`` of ``softmax(z)`` per row, exactly in float64:
    ``z_max - logsumexp(z_j, j != max)`` (written here, not the core's, to check the score)."""
    from scipy.special import logsumexp

    top = z.argmax(axis=1)
    rest = np.where(np.arange(z.shape[1])[None, :] == top[:, None], -np.inf, z)
    return z[np.arange(len(z)), top] - logsumexp(rest, axis=1)


def _set_rows(z: np.ndarray, y: np.ndarray, ocs: np.ndarray, tau: float, clean_pred) -> dict:
    from ..kang.ocs import kl_categorical

    pred = z.argmax(axis=1)
    labelled = bool((y >= 0).all())
    changed = (
        float(np.mean(pred != clean_pred))
        if clean_pred is not None and len(clean_pred) == len(pred)
        else math.nan
    )
    return {
        "distance": float(kl_categorical(z, ocs).mean()),
        "distance_normalised": float(kl_categorical(_normalised(z, tau), ocs).mean()),
        "msp": float(_msp(z).mean()),
        "accuracy": float(np.mean(pred == y)) if labelled else math.nan,
        "changed": changed,
        "logit_norm": float(np.linalg.norm(z, axis=1).mean()),
        "n_images": len(z),
    }


def _train_loss(curve: str | Path) -> float:
    c = pd.read_csv(curve, sep="\t")
    return float(c["train_loss"].iloc[-1])


def evaluate_runs(
    runs: list[dict],
    data_dir,
    x: np.ndarray,
    y: np.ndarray,
    index: pd.DataFrame,
    *,
    tau: float,
    rays: dict,
    batch_size: int,
) -> dict[str, pd.DataFrame]:
    """Frames ``shift``, ``rays`` and ``fit`` (module docstring) of every run.

    :param runs: one dict per network: ``loss`` (a key of the core losses), ``family`` (its loss
        family), ``seed``, ``model`` (its ``model.pt``) and ``curve`` (its ``curve.tsv``).
    :param tau: the LogitNorm temperature whose normalised logits are measured (for every model:
        CE's normalised logits are the control).
    """
    import torch

    from ..kang.evaluate import grid_outputs, normalise, trained_images
    from ..kang.ocs import ocs_cross_entropy, ocs_loss

    graded = index[index["group"] != RAY]
    stop = int(graded["stop"].max())
    clean = graded[graded["is_id"]].iloc[0]
    first = int(clean["start"])
    shift_rows, ray_rows, fit_rows = [], [], []
    for run in runs:
        model, ckpt, out = grid_outputs(run["model"], x[:stop], batch_size)
        k = out.shape[1]
        _, y_train = trained_images(ckpt, data_dir)
        ocs = ocs_cross_entropy(y_train, k)
        key = {"loss": run["loss"], "family": run["family"], "seed": int(run["seed"])}
        fit_rows.append(
            {**key, "train_loss": _train_loss(run["curve"]), "ocs_loss": ocs_loss("ce", y_train, k)}
        )
        clean_pred = out[first : int(clean["stop"])].argmax(axis=1)
        shift_rows += _shift_rows(key, graded, out, y, ocs, tau, clean_pred)
        x0 = normalise(x[first : first + int(rays["n_points"])], ckpt["meta"])
        ray_rows += _ray_rows(key, model, x0, rays, tau, batch_size)
        del model
        torch.set_num_threads(1)
    return {
        "shift": pd.DataFrame(shift_rows),
        "rays": pd.DataFrame(ray_rows),
        "fit": pd.DataFrame(fit_rows),
    }


def _shift_rows(
    key: dict,
    graded: pd.DataFrame,
    out: np.ndarray,
    y: np.ndarray,
    ocs: np.ndarray,
    tau: float,
    clean_pred: np.ndarray,
) -> list[dict]:
    """The ``shift`` rows of one network: every graded set of the grid (its rows of the
    network's outputs ``out``), decisions changed against the clean images' ``clean_pred``
    (none for the far sets, whose images are not the clean ones)."""
    rows = []
    for r in graded.itertuples(index=False):
        z = out[int(r.start) : int(r.stop)]
        rows.append(
            {
                **key,
                "eval_set": r.eval_set,
                "shift": r.shift,
                "group": r.group,
                "level": float(r.level),
                **_set_rows(
                    z,
                    y[int(r.start) : int(r.stop)],
                    ocs,
                    tau,
                    None if r.shift == "far_ood" else clean_pred,
                ),
            }
        )
    return rows


def _ray_rows(
    key: dict, model: torch.nn.Module, x0: torch.Tensor, rays: dict, tau: float, batch_size: int
) -> list[dict]:
    """The ``rays`` rows of one network: its outputs on the normalised clean images ``x0``
    scaled by every alpha of :func:`ray_alphas`."""
    from ..kang.evaluate import forward

    rows = []
    for a in ray_alphas(rays):
        z = forward(model, x0 * float(a), batch_size)
        p = _msp(z)
        zn = _normalised(z, tau)
        core = _core_msp_score(z)
        raw_lo, norm_lo = _log_odds(z), _log_odds(zn)
        rows.append(
            {
                **key,
                "alpha": float(a),
                "msp": float(p.mean()),
                "confident_share": float(np.mean(p > float(rays["confident"]))),
                "log_odds": float(np.mean(core)),
                "logit_norm": float(np.linalg.norm(z, axis=1).mean()),
                "max_normalised_logit": float(np.abs(zn).max()),
                "msp_normalised": float(_msp(zn).mean()),
                "log_odds_normalised": float(np.mean(norm_lo)),
                "score_vs_raw": float(
                    np.max(np.abs(core - raw_lo) / np.maximum(1.0, np.abs(raw_lo)))
                ),
                "score_vs_normalised": float(
                    np.median(np.abs(core - norm_lo) / np.maximum(1.0, np.abs(norm_lo)))
                ),
                "n_points": len(z),
            }
        )
    return rows


def seddik_kwargs(section: dict) -> dict:
    """Keyword arguments of :func:`softmax_ood.studies.seddik.experiments.fig5_networks` from this
    study's ``seddik`` block (the Seddik study's fig5 settings: same names, same meaning)."""
    c = section["seddik"]
    own = ("splits", "draw_seed", "solver", "train")  # read by seddik_frame or renamed here
    return {
        **{k: v for k, v in c.items() if k not in own},
        "seed": int(c["draw_seed"]),
        "solver": dict(c["solver"]),
        "train": dict(c["train"]),
    }


def seddik_frame(
    checkpoints: dict[str, dict[int, str | Path]], data_dir, section: dict
) -> pd.DataFrame:
    """(c) Seddik's Fig. 5 frame of every network: per loss (a key of ``checkpoints``, each a
    training seed -> ``model.pt`` map) the Seddik study's own feature extraction on the pooled ID
    splits ``seddik.splits`` and its :func:`~softmax_ood.studies.seddik.experiments.
    fig5_networks` (theory vs a softmax classifier fitted on the features, class statistics from
    an independent part), concatenated with a leading ``loss`` column (losses in the given
    order). Only the frame is kept: the features are not written."""
    from ..seddik.experiments import fig5_networks
    from ..seddik.features import extract_network_features

    kwargs = seddik_kwargs(section)
    frames = []
    for loss, ckpts in checkpoints.items():
        feats = extract_network_features(ckpts, data_dir, list(section["seddik"]["splits"]))
        f = fig5_networks(feats, **kwargs)
        f.insert(0, "loss", loss)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)
