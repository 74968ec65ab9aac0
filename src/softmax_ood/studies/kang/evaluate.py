"""One trained model on the whole shift grid: loaded once, one batched forward pass over every
evaluation set, then per set the distance to the OCS, the mean prediction, accuracy and the
selective-classification policies (and, for a feed-forward chain, the Fig. 4 mechanism).

Everything is computed from the model's raw outputs in float64; the forward pass dominates the
cost (``workflow/bench/kang_bench.py`` measures the ratio to a bare forward pass).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ...experiment import build_run, load_checkpoint
from ...train import seed_everything
from .ocs import (
    mean_prediction,
    ocs_loss,
    optimal_constant_solution,
    per_sample_distance,
    predict,
)
from .selective import action_fractions, evaluate_policies, reward_policy

__all__ = ["REWARD_KEYS", "component_labels", "evaluate_grid", "forward", "grid_outputs"]

REWARD_KEYS = ("correct_reward", "wrong_reward", "abstain_reward")
ABSTAIN = "A"
#: columns of the ``policies`` frame (:func:`.selective.evaluate_policies` rows, per set)
POLICY_COLUMNS = [
    "eval_set",
    "shift",
    "level",
    "policy",
    "abstain_ratio",
    "mean_reward",
    "accuracy_answered",
    "n",
    "temperature",
]
#: columns of the ``mechanism`` frame (empty without the Fig. 4 analysis)
MECHANISM_COLUMNS = ["kind", "eval_set", "level", "layer", "name", "mean", "std"]


def _split_entry(entry: dict) -> tuple[str, dict]:
    e = dict(entry)
    return e.pop("loss"), e


def component_labels(family: str, labels: list[int]) -> list[str]:
    """Names of the prediction components: the classes, then ``"A"`` (abstain) for the reward
    model; ``mean`` and ``std`` for the Gaussian NLL."""
    if family == "gaussian_nll":
        return ["mean", "std"]
    names = [str(c) for c in labels]
    return names + [ABSTAIN] if family == "reward_mse" else names


@torch.no_grad()
def forward(model: torch.nn.Module, x: torch.Tensor, batch_size: int) -> np.ndarray:
    """Raw outputs of ``model`` on ``x`` (already normalised), batched, float64 numpy."""
    outs = [model(x[i : i + batch_size]) for i in range(0, len(x), batch_size)]
    return torch.cat(outs).double().numpy() if outs else np.zeros((0, 0))


def normalise(x: np.ndarray, meta: dict) -> torch.Tensor:
    mean = torch.tensor(meta["mean"], dtype=torch.float32).view(1, -1, 1, 1)
    std = torch.tensor(meta["std"], dtype=torch.float32).view(1, -1, 1, 1)
    return (torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)) - mean) / std


def grid_outputs(model_path, x: np.ndarray, batch_size: int):
    """``(model, checkpoint spec, raw outputs on x)``: the model is loaded once."""
    model, ckpt = load_checkpoint(model_path)
    return model, ckpt, forward(model, normalise(x, ckpt["meta"]), batch_size)


@torch.no_grad()
def trained_images(ckpt: dict, data_dir) -> tuple[np.ndarray, np.ndarray]:
    """The training images and labels the checkpoint was trained on: the whole training split,
    or the recipe's ``train_size`` subset (:func:`softmax_ood.train.train_subset`)."""
    from ...train import train_subset

    data_dir = Path(data_dir)
    x = np.load(data_dir / "id_train_x.npy", allow_pickle=False)
    y = np.load(data_dir / "id_train_y.npy", allow_pickle=False).astype(np.int64)
    keep = train_subset(len(y), (ckpt.get("train_cfg") or {}).get("train_size"))
    return (x, y) if keep is None else (x[keep], y[keep])


def training_loss(model, ckpt: dict, data_dir, loss_entry: dict, batch_size: int) -> float:
    """The model's own loss on the images it was trained on (the training split or the recipe's
    ``train_size`` subset; eval mode: no dropout, batch-norm running statistics), averaged over
    samples."""
    from ...losses import build_loss

    family, params = _split_entry(loss_entry)
    fn = build_loss(family, params)
    x_raw, y_raw = trained_images(ckpt, data_dir)
    x = normalise(x_raw, ckpt["meta"])
    y = torch.from_numpy(y_raw)
    total = 0.0
    with torch.no_grad():  # a forward pass only (no graph kept)
        for i in range(0, len(x), batch_size):
            total += float(fn(model(x[i : i + batch_size]), y[i : i + batch_size])) * len(
                y[i : i + batch_size]
            )
    return total / len(y)


def _mechanism_frames(model, ckpt, x, index, x_train, mech, family, ocs, comps):
    from .features import accumulated_constants, energy_rank, norm_ratios, subspace_share

    meta = ckpt["meta"]
    xt = normalise(x_train, meta)
    sets = index[(index["shift"] == mech["shift"]) | index["is_id"]]
    rank = energy_rank(model, -1, float(mech["subspace_energy"]))
    rows = []
    for r in sets.itertuples(index=False):
        xe = normalise(x[r.start : r.stop], meta)
        nr = norm_ratios(model, xt, xe)
        for n in nr.itertuples(index=False):
            rows.append(
                {
                    "kind": "norm_ratio",
                    "eval_set": r.eval_set,
                    "level": r.level,
                    "layer": int(n.layer),
                    "name": n.name,
                    "mean": float(n.ratio_mean),
                    "std": float(n.ratio_std),
                }
            )
        share = subspace_share(model, xe, -1, rank)
        share = share[np.isfinite(share)]
        rows.append(
            {
                "kind": "subspace_share",
                "eval_set": r.eval_set,
                "level": r.level,
                "layer": -1,
                "name": f"rank {rank}",
                "mean": float(share.mean()) if len(share) else np.nan,
                "std": float(share.std(ddof=1)) if len(share) > 1 else 0.0,
            }
        )
    from .features import affine_layer_names

    layer = int(mech.get("constants_layer", -2))
    names = affine_layer_names(model)
    layer_name = names[layer]
    const = predict(family, accumulated_constants(model, layer, xt[:1])[None, :])[0]
    # the control: the same architecture at its initialisation (the run's seed), never trained
    init = initial_model(ckpt)
    const0 = predict(family, accumulated_constants(init, layer, xt[:1])[None, :])[0]
    crow = [
        {
            "kind": kind,
            "eval_set": layer_name,
            "level": np.nan,
            "layer": layer,
            "name": c,
            "mean": float(v),
            "std": 0.0,
        }
        for kind, values in (("constants", const), ("constants_init", const0))
        for c, v in zip(comps, values, strict=True)
    ]
    train_cfg = ckpt.get("train_cfg") or {}
    crow.append(
        {
            "kind": "lr_budget",
            "eval_set": str(train_cfg.get("optimizer", "")),
            "level": np.nan,
            "layer": -1,
            "name": "sum of the learning rate over the steps to the kept checkpoint",
            "mean": lr_budget(train_cfg, len(x_train), int(ckpt.get("best_epoch") or 0)),
            "std": 0.0,
        }
    )
    return pd.DataFrame(rows + crow)


def initial_model(ckpt: dict) -> torch.nn.Module:
    """The checkpoint's architecture at the initialisation its training started from: the run's
    seed set as :func:`softmax_ood.experiment.train_run` sets it, then the same builder."""
    with torch.random.fork_rng(devices=[]):  # the evaluation's own random state is left alone
        torch.manual_seed(int(ckpt["seed"]))
        model, _ = build_run(ckpt["arch_cfg"], ckpt["loss_cfg"], ckpt["meta"])
    return model.eval()


def lr_budget(train_cfg: dict, n_train: int, epochs: int) -> float:
    """Sum of the learning rate over the optimiser steps of the first ``epochs`` epochs (the
    recipe's own schedule, :func:`softmax_ood.train.build_optimizer`): an Adam step moves a
    parameter by at most ``claims.ADAM_STEP_BOUND`` learning rates (typically about one), so this
    times that bound is the farthest one bias can travel."""
    from ...train import TrainConfig, build_optimizer

    if not train_cfg or epochs <= 0:
        return float("nan")
    cfg = TrainConfig.from_dict(train_cfg)
    steps = math.ceil(n_train / cfg.batch_size)
    opt, sched = build_optimizer(torch.nn.Linear(1, 1), cfg, steps)
    total = 0.0
    for _ in range(epochs * steps):
        total += float(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return total


def _decision(family: str, k: int):
    """The model's decision per image: arg-max class (CE; reward model over its k class
    outputs, abstention ignored) or the Gaussian mean rounded to a label."""
    if family == "ce":
        return lambda o: o.argmax(1)
    if family == "reward_mse":
        return lambda o: o[:, :k].argmax(1)
    return lambda o: np.clip(np.rint(predict(family, o)[:, 0]), 0, k - 1)


def _check_figure_class(data_dir: Path, meta: dict, figure_class: int | None) -> None:
    """Check that ``figure_class`` (if set) is an ID label of the training split."""
    y_train = np.load(data_dir / "id_train_y.npy", allow_pickle=False).astype(np.int64)
    labels = sorted(int(c) for c in np.unique(y_train))
    if figure_class is not None and figure_class not in labels:
        raise ValueError(
            f"kang.figure_class is {figure_class}, which is not an ID label of "
            f"{meta.get('id_dataset')}; ID labels: {', '.join(map(str, labels))}"
        )


def _ocs_rows(kind: str, comps: list[str], values) -> list[dict]:
    """``components`` rows of the OCS itself (``eval_set`` and ``shift`` ``"OCS"``)."""
    return [
        {
            "eval_set": "OCS",
            "shift": "OCS",
            "level": np.nan,
            "kind": kind,
            "component": c,
            "value": float(v),
        }
        for c, v in zip(comps, values, strict=True)
    ]


def _set_row(keys: dict, r, o, yy, family: str, k: int, ocs, decide, clean_decision) -> dict:
    """The ``sets`` row of one evaluation set ``r`` (outputs ``o``, labels ``yy``): its mean
    distance to the OCS, accuracy (and MAE of the Gaussian mean) and the share of changed
    decisions."""
    dist = per_sample_distance(family, o, ocs)
    row = {
        **keys,
        "is_id": bool(r.is_id),
        "labelled": bool(r.labelled),
        "n": len(o),
        "distance": float(dist.mean()),
        "distance_sd": float(dist.std()),
        "accuracy": np.nan,
        "mae": np.nan,
        # share of the images whose decision (arg-max class; the Gaussian mean rounded to a
        # label) differs from the same clean image's: "the level changes the predictions"
        "changed": (
            float(np.mean(decide(o) != clean_decision))
            if r.labelled and len(o) == len(clean_decision)
            else np.nan
        ),
    }
    if r.labelled:
        if family == "ce":
            row["accuracy"] = float(np.mean(o.argmax(1) == yy))
        elif family == "reward_mse":
            row["accuracy"] = float(np.mean(o[:, :k].argmax(1) == yy))
        else:
            mu = predict(family, o)[:, 0]
            row["mae"] = float(np.mean(np.abs(mu - yy)))
            row["accuracy"] = float(np.mean(np.clip(np.rint(mu), 0, k - 1) == yy))
    return row


def _component_rows(keys: dict, sub, family: str, k: int, comps: list[str]) -> list[dict]:
    """``components`` rows of one evaluation set (outputs ``sub``, the figure class's images
    where it has labels): the mean prediction and, for the reward model, its action shares."""
    if not len(sub):
        return []
    rows = [
        {**keys, "kind": "mean_prediction", "component": c, "value": float(v)}
        for c, v in zip(comps, mean_prediction(family, sub), strict=True)
    ]
    if family == "reward_mse":
        frac = action_fractions(reward_policy(sub), k)
        rows += [
            {**keys, "kind": "action_fraction", "component": c, "value": float(v)}
            for c, v in zip(comps, frac, strict=True)
        ]
    return rows


def _grid_rows(out, y, index, clean_out, family, k, ocs, comps, rw, figure_class):
    """Rows of the ``sets``, ``components`` and ``policies`` frames: the OCS, then every
    evaluation set of the grid in index order (then the OCS policy's actions)."""
    set_rows, pol_rows = [], []
    decide = _decision(family, k)
    clean_decision = decide(clean_out)
    comp_rows = _ocs_rows("ocs", comps, ocs)
    for r in index.itertuples(index=False):
        o, yy = out[r.start : r.stop], y[r.start : r.stop]
        keys = {"eval_set": r.eval_set, "shift": r.shift, "level": float(r.level)}
        set_rows.append(_set_row(keys, r, o, yy, family, k, ocs, decide, clean_decision))
        sub = o[yy == figure_class] if r.labelled and figure_class is not None else o
        comp_rows += _component_rows(keys, sub, family, k, comps)
        if r.labelled and family in ("ce", "reward_mse"):
            kw = {"ce_logits": o} if family == "ce" else {"reward_outputs": o}
            for p in evaluate_policies(yy, **rw, **kw):
                pol_rows.append({**keys, "temperature": np.nan, **p})
    if family == "reward_mse":  # the OCS policy's actions (Fig. 5, right)
        frac = action_fractions(reward_policy(ocs[None, :]), k)
        comp_rows += _ocs_rows("action_fraction", comps, frac)
    return set_rows, comp_rows, pol_rows


def _clean_scale(family: str, clean_out, ocs) -> dict:
    """The scale of the Fig. 4 mirror claim: how far a clean test image's prediction lies from
    the OCS (per image, in prediction space; the MEAN clean prediction is no scale: it is close
    to the OCS by construction, the OCS being the average target)."""
    per = np.linalg.norm(predict(family, clean_out) - predict(family, ocs[None, :])[0], axis=1)
    return {
        "kind": "clean_scale",
        "eval_set": "id",
        "level": 0.0,
        "layer": -1,
        "name": "mean ||prediction - OCS||",
        "mean": float(per.mean()),
        "std": float(per.std(ddof=1)) if len(per) > 1 else 0.0,
    }


def evaluate_grid(
    model_path: str | Path,
    data_dir: str | Path,
    x: np.ndarray,
    y: np.ndarray,
    index: pd.DataFrame,
    *,
    loss_entry: dict,
    rewards: dict,
    figure_class: int | None,
    batch_size: int,
    mechanism: dict | None = None,
) -> dict[str, pd.DataFrame]:
    """Evaluate one checkpoint on the whole grid; returns frames ``sets``, ``components``,
    ``policies``, ``mechanism`` (empty unless ``mechanism`` is given) and ``fit`` (one row: the
    kept model's loss on the whole training split, in eval mode, beside the closed-form loss of
    its OCS: the "fitted" premise).

    :param loss_entry: the run's loss entry (``{"loss": family, **params}``).
    :param rewards: ``correct_reward``, ``wrong_reward``, ``abstain_reward`` of the selective
        task (the reward model's loss entry).
    :param figure_class: Figs. 2 and 5 average the predictions over the test images of this
        class (``None``: all of them).
    :param mechanism: ``{"shift", "subspace_energy"}`` to add the Fig. 4 analysis.
    """
    seed_everything(0, 1)
    data_dir = Path(data_dir)
    family, params = _split_entry(loss_entry)
    meta = json.loads((data_dir / "meta.json").read_text())
    k = int(meta["num_classes"])
    _check_figure_class(data_dir, meta, figure_class)
    ocs_params = {key: params[key] for key in REWARD_KEYS} if family == "reward_mse" else {}
    model, ckpt, out = grid_outputs(model_path, x, batch_size)
    y_train = trained_images(ckpt, data_dir)[1]  # the OCS of the labels the model trained on
    ocs = optimal_constant_solution(family, y_train, k, ocs_params)
    comps = component_labels(family, list(range(k)))
    rw = {key: float(rewards[key]) for key in REWARD_KEYS}
    id_row = index[index["is_id"]].iloc[0]
    clean_out = out[int(id_row["start"]) : int(id_row["stop"])]
    set_rows, comp_rows, pol_rows = _grid_rows(
        out, y, index, clean_out, family, k, ocs, comps, rw, figure_class
    )
    fit = pd.DataFrame(
        [
            {
                "train_loss": training_loss(model, ckpt, data_dir, loss_entry, batch_size),
                "ocs_loss": ocs_loss(family, y_train, k, ocs_params),
                "best_epoch": int(ckpt.get("best_epoch", 0)),
                "checkpoint": str(ckpt.get("checkpoint", "")),
            }
        ]
    )
    mech = pd.DataFrame(columns=MECHANISM_COLUMNS)
    if mechanism is not None:
        x_train, _ = trained_images(ckpt, data_dir)
        mech = _mechanism_frames(model, ckpt, x, index, x_train, mechanism, family, ocs, comps)
        scale = pd.DataFrame([_clean_scale(family, clean_out, ocs)])
        mech = pd.concat([mech, scale], ignore_index=True)
    return {
        "sets": pd.DataFrame(set_rows),
        "components": pd.DataFrame(comp_rows),
        "policies": pd.DataFrame(pol_rows, columns=POLICY_COLUMNS),
        "mechanism": mech,
        "fit": fit,
    }
