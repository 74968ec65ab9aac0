"""OOD score of an evaluation set: how well a linear discriminator tells it from the ID data.

:func:`ood_score` follows Kang et al. (Sec. 3.2 and App. B.3): a low-capacity (linear,
logistic-regression) classifier is trained on features of ID samples (label 0) and of the
evaluation set (label 1), balanced so each makes up 50 percent of its training data; the OOD
score is the mean predicted probability of "evaluation set" on evaluation samples, 0.5 when the
two are indistinguishable and 1 for a perfect discriminator. Here the score is measured on
**held-out** evaluation samples (not used to fit the discriminator; otherwise even an ID set
would score above 0.5 through over-fitting), and the split is repeated over ``n_repeats`` seeds
(mean, std and per-repeat values are returned). Features are standardised with statistics of the
discriminator's own training split.

Featurizers
-----------
:data:`FEATURIZERS` maps names to featurizer classes; :func:`build_featurizer` checks the
parameters like ``build_loss`` does. A featurizer is called on images ``(N, C, H, W)`` in
``[0, 1]`` and returns float32 features ``(N, D)``.

``"resnet18_imagenet"`` (the paper's choice)
    torchvision's ImageNet ResNet-18 (``IMAGENET1K_V1``), penultimate 512-d features, images
    repeated to 3 channels, resized to 224x224 and ImageNet-normalised. The weights are read from
    a local file whose sha256 must be :data:`RESNET18_IMAGENET_SHA256`; nothing is downloaded.

``"random_conv"`` (offline default stand-in)
    A fixed random-weight two-layer ReLU conv net (3x3 convolutions, 64 and 128 channels, weights
    ``N(0, 1/fan_in)`` drawn from a :class:`torch.Generator` with a fixed seed, no training),
    features = the two feature maps average-pooled to 2x2 (``64*4 + 128*4 = 768`` dims).
    Why it is a sensible stand-in for the ImageNet ResNet-18:

    * it needs no download and is independent of the studied models (it never sees a label or a
      trained weight), as the paper's featurizer is independent of the models it scores;
    * the discriminator on top is linear, so the features must be non-linear in the pixels:
      a linear function of raw pixels cannot see zero-mean changes such as additive noise
      (its expectation is unchanged; on the digits it sees noise only because clipping at the
      black background shifts the mean) and sees blur only through its mean. Rectified random
      filters respond to local energy and orientation, so noise (more high-frequency energy),
      blur (less), contrast, brightness and rotation all move the pooled features' means.
      A linear classifier on random ReLU features is a random-feature approximation of a
      kernel (arc-cosine) two-sample test (Rahimi & Recht 2007; Cho & Saul 2009), and random
      convolutional features are known to be strong generic image features (Jarrett et al. 2009;
      Saxe et al. 2011);
    * it runs at the native resolution: an ImageNet network would see an 8x8 digit blown up
      28 times, far outside the statistics it was trained on;
    * the 2x2 pooling keeps the coarse layout, which a digit rotation changes.

    Limits: its features are generic, not semantic; scores are not numerically comparable with
    the paper's, and for natural (semantic) shifts a pretrained featurizer is preferable. The
    weights depend on the channel count (drawn for ``C`` input channels from the same seed).

``"pixels"``
    Flattened raw pixels: the linear baseline (blind to zero-mean noise, see above).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .entries import check_kwargs, lookup

__all__ = [
    "FEATURIZERS",
    "OODScore",
    "PixelFeaturizer",
    "RESNET18_IMAGENET_FILE",
    "RESNET18_IMAGENET_SHA256",
    "RandomConvFeaturizer",
    "ResNet18ImageNetFeaturizer",
    "build_featurizer",
    "ood_score",
    "sha256_file",
]

#: torchvision's file name of the ImageNet ResNet-18 weights (``ResNet18_Weights.IMAGENET1K_V1``).
RESNET18_IMAGENET_FILE = "resnet18-f37072fd.pth"
#: sha256 of that file (torchvision's name embeds its first 8 hex digits).
RESNET18_IMAGENET_SHA256 = "f37072fd47e89c5e827621c5baffa7500819f7896bbacec160b1a16c560e07ec"
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# --------------------------------------------------------------------------- helpers
def _images(x: Any) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if arr.ndim != 4 or not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(
            f"images must be a float array (N, C, H, W), got shape {arr.shape} dtype {arr.dtype}"
        )
    return arr.astype(np.float32, copy=False)


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"seed must be a non-negative integer, got {value!r}")
    return int(value)


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of the file at ``path`` (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------- featurizers
class PixelFeaturizer:
    """Flattened raw pixels, float32 ``(N, C*H*W)``."""

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any) -> np.ndarray:
        arr = _images(x)
        return arr.reshape(len(arr), -1).copy()


class RandomConvFeaturizer:
    """Fixed random-weight two-layer ReLU conv net, pooled to 2x2 (see the module docstring).

    :param seed: seed of the :class:`torch.Generator` that draws the weights.
    :param width: channels of the first layer (the second has twice as many).
    :param batch_size: images per forward pass (memory only; results do not depend on it).
    """

    def __init__(self, seed: int = 0, width: int = 64, batch_size: int = 1024):
        self.seed = _seed(seed)
        self.width = _positive_int("width", width)
        self.batch_size = _positive_int("batch_size", batch_size)
        self._weights: dict[int, tuple] = {}

    def _weights_for(self, channels: int):
        import torch

        if channels not in self._weights:
            g = torch.Generator().manual_seed(self.seed)
            w1 = torch.randn(self.width, channels, 3, 3, generator=g) / math.sqrt(channels * 9)
            w2 = torch.randn(2 * self.width, self.width, 3, 3, generator=g) / math.sqrt(
                self.width * 9
            )
            self._weights[channels] = (w1, w2)
        return self._weights[channels]

    def __call__(self, x: Any) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        arr = _images(x)
        w1, w2 = self._weights_for(arr.shape[1])
        out = []
        with torch.no_grad():
            for start in range(0, len(arr), self.batch_size):
                xb = torch.from_numpy(np.ascontiguousarray(arr[start : start + self.batch_size]))
                h1 = F.relu(F.conv2d(xb - 0.5, w1, padding=1))
                h2 = F.relu(F.conv2d(h1, w2, padding=1))
                feats = [F.adaptive_avg_pool2d(h, 2).flatten(1) for h in (h1, h2)]
                out.append(torch.cat(feats, dim=1).numpy())
        if not out:
            return np.zeros((0, 12 * self.width), dtype=np.float32)
        return np.concatenate(out).astype(np.float32, copy=False)


class ResNet18ImageNetFeaturizer:
    """torchvision's ImageNet ResNet-18, penultimate (512-d) features, from a local weight file.

    The file is checked against ``sha256`` (default :data:`RESNET18_IMAGENET_SHA256`, torchvision's
    file) before it is loaded; nothing is ever downloaded here (at paper scale the file is a
    download entry of the sources file, whose checksum the Kang rules pass as ``sha256``). Grey
    images are repeated to 3 channels, every image is resized to ``image_size`` (bilinear,
    antialiased) and normalised with the ImageNet mean and std.

    :param weights_path: path of ``resnet18-f37072fd.pth``.
    :param image_size: input size of the network (224 as in ImageNet evaluation).
    :param batch_size: images per forward pass.
    :param sha256: the file's expected sha256 (another value only for a stand-in file of the same
        architecture, e.g. the loopback tests' randomly initialised state_dict).
    :raises FileNotFoundError: the file is missing (the message names it and its sha256).
    :raises ValueError: the file's sha256 differs.
    """

    def __init__(
        self,
        weights_path: str | Path,
        image_size: int = 224,
        batch_size: int = 64,
        sha256: str = RESNET18_IMAGENET_SHA256,
    ):
        path = Path(weights_path)
        if not path.is_file():
            raise FileNotFoundError(
                f"ImageNet ResNet-18 weights not found at {path}: place torchvision's "
                f"{RESNET18_IMAGENET_FILE} (sha256 {sha256}) there."
            )
        digest = sha256_file(path)
        if digest != sha256:
            raise ValueError(
                f"ImageNet ResNet-18 weights at {path} have sha256 {digest}, expected "
                f"{sha256} ({RESNET18_IMAGENET_FILE})."
            )
        self.weights_path = path
        self.image_size = _positive_int("image_size", image_size)
        self.batch_size = _positive_int("batch_size", batch_size)
        self._model = None

    def _network(self):
        if self._model is None:
            import torch
            from torchvision.models import resnet18

            model = resnet18(weights=None)
            state = torch.load(self.weights_path, map_location="cpu", weights_only=True)
            model.load_state_dict(state)
            model.fc = torch.nn.Identity()
            self._model = model.eval()
        return self._model

    def __call__(self, x: Any) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        arr = _images(x)
        if arr.shape[1] not in (1, 3):
            raise ValueError(f"resnet18_imagenet needs 1 or 3 channels, got {arr.shape[1]}")
        model = self._network()
        mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
        std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
        out = []
        with torch.no_grad():
            for start in range(0, len(arr), self.batch_size):
                xb = torch.from_numpy(np.ascontiguousarray(arr[start : start + self.batch_size]))
                if xb.shape[1] == 1:
                    xb = xb.repeat(1, 3, 1, 1)
                xb = F.interpolate(
                    xb,
                    size=(self.image_size, self.image_size),
                    mode="bilinear",
                    align_corners=False,
                    antialias=True,
                )
                out.append(model((xb - mean) / std).numpy())
        if not out:
            return np.zeros((0, 512), dtype=np.float32)
        return np.concatenate(out).astype(np.float32, copy=False)


FEATURIZERS: dict[str, type] = {
    "random_conv": RandomConvFeaturizer,
    "pixels": PixelFeaturizer,
    "resnet18_imagenet": ResNet18ImageNetFeaturizer,
}


def build_featurizer(name: str, params: Mapping[str, Any] | None = None):
    """Instantiate ``FEATURIZERS[name](**params)`` after checking ``params`` against its
    signature (unknown or missing keys are a one-sentence ``ValueError``)."""
    cls = lookup("featurizer", FEATURIZERS, name)
    params = {} if params is None else dict(params)
    check_kwargs("featurizer", name, cls, params)
    return cls(**params)


# --------------------------------------------------------------------------- OOD score
@dataclass(frozen=True)
class OODScore:
    """Result of :func:`ood_score`.

    ``mean`` / ``std`` (sample std, ``ddof=1``; 0 for one repeat) over ``per_repeat``, the mean
    predicted probability of "evaluation set" on the held-out evaluation samples of each repeat;
    ``n_fit_per_class`` samples of each set trained the discriminator, ``n_heldout`` evaluation
    samples scored it.
    """

    mean: float
    std: float
    per_repeat: tuple[float, ...]
    n_fit_per_class: int
    n_heldout: int

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["per_repeat"] = list(self.per_repeat)
        return d


def _features(name: str, x: Any) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ValueError(f"{name} must be a 2-D array (N >= 2, D), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contain NaN or inf")
    return arr


def ood_score(
    id_features: Any,
    eval_features: Any,
    *,
    n_repeats: int,
    seed: int,
    heldout_fraction: float = 0.5,
    C: float = 1.0,
    alpha: float | None = None,
    max_iter: int = 1000,
) -> OODScore:
    """OOD score of an evaluation set against ID data (Kang et al., App. B.3), over repeats.

    Each repeat ``r`` (``numpy.random.default_rng([seed, r])``):

    1. shuffle the evaluation samples; the last ``ceil(heldout_fraction * n_eval)`` are held out,
       the others may train the discriminator;
    2. balance: ``n_fit = min(n_eval - n_heldout, n_id)`` evaluation samples and as many ID
       samples drawn without replacement train it (50 percent each);
    3. standardise the features with that training split's mean and std and fit an
       L2-regularised logistic regression (``C``, lbfgs, one BLAS thread);
    4. score = mean predicted probability of "evaluation set" on the held-out samples.

    :param id_features: ``(n_id, D)`` features of ID (training-distribution) samples.
    :param eval_features: ``(n_eval, D)`` features of the evaluation set.
    :param n_repeats: number of random splits (no code default; the paper does not state its
        number, this project's configuration uses 30).
    :param seed: base seed; every repeat is deterministic.
    :param heldout_fraction: fraction of the evaluation set held out for scoring, in ``(0, 1)``.
    :param C: inverse L2 strength of the logistic regression (scikit-learn's default 1.0).
    :param alpha: the L2 strength per training sample instead of ``C``, as scikit-learn's
        ``SGDClassifier(loss="log_loss", alpha=...)`` states it (objective: mean log-loss +
        ``alpha / 2 * ||w||^2``), i.e. ``C = 1 / (alpha * n_train)``; Kang et al.'s public code
        uses ``alpha = 10`` on standardised features. The penalty then does not weaken as the
        training split grows.
    :param max_iter: lbfgs iterations.
    """
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    xi = _features("id_features", id_features)
    xe = _features("eval_features", eval_features)
    if xi.shape[1] != xe.shape[1]:
        raise ValueError(f"feature widths differ: ID {xi.shape[1]} vs evaluation {xe.shape[1]}")
    n_repeats = _positive_int("n_repeats", n_repeats)
    seed = _seed(seed)
    if not (isinstance(heldout_fraction, numbers.Real) and 0.0 < heldout_fraction < 1.0):
        raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction!r}")
    if not (isinstance(C, numbers.Real) and math.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite positive number, got {C!r}")
    if alpha is not None and not (
        isinstance(alpha, numbers.Real) and math.isfinite(alpha) and alpha > 0
    ):
        raise ValueError(f"alpha must be a finite positive number, got {alpha!r}")
    n_eval = len(xe)
    n_heldout = min(max(math.ceil(heldout_fraction * n_eval), 1), n_eval - 1)
    n_fit = min(n_eval - n_heldout, len(xi))
    scores = []
    for r in range(n_repeats):
        rng = np.random.default_rng([seed, r])
        perm = rng.permutation(n_eval)
        fit_eval = xe[perm[:n_fit]]
        held = xe[perm[n_eval - n_heldout :]]
        fit_id = xi[rng.choice(len(xi), size=n_fit, replace=False)]
        xfit = np.concatenate([fit_id, fit_eval])
        yfit = np.concatenate([np.zeros(n_fit), np.ones(n_fit)])
        mu = xfit.mean(axis=0)
        sd = xfit.std(axis=0)
        sd[sd == 0] = 1.0
        c_eff = float(C) if alpha is None else 1.0 / (float(alpha) * len(yfit))
        clf = LogisticRegression(C=c_eff, max_iter=int(max_iter))
        with threadpool_limits(limits=1):  # tiny problems: one BLAS thread is fastest
            clf.fit((xfit - mu) / sd, yfit)
        scores.append(float(clf.predict_proba((held - mu) / sd)[:, 1].mean()))
    arr = np.asarray(scores)
    std = float(arr.std(ddof=1)) if len(arr) > 1 else 0.0
    return OODScore(float(arr.mean()), std, tuple(scores), int(n_fit), int(n_heldout))
