"""One training run and its evaluation: the glue the workflow scripts call.

A *run* is (dataset, recipe, architecture variant, loss variant, seed), see
:mod:`softmax_ood.runs`. Recipes, architecture and loss variants are named entries of the config
(``recipes:``, ``architectures:``, ``losses:``); this module turns those entries into a model and
a loss (the loss decides the head and the number of outputs), trains on the configured device
and saves a self-describing checkpoint. Evaluation is :mod:`softmax_ood.evaluation`.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from .data import PreparedData, load_prepared
from .errors import ArtifactError, UserError, rebuild_hint
from .losses import LOSSES, build_loss
from .models import create_model
from .provenance import git_info, path_sha256, versions, write_bytes_atomic
from .train import TrainConfig, fit, seed_everything

__all__ = [
    "CKPT_FORMAT",
    "CUBLAS_WORKSPACE",
    "Execution",
    "NoGPUError",
    "build_run",
    "resolve_device",
    "load_checkpoint",
    "save_checkpoint",
    "settings_digest",
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


# cuBLAS needs a fixed workspace for deterministic results under
# torch.use_deterministic_algorithms(True) (which otherwise raises on the first matmul); set
# before CUDA initialises, i.e. before the first CUDA tensor of the process.
CUBLAS_WORKSPACE = ":4096:8"


class NoGPUError(UserError, ValueError):
    """The config asks for CUDA on a machine where torch sees no GPU (one sentence: a job
    ends with it in its log, no traceback)."""


@dataclass(frozen=True)
class Execution:
    """Where and how a job trains and evaluates: config ``device`` and the ``compute`` section.

    ``bf16_autocast``: training's forward passes (and its per-epoch validation) under bf16
    autocast; evaluation stays float32. ``channels_last``: model and images in channels-last
    layout, in training and evaluation. Both default off, work on the CPU too, and change the
    result bytes; a checkpoint records them whenever they are not the CPU defaults."""

    device: str = "cpu"
    bf16_autocast: bool = False
    channels_last: bool = False

    @classmethod
    def parse(cls, value) -> Execution:
        """From a rule's ``device`` param: the device name alone (every option off) or the
        dict ``{"device": ..., "bf16_autocast": ..., "channels_last": ...}``."""
        if value is None or isinstance(value, str):
            return cls(device=value or "cpu")
        if isinstance(value, Execution):
            return value
        value = dict(value)
        unknown = sorted(set(value) - {"device", "bf16_autocast", "channels_last"})
        if unknown:
            raise ValueError(f"unknown execution setting(s) {unknown}")
        return cls(
            device=value.get("device") or "cpu",
            bf16_autocast=bool(value.get("bf16_autocast", False)),
            channels_last=bool(value.get("channels_last", False)),
        )

    def is_default(self) -> bool:
        return self == Execution()

    def record(self) -> dict:
        return asdict(self)


def resolve_device(name: str | None) -> torch.device:
    """``cpu``, or ``cuda`` when asked for and present; one sentence when it is absent. For
    ``cuda`` it also sets ``CUBLAS_WORKSPACE_CONFIG`` (deterministic cuBLAS) unless set."""
    name = name or "cpu"
    if name not in ("cpu", "cuda"):
        raise ValueError(f"device is {name!r}; allowed values: cpu, cuda")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise NoGPUError(
                "the config asks for device 'cuda' but torch sees no CUDA GPU on this machine "
                "(set device: cpu, or run the job on a GPU node)"
            )
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    return torch.device(name)


def build_run(arch_cfg: dict, loss_cfg: dict, meta: dict) -> tuple[nn.Module, nn.Module]:
    """Model and loss for one run; the loss decides the head (GODIN needs its own head) and the
    number of outputs (``num_outputs(num_classes)`` when the loss defines it, e.g. a reward
    model's extra abstain output)."""
    family, loss_params = _split_loss_cfg(loss_cfg)
    loss_fn = build_loss(family, loss_params)
    arch = dict(arch_cfg)
    arch_family = arch.pop("family")
    k = int(meta["num_classes"])
    outputs = loss_fn.num_outputs(k) if hasattr(loss_fn, "num_outputs") else k
    model = create_model(
        arch_family,
        num_classes=int(outputs),
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


def settings_digest(arch_cfg: dict, loss_cfg: dict, train_cfg: dict) -> str:
    """sha256 of the settings that define a training (architecture, loss and recipe entries),
    canonical JSON: recorded in each checkpoint and compared when it is loaded."""
    blob = json.dumps(
        {"arch": arch_cfg, "loss": loss_cfg, "train": train_cfg}, sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()


_IDENTITY = ("dataset", "recipe", "arch", "loss", "seed")


def load_checkpoint(
    path: Path | str, *, expected: dict | None = None, expected_digest: str | None = None
) -> tuple[nn.Module, dict]:
    """Rebuild the model saved by :func:`save_checkpoint`, in eval mode.

    Loads with ``weights_only=True`` only. With ``expected`` (``dataset, recipe, arch, loss,
    seed``, e.g. from the file's path) and ``expected_digest`` (:func:`settings_digest` of the
    config's entries), the checkpoint's recorded run identity and settings must match.

    :raises ArtifactError: unreadable file, foreign format, another run's checkpoint or other
        settings; one sentence naming the file, the rule that makes it and the rebuild command.
    """
    hint = rebuild_hint(path, "train")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file gets the same sentence
        reason = str(err).strip().splitlines()[0][:120] if str(err).strip() else ""
        raise ArtifactError(
            f"{path} is not a readable checkpoint ({type(err).__name__}"
            + (f": {reason}" if reason and "weights_only" not in reason else "")
            + f"); {hint}"
        ) from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CKPT_FORMAT:
        found = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise ArtifactError(
            f"{path} is not a checkpoint of format {CKPT_FORMAT} written by this pipeline "
            f"(found format {found!r}); {hint}"
        )
    spec = ckpt["spec"]
    if expected is not None:
        got = {k: spec.get(k) for k in _IDENTITY}
        want = {k: (int(expected[k]) if k == "seed" else expected[k]) for k in _IDENTITY}
        if got != want:
            show = "/".join(str(got[k]) for k in _IDENTITY[:-1]) + f"/seed{got['seed']}"
            named = "/".join(str(want[k]) for k in _IDENTITY[:-1]) + f"/seed{want['seed']}"
            raise ArtifactError(
                f"{path} holds the run {show}, not the run {named} its path names; {hint}"
            )
    if expected_digest is not None and spec.get("settings_sha256") != expected_digest:
        raise ArtifactError(
            f"{path} was trained with other architecture/loss/recipe settings than the "
            f"config's (settings digest {str(spec.get('settings_sha256'))[:12]} vs "
            f"{expected_digest[:12]}); {hint}"
        )
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
    recipe_name: str,
    train_cfg: dict,
    seed: int,
    device: str | dict | Execution = "cpu",
    data: PreparedData | None = None,
) -> tuple[nn.Module, list[dict], dict]:
    """Train one run; returns ``(model on the CPU, curve rows, checkpoint spec)``.

    ``device``: a device name or the execution settings (:class:`Execution`); the training
    data move to the device once and stay there. ``data``: the dataset at ``data_dir`` already
    loaded (a job training several seeds loads it once)."""
    cfg = TrainConfig.from_dict(train_cfg)
    ex = Execution.parse(device)
    dev = resolve_device(ex.device)
    seed_everything(seed, cfg.threads)
    data = load_prepared(data_dir) if data is None else data
    monitor = {**data.ood, **data.ood_val}
    monitor_set = cfg.monitor_set or sorted(monitor)[0]
    if monitor_set not in monitor:
        raise ValueError(
            f"monitor OOD set {monitor_set!r} is not in the prepared data; expected one of "
            f"{sorted(monitor)}"
        )
    model, loss_fn = build_run(arch_cfg, loss_cfg, data.meta)
    model = model.to(dev)
    name = f"{data.meta['id_dataset']}/{recipe_name}/{arch_name}/{loss_name}/seed{seed}"
    log.info(
        "training %s: %s params, loss %s",
        name,
        sum(p.numel() for p in model.parameters()),
        loss_cfg,
    )
    # fit() takes the recipe's declared training subset (train_size: the same images for every
    # seed), the one place that does
    x_train, y_train = data.x["train"], data.y["train"]
    model, curve, info = fit(
        model,
        loss_fn,
        x_train.to(dev),
        y_train.to(dev),
        data.x["val"].to(dev),
        data.y["val"].to(dev),
        cfg=cfg,
        seed=seed,
        monitor_ood=monitor[monitor_set].to(dev),
        name=name,
        recipe=recipe_name,
        bf16=ex.bf16_autocast,
        channels_last=ex.channels_last,
    )
    model = model.cpu()
    spec = {
        "dataset": data.meta["id_dataset"],
        "recipe": recipe_name,
        "arch": arch_name,
        "arch_cfg": dict(arch_cfg),
        "loss": loss_name,
        "loss_cfg": dict(loss_cfg),
        "seed": int(seed),
        "train_cfg": dict(train_cfg),
        "settings_sha256": settings_digest(dict(arch_cfg), dict(loss_cfg), dict(train_cfg)),
        "monitor_set": monitor_set,
        "meta": _meta_subset(data.meta),
        "data_sha256": path_sha256(data_dir),
        "git": git_info(),
        "versions": versions(),
        **info,
    }
    if not ex.is_default():  # the CPU defaults add nothing (checkpoints keep their bytes)
        spec["execution"] = ex.record()
    return model, curve, spec
