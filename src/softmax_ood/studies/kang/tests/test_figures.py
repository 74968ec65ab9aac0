"""Figures 2-7 draw from small tidy frames, deterministically (same frame twice, same bytes)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from softmax_ood.studies.kang.figures import FIGURES, fig2, fig3, fig4, fig5, fig6, fig7

LEVELS = ["train (t)", "sev 1", "sev 3", "sev 5"]


def _fig2() -> pd.DataFrame:
    rows = []
    for i, level in enumerate(LEVELS + ["OCS"]):
        probs = np.full(3, 1 / 3) if level == "OCS" else np.array([1.0 - 0.2 * i, 0.1 * i, 0.1 * i])
        rows += [("ce", level, str(c), p) for c, p in enumerate(probs)]
        rows += [
            ("gaussian_nll", level, "mean", 1.0 + 0.2 * i),
            ("gaussian_nll", level, "std", 0.5 + i),
        ]
    return pd.DataFrame(rows, columns=["loss", "level", "component", "value"])


def _fig3() -> pd.DataFrame:
    rows = []
    for loss in ("ce", "reward_mse"):
        for seed in range(3):
            rows.append((loss, "noise", "test", seed, 0.5 + 0.01 * seed, 1.0 + 0.1 * seed, True))
            for sev in (1, 3, 5):
                rows.append(
                    (
                        loss,
                        "noise",
                        f"sev{sev}",
                        seed,
                        0.6 + 0.07 * sev,
                        1.0 / sev + 0.01 * seed,
                        False,
                    )
                )
                rows.append(
                    (loss, "rotation", f"{15 * sev} deg", seed, 0.55 + 0.08 * sev, 0.9 / sev, False)
                )
    cols = ["loss", "shift", "eval_set", "seed", "ood_score", "distance", "is_id"]
    return pd.DataFrame(rows, columns=cols)


def _fig4():
    norms = pd.DataFrame(
        [
            (lv, layer, f"linear{layer}", 1.0 - 0.1 * i * layer, 0.05)
            for i, lv in enumerate(LEVELS)
            for layer in range(3)
        ],
        columns=["level", "layer", "name", "ratio_mean", "ratio_std"],
    )
    subspace = pd.DataFrame(
        [(lv, 0.9 - 0.1 * i, 0.05) for i, lv in enumerate(LEVELS)],
        columns=["level", "share_mean", "share_std"],
    )
    constants = pd.DataFrame(
        [("ce", str(c), 0.3 + 0.01 * c, "constants") for c in range(3)]
        + [("ce", str(c), 1 / 3, "OCS") for c in range(3)]
        + [
            ("reward_mse", a, v, s)
            for a, v in (("0", -3.4), ("1", -3.6), ("A", 0.1))
            for s in ("constants",)
        ]
        + [("reward_mse", a, v, "OCS") for a, v in (("0", -3.5), ("1", -3.5), ("A", 0.0))],
        columns=["loss", "component", "value", "source"],
    )
    return norms, subspace, constants


def _fig5() -> pd.DataFrame:
    rows = []
    for i, level in enumerate(LEVELS + ["OCS"]):
        for a in ("0", "1", "2", "A"):
            reward = (
                0.0 if a == "A" else (1.0 if a == "1" else -4.0) * (1 - 0.2 * i) - 3.5 * 0.2 * i
            )
            rows.append(
                (level, a, reward, 1.0 if (a == "A") == (i >= 2) and a in ("1", "A") else 0.0)
            )
    return pd.DataFrame(rows, columns=["level", "action", "predicted_reward", "action_fraction"])


def _fig67() -> pd.DataFrame:
    rows = []
    for panel in ("CIFAR-like", "digits"):
        for seed in range(3):
            for i, level in enumerate(LEVELS):
                for j, policy in enumerate(
                    ("reward_prediction", "classification_argmax", "oracle_eval_temperature")
                ):
                    ratio = 0.0 if j == 1 else min(1.0, 0.2 * i + 0.02 * seed)
                    rows.append(
                        (panel, level, policy, seed, ratio, 1.0 - 0.5 * i * (j == 1) - 0.1 * i)
                    )
    return pd.DataFrame(
        rows, columns=["panel", "level", "policy", "seed", "abstain_ratio", "mean_reward"]
    )


CASES = {
    "fig2": lambda p: fig2(_fig2(), p),
    "fig3": lambda p: fig3(_fig3(), p),
    "fig4": lambda p: fig4(*_fig4(), p),
    "fig5": lambda p: fig5(_fig5(), p),
    "fig6": lambda p: fig6(_fig67(), p),
    "fig7": lambda p: fig7(_fig67().drop(columns="panel"), p),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_figure_is_drawn_and_deterministic(name, tmp_path):
    assert name in FIGURES
    a, b = tmp_path / f"{name}_a.png", tmp_path / f"{name}_b.png"
    CASES[name](a)
    CASES[name](b)
    assert a.stat().st_size > 1000
    assert a.read_bytes() == b.read_bytes()


def test_missing_columns_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"fig3 needs column\(s\) \['is_id'\]"):
        fig3(_fig3().drop(columns="is_id"), tmp_path / "x.png")
    with pytest.raises(ValueError, match="'OCS' level"):
        fig2(_fig2().query("level != 'OCS'"), tmp_path / "x.png")
    with pytest.raises(ValueError, match="empty"):
        fig6(_fig67().iloc[:0], tmp_path / "x.png")
