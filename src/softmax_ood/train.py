"""Deterministic CPU/GPU training loop with per-epoch logit-norm monitoring.

The loop keeps the whole (small) dataset in memory as tensors and draws mini-batches by
indexing with a seeded permutation: no DataLoader workers, no hidden RNG. Per epoch it logs
loss, accuracy, the mean logit L2 norm on the ID validation split and on an OOD monitor set
(Wei et al. 2022, Fig. 1) and an ETA, and it stops with :class:`NonFiniteLossError` naming
model, epoch and batch the moment the loss is not finite.

Checkpoint choice uses the *validation* split only (``checkpoint: best_val_acc``, or
``best_val_loss``: the epoch of the lowest validation loss, the loss itself for heads with their
own output layout such as reward or regression heads, cross-entropy otherwise) or the last epoch
(``checkpoint: last``); test data never reaches this module.
"""

from __future__ import annotations

import copy
import logging
import math
import random
import time
from dataclasses import dataclass, field, fields

import numpy as np
import torch
from torch import Tensor, nn

from .errors import UserError

__all__ = [
    "DivergedError",
    "NonFiniteLossError",
    "TrainConfig",
    "build_optimizer",
    "deterministic_on_cuda",
    "fit",
    "memory_format",
    "predict_logits",
    "seed_everything",
    "write_curve",
]

log = logging.getLogger(__name__)


OPTIMIZERS = ("sgd", "adam")
SCHEDULES = ("constant", "cosine", "multistep")
CHECKPOINTS = ("last", "best_val_acc", "best_val_loss")
AUGMENTS = ("none", "crop_flip")


class NonFiniteLossError(UserError, FloatingPointError):
    """The training loss became NaN or infinite."""


class DivergedError(UserError, FloatingPointError):
    """Training diverged without a NaN: logits or loss beyond the recipe's bounds, or chance
    accuracy at the end (the recipe's ``max_logit_norm`` / ``max_loss`` / ``chance_margin``)."""


def train_subset(n: int, size: int | None) -> np.ndarray | None:
    """Indices of the training images a recipe with ``train_size`` trains on: the first
    ``size`` of a fixed permutation (``numpy.random.default_rng(0)``, independent of the run's
    seed, so every seed and loss sees the same images), sorted; ``None`` = all ``n`` images."""
    if size is None or int(size) >= n:
        return None
    return np.sort(np.random.default_rng(0).permutation(n)[: int(size)])


@dataclass(frozen=True)
class TrainConfig:
    """Optimiser and loop settings. Every value comes from the config file (no hidden defaults
    for anything that changes a result except the loop's bookkeeping fields)."""

    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    weight_decay: float
    momentum: float = 0.0
    nesterov: bool = False
    schedule: str = "constant"
    milestones: tuple[int, ...] = field(default_factory=tuple)
    gamma: float = 0.1
    checkpoint: str = "last"
    augment: str = "none"
    monitor_size: int = 128
    monitor_set: str | None = None
    threads: int = 1
    max_logit_norm: float | None = None
    max_loss: float | None = None
    chance_margin: float | None = None
    # a declared departure where a budget needs it: train on ``train_size`` images of the
    # training split (:func:`train_subset`: the same images for every seed and loss); None = all of them
    train_size: int | None = None
    # clip the global gradient norm to this before each step (None = off, the papers' loops)
    grad_clip: float | None = None
    # linear learning-rate warm-up over the first this many optimiser steps (None = off, the
    # papers' loops)
    warmup_steps: int | None = None

    def __post_init__(self):
        for name, value, allowed in (
            ("optimizer", self.optimizer, OPTIMIZERS),
            ("schedule", self.schedule, SCHEDULES),
            ("checkpoint", self.checkpoint, CHECKPOINTS),
            ("augment", self.augment, AUGMENTS),
        ):
            if value not in allowed:
                raise ValueError(f"train.{name} is {value!r}; expected one of {list(allowed)}")
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0:
            raise ValueError(
                f"train.epochs ({self.epochs}), train.batch_size ({self.batch_size}) and "
                f"train.lr ({self.lr}) must be positive"
            )
        if self.train_size is not None and self.train_size < 2:
            raise ValueError(f"train.train_size is {self.train_size}; expected at least 2 or null")
        if self.warmup_steps is not None and self.warmup_steps < 1:
            raise ValueError(
                f"train.warmup_steps is {self.warmup_steps}; expected at least 1 or null"
            )
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(
                f"train.grad_clip is {self.grad_clip}; expected a positive number or null"
            )

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        bad = sorted(set(d) - known)
        if bad:
            raise ValueError(f"unknown train setting(s) {bad}; expected keys among {sorted(known)}")
        d = dict(d)
        if "milestones" in d:
            d["milestones"] = tuple(int(m) for m in d["milestones"])
        return cls(**d)


def _deterministic_algorithms() -> None:
    """``torch.use_deterministic_algorithms(True)`` for eager mode.

    The public call also sets torch.compile's inductor config, which imports ``torch._inductor``
    and ``torch._dynamo`` (2-3 s per job on this machine's torch 2.14 build). Nothing here is
    compiled, so set the eager-mode flag directly and keep the public call as the fallback.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # pragma: no cover - other torch versions
        torch.use_deterministic_algorithms(True)
    else:
        setter(True, warn_only=False)


def seed_everything(seed: int, threads: int = 1) -> None:
    """Seed python, numpy and torch; force deterministic torch kernels and a fixed thread count."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    _deterministic_algorithms()
    torch.set_num_threads(threads)
    if torch.backends.cudnn.is_available():
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True


def build_optimizer(model: nn.Module, cfg: TrainConfig, steps_per_epoch: int):
    """The optimiser and a per-step learning-rate schedule named in the config."""
    if cfg.optimizer == "sgd":
        opt = torch.optim.SGD(
            model.parameters(),
            lr=cfg.lr,
            momentum=cfg.momentum,
            nesterov=cfg.nesterov,
            weight_decay=cfg.weight_decay,
        )
    else:
        # fused: ATen's own vectorised Adam step (pinned with the rest of ATen); the default
        # per-tensor step takes its square root from MKL's vector maths (vsSqrt), whose result
        # depends on MKL's code path: under MKL_CBWR=COMPATIBLE on an Intel CPU it is not
        # correctly rounded, so Adam-trained weights differed between CPUs (numerics.py)
        opt = torch.optim.Adam(
            model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True
        )
    total = cfg.epochs * steps_per_epoch
    if cfg.schedule == "cosine":

        def factor(step: int) -> float:
            return 0.5 * (1 + math.cos(math.pi * step / total))
    elif cfg.schedule == "multistep":
        bounds = [m * steps_per_epoch for m in cfg.milestones]

        def factor(step: int) -> float:
            return cfg.gamma ** sum(step >= b for b in bounds)
    else:

        def factor(step: int) -> float:
            return 1.0

    if cfg.warmup_steps:
        base, warm = factor, int(cfg.warmup_steps)

        def factor(step: int) -> float:
            return base(step) * min(1.0, (step + 1) / warm)

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


class GlobalMean(nn.Module):
    """``AdaptiveAvgPool2d(1)`` as a mean over height and width: the same values, and a
    backward pass CUDA runs deterministically (``adaptive_avg_pool2d_backward_cuda`` has no
    deterministic implementation: under ``torch.use_deterministic_algorithms(True)`` it
    raises on the first backward)."""

    def forward(self, x: Tensor) -> Tensor:
        return x.mean(dim=(2, 3), keepdim=True)


def deterministic_on_cuda(model: nn.Module) -> nn.Module:
    """Swap every global ``AdaptiveAvgPool2d`` (output size 1) of ``model`` for
    :class:`GlobalMean`, in place. Called for CUDA only (on the CPU the pooling kernel stays,
    so CPU results keep their bytes); no parameter or buffer changes, so checkpoints load
    either way."""
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            size = getattr(child, "output_size", None)
            if isinstance(child, nn.AdaptiveAvgPool2d) and size in (1, (1, 1), [1, 1]):
                setattr(module, name, GlobalMean())
    return model


def memory_format(x: Tensor, channels_last: bool) -> Tensor:
    """``x`` in channels-last layout when asked and it is an image batch (N, C, H, W)."""
    if channels_last and x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    return x


def _autocast(device: torch.device, bf16: bool):
    """bf16 autocast on ``device`` when asked (CUDA, and the CPU where torch supports it)."""
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16)


@torch.no_grad()
def predict_logits(
    model: nn.Module,
    x: Tensor,
    batch_size: int = 1024,
    *,
    bf16: bool = False,
    channels_last: bool = False,
) -> Tensor:
    """Logits of ``model`` on ``x`` in eval mode, batched (the one batched forward,
    :func:`softmax_ood.scores.forward_batches`); restores the training flags. With ``bf16``
    the forward pass runs under bf16 autocast; the logits are float32 either way."""
    from .scores import forward_batches

    _, logits = forward_batches(model, x, batch_size, bf16=bf16, channels_last=channels_last)
    return logits.float()


def _crop_flip(x: Tensor, gen: torch.Generator, pad: int = 4) -> Tensor:
    """Random crop with zero padding ``pad`` and horizontal flip, batched and seeded.

    The random draws come from the CPU generator ``gen`` (the same draws on every device) and
    move to ``x``'s device; the crop itself runs there."""
    n, c, h, w = x.shape
    dev = x.device
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (n,), generator=gen, device="cpu").to(dev)
    dx = torch.randint(0, 2 * pad + 1, (n,), generator=gen, device="cpu").to(dev)
    rows = (dy[:, None] + torch.arange(h, device=dev)[None]).view(n, 1, h, 1)
    cols = (dx[:, None] + torch.arange(w, device=dev)[None]).view(n, 1, 1, w)
    out = padded[
        torch.arange(n, device=dev).view(n, 1, 1, 1),
        torch.arange(c, device=dev).view(1, c, 1, 1),
        rows,
        cols,
    ]
    flip = (torch.rand(n, generator=gen, device="cpu") < 0.5).to(dev)
    return torch.where(flip.view(n, 1, 1, 1), out.flip(-1), out)


def fit(
    model: nn.Module,
    loss_fn: nn.Module,
    train_x: Tensor,
    train_y: Tensor,
    val_x: Tensor,
    val_y: Tensor,
    *,
    cfg: TrainConfig,
    seed: int,
    monitor_ood: Tensor | None = None,
    name: str = "model",
    recipe: str | None = None,
    bf16: bool = False,
    channels_last: bool = False,
) -> tuple[nn.Module, list[dict], dict]:
    """Train ``model`` with ``loss_fn`` and return ``(model, curve, info)``.

    Runs on the device the tensors and the model are on (the data stay there: batches are
    drawn by indexing, no host-device copies per step). ``bf16``: forward passes under bf16
    autocast (the loss, the optimiser and the weights stay float32); ``channels_last``: model
    and batches in channels-last layout. Both are off by default and change the result bytes.

    :param monitor_ood: OOD images whose mean logit norm is logged every epoch (the first
        ``cfg.monitor_size`` are used).
    :param name: how the model is named in log lines and errors (e.g. ``wrn-10-1/ce/seed0``).
    :returns: the model at the chosen checkpoint, one dict per epoch (deterministic values
        only, no timings), and ``{"best_epoch": ..., "checkpoint": ...}``.
    :raises NonFiniteLossError: when the loss is NaN/inf, naming model, epoch and batch.
    """
    seed_everything(seed, cfg.threads)
    gen = torch.Generator().manual_seed(seed)  # CPU: the same draws on every device
    if train_x.device.type == "cuda":
        model = deterministic_on_cuda(model)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    train_x, train_y = _training_images(train_x, train_y, cfg.train_size, name)
    steps = _steps_per_epoch(len(train_x), cfg.batch_size)
    seen = min(len(train_x), steps * cfg.batch_size)
    opt, sched = build_optimizer(model, cfg, steps)
    loop = _Loop(model, loss_fn, opt, sched, gen, cfg, name, recipe, bf16, channels_last)
    mon = monitor_ood[: cfg.monitor_size] if monitor_ood is not None else val_x[:0]
    evaluation_x = torch.cat([val_x, mon])
    classes = int(torch.cat([train_y, val_y]).max()) + 1
    curve: list[dict] = []
    kept = _KeptEpoch()
    start = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        train_row, lr = loop.train_epoch(train_x, train_y, steps, seen, epoch)
        val_logits, val_row = loop.validate(evaluation_x, val_y, len(val_x))
        row = {"epoch": epoch, **train_row, **val_row, "lr": lr}
        curve.append(row)
        _guard(cfg, row, name, recipe)
        kept.offer(cfg.checkpoint, row, model)
        _log_epoch(name, cfg, row, start)
    best_epoch, final_acc = kept.restore(model, cfg, curve)
    # chance level is defined for heads with a score per class (not a regression head)
    if int(val_logits.shape[1]) >= classes:
        _check_chance(cfg, final_acc, classes, name, recipe)
    if channels_last:  # checkpoints in the standard layout
        model = model.to(memory_format=torch.contiguous_format)
    model.eval()
    return model, curve, {"best_epoch": best_epoch, "checkpoint": cfg.checkpoint}


def _training_images(
    train_x: Tensor, train_y: Tensor, train_size: int | None, name: str
) -> tuple[Tensor, Tensor]:
    """The recipe's declared training subset (:func:`train_subset`: the same images for every
    seed), or every image when it declares none or the data already are that subset."""
    if train_size is None:
        return train_x, train_y
    if train_size > len(train_x):
        raise UserError(
            f"training {name}: train_size {train_size} exceeds the {len(train_x)} "
            "training images; lower it or set it to null"
        )
    keep = train_subset(len(train_x), train_size)
    if keep is None:
        return train_x, train_y
    return train_x[torch.from_numpy(keep)], train_y[torch.from_numpy(keep)]


def _steps_per_epoch(n: int, batch_size: int) -> int:
    """Optimiser steps per epoch over ``n`` images in batches of ``batch_size``."""
    steps = math.ceil(n / batch_size)
    if n % batch_size == 1 and steps > 1:
        steps -= 1  # a last batch of one sample breaks batch norm in training mode: drop it
    return steps


@dataclass(frozen=True)
class _Loop:
    """What every epoch of :func:`fit` uses: the model and its loss, the optimiser and its
    schedule, the generator of the batch draws and the loop's settings."""

    model: nn.Module
    loss_fn: nn.Module
    opt: torch.optim.Optimizer
    sched: torch.optim.lr_scheduler.LambdaLR
    gen: torch.Generator
    cfg: TrainConfig
    name: str
    recipe: str | None
    bf16: bool
    channels_last: bool

    def predict(self, out: Tensor) -> Tensor:
        """The predicted labels: a loss with its own output layout (reward or regression
        heads) says what its prediction is; class-logit losses use argmax."""
        if hasattr(self.loss_fn, "num_outputs"):
            return self.loss_fn.predict(out)
        return out.argmax(1)

    def train_epoch(
        self, train_x: Tensor, train_y: Tensor, steps: int, seen: int, epoch: int
    ) -> tuple[dict, float]:
        """One pass over a seeded permutation of the training images: the mean training loss
        and accuracy over the ``seen`` images, and the learning rate at the epoch's start."""
        cfg, dev = self.cfg, train_x.device
        self.model.train()
        perm = torch.randperm(len(train_x), generator=self.gen, device="cpu").to(dev)
        loss_sum = torch.zeros((), dtype=torch.float64, device=dev)
        correct = torch.zeros((), dtype=torch.int64, device=dev)
        lr = self.opt.param_groups[0]["lr"]
        for b in range(steps):
            idx = perm[b * cfg.batch_size : (b + 1) * cfg.batch_size]
            xb, yb = train_x[idx], train_y[idx]
            if cfg.augment == "crop_flip":
                xb = _crop_flip(xb, self.gen)
            with _autocast(dev, self.bf16):
                logits = self.model(memory_format(xb, self.channels_last))
            logits = logits.float()  # a no-op without autocast
            loss = self.loss_fn(logits, yb)
            if not torch.isfinite(loss):
                raise NonFiniteLossError(
                    f"training {self.name} stopped: the loss became {loss.item()} at epoch "
                    f"{epoch}, batch {b + 1} of {steps} ({_advice(self.recipe)})"
                )
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip is not None:
                nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
            self.opt.step()
            self.sched.step()
            loss_sum += loss.detach().double() * len(idx)
            correct += (self.predict(logits.detach()) == yb).sum()
        return {"train_loss": loss_sum.item() / seen, "train_acc": correct.item() / seen}, lr

    def validate(self, evaluation_x: Tensor, val_y: Tensor, n_val: int) -> tuple[Tensor, dict]:
        """The validation logits (the first ``n_val`` of ``evaluation_x``; the rest are the OOD
        monitor images) and the epoch's validation loss, accuracy and mean logit norms. The
        validation loss is the loss itself for heads with their own output layout, else
        cross-entropy."""
        # eval in training-sized chunks: faster on CPU than one large batch
        out = predict_logits(
            self.model,
            evaluation_x,
            self.cfg.batch_size,
            bf16=self.bf16,
            channels_last=self.channels_last,
        )
        val_logits, mon_logits = out[:n_val], out[n_val:]
        val_acc = (self.predict(val_logits) == val_y).double().mean().item()
        with torch.no_grad():
            val_loss = (
                self.loss_fn(val_logits, val_y)
                if hasattr(self.loss_fn, "num_outputs")
                else nn.functional.cross_entropy(val_logits, val_y)
            )
        norm_ood = mon_logits.norm(dim=1).mean().item() if len(mon_logits) else float("nan")
        return val_logits, {
            "val_loss": val_loss.item(),
            "val_acc": val_acc,
            "logit_norm_id": val_logits.norm(dim=1).mean().item(),
            "logit_norm_ood": norm_ood,
        }


@dataclass
class _KeptEpoch:
    """The epoch a ``best_val_acc`` / ``best_val_loss`` recipe keeps so far, and its weights."""

    acc: float = -1.0
    loss: float = math.inf
    epoch: int = 0
    state: dict | None = None

    def offer(self, checkpoint: str, row: dict, model: nn.Module) -> None:
        """Keep the epoch of ``row`` when it beats the kept one by the recipe's ``checkpoint``."""
        if checkpoint == "best_val_acc" and row["val_acc"] > self.acc:
            self.acc, self.epoch = row["val_acc"], row["epoch"]
            self.state = copy.deepcopy(model.state_dict())
        elif checkpoint == "best_val_loss" and row["val_loss"] < self.loss:
            self.loss, self.acc, self.epoch = row["val_loss"], row["val_acc"], row["epoch"]
            self.state = copy.deepcopy(model.state_dict())

    def restore(self, model: nn.Module, cfg: TrainConfig, curve: list[dict]) -> tuple[int, float]:
        """Load the kept weights into ``model`` (``checkpoint: last`` keeps the last epoch's):
        ``(kept epoch, its validation accuracy)``."""
        if cfg.checkpoint in ("best_val_acc", "best_val_loss") and self.state is not None:
            model.load_state_dict(self.state)
            return self.epoch, self.acc
        return cfg.epochs, curve[-1]["val_acc"]


def _log_epoch(name: str, cfg: TrainConfig, row: dict, start: float) -> None:
    """The epoch's log line: its curve values, the time since ``start`` and an ETA."""
    epoch = row["epoch"]
    elapsed = time.perf_counter() - start
    eta = elapsed / epoch * (cfg.epochs - epoch)
    log.info(
        "%s epoch %d/%d loss %.4f train_acc %.4f val_acc %.4f logit_norm id %.3f ood %.3f "
        "lr %.2e | %.2fs elapsed, ETA %.1fs",
        name,
        epoch,
        cfg.epochs,
        row["train_loss"],
        row["train_acc"],
        row["val_acc"],
        row["logit_norm_id"],
        row["logit_norm_ood"],
        row["lr"],
        elapsed,
        eta,
    )


def _check_chance(
    cfg: TrainConfig, final_acc: float, classes: int, name: str, recipe: str | None
) -> None:
    """Stop when the kept model's validation accuracy is not above chance (``1/classes``) plus
    the recipe's ``chance_margin`` (``None`` = off)."""
    if cfg.chance_margin is not None and final_acc <= 1.0 / classes + cfg.chance_margin:
        raise DivergedError(
            f"training {name} stopped: the kept model's validation accuracy {final_acc:.3f} is "
            f"not above chance (1/{classes}) plus the recipe's chance_margin "
            f"{cfg.chance_margin:g} ({_advice(recipe, longer=True)})"
        )


def _advice(recipe: str | None, longer: bool = False) -> str:
    """What to change, naming the config keys that exist (``recipes.<name>.lr``)."""
    key = f"recipes.{recipe or '<recipe>'}"
    return f"lower {key}.lr{', train longer' if longer else ''} or change {key}.optimizer"


def _guard(cfg: TrainConfig, row: dict, name: str, recipe: str | None = None) -> None:
    """Stop a training that diverged without a NaN (the recipe's bounds; ``None`` = off)."""
    epoch, norm, loss = row["epoch"], row["logit_norm_id"], row["train_loss"]
    if cfg.max_logit_norm is not None and not norm <= cfg.max_logit_norm:
        raise DivergedError(
            f"training {name} stopped: the mean validation logit norm reached {norm:.3g} at "
            f"epoch {epoch}, above the recipe's max_logit_norm {cfg.max_logit_norm:g} "
            f"({_advice(recipe)})"
        )
    if cfg.max_loss is not None and not loss <= cfg.max_loss:
        raise DivergedError(
            f"training {name} stopped: the mean training loss reached {loss:.3g} at epoch "
            f"{epoch}, above the recipe's max_loss {cfg.max_loss:g} ({_advice(recipe)})"
        )


def write_curve(path, curve: list[dict]) -> None:
    """Write the per-epoch rows as a tab-separated file (floats as ``repr``: exact, stable)."""
    from .provenance import write_bytes_atomic

    columns = list(curve[0])
    lines = ["\t".join(columns)]
    lines += ["\t".join(repr(row[c]) for c in columns) for row in curve]
    write_bytes_atomic(path, ("\n".join(lines) + "\n").encode())
