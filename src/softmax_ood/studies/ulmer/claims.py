"""The claims of Ulmer & Cinà tested on this run, declared as data for the shared engine
(:mod:`softmax_ood.analysis.claims`).

Per dataset: a premise (every model fits the data: mean held-out accuracy above chance, the
majority-class share), then

* ``S-<dataset>-<kind>``: far from the data the model is certain (Theorem 1): the share of scaled
  held-out points whose max probability exceeds ``confident`` at the largest alpha;
* ``G-<dataset>-<metric>``: the metric's input-gradient norm falls towards zero as alpha grows
  (Lemmas 5, 7, 8, 9): the largest, over models, ratio of the mean gradient norm at the largest
  alpha to that at alpha = 1. For one network (``S = 1``) the class variance and the mutual
  information are identically 0, so those models are left out of their rows (said in the detail).

Every claim requires its dataset's premise. Thresholds come from the config (fixed before a run).
"""

from __future__ import annotations

import math

import pandas as pd

from softmax_ood.analysis.claims import ClaimSpec, Measurement, evaluate_claims, fmt_mean_std
from softmax_ood.analysis.seeds import require_columns, summarise

__all__ = ["PAPER", "DEGENERATE", "ulmer_claim_specs", "evaluate_ulmer_claims"]

PAPER = "Ulmer & Cinà 2021"
#: (kind, metric) pairs that are identically zero (one sample): no gradient claim for them
DEGENERATE = {("single", "class_variance"), ("single", "mutual_information")}
_METRIC_TEXT = {
    "max_prob": "max softmax probability (Lemma 5)",
    "class_variance": "class variance (Lemma 7)",
    "predictive_entropy": "predictive entropy (Lemma 8)",
    "mutual_information": "mutual information (Lemma 9)",
}


def _ratio(end: float, start: float) -> float:
    if start > 0:
        return end / start
    return math.nan


def _premise(fit: pd.DataFrame, dataset: str) -> Measurement:
    sel = fit[fit["dataset"] == dataset]
    if sel.empty:
        raise ValueError(f"The fit frame has no rows for dataset {dataset!r}.")
    chance = float(sel["chance"].iloc[0])
    parts, margins = [], []
    for model, g in sel.groupby("model", sort=False):
        acc = g.set_index("seed")["accuracy"].astype(float)
        margins.append(summarise(acc)[0] - chance)
        parts.append(f"{model} {fmt_mean_std(acc * 100, ' %')}")
    mono = float(sel["monotonicity"].iloc[0])
    detail = (
        "; ".join(parts)
        + f"; chance (majority class) {chance * 100:.1f} %; scaled feature "
        + f"{sel['feature'].iloc[0]!r} (|Spearman rho| with the label {mono:.2f})"
    )
    return Measurement(min(margins), detail)


def _at(scaling: pd.DataFrame, alpha: float) -> pd.DataFrame:
    return scaling[scaling["alpha"] == alpha]


def ulmer_claim_specs(
    datasets: list[str], kinds: dict[str, str], metrics: list[str], spec: dict
) -> list[ClaimSpec]:
    """The claims as data. ``kinds`` maps each model kind to its display name."""
    specs = []
    for ds in datasets:
        pid = f"P-{ds}"
        specs.append(
            ClaimSpec(
                pid,
                f"Every model fits the {ds} data (held-out accuracy above chance)",
                "lowest mean held-out accuracy over models minus the majority-class share",
                0.0,
                ">",
                premise=True,
            )
        )
        for kind, label in kinds.items():
            specs.append(
                ClaimSpec(
                    f"S-{ds}-{kind}",
                    f"{label}: far from the {ds} data the prediction is certain (Theorem 1)",
                    f"share of scaled points with max prob > {spec['confident']:g} at the "
                    "largest alpha (mean over seeds)",
                    float(spec["certain_share"]),
                    ">=",
                    requires=(pid,),
                )
            )
        for metric in metrics:
            specs.append(
                ClaimSpec(
                    f"G-{ds}-{metric}",
                    f"The input-gradient norm of the {_METRIC_TEXT.get(metric, metric)} falls "
                    f"towards zero as a feature of the {ds} data is scaled",
                    "largest ratio over models of the mean gradient norm at the largest alpha "
                    "to that at alpha = 1",
                    float(spec["grad_ratio"]),
                    "<",
                    requires=(pid,),
                )
            )
    return specs


def evaluate_ulmer_claims(fit: pd.DataFrame, scaling: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """The claims table (premises first) from the per-seed ``fit`` and ``scaling`` frames of
    every dataset.

    :param spec: ``confident`` (the certainty threshold of the scaling experiment),
        ``certain_share`` and ``grad_ratio``.
    """
    require_columns(fit, ["dataset", "model", "kind", "seed", "accuracy", "chance"], "fit")
    require_columns(
        scaling,
        ["dataset", "model", "kind", "seed", "alpha", "metric", "grad_norm", "share_confident"],
        "scaling",
    )
    datasets = list(dict.fromkeys(fit["dataset"]))
    kinds = list(dict.fromkeys(scaling["kind"]))
    metrics = list(dict.fromkeys(scaling["metric"]))
    label = scaling.drop_duplicates("kind").set_index("kind")["model"]
    specs = ulmer_claim_specs(datasets, {k: label[k] for k in kinds}, metrics, spec)
    measured: dict[str, Measurement] = {}
    for ds in datasets:
        measured[f"P-{ds}"] = _premise(fit, ds)
        sc = scaling[scaling["dataset"] == ds]
        if sc.empty:
            raise ValueError(f"The scaling frame has no rows for dataset {ds!r}.")
        a_min, a_max = float(sc["alpha"].min()), float(sc["alpha"].max())
        end = _at(sc, a_max)
        for kind in kinds:
            rows = end[(end["kind"] == kind) & (end["metric"] == metrics[0])]
            share = rows.set_index("seed")["share_confident"].astype(float)
            mean = summarise(share)[0]
            measured[f"S-{ds}-{kind}"] = Measurement(
                mean,
                f"{label[kind]}: {fmt_mean_std(share * 100, ' %')} of "
                f"{int(rows['n_points'].iloc[0])} points certain at alpha = {a_max:g} over "
                f"{share.size} seeds; largest |logit| {rows['max_abs_logit'].max():.3g}",
            )
        start = _at(sc, a_min)
        for metric in metrics:
            ratios, parts = [], []
            for kind in kinds:
                if (kind, metric) in DEGENERATE:
                    parts.append(f"{label[kind]}: identically 0 (one network), left out")
                    continue
                e = end[(end["kind"] == kind) & (end["metric"] == metric)]["grad_norm"]
                s = start[(start["kind"] == kind) & (start["metric"] == metric)]["grad_norm"]
                r = _ratio(float(e.mean()), float(s.mean()))
                ratios.append(r)
                parts.append(
                    f"{label[kind]}: {float(s.mean()):.3g} -> {float(e.mean()):.3g} (ratio {r:.3g})"
                )
            value = math.nan if not ratios or any(math.isnan(r) for r in ratios) else max(ratios)
            measured[f"G-{ds}-{metric}"] = Measurement(
                value,
                f"alpha {a_min:g} -> {a_max:g}, mean over points and seeds: " + "; ".join(parts),
            )
    # no claim here uses a paired test, so the engine's significance level is never read
    return evaluate_claims(PAPER, specs, measured, alpha=0.05)
