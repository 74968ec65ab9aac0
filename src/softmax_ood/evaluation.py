"""Evaluating one trained run: ID test metrics (accuracy, NLL, ECE with and without temperature
scaling fitted on the validation split) and every supported OOD score on every OOD set.

Which scores apply to a model is decided by the score registry (:mod:`softmax_ood.scores`), not
by name checks here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from . import calibration, metrics, scores
from .data import PreparedData, load_prepared
from .experiment import Execution, load_checkpoint, resolve_device
from .softmax import log_softmax
from .train import deterministic_on_cuda, memory_format, seed_everything

__all__ = ["Evaluation", "evaluate_run", "scores_for"]


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


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate_run` measured on one checkpoint.

    ``summary``: run-level metrics (accuracy, NLL, ECE with/without temperature scaling fitted
    on the *validation* split, logit norms) and one record per (score, OOD set) with
    FPR95/AUROC/AUPR-In/AUPR-Out (ID positive). ``samples``: set name -> per-sample MSP
    (float64) on the ID test images (``"id"``) and every OOD *test* set, for the
    score-distribution figure. ``images`` (``None`` unless asked for): ``(score, set)`` ->
    per-image values (float64) of every score on the ID test images (set ``"id"``) and every
    OOD *test* set, the MSP as its float64 log-odds (:func:`softmax_ood.scores.msp_log_odds`:
    the value the metrics rank, which never rounds to 1.0, so every AUROC/FPR95 reproduces from
    the file), plus ``("msp_ts", "id")`` (the predicted class's probability after temperature
    scaling) and ``("correct", "id")`` (1.0 where the prediction is right): what a bootstrap
    over test images needs to recompute each FPR95 and the ECE after TS.
    """

    summary: dict
    samples: dict[str, np.ndarray]
    images: dict[tuple[str, str], np.ndarray] | None


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
) -> Evaluation:
    """Evaluate a checkpoint on ID test and every OOD set (test and validation).

    ``expected``/``expected_digest`` are checked against the checkpoint's recorded run identity
    and settings (:func:`softmax_ood.experiment.load_checkpoint`). ``data``: the dataset at
    ``data_dir`` already loaded (a job evaluating several seeds loads it once). ``device``: a
    device name or the execution settings (:class:`softmax_ood.experiment.Execution`): every
    image moves to the device once (channels-last when asked); evaluation runs in float32
    (bf16 autocast applies to training only). ``per_image``: also return every score's
    per-image values (:attr:`Evaluation.images`).
    """
    ex = Execution.parse(device)
    dev = resolve_device(ex.device)
    model, spec = _placed_model(ckpt_path, dev, ex.channels_last, expected, expected_digest)
    seed_everything(spec["seed"], int(spec["train_cfg"].get("threads", 1)))
    data = _placed_data(load_prepared(data_dir) if data is None else data, dev, ex.channels_last)
    run, test = _id_metrics(model, data, batch_size, ece_bins)

    chosen = scores_for(model, spec["loss_cfg"]["loss"], scores_cfg, score_overrides)
    built = {s: sc for s, (sc, _) in chosen.items()}
    kw = {"std": data.std, "batch_size": batch_size}
    id_scores = scores.apply_scores(
        built, model, data.x["test"], features=test.features, logits=test.logits, **kw
    )
    samples = {"id": scores.msp(test.logits).cpu().numpy()}
    images = _id_images(test, run["temperature"], id_scores) if per_image else None
    records = []
    for set_name, split, x in _ood_sets(data):
        feats, logits = scores.forward_batches(model, x, batch_size)
        norm = metrics.mean_logit_norm(logits.double().cpu().numpy())
        if split == "test":
            samples[set_name] = scores.msp(logits).cpu().numpy()
        ood_scores = scores.apply_scores(built, model, x, features=feats, logits=logits, **kw)
        if images is not None and split == "test":
            images[("msp", set_name)] = scores.msp_log_odds(logits).cpu().numpy()
            images.update({(s, set_name): v for s, v in ood_scores.items() if s != "msp"})
        records += [
            _ood_record(s, set_name, split, id_scores[s], ood_scores[s], norm) for s in built
        ]
    return Evaluation(_summary(spec, run, records, chosen, ex), samples, images)


def _placed_model(
    ckpt_path: Path | str,
    dev: torch.device,
    channels_last: bool,
    expected: dict | None,
    expected_digest: str | None,
) -> tuple[nn.Module, dict]:
    """The checkpoint's model (verified against ``expected``/``expected_digest``) on ``dev``,
    channels-last when asked, and its recorded spec."""
    model, spec = load_checkpoint(ckpt_path, expected=expected, expected_digest=expected_digest)
    model = model.to(dev)
    if dev.type == "cuda":  # input-gradient scores differentiate through the pooling
        model = deterministic_on_cuda(model)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    return model, spec


def _placed_data(loaded: PreparedData, dev: torch.device, channels_last: bool) -> PreparedData:
    """``loaded`` with every image on ``dev`` (channels-last when asked); the labels stay."""

    def place(images: dict) -> dict:
        return {k: memory_format(v.to(dev), channels_last) for k, v in images.items()}

    return PreparedData(
        meta=loaded.meta,
        x=place(loaded.x),
        y=loaded.y,
        ood=place(loaded.ood),
        ood_val=place(loaded.ood_val),
    )


class _TestPass(NamedTuple):
    """The forward pass over the ID test images: penultimate features and logits (on the
    device, float32), the logits in float64 on the host, and the labels."""

    features: Tensor
    logits: Tensor
    logits64: np.ndarray
    labels: np.ndarray


def _id_metrics(
    model: nn.Module, data: PreparedData, batch_size: int, ece_bins: int
) -> tuple[dict, _TestPass]:
    """The run-level metrics on the ID test images (accuracy, NLL, ECE before and after
    temperature scaling, the temperature fitted on the *validation* split, the mean logit
    norm) and the test pass they came from (the scores reuse it)."""
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
    return run, _TestPass(test_feats, test_logits_t, test_logits, y_test)


def _id_images(test: _TestPass, temperature: float, id_scores: dict) -> dict:
    """The per-image values on the ID test images (:attr:`Evaluation.images`, set ``"id"``):
    the MSP after temperature scaling, whether each prediction is right, the MSP's log-odds
    and every other score."""
    probs_ts = np.exp(log_softmax(test.logits64 / temperature, dim=1, precise=True))
    predicted = np.argmax(probs_ts, axis=1)
    images = {
        ("msp_ts", "id"): probs_ts[np.arange(len(test.labels)), predicted],
        ("correct", "id"): (predicted == test.labels).astype(np.float64),
        ("msp", "id"): scores.msp_log_odds(test.logits).cpu().numpy(),
    }
    images.update({(s, "id"): v for s, v in id_scores.items() if s != "msp"})
    return images


def _ood_sets(data: PreparedData) -> list[tuple[str, str, Tensor]]:
    """``(name, split, images)`` of every OOD set: the test sets, then the validation sets."""
    sets = [(n, "test", x) for n, x in data.ood.items()]
    return sets + [(n, "val", x) for n, x in data.ood_val.items()]


def _ood_record(
    score: str,
    set_name: str,
    split: str,
    id_values: np.ndarray,
    ood_values: np.ndarray,
    logit_norm: float,
) -> dict:
    """One summary record: a score's FPR95, AUROC, AUPR-In and AUPR-Out on one OOD set (ID
    positive) and the set's mean logit norm."""
    m = metrics.ood_metrics(id_values, ood_values, positive="id")
    return {
        "score": score,
        "ood_set": set_name,
        "split": split,
        "fpr95": m["fpr95"],
        "auroc": m["auroc"],
        "aupr_in": m["aupr_in"],
        "aupr_out": m["aupr_out"],
        "logit_norm_ood": logit_norm,
    }


def _summary(spec: dict, run: dict, records: list[dict], chosen: dict, ex: Execution) -> dict:
    """:attr:`Evaluation.summary`: the run's identity and settings from its checkpoint spec, the
    run-level metrics, the OOD records, each score's parameters and the execution settings
    when they are not the CPU defaults."""
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
    return summary
