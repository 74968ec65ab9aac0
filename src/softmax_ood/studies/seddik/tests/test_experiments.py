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
    pool_parts,
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


def _network_frame(k: int, n: int, seed: int, p: int = 12):
    """``(X, y, frame)``: one network's features of the test split as a features frame."""
    from softmax_ood.studies.seddik.features import feature_columns

    X, y = _features(k, n, seed, p=p)
    f = pd.DataFrame(X, columns=feature_columns(p))
    f.insert(0, "num_classes", k)
    f.insert(0, "label", y)
    f.insert(0, "split", "test")
    f.insert(0, "seed", 0)
    return X, y, f


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
    # the classes are named (sklearn: "digit d"), and the input's shape is recorded per class
    assert set(f["label"]) == {"digit 1", "digit 2"}
    per = f.groupby("cls")[["input_gauss", "input_gauss_se"]].nunique()
    assert (
        (per == 1).all().all() and (f["input_gauss"] > 0).all() and (f["input_gauss_se"] > 0).all()
    )


def test_fig4_frame(frames):
    f = frames["fig4"]
    assert sorted(f["n"].unique()) == [40, 120]
    th = f[(f["source"] == "theory") & (f["cls"] == "all") & (f["split"] == "test")]
    assert th["accuracy"].between(0.8, 1.0).all()
    # Theorem 4.3's fluctuation: every seed's distance from the predicted mean, the prediction
    pr = f[(f["source"] == "practice") & (f["cls"] == "all") & (f["split"] == "test")]
    assert pr["w_dev"].notna().all() and (pr["w_dev"] > 0).all()
    assert th["w_spread"].notna().all() and (th["w_spread"] > 0).all()
    assert th["w_spread"].is_monotonic_decreasing  # n = 40, 120: the spread shrinks
    assert (pr["pool_n"] == pr["pool_n"].iloc[0]).all() and pr["pool_n"].iloc[0] > 120
    assert f.loc[f["cls"] != "all", "w_dev"].isna().all()


def test_fig5_frame(frames):
    f = frames["fig5"]
    assert set(f["panel"]) == {"weights", "logits", "logit_moments", "accuracy", "statistics"}
    st = f[f["panel"] == "statistics"].set_index(["split", "cls"])
    assert st.loc[("stats", "all"), "n_points"] == 450  # stats_from="all": fit + test points
    assert st.loc[("train", "all"), "value"] == 300 and st.loc[("test", "all"), "value"] == 150
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


def test_pool_parts_are_disjoint_and_cover_every_group():
    """stats / fit / test: per group (ID split, class) three disjoint parts of the stated sizes
    whose union is the group; seeded; the fit part is fit_test_split's (the same draw as
    without statistics)."""
    groups = np.array(["train/0"] * 30 + ["train/1"] * 21 + ["val/0"] * 9 + ["val/1"] * 12)
    groups = np.random.default_rng(7).permutation(groups)
    parts = pool_parts(groups, 1 / 3, 3, 1 / 3)
    assert set(parts) == {"fit", "stats", "test"}
    for g in sorted(set(groups)):
        idx = np.flatnonzero(groups == g)
        members = {name: set(idx[parts[idx] == name]) for name in ("fit", "stats", "test")}
        assert not (members["fit"] & members["stats"] or members["fit"] & members["test"])
        assert not members["stats"] & members["test"]
        assert members["fit"] | members["stats"] | members["test"] == set(idx)
        third = int(round(len(idx) / 3))
        assert len(members["fit"]) == len(members["stats"]) == third
        assert len(members["test"]) == len(idx) - 2 * third
    assert np.array_equal(parts, pool_parts(groups, 1 / 3, 3, 1 / 3))
    assert not np.array_equal(parts, pool_parts(groups, 1 / 3, 4, 1 / 3))
    assert np.array_equal(parts == "fit", fit_test_split(groups, 1 / 3, 3))
    two = pool_parts(groups, 0.5, 3)  # no statistics part: fit / test as before
    assert set(two) == {"fit", "test"} and np.array_equal(
        two == "fit", fit_test_split(groups, 0.5, 3)
    )
    with pytest.raises(ValueError, match="stats_fraction must lie strictly between 0 and 1 - fit"):
        pool_parts(groups, 0.5, 0, 0.5)


def test_fig5_networks_independent_statistics():
    """stats_from="independent": the theory's statistics come from the statistics part only
    (none of them fit or test points), fit and test parts keep their shares of the pool."""
    X, y, f = _network_frame(3, 180, 6)
    kw = {"lam": 1.5, "fit_fraction": 1 / 3, "split_seed": 0}
    out = fig5_networks(f, stats_from="independent", stats_fraction=1 / 3, **kw)
    st = out[out["panel"] == "statistics"].set_index(["split", "cls"])
    assert st.loc[("stats", "all"), "n_points"] == 60
    assert [st.loc[("stats", str(c)), "n_points"] for c in range(3)] == [20, 20, 20]
    assert st.loc[("train", "all"), "value"] == 0 and st.loc[("test", "all"), "value"] == 0
    acc = out[(out["panel"] == "accuracy") & (out["source"] == "practice") & (out["cls"] == "all")]
    assert list(acc.set_index("split")["n_points"].loc[["train", "test"]]) == [60, 60]
    # the same fit part as stats_from="train" (whose statistics are those 60 fit points)
    fit_stats = fig5_networks(f, stats_from="train", stats_fraction=1 / 3, **kw)
    w = out[(out["panel"] == "weights") & (out["source"] == "practice")]["value"].to_numpy()
    w2 = fit_stats[(fit_stats["panel"] == "weights") & (fit_stats["source"] == "practice")]
    assert np.allclose(w, w2["value"].to_numpy())
    st2 = fit_stats[fit_stats["panel"] == "statistics"].set_index(["split", "cls"])
    assert st2.loc[("train", "all"), "value"] == 60
    with pytest.raises(ValueError, match="needs stats_fraction"):
        fig5_networks(f, stats_from="independent", **kw)
    with pytest.raises(ValueError, match="needs features_stats"):
        fig5_frame(X[:90], y[:90], X[90:], y[90:], 1.5, stats_from="independent")
    with pytest.raises(ValueError, match="each class needs at least 2"):
        fig5_frame(
            X[:90],
            y[:90],
            X[90:],
            y[90:],
            1.5,
            stats_from="independent",
            features_stats=X[90:93],
            y_stats=y[90:93],
        )


def test_independent_statistics_put_r_near_sqrt2():
    """On a Gaussian mixture (Theorem 4.8 exact): statistics of the fit points put the learned
    weights far closer to the predicted mean than the predicted fluctuation (r < 0.1: built
    in); statistics from as many independent points give r near sqrt(2) (their own sampling
    error adds about as much as the classifier's); from 20x as many, r near 1."""
    from softmax_ood.studies.seddik.claims import expected_weight_ratio, features_weights
    from softmax_ood.studies.seddik.practice import structured_mixture

    spec = structured_mixture(32, k=3, mean_norm=2.0)
    n = 600
    Xf, yf = spec.sample(n, 1)
    Xt, yt = spec.sample(n, 2)
    r = {
        "train": features_weights(
            fig5_frame(Xf, yf, Xt, yt, 1.0, row_norm=None, stats_from="train", k=3)
        ).value
    }
    for m in (n, 20 * n):
        Xs, ys = spec.sample(m, 3)
        f = fig5_frame(
            Xf,
            yf,
            Xt,
            yt,
            1.0,
            row_norm=None,
            stats_from="independent",
            features_stats=Xs,
            y_stats=ys,
            k=3,
        )
        r[m] = features_weights(f).value
        # the power's exact-theory r, read from the frame's own sizes (n fit, m statistics)
        assert expected_weight_ratio(f) == pytest.approx(np.sqrt(1 + n / m))
    assert r["train"] < 0.1
    assert 1.2 < r[n] < 1.7
    assert 0.85 < r[20 * n] < 1.15


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
    # issue 42: each network its own cut of the pool by default; one cut with cut: shared
    from softmax_ood.studies.seddik.experiments import cut_seed

    cuts = f.groupby("seed")["cut"].unique()
    assert [list(v) for v in cuts] == [[cut_seed(0, 0)], [cut_seed(0, 3)]]
    shared = fig5_networks(
        pd.concat(parts, ignore_index=True), lam=1.5, fit_fraction=0.5, cut="shared"
    )
    assert set(shared["cut"]) == {0}
    with pytest.raises(ValueError, match="seddik.fig5.cut"):
        fig5_networks(pd.concat(parts, ignore_index=True), lam=1.5, cut="one")


def test_fig5_networks_keeps_the_chosen_classes():
    """Fig. 5's k = 3 of a 4-class pool: the other class is dropped, labels renumbered."""
    X, y, f = _network_frame(4, 80, 5)
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
