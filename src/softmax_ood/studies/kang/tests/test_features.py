"""Fig. 4 mechanism analysis on small chains, with hand-checked values."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from softmax_ood.models.cnn import SmallCNN
from softmax_ood.models.mlp import MLP
from softmax_ood.studies.kang.features import (
    _run,
    accumulated_constants,
    affine_layer_names,
    chain,
    energy_rank,
    layer_sq_norms,
    norm_ratios,
    subspace_share,
)


def _tiny() -> nn.Sequential:
    """x (2,) -> Linear(W1, b1) -> ReLU -> Linear(W2, b2) -> (2,)."""
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
        net[0].bias.copy_(torch.tensor([0.5, -1.0]))
        net[2].weight.copy_(torch.tensor([[1.0, 1.0], [0.0, 3.0]]))
        net[2].bias.copy_(torch.tensor([0.1, 0.2]))
    return net


def test_chain_reproduces_the_models():
    torch.manual_seed(0)
    x = torch.rand(6, 1, 8, 8)
    for model in (MLP(10, 1, 8, hidden=(16, 8), drop_rate=0.2), SmallCNN(10, 1, channels=(4, 8))):
        model.train()
        model(x)  # move batch-norm running statistics away from their init
        model.eval()
        out, _ = _run(chain(model), x)
        assert torch.allclose(out, model(x), atol=1e-5)
    assert affine_layer_names(SmallCNN(10, 1, channels=(4, 8))) == [
        "conv0", "conv1", "conv2", "conv3", "linear4",
    ]  # fmt: skip


def test_norms_by_hand():
    net = _tiny()
    x = torch.tensor([[1.0, 1.0]])
    # ||W1 x||^2 = 1 + 4; phi2 = relu(W1 x + b1) = (1.5, 1); ||W2 phi2||^2 = 2.5^2 + 3^2
    assert np.allclose(layer_sq_norms(net, x), [[5.0, 6.25 + 9.0]])
    ratios = norm_ratios(net, x, 0.5 * x)
    assert ratios["name"].tolist() == ["linear0", "linear1"]
    # layer 0 is linear in x: ratio 1/4; layer 1: phi2 = (1.0, 0) -> ||W2 phi2||^2 = 1
    assert np.allclose(ratios["ratio_mean"], [0.25, 1.0 / 15.25])


def test_subspace_share_inside_and_outside_the_row_space():
    net = nn.Sequential(nn.Linear(3, 1, bias=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[1.0, 0.0, 0.0]]))
    x = torch.tensor([[2.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    share = subspace_share(net, x, 0, rank=1)
    assert np.allclose(share[:3], [1.0, 0.0, 0.5]) and np.isnan(share[3])
    with pytest.raises(ValueError, match="rank"):
        subspace_share(net, x, 0, rank=2)


def test_energy_rank():
    net = nn.Sequential(nn.Linear(3, 3, bias=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.diag(torch.tensor([3.0, 1.0, 0.0])))
    assert energy_rank(net, 0, 0.9) == 1 and energy_rank(net, 0, 0.95) == 2
    assert energy_rank(net, 0, 1.0) == 2


def test_accumulated_constants_by_hand():
    net = _tiny()
    x = torch.zeros(1, 2)
    # zero W1 x: W2 relu(b1) + b2 = W2 (0.5, 0) + b2
    assert np.allclose(accumulated_constants(net, 0, x), [0.6, 0.2])
    assert np.allclose(accumulated_constants(net, -1, x), [0.1, 0.2])  # last layer: its bias


def test_batch_norm_is_folded_into_the_constants():
    torch.manual_seed(0)
    model = SmallCNN(3, 1, channels=(2,))
    x = torch.rand(4, 1, 8, 8)
    model.train()
    model(x)
    model.eval()
    const = accumulated_constants(model, 0, x)
    # feeding an input whose first conv output is exactly zero gives the same: x = 0 (no bias)
    assert np.allclose(const, model(torch.zeros(1, 1, 8, 8))[0].detach().numpy(), atol=1e-6)


def test_unsupported_models_and_layers():
    from softmax_ood.models.resnet import ResNet

    with pytest.raises(ValueError, match="unsupported model ResNet"):
        chain(ResNet(10, 1, depth=8))
    with pytest.raises(ValueError, match="unsupported module Tanh"):
        chain(nn.Sequential(nn.Linear(2, 2), nn.Tanh()))
    with pytest.raises(ValueError, match="only a linear head"):
        chain(MLP(10, 1, 8, hidden=(4,), head="godin"))
    with pytest.raises(ValueError, match="not a Linear layer"):
        subspace_share(SmallCNN(3, 1, channels=(2,)), torch.rand(2, 1, 8, 8), 0, rank=1)
    with pytest.raises(ValueError, match="layer must be"):
        accumulated_constants(_tiny(), 2, torch.zeros(1, 2))


def test_kangs_mnist_network_is_a_chain():
    from softmax_ood.models.convnet import ConvNet

    torch.manual_seed(0)
    model = ConvNet(4, 1, 28, channels=(2, 3), hidden=5).eval()
    x = torch.rand(6, 1, 28, 28)
    assert [n for n in affine_layer_names(model)] == ["conv0", "conv1", "linear2", "linear3"]
    # the hidden layer's input zeroed: head(relu(b_hidden))
    fc, head = model.features[6], model.classifier
    want = head(torch.relu(fc.bias)).detach().numpy()
    assert np.allclose(accumulated_constants(model, -2, x[:1]), want, atol=1e-6)
    assert len(norm_ratios(model, x, x)) == 4


def test_a_residual_network_is_analysed_by_hooks_and_at_its_head():
    from softmax_ood.models.resnet import ResNet

    torch.manual_seed(0)
    model = ResNet(4, 1, depth=8, base_width=4)
    x = torch.rand(8, 1, 8, 8)
    model.train()
    model(x)  # batch-norm running statistics
    names = affine_layer_names(model)
    assert names[-1].startswith("linear") and len(names) > 3
    nr = norm_ratios(model, x, x)
    assert np.allclose(nr["ratio_mean"], 1.0) and list(nr["name"]) == names
    assert model.training  # the analysis restores the mode
    assert np.allclose(accumulated_constants(model, -1, x), model.classifier.bias.detach().numpy())
    rank = energy_rank(model, -1, 0.9)
    share = subspace_share(model, x, -1, rank)
    assert share.shape == (8,) and np.all((share >= 0) & (share <= 1 + 1e-9))
    with pytest.raises(ValueError, match="only its classifier"):
        accumulated_constants(model, -2, x)
