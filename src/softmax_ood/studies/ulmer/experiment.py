"""One seed of the Ulmer & Cinà study on one dataset: train every model kind, measure held-out
accuracy, run the scaling experiment of Theorem 1 and (2-D data) the Fig. 1 grid.

This is the library call behind the study's per-seed rule; every setting comes from the study's
config section (``spec``), nothing here has a default that changes a result.

:see Paper: Ulmer & Cinà, "Know your limits", §3.2 (scaling a feature away from the data), §3.3
    (models and metrics), Theorem 1, Fig. 1.
"""

from __future__ import annotations

import copy
from dataclasses import replace

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
from softmax_ood.studies.ulmer.models import (
    CONTROL,
    ModelConfig,
    single_thread,
    train_model,
)
from softmax_ood.studies.ulmer.scaling import (
    certainty_at_scale,
    direction_set,
    grid_heatmap,
    log_alphas,
    scale_inputs,
    scaling_experiment,
)
from softmax_ood.train import TrainConfig

__all__ = [
    "DATASETS",
    "MODEL_LABELS",
    "control_label",
    "load_dataset",
    "scaled_feature",
    "train_models",
    "run_seed",
]

DATASETS = ("synthetic", "breast_cancer")
MODEL_LABELS = {
    "single": "single network",
    "mc_dropout": "MC dropout",
    "bbb": "Bayes-by-backprop",
    "ensemble": "deep ensemble",
    "mcmc": "MCMC (SGLD)",
}
"""Display name of each model kind (the ``model`` column of every frame)."""


def doubled_config(kind: str, cfg: ModelConfig) -> tuple[int, ModelConfig] | None:
    """``(K, settings with 2K)`` of a kind whose ``K`` samples are trained or drawn before
    prediction (the ensemble's members, MCMC's kept chain samples): its K-sample model is the
    first K of the 2K (members seeded one by one; the chain stopped after K kept samples).
    None for the others (single network; MC dropout and Bayes-by-backprop draw at prediction)."""
    if kind == "ensemble":
        return cfg.n_members, replace(cfg, n_members=2 * cfg.n_members)
    if kind == "mcmc":
        k = cfg.mcmc.n_samples
        return k, replace(cfg, mcmc=replace(cfg.mcmc, n_samples=2 * k))
    return None


def control_label(activation: str) -> str:
    """Display name of the control model."""
    return f"control ({activation} last hidden layer)"


def train_models(
    split: TabularSplit, spec: dict, seed: int
) -> tuple[dict, dict[str, tuple[int, int]]]:
    """Every configured kind and the control, trained with ``seed``.

    :return: ``(models, k_samples)``: ``{label: model}`` where the ensemble has ``K`` members,
        and the ``(K, 2K)`` models used by the K-stability check
        (``{label: (model with 2K samples / members, (K, 2K))}`` for the stochastic kinds;
        :func:`doubled_config` for the ensemble and MCMC).
    """
    cfg = ModelConfig(**spec["model"], control_activation=spec["control"]["activation"])
    optim = TrainConfig.from_dict(spec["train"])
    models, doubled = {}, {}
    for kind in spec["kinds"]:
        label = MODEL_LABELS[kind]
        trained_2k = doubled_config(kind, cfg)
        if trained_2k is not None:
            k, cfg_2k = trained_2k
            big = train_model(kind, split.x_train, split.y_train, cfg_2k, optim, seed)
            models[label] = big.first(k)
            doubled[label] = (big, (k, 2 * k))
        else:
            models[label] = train_model(kind, split.x_train, split.y_train, cfg, optim, seed)
            if kind in ("mc_dropout", "bbb"):
                doubled[label] = (models[label], (cfg.k_samples, 2 * cfg.k_samples))
    label = control_label(cfg.control_activation)
    models[label] = train_model(CONTROL, split.x_train, split.y_train, cfg, optim, seed)
    return models, doubled


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


DATASIZE_COLUMNS = (
    "seed",
    "fraction",
    "n_train",
    "k",
    "auroc",
    "far_entropy",
    "far_mutual_information",
    "id_entropy",
)


def stratified_subsample(y: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Sorted indices of a stratified ``fraction`` of the rows (at least 2 per class), drawn
    with ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(int(seed))
    keep = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        keep.append(rng.choice(rows, max(2, int(round(fraction * rows.size))), replace=False))
    return np.sort(np.concatenate(keep))


def datasize_frame(
    split: TabularSplit,
    spec: dict,
    seed: int,
    full_model,
    points: np.ndarray,
    directions,
    origin: np.ndarray,
) -> pd.DataFrame:
    """§6: "more in-domain data decreases epistemic uncertainty and diversification, but in so
    doing worsens OOD detection". The K-member ensemble trained on all training rows
    (``full_model``) against one trained the same way on a stratified ``fraction`` of them
    (subsample seeded by ``seed``). OOD detection: AUROC of the predictive entropy separating the
    held-out points (alpha = 1) from the same points scaled to the largest alpha along every
    direction (degenerate ones included: the statement is about the whole space); diversification:
    the mean mutual information at those far points.

    :return: one row per training size: ``dataset`` is added by the caller; ``seed, fraction,
        n_train, auroc, far_entropy, far_mutual_information, id_entropy``.
    """
    from softmax_ood.metrics import auroc
    from softmax_ood.studies.ulmer.uncertainty import mutual_information, predictive_entropy

    cfg = ModelConfig(**spec["model"], control_activation=spec["control"]["activation"])
    optim = TrainConfig.from_dict(spec["train"])
    fraction = float(spec["datasize"]["fraction"])
    keep = stratified_subsample(split.y_train, fraction, seed)
    small = train_model("ensemble", split.x_train[keep], split.y_train[keep], cfg, optim, seed)
    alpha = 10.0 ** float(spec["scaling"]["max_exponent"])
    rows = []
    with single_thread(), torch.no_grad():
        for frac, n, model in (
            (fraction, keep.size, small),
            (1.0, split.y_train.size, full_model),
        ):
            net = copy.deepcopy(model).to(torch.float64).eval()
            x = torch.as_tensor(np.asarray(points), dtype=torch.float64)
            lp_id = net.predict_log_probs(x, None, torch.Generator().manual_seed(seed))
            far = [
                net.predict_log_probs(
                    scale_inputs(x, alpha, d.vector, origin),
                    None,
                    torch.Generator().manual_seed(seed),
                )
                for d in directions
            ]
            lp_far = torch.cat(far, dim=1)
            h_id = predictive_entropy(lp_id).numpy()
            h_far = predictive_entropy(lp_far).numpy()
            rows.append(
                {
                    "seed": int(seed),
                    "fraction": float(frac),
                    "n_train": int(n),
                    "k": int(lp_id.shape[0]),
                    "auroc": float(auroc(-h_id, -h_far)),  # score: higher = more ID
                    "far_entropy": float(h_far.mean()),
                    "far_mutual_information": float(mutual_information(lp_far).mean()),
                    "id_entropy": float(h_id.mean()),
                }
            )
    return pd.DataFrame(rows)


def _fit_rows(name: str, split: TabularSplit, models: dict, seed: int, scaled: dict) -> list:
    """One ``fit`` row per model: held-out accuracy (chance = majority-class share), the final
    training loss of the predictive (mean over prediction-time samples drawn with ``seed``)
    and that of the optimal constant solution, ``chain_ess`` (an MCMC chain's effective sample
    size on its training-loss trace, NaN for the other families); ``scaled`` (the scaled
    feature's ``feature``, ``feature_index`` and ``monotonicity``) closes every row."""
    counts = np.bincount(split.y_test)
    prior = np.bincount(split.y_train, minlength=split.n_classes) / split.y_train.size
    ocs_loss = float(-(prior[prior > 0] * np.log(prior[prior > 0])).sum())
    rows = []
    x_test = torch.as_tensor(split.x_test)
    x_train = torch.as_tensor(split.x_train)
    y_train = torch.as_tensor(split.y_train)
    with single_thread(), torch.no_grad():
        for label, model in models.items():
            gen = torch.Generator().manual_seed(seed)
            lp = model.predict_log_probs(x_test, None, gen)
            pred = lp.exp().mean(dim=0).argmax(dim=-1).numpy()
            lp_train = model.predict_log_probs(x_train, None, gen).to(torch.float64)
            mean_lp = torch.logsumexp(lp_train, dim=0) - np.log(lp_train.shape[0])
            train_loss = float(-mean_lp.gather(1, y_train.view(-1, 1)).mean())
            rows.append(
                {
                    "dataset": name,
                    "model": label,
                    "kind": model.kind,
                    "seed": int(seed),
                    "accuracy": float((pred == split.y_test).mean()),
                    "chance": float(counts.max() / counts.sum()),
                    "train_loss": train_loss,
                    "ocs_loss": ocs_loss,
                    "chain_ess": float(model.effective_samples()),
                    "n_test": int(split.y_test.size),
                    "n_classes": int(split.n_classes),
                    **scaled,
                }
            )
    return rows


def _far_frame(
    name: str, models: dict, doubled: dict, points, directions, origin, sc: dict, seed: int
) -> pd.DataFrame:
    """The ``directions`` frame: :func:`~softmax_ood.studies.ulmer.scaling.certainty_at_scale`
    at the largest alpha along every direction; the stochastic kinds at ``K`` and ``2K``
    samples or members (``doubled``, :func:`train_models`)."""
    far = certainty_at_scale(
        {label: doubled.get(label, (m, None))[0] for label, m in models.items()},
        points,
        directions,
        10.0 ** float(sc["max_exponent"]),
        origin=origin,
        seed=int(seed),
        k_samples={label: ks for label, (_, ks) in doubled.items()},
        confident=float(sc["confident"]),
    )
    far.insert(0, "dataset", name)
    far.insert(3, "seed", int(seed))
    return far


def _grid_frames(split: TabularSplit, g: dict, models: dict, seed: int) -> dict[str, pd.DataFrame]:
    """The Fig. 1 frames of 2-D data: ``grid`` (every model's
    :func:`~softmax_ood.studies.ulmer.scaling.grid_heatmap` on the square of half-width
    ``g["extent"]``, ``g["n"]`` points a side) and ``train_points``."""
    lim = (-float(g["extent"]), float(g["extent"]))
    frames = [
        grid_heatmap(model, lim, lim, int(g["n"]), seed=int(seed), name=label)
        for label, model in models.items()
    ]
    train = pd.DataFrame({"x1": split.x_train[:, 0], "x2": split.x_train[:, 1], "y": split.y_train})
    return {"grid": pd.concat(frames, ignore_index=True), "train_points": train}


def run_seed(name: str, spec: dict, seed: int, *, grid: bool) -> dict[str, pd.DataFrame]:
    """Train every configured kind and the control with ``seed`` on dataset ``name`` and
    evaluate them.

    :param name: ``"synthetic"`` or ``"breast_cancer"``.
    :param spec: the study's config section (``datasets``, ``kinds``, ``model``, ``control``,
        ``train``, ``scaling``, ``directions``, ``grid``).
    :param seed: training seed (model initialisation, minibatches, prediction-time samples).
    :param grid: also evaluate the metrics on the Fig. 1 grid (2-D data only).
    :return: ``{"fit", "scaling", "directions", "datasize"[, "grid", "train_points"]}``: ``fit`` one row per
        model (held-out accuracy, chance = majority-class share, final training loss of the
        predictive and that of the optimal constant solution, the scaled feature and its
        monotonicity score); ``scaling`` the reduced
        :func:`~softmax_ood.studies.ulmer.scaling.scaling_experiment` frame along the paper's
        feature; ``directions`` the
        :func:`~softmax_ood.studies.ulmer.scaling.certainty_at_scale` frame at the largest alpha
        along every axis and random direction, at ``K`` and ``2K``; ``datasize``
        :func:`datasize_frame` (no rows without an ensemble); ``grid`` the
        :func:`~softmax_ood.studies.ulmer.scaling.grid_heatmap` frames.
    """
    ds = spec["datasets"][name]
    split = load_dataset(name, ds)
    sc = spec["scaling"]
    index, feature_name = scaled_feature(split, ds["feature"])
    mono = float(monotonicity_scores(split.x_train, split.y_train)[index])
    models, doubled = train_models(split, spec, seed)
    scaled = {"feature": feature_name, "feature_index": int(index), "monotonicity": mono}
    fit = pd.DataFrame(_fit_rows(name, split, models, seed, scaled))
    points = split.x_test[: int(sc["n_points"])]
    origin = -split.mean / split.std  # scale the raw feature value (raw 0 is the origin)
    scaling = scaling_experiment(
        models,
        points,
        log_alphas(sc["min_exponent"], sc["max_exponent"], sc["n_alphas"]),
        feature=index,
        origin=origin,
        seed=int(seed),
        confident=float(sc["confident"]),
    )
    scaling.insert(0, "dataset", name)
    dr = spec["directions"]
    directions = direction_set(
        split.x_train,
        split.y_train,
        split.feature_names,
        n_random=int(dr["n_random"]),
        seed=int(dr["seed"]),
        degenerate_cos=float(dr["degenerate_cos"]),
    )
    far = _far_frame(name, models, doubled, points, directions, origin, sc, seed)
    far["paper_direction"] = far["direction"] == feature_name
    out = {"fit": fit, "scaling": scaling, "directions": far}
    ens = MODEL_LABELS["ensemble"]
    size = (
        datasize_frame(split, spec, seed, models[ens], points, directions, origin)
        if ens in models
        else pd.DataFrame({c: [] for c in DATASIZE_COLUMNS})
    )
    size.insert(0, "dataset", name)
    out["datasize"] = size
    if grid:
        out.update(_grid_frames(split, spec["grid"], models, seed))
    return out
