"""Frames (small settings), byte-identical figures, the departures table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from softmax_ood.studies.seddik.departures import DEPARTURES, departures_frame
from softmax_ood.studies.seddik.experiments import (
    fig2_frame,
    fig3_frame,
    fig4_frame,
    fig5_frame,
    fig5_networks,
    fit_test_split,
    timing,
    validation_frame,
)
from softmax_ood.studies.seddik.figures import FIGURES

PNG = b"\x89PNG\r\n\x1a\n"


def _features(k: int, n: int, seed: int, p: int = 24):
    """Non-Gaussian features (ReLU of a class-shifted low-dimensional Gaussian)."""
    rng = np.random.default_rng(100)
    A, B = rng.standard_normal((p, 10)) / np.sqrt(10), rng.standard_normal((k, 10))
    r = np.random.default_rng(seed)
    y = np.arange(n) % k
    return np.maximum((r.standard_normal((n, 10)) + 0.8 * B[y]) @ A.T, 0.0), y


@pytest.fixture(scope="module")
def frames():
    Xtr, ytr = _features(3, 300, 1)
    Xte, yte = _features(3, 150, 2)
    return {
        "fig2": fig2_frame(ps=(20, 40), seeds=(0, 1), n_test=500),
        "fig3": fig3_frame(loo="newton"),
        "fig4": fig4_frame(ns=(40, 120), seeds=(0, 1)),
        "fig5": fig5_frame(Xtr, ytr, Xte, yte, 1.5),
        "validation": validation_frame(lams=(0.1,), seeds=(0,), p=30, n=120, n_test=500),
    }


def test_fig2_frame(frames):
    f = frames["fig2"]
    assert set(f["source"]) == {"theory", "practice"} and set(f["split"]) == {"train", "test"}
    assert f.loc[f["source"] == "theory", "seed"].isna().all()
    assert len(f[(f["source"] == "practice") & (f["cls"] == "all")]) == 2 * 2 * 2
    assert f["accuracy"].between(0, 1).all()


def test_fig3_frame(frames):
    f = frames["fig3"]
    assert set(f["digit"]) == {1, 2} and f["p"].iloc[0] == 64
    for _, sel in f.groupby("cls"):
        m, s = sel["theory_mean"].iloc[0], sel["theory_std"].iloc[0]
        assert abs(sel["loo_projection"].mean() - m) < 0.2 * s
        assert abs(sel["loo_projection"].std() / s - 1) < 0.2


def test_fig4_frame(frames):
    f = frames["fig4"]
    assert sorted(f["n"].unique()) == [40, 120]
    th = f[(f["source"] == "theory") & (f["cls"] == "all") & (f["split"] == "test")]
    assert th["accuracy"].between(0.8, 1.0).all()


def test_fig5_frame(frames):
    f = frames["fig5"]
    assert set(f["panel"]) == {"weights", "logits", "logit_moments", "accuracy"}
    w = f[f["panel"] == "weights"]
    assert len(w) == 2 * 3 * 24 and w.loc[w["source"] == "theory", "theory_std"].notna().all()
    lg = f[f["panel"] == "logits"]
    assert len(lg) == 2 * 150 * 3
    pr = w[w["source"] == "practice"]["value"].to_numpy()
    th = w[w["source"] == "theory"]["value"].to_numpy()
    assert np.corrcoef(pr, th)[0, 1] > 0.9


def test_fit_test_split_is_stratified_and_seeded():
    groups = np.array(["train/0"] * 10 + ["train/1"] * 6 + ["val/0"] * 4)
    m = fit_test_split(groups, 0.5, 3)
    assert [int(m[groups == g].sum()) for g in ("train/0", "train/1", "val/0")] == [5, 3, 2]
    assert np.array_equal(m, fit_test_split(groups, 0.5, 3))
    with pytest.raises(ValueError, match="fit_fraction"):
        fit_test_split(groups, 1.0, 0)


def test_fig5_networks_one_frame_per_network():
    from softmax_ood.studies.seddik.features import feature_columns

    parts = []
    for seed in (0, 3):
        for i, split in enumerate(("val", "test")):
            X, y = _features(3, 90, 10 * seed + i, p=12)
            f = pd.DataFrame(X, columns=feature_columns(12))
            f.insert(0, "num_classes", 3)
            f.insert(0, "label", y)
            f.insert(0, "split", split)
            f.insert(0, "seed", seed)
            parts.append(f)
    f = fig5_networks(pd.concat(parts, ignore_index=True), lam=1.5, fit_fraction=0.5)
    assert sorted(f["seed"].unique()) == [0, 3]
    acc = f[(f["panel"] == "accuracy") & (f["source"] == "practice") & (f["cls"] == "all")]
    assert list(acc.loc[acc["split"] == "test", "n_points"]) == [90, 90]


def test_fig5_networks_keeps_the_chosen_classes():
    """Fig. 5's k = 3 of a 4-class pool: the other class is dropped, labels renumbered."""
    from softmax_ood.studies.seddik.features import feature_columns

    X, y = _features(4, 80, 5, p=12)
    f = pd.DataFrame(X, columns=feature_columns(12))
    f.insert(0, "num_classes", 4)
    f.insert(0, "label", y)
    f.insert(0, "split", "test")
    f.insert(0, "seed", 0)
    out = fig5_networks(f, lam=1.5, fit_fraction=0.5, classes=[3, 0, 2])
    acc = out[(out["panel"] == "accuracy") & (out["source"] == "practice")]
    assert sorted(set(acc["cls"]) - {"all"}) == ["0", "1", "2"]
    n_test = acc.loc[(acc["split"] == "test") & (acc["cls"] == "all"), "n_points"]
    assert list(n_test) == [(y != 1).sum() - int(round(0.5 * (y != 1).sum()))]
    with pytest.raises(ValueError, match="seddik.fig5.classes"):
        fig5_networks(f, lam=1.5, classes=[0, 4])


def test_fig5_frame_two_classes():
    Xtr, ytr = _features(2, 120, 3, p=12)
    Xte, yte = _features(2, 60, 4, p=12)
    f = fig5_frame(Xtr, ytr, Xte, yte, 1.0, row_norm=None, center=True, stats_from="train")
    acc = f[(f["panel"] == "accuracy") & (f["cls"] == "all")]
    assert len(acc) == 4


def test_validation_frame(frames):
    f = frames["validation"]
    assert set(f["check"]) == {"logistic", "ridge"}
    cf = f[f["reference_kind"] == "closed_form"]
    assert (cf["abs_diff"] < 0.02 * cf["reference"].abs().max()).all()


def test_timing_small():
    t = timing(p=32, n=200, ks=(2, 3))
    assert list(t["k"]) == [2, 3] and (t["n_iter"] > 0).all() and (t["seconds"] > 0).all()


@pytest.mark.parametrize("name", ["fig2", "fig3", "fig4", "fig5", "validation"])
def test_figure_png_deterministic(frames, name, tmp_path):
    a, b = tmp_path / "a" / f"{name}.png", tmp_path / f"{name}.png"
    FIGURES[name](frames[name], a)
    FIGURES[name](frames[name], b)
    data = a.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000
    assert data == b.read_bytes()


def test_figure_svg_deterministic(frames, tmp_path):
    FIGURES["fig2"](frames["fig2"], tmp_path / "a.svg")
    FIGURES["fig2"](frames["fig2"], tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_empty_frame_raises(tmp_path):
    with pytest.raises(ValueError, match="fig2"):
        FIGURES["fig2"](pd.DataFrame(), tmp_path / "x.png")


def test_departures_table():
    from softmax_ood.analysis.departures import COLUMNS

    f = departures_frame()
    assert list(f.columns) == COLUMNS
    assert len(f) == len(DEPARTURES) >= 10
    assert set(f["kind"]) <= {"error", "unspecified", "numerics", "data"}
    text = f.drop(columns="claims")
    assert text.notna().all().all() and (text.map(len) > 0).all().all()
    wheres = " ".join(f["setting"])
    for key in ("Eq. (1)", "Theorem 4.4", "Theorem 4.8, δ", "R_2", "Algorithm 1"):
        assert key in wheres
