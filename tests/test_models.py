"""Contract tests for the model zoo (``softmax_ood.models``), parametrized over the registry."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from softmax_ood.models import (
    MODELS,
    GodinHead,
    count_parameters,
    create_model,
    make_head,
)

NUM_CLASSES = 5
BATCH = 4

# Tiny configuration for every registered family (kept small so the file runs in seconds).
SMALL: dict[str, dict] = {
    "mlp": {"hidden": (16, 16)},
    "cnn": {"channels": (4, 8)},
    "convnet": {"channels": (4, 8), "hidden": 8},
    "resnet": {"depth": 8, "base_width": 4},
    "wrn": {"depth": 10, "widen_factor": 1},
    "densenet": {"depth": 10, "growth_rate": 4},
}
FAMILIES = sorted(MODELS)
HEAD_KINDS = ["linear", "godin"]


def _build(family: str, head: str = "linear", image_size: int = 8, seed: int = 0, **overrides):
    torch.manual_seed(seed)
    kwargs = {**SMALL[family], "head": head, **overrides}
    return create_model(
        family, num_classes=NUM_CLASSES, in_chans=1, image_size=image_size, **kwargs
    )


def _batch(image_size: int, seed: int = 123) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(BATCH, 1, image_size, image_size, generator=gen)


def test_small_configs_cover_registry():
    assert set(SMALL) == set(MODELS)


# --------------------------------------------------------------------------- interface contract


@pytest.mark.parametrize("image_size", [8, 16])
@pytest.mark.parametrize("head", HEAD_KINDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_forward_backward_shapes(family, head, image_size):
    model = _build(family, head, image_size)
    model.train()
    x = _batch(image_size)
    feats = model.forward_features(x)
    assert feats.shape == (BATCH, model.num_features)
    logits = model(x)
    assert logits.shape == (BATCH, NUM_CLASSES)
    assert model.num_classes == NUM_CLASSES
    assert torch.isfinite(logits).all()
    loss = nn.functional.cross_entropy(logits, torch.arange(BATCH) % NUM_CLASSES)
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, f"{family}/{head}: no gradient for {name}"
        assert torch.isfinite(p.grad).all(), f"{family}/{head}: non-finite gradient in {name}"


@pytest.mark.parametrize("head", HEAD_KINDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_forward_is_head_of_features(family, head):
    model = _build(family, head, drop_rate=0.2).eval()
    x = _batch(8)
    with torch.no_grad():
        torch.testing.assert_close(model(x), model.forward_head(model.forward_features(x)))


@pytest.mark.parametrize("head", HEAD_KINDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_pre_logits_returns_features(family, head):
    model = _build(family, head, drop_rate=0.2).eval()
    with torch.no_grad():
        feats = model.forward_features(_batch(8))
        out = model.forward_head(feats, pre_logits=True)
    assert out.shape == (BATCH, model.num_features)
    torch.testing.assert_close(out, feats)


@pytest.mark.parametrize("head", HEAD_KINDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_get_classifier(family, head):
    model = _build(family, head)
    clf = model.get_classifier()
    if head == "linear":
        assert type(clf) is nn.Linear
        assert (clf.in_features, clf.out_features) == (model.num_features, NUM_CLASSES)
    else:
        assert isinstance(clf, GodinHead)
        assert (clf.in_features, clf.num_classes) == (model.num_features, NUM_CLASSES)
    assert any(m is clf for m in model.modules())


@pytest.mark.parametrize("family", FAMILIES)
def test_same_seed_same_model(family):
    x = _batch(8)
    a, b = _build(family, "godin", seed=7), _build(family, "godin", seed=7)
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert torch.equal(sa[k], sb[k]), k
    with torch.no_grad():
        assert torch.equal(a.eval()(x), b.eval()(x))
    c = _build(family, "godin", seed=8)
    assert any(
        not torch.equal(sa[k], v) for k, v in c.state_dict().items() if v.is_floating_point()
    )


# families with a fully connected layer on the image (mlp; convnet: Kang's MNIST network) are
# built for one image size
FIXED_SIZE = ("mlp", "convnet")


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in FIXED_SIZE])
def test_conv_nets_ignore_image_size(family):
    model = _build(family, image_size=8).eval()
    with torch.no_grad():
        assert model(_batch(16)).shape == (BATCH, NUM_CLASSES)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in FIXED_SIZE])
@pytest.mark.parametrize("image_size", [1, 2, 3])
def test_conv_nets_survive_tiny_inputs(family, image_size):
    model = _build(family, image_size=image_size).train()
    assert model(_batch(image_size)).shape == (BATCH, NUM_CLASSES)


def test_resnet_imagenet_layout_on_tiny_input():
    model = create_model(
        "resnet", num_classes=3, in_chans=1, image_size=8, depth=18, base_width=2
    ).train()
    assert model(_batch(8)).shape == (BATCH, 3)
    assert model.num_features == 16


# --------------------------------------------------------------------------- validation errors


def test_unknown_family():
    with pytest.raises(ValueError, match=r"unknown architecture family 'vit'.*'resnet'"):
        create_model("vit", num_classes=10, in_chans=3, image_size=32)


@pytest.mark.parametrize("family", FAMILIES)
def test_unknown_kwarg(family):
    with pytest.raises(ValueError, match=r"dpeth") as exc:
        _build(family, dpeth=3)
    msg = str(exc.value)
    assert repr(family) in msg
    assert "drop_rate" in msg and "head" in msg  # lists the accepted keys


def test_missing_required_kwarg():
    with pytest.raises(ValueError, match=r"requires argument\(s\) \['depth'\]"):
        create_model("resnet", num_classes=10, in_chans=3, image_size=32)
    with pytest.raises(ValueError, match=r"widen_factor"):
        create_model("wrn", num_classes=10, in_chans=3, image_size=32, depth=10)


@pytest.mark.parametrize(
    ("family", "depth"),
    [("resnet", 19), ("resnet", 50), ("wrn", 12), ("wrn", 4), ("densenet", 12), ("densenet", 4)],
)
def test_bad_depth(family, depth):
    kwargs = {"widen_factor": 1} if family == "wrn" else {}
    with pytest.raises(ValueError, match=rf"depth {depth}"):
        create_model(family, num_classes=10, in_chans=1, image_size=8, depth=depth, **kwargs)


def test_bad_resnet_depth_lists_allowed():
    with pytest.raises(ValueError, match=r"\[8, 14, 18, 20, 32, 34, 44, 56, 110\]"):
        create_model("resnet", num_classes=10, in_chans=1, image_size=8, depth=26)


@pytest.mark.parametrize("family", FAMILIES)
def test_unknown_head(family):
    with pytest.raises(ValueError, match=r"'cosine'.*'linear', 'godin'"):
        _build(family, head="cosine")


def test_make_head():
    assert type(make_head("linear", 8, 3)) is nn.Linear
    assert isinstance(make_head("godin", 8, 3), GodinHead)
    with pytest.raises(ValueError, match=r"unknown head 'Linear'"):
        make_head("Linear", 8, 3)


@pytest.mark.parametrize("overrides", [{"drop_rate": 1.0}, {"drop_rate": -0.1}, {"head": None}])
def test_bad_values(overrides):
    with pytest.raises(ValueError):
        _build("cnn", **overrides)


def test_bad_sizes():
    with pytest.raises(ValueError, match="num_classes"):
        create_model("mlp", num_classes=0, in_chans=1, image_size=8)
    with pytest.raises(ValueError, match="hidden"):
        create_model("mlp", num_classes=2, in_chans=1, image_size=8, hidden=())


# --------------------------------------------------------------------------- GODIN head


def test_godin_head_decomposition():
    torch.manual_seed(0)
    head = GodinHead(16, 4).train()
    phi = torch.randn(32, 16) * 5
    logits = head(phi)
    cos = head.cosine(phi)
    g = head.denominator(phi)
    assert logits.shape == cos.shape == (32, 4)
    assert g.shape == (32, 1)
    assert (cos >= -1).all() and (cos <= 1).all()
    assert (g > 0).all() and (g < 1).all()
    torch.testing.assert_close(logits, cos / g)
    # cosine matches the textbook formula and is invariant to positive rescaling of phi
    w = head.h.weight
    ref = (phi @ w.T) / (phi.norm(dim=1, keepdim=True) * w.norm(dim=1)[None, :])
    torch.testing.assert_close(cos, ref, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(head.cosine(3 * phi), cos, atol=1e-4, rtol=1e-4)
    # eval mode (running BN stats) works for a single sample
    head.eval()
    with torch.no_grad():
        assert head(phi[:1]).shape == (1, 4)


def test_godin_head_zero_features_finite():
    head = GodinHead(8, 3).eval()
    with torch.no_grad():
        assert torch.isfinite(head(torch.zeros(2, 8))).all()


# --------------------------------------------------------------------------- paper-size variants


@pytest.mark.parametrize(
    ("family", "kwargs", "low", "high"),
    [
        ("wrn", {"depth": 40, "widen_factor": 2, "drop_rate": 0.3}, 2.1e6, 2.4e6),  # 2,243,546
        ("resnet", {"depth": 34}, 20.5e6, 22.0e6),  # 21.28M
        ("resnet", {"depth": 18}, 10.8e6, 11.5e6),  # 11.17M
        ("resnet", {"depth": 20}, 0.25e6, 0.30e6),  # 0.27M
        ("densenet", {"depth": 100, "growth_rate": 12}, 0.70e6, 0.85e6),  # 0.77M
    ],
)
def test_paper_size_parameter_counts(family, kwargs, low, high):
    torch.manual_seed(0)
    model = create_model(family, num_classes=10, in_chans=3, image_size=32, **kwargs)
    assert low < count_parameters(model) < high


def test_wrn_40_2_forward_32x32():
    torch.manual_seed(0)
    model = create_model(
        "wrn", num_classes=10, in_chans=3, image_size=32, depth=40, widen_factor=2, drop_rate=0.3
    ).eval()
    assert model.num_features == 128
    with torch.no_grad():
        out = model(torch.randn(2, 3, 32, 32))
    assert out.shape == (2, 10)
    assert torch.isfinite(out).all()
