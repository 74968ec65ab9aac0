"""One training run and its evaluation: the glue the workflow scripts call.

A *run* is (dataset, architecture variant, loss variant, seed). Architecture and loss variants
are named entries of the config (``architectures:`` and ``losses:``); this module turns those
entries into a model and a loss, trains, saves a self-describing checkpoint, and evaluates it on
the ID test split and every OOD set with every configured score.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .data import PreparedData, load_prepared
from .losses import LOSSES, build_loss
from .models import create_model
from .provenance import git_info, path_sha256, versions, write_bytes_atomic
from .train import TrainConfig, fit, predict_logits, seed_everything

__all__ = [
    "build_run",
    "evaluate_run",
    "load_checkpoint",
    "save_checkpoint",
    "train_run",
]

log = logging.getLogger(__name__)

CKPT_FORMAT = 1


def _split_loss_cfg(loss_cfg: dict) -> tuple[str, dict]:
    cfg = dict(loss_cfg)
    family = cfg.pop("loss", None)
    if family not in LOSSES:
        raise ValueError(
            f"loss entry {loss_cfg} names loss {family!r}; expected one of {sorted(LOSSES)}"
        )
    return family, cfg


def build_run(arch_cfg: dict, loss_cfg: dict, meta: dict) -> tuple[nn.Module, nn.Module]:
    """Model and loss for one run; the loss decides the head (GODIN needs its own head)."""
    family, loss_params = _split_loss_cfg(loss_cfg)
    loss_fn = build_loss(family, loss_params)
    arch = dict(arch_cfg)
    arch_family = arch.pop("family")
    model = create_model(
        arch_family,
        num_classes=int(meta["num_classes"]),
        in_chans=int(meta["channels"]),
        image_size=int(meta["image_size"]),
        head=getattr(loss_fn, "requires_head", "linear"),
        **arch,
    )
    return model, loss_fn


def save_checkpoint(path: Path | str, model: nn.Module, spec: dict) -> None:
    """Save weights plus everything needed to rebuild the model (atomic write)."""
    buf = io.BytesIO()  # a file object: the archive's inner name no longer depends on the path
    torch.save({"format": CKPT_FORMAT, "spec": spec, "state_dict": model.state_dict()}, buf)
    write_bytes_atomic(path, buf.getvalue())


def load_checkpoint(path: Path | str) -> tuple[nn.Module, dict]:
    """Rebuild the model saved by :func:`save_checkpoint`, in eval mode."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    spec = ckpt["spec"]
    model, _ = build_run(spec["arch_cfg"], spec["loss_cfg"], spec["meta"])
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    return model, spec


def _meta_subset(meta: dict) -> dict:
    return {k: meta[k] for k in ("num_classes", "channels", "image_size", "mean", "std")}


def train_run(
    data_dir: Path | str,
    *,
    arch_name: str,
    arch_cfg: dict,
    loss_name: str,
    loss_cfg: dict,
    train_cfg: dict,
    seed: int,
    monitor_set: str,
) -> tuple[nn.Module, list[dict], dict]:
    """Train one run; returns ``(model, curve rows, checkpoint spec)``."""
    cfg = TrainConfig.from_dict(train_cfg)
    seed_everything(seed, cfg.threads)
    data = load_prepared(data_dir)
    monitor = {**data.ood, **data.ood_val}
    if monitor_set not in monitor:
        raise ValueError(
            f"monitor OOD set {monitor_set!r} is not in the prepared data; expected one of "
            f"{sorted(monitor)}"
        )
    model, loss_fn = build_run(arch_cfg, loss_cfg, data.meta)
    name = f"{data.meta['id_dataset']}/{arch_name}/{loss_name}/seed{seed}"
    log.info(
        "training %s: %s params, loss %s",
        name,
        sum(p.numel() for p in model.parameters()),
        loss_cfg,
    )
    model, curve, info = fit(
        model,
        loss_fn,
        data.x["train"],
        data.y["train"],
        data.x["val"],
        data.y["val"],
        cfg=cfg,
        seed=seed,
        monitor_ood=monitor[monitor_set],
        name=name,
    )
    spec = {
        "dataset": data.meta["id_dataset"],
        "arch": arch_name,
        "arch_cfg": dict(arch_cfg),
        "loss": loss_name,
        "loss_cfg": dict(loss_cfg),
        "seed": int(seed),
        "train_cfg": dict(train_cfg),
        "monitor_set": monitor_set,
        "meta": _meta_subset(data.meta),
        "data_sha256": path_sha256(data_dir),
        "git": git_info(),
        "versions": versions(),
        **info,
    }
    return model, curve, spec


@torch.no_grad()
def _features_logits(model: nn.Module, x: torch.Tensor, batch_size: int):
    feats, logits = [], []
    for i in range(0, len(x), batch_size):
        f = model.forward_features(x[i : i + batch_size])
        feats.append(f)
        logits.append(model.forward_head(f))
    return torch.cat(feats), torch.cat(logits)


def _score(name: str, params: dict, model: nn.Module, x, feats, logits, std, batch_size):
    """One OOD score for a set as float64 numpy, higher = more in-distribution."""
    return (
        _raw_score(name, params, model, x, feats, logits, std, batch_size).detach().double().numpy()
    )


def _raw_score(name: str, params: dict, model: nn.Module, x, feats, logits, std, batch_size):
    from . import scores

    if name in scores.LOGIT_SCORES:
        return scores.LOGIT_SCORES[name](logits, **params)
    if name == "odin":
        return scores.odin(model, x, std=std, batch_size=batch_size, **params)
    if name == "gradnorm":
        return scores.gradnorm(feats, model.get_classifier(), **params)
    if name == "godin":
        return scores.godin_score(feats, model.get_classifier())
    raise ValueError(
        f"unknown score {name!r}; expected one of "
        f"{sorted([*scores.LOGIT_SCORES, 'odin', 'gradnorm', 'godin'])}"
    )


def scores_for(loss_family: str, scores_cfg: dict, overrides: dict) -> dict:
    """The score set and parameters for a model trained with ``loss_family``.

    GODIN's own score (max cosine) only exists for the GODIN head; GradNorm needs a linear last
    layer, so it is skipped for GODIN. Per-loss overrides (e.g. Energy T=0.1 for LogitNorm, as
    in Wei et al.) come from the config.
    """
    out = {}
    for name, params in scores_cfg.items():
        if loss_family == "godin" and name == "gradnorm":
            continue
        out[name] = {**(params or {}), **overrides.get(loss_family, {}).get(name, {})}
    if loss_family == "godin":
        out["godin"] = {}
    return out


def evaluate_run(
    ckpt_path: Path | str,
    data_dir: Path | str,
    *,
    scores_cfg: dict,
    score_overrides: dict,
    batch_size: int = 512,
    ece_bins: int = 15,
) -> tuple[dict, dict]:
    """Evaluate a checkpoint on ID test and every OOD set (test and validation).

    :returns: ``(summary, samples)`` where ``summary`` holds run-level metrics (accuracy, ECE
        with/without temperature scaling fitted on the *validation* split, logit norms) and one
        record per (score, OOD set) with FPR95/AUROC/AUPR-In/AUPR-Out (ID positive), and
        ``samples`` maps set name -> per-sample MSP (float32) for the score-distribution figure.
    """
    from . import calibration, metrics, scores  # here: training jobs need not import scipy

    model, spec = load_checkpoint(ckpt_path)
    seed_everything(spec["seed"], int(spec["train_cfg"].get("threads", 1)))
    data: PreparedData = load_prepared(data_dir)
    family = spec["loss_cfg"]["loss"]
    std = data.std

    val_logits = predict_logits(model, data.x["val"], batch_size).double().numpy()
    test_feats, test_logits_t = _features_logits(model, data.x["test"], batch_size)
    test_logits = test_logits_t.double().numpy()
    y_val, y_test = data.y["val"].numpy(), data.y["test"].numpy()
    temperature = calibration.fit_temperature(val_logits, y_val)
    run = {
        "accuracy": metrics.accuracy(test_logits, y_test),
        "nll": calibration.nll(test_logits, y_test),
        "ece": calibration.ece_from_logits(test_logits, y_test, n_bins=ece_bins),
        "ece_ts": calibration.ece_from_logits(
            test_logits, y_test, n_bins=ece_bins, temperature=temperature
        ),
        "temperature": temperature,
        "logit_norm_id": metrics.mean_logit_norm(test_logits),
    }

    chosen = scores_for(family, scores_cfg, score_overrides)
    sets = [(n, "test", x) for n, x in data.ood.items()]
    sets += [(n, "val", x) for n, x in data.ood_val.items()]
    id_scores = {
        s: _score(s, p, model, data.x["test"], test_feats, test_logits_t, std, batch_size)
        for s, p in chosen.items()
    }
    samples = {"id": scores.msp(test_logits_t).numpy().astype(np.float32)}
    records = []
    for set_name, split, x in sets:
        feats, logits = _features_logits(model, x, batch_size)
        norm = metrics.mean_logit_norm(logits.double().numpy())
        if split == "test":
            samples[set_name] = scores.msp(logits).numpy().astype(np.float32)
        for s, p in chosen.items():
            ood_s = _score(s, p, model, x, feats, logits, std, batch_size)
            m = metrics.ood_metrics(id_scores[s], ood_s, positive="id")
            records.append(
                {
                    "score": s,
                    "ood_set": set_name,
                    "split": split,
                    "fpr95": m["fpr95"],
                    "auroc": m["auroc"],
                    "aupr_in": m["aupr_in"],
                    "aupr_out": m["aupr_out"],
                    "logit_norm_ood": norm,
                }
            )
    summary = {
        "run": {k: spec[k] for k in ("dataset", "arch", "loss", "seed", "best_epoch")},
        "loss_cfg": spec["loss_cfg"],
        "epochs": int(spec["train_cfg"]["epochs"]),
        "metrics": run,
        "ood": records,
        "scores": chosen,
    }
    return summary, samples
