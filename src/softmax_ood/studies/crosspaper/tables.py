"""The cross-paper tables (mean ± std over seeds), each a function of the frames and the
section (``study.table_job``)."""

from __future__ import annotations

import pandas as pd

from ...analysis.seeds import summarise

__all__ = ["TABLES", "table_axis", "table_rays", "table_reversion", "table_seddik"]


def _mean_std(values: pd.Series) -> str:
    mean, std, _ = summarise(values.astype(float))
    return f"{mean:.3f} ± {std:.3f}"


def table_reversion(frames: dict, section: dict) -> pd.DataFrame:
    """Per shift family, level and loss: the OOD score of the level and the distance to the OCS
    (raw logits; relative to the clean split), accuracy and mean MSP, mean ± std over seeds."""
    shift = frames["shift"]
    scores = frames["ood_scores"].set_index("eval_set")["ood_score"]
    graded = shift[shift["shift"] != "far_ood"].copy()
    clean = graded[graded["shift"] == "none"].set_index(["loss", "seed"])["distance"]
    graded["relative"] = [
        d / clean.loc[(lo, s)]
        for d, lo, s in zip(graded["distance"], graded["loss"], graded["seed"], strict=True)
    ]
    rows = []
    for (sh, lvl, loss), g in graded.groupby(["shift", "level", "loss"], sort=True):
        rows.append(
            {
                "shift": sh,
                "level": lvl,
                "loss": loss,
                "ood_score": float(scores.get(g["eval_set"].iloc[0], float("nan"))),
                "distance_to_ocs": _mean_std(g["distance"]),
                "relative_distance": _mean_std(g["relative"]),
                "accuracy": _mean_std(g["accuracy"]),
                "msp": _mean_std(g["msp"]),
            }
        )
    return pd.DataFrame(rows)


def table_rays(frames: dict, section: dict) -> pd.DataFrame:
    """Per loss and alpha: raw-logit MSP, share certain, mean raw logit norm, normalised-logit
    MSP and largest |normalised logit| (mean ± std over seeds)."""
    rays = frames["rays"]
    rows = []
    for (loss, alpha), g in rays.groupby(["loss", "alpha"], sort=True):
        rows.append(
            {
                "loss": loss,
                "alpha": alpha,
                "msp_raw": _mean_std(g["msp"]),
                "certain_share": _mean_std(g["confident_share"]),
                "logit_norm": _mean_std(g["logit_norm"]),
                "msp_normalised": _mean_std(g["msp_normalised"]),
                "max_normalised_logit": f"{g['max_normalised_logit'].max():.2f}",
            }
        )
    return pd.DataFrame(rows)


#: which paper's OOD sets a group of the grid stands for
PAPER_OF_GROUP = {
    "id": "clean ID (all)",
    "far_ood": "Wei et al. 2022 (far / near OOD test sets)",
    "ray": "Ulmer & Cinà 2021 (rays alpha x')",
}


def table_axis(frames: dict, section: dict) -> pd.DataFrame:
    """Kang's discriminator as the shared axis: every set's OOD score (mean ± std over the
    repeats), the paper whose OOD set it is, and for the far sets the floor battery's FPR95 (best detector, selection half)."""
    ood = frames["ood_scores"]
    rows = []
    for r in ood.itertuples(index=False):
        rows.append(
            {
                "paper": PAPER_OF_GROUP.get(r.group, "Kang et al. 2024 (graded shifts)"),
                "eval_set": r.eval_set,
                "ood_score": f"{r.ood_score:.3f} ± {r.ood_score_std:.3f}",
                **{
                    col: (f"{100 * getattr(r, key):.1f} %" if r.group == "far_ood" else "")
                    for col, key in (
                        ("floor_fpr95", "floor_fpr95"),
                        ("floor_heldout_fpr95", "floor_heldout_fpr95"),
                        ("floor_confirmation_fpr95", "floor_confirmation_fpr95"),
                    )
                },
                "floor_detector": r.floor_detector if r.group == "far_ood" else "",
            }
        )
    return pd.DataFrame(rows).sort_values("paper", kind="stable").reset_index(drop=True)


def table_seddik(frames: dict, section: dict) -> pd.DataFrame:
    """(c) Per loss: Seddik's statistics of the softmax classifier on the networks' penultimate
    features (mean ± std over seeds): weights ratio r (bar 2) beside the exact theory's, the
    logit-mean gap in predicted SDs (bar 0.5), the classifier's and the theory's test accuracy."""
    from .claims import seddik_per_seed

    per = seddik_per_seed(frames["seddik"], float(section["claims"]["alpha"]))
    rows = []
    for loss, g in per.groupby("loss", sort=False):
        rows.append(
            {
                "loss": loss,
                "networks": len(g),
                "weights_r": _mean_std(g["r"]),
                "exact_theory_r": _mean_std(g["r_exact"]),
                "logit_gap_sd": _mean_std(g["logit_gap"]),
                "test_accuracy_%": _mean_std(g["accuracy"]),
                "theory_accuracy_%": _mean_std(g["theory_accuracy"]),
                "test_points": int(g["n_test"].min()),
            }
        )
    return pd.DataFrame(rows)


TABLES = {
    "reversion": table_reversion,
    "rays": table_rays,
    "axis": table_axis,
    "seddik": table_seddik,
}
