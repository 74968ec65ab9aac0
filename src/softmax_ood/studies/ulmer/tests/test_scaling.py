"""The scaling experiment (Theorem 1) and the Fig. 1 grid."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from softmax_ood.studies.ulmer.data import synthetic_2d
from softmax_ood.studies.ulmer.models import KINDS, train_model
from softmax_ood.studies.ulmer.scaling import (
    grid_heatmap,
    log_alphas,
    scale_inputs,
    scaling_experiment,
)
from softmax_ood.studies.ulmer.tests.helpers import BLOBS, model_cfg, optim
from softmax_ood.studies.ulmer.uncertainty import METRICS, gradient_norm

CFG = model_cfg(k_samples=5)
OPT = optim(epochs=100)


@pytest.fixture(scope="module")
def trained():
    x, y = synthetic_2d(60, 3, seed=0, **BLOBS)
    models = {kind: train_model(kind, x, y, CFG, OPT, seed=0) for kind in KINDS}
    x_test, _ = synthetic_2d(8, 3, seed=1, **BLOBS)
    return models, x_test


def test_scale_inputs_hand_values():
    x = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert torch.equal(scale_inputs(x, 10.0, 1), torch.tensor([[1.0, -20.0], [3.0, 40.0]]))
    assert torch.equal(scale_inputs(x, 10.0, "all"), 10 * x)
    assert torch.equal(scale_inputs(x, 10.0, None), 10 * x)
    # along u = (1, 1)/sqrt 2: the component (x.u) u is scaled, the orthogonal one kept
    out = scale_inputs(torch.tensor([[1.0, 0.0]]), 3.0, [1.0, 1.0])
    assert torch.allclose(out, torch.tensor([[2.0, 1.0]]))  # (.5,.5)*3 + (.5,-.5)
    assert torch.allclose(scale_inputs(x, 7.0, [0.0, 2.0]), scale_inputs(x, 7.0, 1))
    assert torch.equal(scale_inputs(x, 1.0, [0.3, 0.1]), x)
    with pytest.raises(ValueError):
        scale_inputs(x, 2.0, [0.0, 0.0])


def test_max_prob_gradient_vanishes_for_trained_relu_net(trained):
    models, x_test = trained
    net = models["single"].double()
    x = torch.as_tensor(x_test, dtype=torch.float64)
    near = gradient_norm(METRICS["max_prob"], net, x).mean().item()
    far = gradient_norm(METRICS["max_prob"], net, 1e4 * x).mean().item()
    assert near > 1e-6
    assert far < 1e-6 * near


def test_scaling_experiment_all_models_become_flat(trained):
    models, x_test = trained
    alphas = [1.0, 1e4]
    frame = scaling_experiment(models, x_test, alphas, feature="all", seed=0, confident=0.99)
    assert len(frame) == len(KINDS) * len(alphas) * len(METRICS)
    assert set(frame.columns) >= {"model", "kind", "seed", "alpha", "metric", "value", "grad_norm"}
    assert np.isfinite(frame[["value", "grad_norm", "share_confident"]].to_numpy()).all()
    g = frame.pivot_table(index=["model", "metric"], columns="alpha", values="grad_norm")
    assert (g[1e4] <= 1e-6 * g[1.0] + 1e-30).all()  # every gradient norm collapses
    single = frame[(frame.model == "single") & (frame.alpha == 1e4)].set_index("metric")
    assert single.loc["max_prob", "value"] == pytest.approx(1.0)
    assert single.loc["predictive_entropy", "value"] == pytest.approx(0.0, abs=1e-12)
    assert single.loc["max_prob", "share_confident"] == 1.0
    # a single net has neither class variance nor mutual information
    assert single.loc["class_variance", "value"] == 0.0


def test_scaling_one_feature_and_per_point_rows(trained):
    models, x_test = trained
    sub = {"bbb": models["bbb"]}
    a = scaling_experiment(
        sub, x_test, log_alphas(0, 4, 3), feature=0, seed=4, confident=0.99, reduce=False
    )
    b = scaling_experiment(
        sub, x_test, log_alphas(0, 4, 3), feature=0, seed=4, confident=0.99, reduce=False
    )
    assert len(a) == 3 * len(METRICS) * len(x_test)
    assert a.equals(b)  # deterministic given the seed
    assert (a["seed"] == 4).all() and a["point"].max() == len(x_test) - 1


def test_grid_heatmap_layout(trained):
    models, _ = trained
    frame = grid_heatmap(models["ensemble"], (-30, 30), (-20, 20), 5, metrics=["max_prob"], seed=0)
    assert len(frame) == 25 and set(frame["metric"]) == {"max_prob"}
    assert frame["x1"].iloc[:5].tolist() == [-30.0, -15.0, 0.0, 15.0, 30.0]  # x1 fastest
    assert frame["x2"].iloc[0] == -20.0 and frame["x2"].iloc[-1] == 20.0
    assert frame["model"].iloc[0] == "ensemble"
    assert ((frame["value"] >= 1 / 3 - 1e-12) & (frame["value"] <= 1.0)).all()


def test_limiting_votes_reads_each_sample_class_from_the_slopes():
    import torch

    from softmax_ood.studies.ulmer.scaling import limiting_votes

    # 4 samples x 1 point x 3 classes: logits a + alpha * b; the offsets a favour class 0 at
    # alpha = 1 but the slopes b decide the limit: classes 2, 2, 1, 2 -> largest share 3/4
    a = torch.tensor([[[9.0, 0.0, 0.0]], [[9.0, 0.0, 0.0]], [[9.0, 0.0, 0.0]], [[9.0, 0.0, 0.0]]])
    b = torch.tensor([[[0.0, 1.0, 2.0]], [[0.0, 1.0, 3.0]], [[0.0, 2.0, 1.0]], [[0.0, 0.5, 1.0]]])
    alpha = 1.0
    lp = torch.log_softmax(a + alpha * b, dim=-1)
    lp2 = torch.log_softmax(a + 2 * alpha * b, dim=-1)
    assert limiting_votes(lp, lp2, alpha).tolist() == [0.75]
    # far out the mean prediction's max probability tends to that share
    far = 1e4
    lpf = torch.log_softmax((a + far * b).double(), dim=-1)
    assert float(lpf.exp().mean(dim=0).max()) == pytest.approx(0.75, abs=1e-9)
