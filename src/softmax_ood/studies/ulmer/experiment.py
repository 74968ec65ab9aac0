"""One seed of the Ulmer & Cinà study on one dataset: train every model kind, measure held-out
accuracy, run the scaling experiment of Theorem 1 and (2-D data) the Fig. 1 grid.

This is the library call behind the study's per-seed rule; every setting comes from the study's
config section (``spec``), nothing here has a default that changes a result.

:see Paper: Ulmer & Cinà, "Know your limits", §3.2 (scaling a feature away from the data), §3.3
    (models and metrics), Theorem 1, Fig. 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from softmax_ood.studies.ulmer.data import (
    TabularSplit,
    breast_cancer,
    monotonicity_scores,
    most_monotonic_feature,
    synthetic_split,
)
from softmax_ood.studies.ulmer.models import ModelConfig, single_thread, train_model
from softmax_ood.studies.ulmer.scaling import grid_heatmap, log_alphas, scaling_experiment
from softmax_ood.train import TrainConfig

__all__ = ["DATASETS", "MODEL_LABELS", "load_dataset", "scaled_feature", "run_seed"]

DATASETS = ("synthetic", "breast_cancer")
MODEL_LABELS = {
    "single": "single network",
    "mc_dropout": "MC dropout",
    "bbb": "Bayes-by-backprop",
    "ensemble": "deep ensemble",
}
"""Display name of each model kind (the ``model`` column of every frame)."""


def load_dataset(name: str, ds: dict) -> TabularSplit:
    """The train/held-out split of dataset ``name`` from its config entry ``ds``."""
    if name == "synthetic":
        return synthetic_split(
            ds["n_train_per_class"],
            ds["n_test_per_class"],
            ds["n_classes"],
            ds["seed"],
            radius=ds["radius"],
            std=ds["std"],
        )
    if name == "breast_cancer":
        return breast_cancer(ds["seed"], ds["test_fraction"])
    raise ValueError(f"unknown Ulmer dataset {name!r}; expected one of {', '.join(DATASETS)}")


def scaled_feature(split: TabularSplit, feature) -> tuple[int, str]:
    """The feature the scaling experiment scales: an index, a feature name, or
    ``"most_monotonic"`` (largest |Spearman rho| with the label on the training rows)."""
    names = list(split.feature_names)
    if feature == "most_monotonic":
        return most_monotonic_feature(split.x_train, split.y_train, names)
    if isinstance(feature, str):
        if feature not in names:
            raise ValueError(f"feature {feature!r} is not a feature of the data; one of {names}")
        return names.index(feature), feature
    index = int(feature)
    if not 0 <= index < len(names):
        raise ValueError(f"feature index {index} is out of range 0..{len(names) - 1}")
    return index, names[index]


def run_seed(name: str, spec: dict, seed: int, *, grid: bool) -> dict[str, pd.DataFrame]:
    """Train every configured kind with ``seed`` on dataset ``name`` and evaluate it.

    :param name: ``"synthetic"`` or ``"breast_cancer"``.
    :param spec: the study's config section (``datasets``, ``kinds``, ``model``, ``train``,
        ``scaling``, ``grid``).
    :param seed: training seed (model initialisation, minibatches, prediction-time samples).
    :param grid: also evaluate the metrics on the Fig. 1 grid (2-D data only).
    :return: ``{"fit": ..., "scaling": ..., "grid": ...}`` (``grid`` only when asked):
        ``fit`` one row per kind (held-out accuracy, chance = majority-class share, the scaled
        feature and its monotonicity score); ``scaling`` the reduced
        :func:`~softmax_ood.studies.ulmer.scaling.scaling_experiment` frame; ``grid`` the
        :func:`~softmax_ood.studies.ulmer.scaling.grid_heatmap` frames of every kind.
    """
    ds = spec["datasets"][name]
    split = load_dataset(name, ds)
    model_cfg = ModelConfig(**spec["model"])
    optim = TrainConfig.from_dict(spec["train"])
    sc = spec["scaling"]
    index, feature_name = scaled_feature(split, ds["feature"])
    mono = float(monotonicity_scores(split.x_train, split.y_train)[index])
    models = {
        MODEL_LABELS[kind]: train_model(kind, split.x_train, split.y_train, model_cfg, optim, seed)
        for kind in spec["kinds"]
    }
    counts = np.bincount(split.y_test)
    fit_rows = []
    x_test = torch.as_tensor(split.x_test)
    with single_thread(), torch.no_grad():
        for label, model in models.items():
            lp = model.predict_log_probs(x_test, None, torch.Generator().manual_seed(seed))
            pred = lp.exp().mean(dim=0).argmax(dim=-1).numpy()
            fit_rows.append(
                {
                    "dataset": name,
                    "model": label,
                    "kind": model.kind,
                    "seed": int(seed),
                    "accuracy": float((pred == split.y_test).mean()),
                    "chance": float(counts.max() / counts.sum()),
                    "n_test": int(split.y_test.size),
                    "n_classes": int(split.n_classes),
                    "feature": feature_name,
                    "feature_index": int(index),
                    "monotonicity": mono,
                }
            )
    points = split.x_test[: int(sc["n_points"])]
    scaling = scaling_experiment(
        models,
        points,
        log_alphas(sc["min_exponent"], sc["max_exponent"], sc["n_alphas"]),
        feature=index,
        origin=-split.mean / split.std,  # scale the raw feature value (raw 0 is the origin)
        seed=int(seed),
        confident=float(sc["confident"]),
    )
    scaling.insert(0, "dataset", name)
    out = {"fit": pd.DataFrame(fit_rows), "scaling": scaling}
    if grid:
        g = spec["grid"]
        lim = (-float(g["extent"]), float(g["extent"]))
        frames = [
            grid_heatmap(model, lim, lim, int(g["n"]), seed=int(seed), name=label)
            for label, model in models.items()
        ]
        out["grid"] = pd.concat(frames, ignore_index=True)
        train = pd.DataFrame(
            {"x1": split.x_train[:, 0], "x2": split.x_train[:, 1], "y": split.y_train}
        )
        out["train_points"] = train
    return out
