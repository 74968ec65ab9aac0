"""Evaluating one trained run: ID test metrics (accuracy, NLL, ECE with and without temperature
scaling fitted on the validation split) and every supported OOD score on every OOD set.

Which scores apply to a model is decided by the score registry (:mod:`softmax_ood.scores`), not
by name checks here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import calibration, metrics, scores
from .data import PreparedData, load_prepared
from .experiment import Execution, load_checkpoint, resolve_device
from .softmax import log_softmax
from .train import deterministic_on_cuda, memory_format, seed_everything

__all__ = ["evaluate_run", "scores_for"]


def scores_for(model: nn.Module, loss_family: str, scores_cfg: dict, overrides: dict) -> dict:
    """Every configured score the model supports, built with its parameters.

    Which scores apply is the registry's decision (:meth:`softmax_ood.scores.Score.supports`:
    GradNorm needs a linear last layer, GODIN's score a GODIN head). Per-loss-family overrides
    (e.g. Energy T = 0.1 for LogitNorm, as in Wei et al.) come from the config.
    """
    out = {}
    for name, params in scores_cfg.items():
        merged = {**(params or {}), **overrides.get(loss_family, {}).get(name, {})}
        score = scores.build_score(name, merged)
        if score.supports(model):
            out[name] = (score, merged)
    return out


def evaluate_run(
    ckpt_path: Path | str,
    data_dir: Path | str,
    *,
    scores_cfg: dict,
    score_overrides: dict,
    batch_size: int = 512,
    ece_bins: int = 15,
    device: str | dict | Execution = "cpu",
    expected: dict | None = None,
    expected_digest: str | None = None,
    data: PreparedData | None = None,
    per_image: bool = False,
) -> tuple[dict, dict]:
    """Evaluate a checkpoint on ID test and every OOD set (test and validation).

    ``expected``/``expected_digest`` are checked against the checkpoint's recorded run identity
    and settings (:func:`softmax_ood.experiment.load_checkpoint`). ``data``: the dataset at
    ``data_dir`` already loaded (a job evaluating several seeds loads it once). ``device``: a
    device name or the execution settings (:class:`softmax_ood.experiment.Execution`): every
    image moves to the device once (channels-last when asked); evaluation runs in float32
    (bf16 autocast applies to training only).

    :returns: ``(summary, samples)`` where ``summary`` holds run-level metrics (accuracy, ECE
        with/without temperature scaling fitted on the *validation* split, logit norms) and one
        record per (score, OOD set) with FPR95/AUROC/AUPR-In/AUPR-Out (ID positive), and
        ``samples`` maps set name -> per-sample MSP (float64) for the score-distribution figure.
        With ``per_image=True`` ``samples`` maps ``(score, set)`` -> per-image values (float64)
        of every score on the ID test images (set ``"id"``) and every OOD *test* set, the MSP
        as its float64 log-odds (:func:`softmax_ood.scores.msp_log_odds`: the value the metrics
        rank, which never rounds to 1.0, so every AUROC/FPR95 reproduces from the file), plus
        ``("msp_ts", "id")`` (the predicted class's probability after temperature scaling) and
        ``("correct", "id")`` (1.0 where the prediction is right): what a bootstrap over test
        images needs to recompute each FPR95 and the ECE after TS.
    """
    ex = Execution.parse(device)
    dev = resolve_device(ex.device)
    model, spec = load_checkpoint(ckpt_path, expected=expected, expected_digest=expected_digest)
    model = model.to(dev)
    if dev.type == "cuda":  # input-gradient scores differentiate through the pooling
        model = deterministic_on_cuda(model)
    if ex.channels_last:
        model = model.to(memory_format=torch.channels_last)
    seed_everything(spec["seed"], int(spec["train_cfg"].get("threads", 1)))
    loaded = load_prepared(data_dir) if data is None else data

    def place(images: dict) -> dict:
        return {k: memory_format(v.to(dev), ex.channels_last) for k, v in images.items()}

    data = PreparedData(
        meta=loaded.meta,
        x=place(loaded.x),
        y=loaded.y,
        ood=place(loaded.ood),
        ood_val=place(loaded.ood_val),
    )
    family = spec["loss_cfg"]["loss"]
    std = data.std

    _, val_logits_t = scores.forward_batches(model, data.x["val"], batch_size)
    val_logits = val_logits_t.double().cpu().numpy()
    test_feats, test_logits_t = scores.forward_batches(model, data.x["test"], batch_size)
    test_logits = test_logits_t.double().cpu().numpy()
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

    chosen = scores_for(model, family, scores_cfg, score_overrides)
    sets = [(n, "test", x) for n, x in data.ood.items()]
    sets += [(n, "val", x) for n, x in data.ood_val.items()]
    built = {s: sc for s, (sc, _) in chosen.items()}
    kw = {"std": std, "batch_size": batch_size}
    id_scores = scores.apply_scores(
        built, model, data.x["test"], features=test_feats, logits=test_logits_t, **kw
    )
    samples = {"id": scores.msp(test_logits_t).cpu().numpy()}
    images: dict = {}
    if per_image:
        probs_ts = np.exp(log_softmax(test_logits / temperature, dim=1, precise=True))
        images[("msp_ts", "id")] = probs_ts[np.arange(len(y_test)), np.argmax(probs_ts, axis=1)]
        images[("correct", "id")] = (np.argmax(probs_ts, axis=1) == y_test).astype(np.float64)
        images[("msp", "id")] = scores.msp_log_odds(test_logits_t).cpu().numpy()
        images.update({(s, "id"): v for s, v in id_scores.items() if s != "msp"})
    records = []
    for set_name, split, x in sets:
        feats, logits = scores.forward_batches(model, x, batch_size)
        norm = metrics.mean_logit_norm(logits.double().cpu().numpy())
        if split == "test":
            samples[set_name] = scores.msp(logits).cpu().numpy()
        ood_scores = scores.apply_scores(built, model, x, features=feats, logits=logits, **kw)
        if per_image and split == "test":
            images[("msp", set_name)] = scores.msp_log_odds(logits).cpu().numpy()
            images.update({(s, set_name): v for s, v in ood_scores.items() if s != "msp"})
        for s in built:
            m = metrics.ood_metrics(id_scores[s], ood_scores[s], positive="id")
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
        "run": {k: spec[k] for k in ("dataset", "recipe", "arch", "loss", "seed", "best_epoch")},
        "loss_cfg": spec["loss_cfg"],
        "epochs": int(spec["train_cfg"]["epochs"]),
        "metrics": run,
        "ood": records,
        "scores": {s: p for s, (_, p) in chosen.items()},
    }
    if not ex.is_default():  # the CPU defaults add nothing (summaries keep their bytes)
        summary["execution"] = ex.record()
    return summary, (images if per_image else samples)
