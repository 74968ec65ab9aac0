"""The floor battery: unsupervised image-statistics detectors an OOD set must beat before a
network's failure on it counts as a test of the network (issue 41).

Every detector is fitted on ID *training* images only (:meth:`Battery.fit`) and scores an image
with a fixed orientation rule (higher = more in-distribution, as every score of
:mod:`softmax_ood.metrics`; FPR95 counts ID as the positive class, docs/contract.md):
a per-image statistic scores minus its distance from the ID training median in units of the ID
interquartile range (*two-sided*: too high and too low are both suspicious); a distance to the
ID (histogram distance, Mahalanobis distance, nearest-neighbour distance) scores minus that
distance (*one-sided*). Detectors, orientation and fitted parameters are frozen here, before any
verdict is read; no detector is fitted on test or OOD images.

Two families, reported separately:

* :data:`TUNING` -- the cues the constructed far sets of :mod:`softmax_ood.fashion` were matched
  on (a construction may be checked against them);
* :data:`HELD_OUT` -- detectors no construction step was tuned against (nearest neighbour in
  pixels and in a gradient-orientation descriptor, a global orientation histogram and the
  radial power spectrum's slope): a set that passes the tuning family only because it was built
  to shows up here.

Why each detector exists (:data:`WHY` holds the same lines, rendered on the study page):

* ``peak`` -- Fashion-MNIST images nearly all peak at exactly 1.0; dimmed glyphs, photos and
  textures rarely do.
* ``ink_p50`` / ``ink_p90`` -- the median and 90th percentile grey level of the lit pixels: the
  ink's brightness profile, not only its maximum.
* ``lit_fraction`` -- the share of lit pixels (the old floor's lit-pixel count).
* ``mean_intensity`` -- the mean grey level (the old floor's).
* ``hist_distance`` -- half the L1 distance of the lit pixels' 16-bin grey histogram from the ID
  training images' mean histogram: the whole intensity distribution at once.
* ``total_variation`` -- mean absolute neighbour difference: noise and shuffles are rough,
  upsampled digits smooth.
* ``roughness`` -- total variation per unit of ink (independent of how much ink there is).
* ``autocorr`` -- lag-1 spatial autocorrelation: pixel-wise noise and pixel shuffles have none.
* ``highfreq`` -- the share of spectral power above a quarter of the sampling frequency.
* ``border_mass`` -- the share of ink on the border ring (the framing trap: MNIST-style boxes).
* ``mahalanobis`` -- the Mahalanobis distance over all the statistics above (standardised): a
  set matched on each cue alone but not on their joint law.
* ``nn_pixels`` (held out) -- L2 distance to the nearest of a fixed subsample of ID training
  images: anything far from every garment in pixel space.
* ``nn_hog`` (held out) -- the same distance in a HOG-like descriptor (per-cell histograms of
  gradient orientation): garment shapes and edges, not grey levels.
* ``orientation`` (held out) -- Mahalanobis distance of the image's global gradient-orientation
  histogram: garments are dominated by vertical and horizontal edges.
* ``spectral_slope`` (held out) -- the log-log slope of the radially averaged power spectrum,
  a spectral feature no construction step matches (they match the mean amplitude spectrum).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .pixelfloor import _gray as _pixel_gray

__all__ = [
    "DETECTORS",
    "HELD_OUT",
    "STATISTICS",
    "TUNING",
    "WHY",
    "Battery",
    "battery_result",
    "fpr95",
]

#: per-image statistics scored two-sided (distance from the ID training median)
TWO_SIDED = (
    "peak",
    "ink_p50",
    "ink_p90",
    "lit_fraction",
    "mean_intensity",
    "total_variation",
    "roughness",
    "autocorr",
    "highfreq",
    "border_mass",
    "spectral_slope",
)
#: the statistics whose vector the ``mahalanobis`` detector reads (the tuning family's)
STATISTICS = (
    "peak",
    "ink_p50",
    "ink_p90",
    "lit_fraction",
    "mean_intensity",
    "hist_distance",
    "total_variation",
    "roughness",
    "autocorr",
    "highfreq",
    "border_mass",
)
TUNING = (*STATISTICS, "mahalanobis")
HELD_OUT = ("nn_pixels", "nn_hog", "orientation", "spectral_slope")
DETECTORS = (*TUNING, *HELD_OUT)

WHY = {
    "peak": "Fashion-MNIST images nearly all peak at exactly 1.0",
    "ink_p50": "median grey level of the lit pixels",
    "ink_p90": "90th percentile grey level of the lit pixels",
    "lit_fraction": "share of lit pixels",
    "mean_intensity": "mean grey level",
    "hist_distance": "lit pixels' grey histogram vs the ID mean histogram",
    "total_variation": "mean neighbour difference (noise rough, upsampled digits smooth)",
    "roughness": "total variation per unit of ink",
    "autocorr": "lag-1 spatial autocorrelation (noise and pixel shuffles have none)",
    "highfreq": "share of spectral power above a quarter of the sampling frequency",
    "border_mass": "share of ink on the border ring (the framing trap)",
    "mahalanobis": "joint law of all the statistics above",
    "nn_pixels": "distance to the nearest ID training image (held out)",
    "nn_hog": "distance to the nearest ID training image in a HOG-like descriptor (held out)",
    "orientation": "global gradient-orientation histogram (held out)",
    "spectral_slope": "slope of the radially averaged power spectrum (held out)",
}

LIT = 0.05  # a pixel is lit above this share of the ID training images' grey range
BINS = 16  # grey histogram of the lit pixels
ORIENT = 9  # unsigned gradient-orientation bins
CHUNK = 4096


def _gray(images) -> np.ndarray:
    x = _pixel_gray(images)
    if not np.isfinite(x).all():
        raise ValueError("the floor battery needs finite images; these hold NaN or inf pixels")
    return x


def fpr95(id_scores, ood_scores) -> float:
    """FPR95 in % with ID positive (docs/contract.md): the share of OOD scores at or above the
    first threshold, scanning down, at which 95 % of the ID scores are accepted -- the
    ``ceil(0.95 n)``-th largest ID score (equal to :func:`softmax_ood.metrics.fpr_at_tpr`, a
    test says so; one partition instead of a sort, for the bootstrap)."""
    a, b = np.asarray(id_scores, dtype=np.float64), np.asarray(ood_scores, dtype=np.float64)
    k = int(np.ceil(0.95 * len(a) - 1e-9))
    t = np.partition(a, len(a) - k)[len(a) - k]
    return 100.0 * float(np.mean(b >= t))


def _radius(h: int, w: int) -> np.ndarray:
    fy, fx = np.fft.fftfreq(h)[:, None] * h, np.fft.fftfreq(w)[None, :] * w
    return np.sqrt(fy**2 + fx**2)


def _spectral(ink: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per image: the share of power (DC excluded) above a quarter of the sampling frequency and
    the least-squares slope of log radial mean power against log radius (radii 1..H/2)."""
    n, h, w = ink.shape
    p = np.abs(np.fft.fft2(ink - ink.mean(axis=(1, 2), keepdims=True))) ** 2
    r = _radius(h, w)
    total = p.sum(axis=(1, 2))
    high = p[:, r > min(h, w) / 4].sum(axis=1) / np.maximum(total, 1e-12)
    ri = np.rint(r).astype(int)
    radii = np.arange(1, min(h, w) // 2 + 1)
    prof = np.stack([p[:, ri == k].mean(axis=1) for k in radii], axis=1)
    lx = np.log(radii)
    ly = np.log(prof + 1e-12)
    lxc = lx - lx.mean()
    slope = (ly - ly.mean(axis=1, keepdims=True)) @ lxc / (lxc @ lxc)
    return np.where(total > 0, high, 0.0), np.where(total > 0, slope, 0.0)


def _orientations(ink: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """HOG-like descriptor (a 4x4 grid of cells, :data:`ORIENT` unsigned orientation bins per
    cell weighted by gradient magnitude, each cell L2-normalised) and the global orientation
    histogram (summed over cells, normalised to sum 1), per image."""
    n, h, w = ink.shape
    pad = np.pad(ink, ((0, 0), (1, 1), (1, 1)))
    gx = pad[:, 1:-1, 2:] - pad[:, 1:-1, :-2]
    gy = pad[:, 2:, 1:-1] - pad[:, :-2, 1:-1]
    mag = np.hypot(gx, gy)
    ang = np.mod(np.arctan2(gy, gx), np.pi)
    b = np.minimum((ang / np.pi * ORIENT).astype(int), ORIENT - 1)
    ch, cw = max(1, h // 4), max(1, w // 4)
    cell = np.minimum(np.arange(h) // ch, 3)[:, None] * 4 + np.minimum(np.arange(w) // cw, 3)
    idx = (np.arange(n)[:, None, None] * 16 + cell[None]) * ORIENT + b
    hist = np.bincount(idx.ravel(), weights=mag.ravel(), minlength=n * 16 * ORIENT)
    hist = hist.reshape(n, 16, ORIENT)
    glob = hist.sum(axis=1)
    glob = glob / np.maximum(glob.sum(axis=1, keepdims=True), 1e-12)
    hog = hist / np.sqrt((hist**2).sum(axis=2, keepdims=True) + 1e-6)
    return hog.reshape(n, -1), glob


def _nearest(a: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Euclidean distance of every row of ``a`` to its nearest row of ``ref``."""
    rr = (ref**2).sum(axis=1)
    out = np.empty(len(a))
    for s in range(0, len(a), CHUNK):
        blk = a[s : s + CHUNK]
        d2 = (blk**2).sum(axis=1)[:, None] + rr[None, :] - 2.0 * blk @ ref.T
        out[s : s + CHUNK] = np.sqrt(np.maximum(d2.min(axis=1), 0.0))
    return out


def _maha(v: np.ndarray, mu: np.ndarray, prec: np.ndarray) -> np.ndarray:
    d = v - mu
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", d, prec, d), 0.0))


def _precision(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = v.mean(axis=0)
    cov = np.atleast_2d(np.cov(v.T))
    cov = cov + 1e-6 * max(float(np.trace(cov)) / len(cov), 1e-12) * np.eye(len(cov))
    return mu, np.linalg.pinv(cov)


@dataclass(frozen=True)
class Battery:
    """The fitted battery (:meth:`fit`; every field from ID training images only)."""

    lo: float
    span: float
    hist_mean: np.ndarray
    median: pd.Series
    scale: pd.Series
    stat_mu: np.ndarray
    stat_sd: np.ndarray
    stat_prec: np.ndarray
    orient_mu: np.ndarray
    orient_prec: np.ndarray
    nn_ref: np.ndarray
    hog_ref: np.ndarray

    @classmethod
    def fit(cls, train, *, nn_size: int = 2000, seed: int = 0) -> Battery:
        """Fit on ID training images ``train`` (``(N, [C,] H, W)``): the grey range, the mean
        lit histogram, each statistic's median and interquartile range (its standard deviation
        where the IQR is 0, 1 where both are), the Mahalanobis means and precisions, and a
        seeded subsample of ``nn_size`` images as the nearest-neighbour reference."""
        x = _gray(train)
        lo, hi = float(np.min(x)), float(np.max(x))
        span = hi - lo if hi > lo else 1.0
        ink = np.clip((x - lo) / span, 0.0, None)
        base, hist, glob, _ = _raw(ink)
        hist_mean = hist.mean(axis=0)
        base["hist_distance"] = 0.5 * np.abs(hist - hist_mean).sum(axis=1)
        med = base.median()
        iqr = (base.quantile(0.75) - base.quantile(0.25)).replace(0.0, np.nan)
        scale = iqr.fillna(base.std().replace(0.0, np.nan)).fillna(1.0)
        v = base[list(STATISTICS)].to_numpy()
        sd = v.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        mu, prec = _precision(v / sd)
        omu, oprec = _precision(glob)
        pick = np.sort(
            np.random.default_rng(int(seed)).choice(len(x), min(nn_size, len(x)), replace=False)
        )
        ref = ink[pick]
        return cls(
            lo=lo,
            span=span,
            hist_mean=hist_mean,
            median=med,
            scale=scale,
            stat_mu=mu,
            stat_sd=sd,
            stat_prec=prec,
            orient_mu=omu,
            orient_prec=oprec,
            nn_ref=ref.reshape(len(ref), -1),
            hog_ref=_orientations(ref)[0],
        )

    def scores(self, images) -> pd.DataFrame:
        """One column per detector of :data:`DETECTORS`, one row per image, higher = more ID
        (the module docstring's orientation rule)."""
        x = _gray(images)
        ink = np.clip((x - self.lo) / self.span, 0.0, None)
        base, hist, glob, hog = _raw(ink)
        base["hist_distance"] = 0.5 * np.abs(hist - self.hist_mean).sum(axis=1)
        out = {}
        for c in STATISTICS:
            if c in TWO_SIDED:
                out[c] = -(base[c] - self.median[c]).abs() / self.scale[c]
            else:
                out[c] = -base[c]
        v = base[list(STATISTICS)].to_numpy() / self.stat_sd
        out["mahalanobis"] = -_maha(v, self.stat_mu, self.stat_prec)
        out["nn_pixels"] = -_nearest(ink.reshape(len(ink), -1), self.nn_ref)
        out["nn_hog"] = -_nearest(hog, self.hog_ref)
        out["orientation"] = -_maha(glob, self.orient_mu, self.orient_prec)
        c = "spectral_slope"
        out[c] = -(base[c] - self.median[c]).abs() / self.scale[c]
        return pd.DataFrame({k: np.asarray(out[k], dtype=np.float64) for k in DETECTORS})


def _raw(ink: np.ndarray):
    """Per-image statistics (a frame), lit histograms, global orientation histograms and HOG
    descriptors of grey-range-normalised images, in chunks."""
    frames, hists, globs, hogs = [], [], [], []
    for s in range(0, len(ink), CHUNK):
        f, hi, gl, hg = _raw_chunk(ink[s : s + CHUNK])
        frames.append(f)
        hists.append(hi)
        globs.append(gl)
        hogs.append(hg)
    return (
        pd.concat(frames, ignore_index=True),
        np.concatenate(hists),
        np.concatenate(globs),
        np.concatenate(hogs),
    )


def _raw_chunk(ink: np.ndarray):
    n, h, w = ink.shape
    lit = ink > LIT
    n_lit = lit.sum(axis=(1, 2))
    masked = np.where(lit, ink, np.nan)
    with warnings.catch_warnings():  # an image without lit pixels: percentiles 0
        warnings.simplefilter("ignore", RuntimeWarning)
        p50 = np.nan_to_num(np.nanpercentile(masked.reshape(n, -1), 50, axis=1))
        p90 = np.nan_to_num(np.nanpercentile(masked.reshape(n, -1), 90, axis=1))
    edges = np.linspace(LIT, 1.0, BINS + 1)
    b = np.clip(np.searchsorted(edges, ink, side="right") - 1, 0, BINS - 1)
    idx = (np.arange(n)[:, None, None] * BINS + b)[lit]
    hist = np.bincount(idx, minlength=n * BINS).reshape(n, BINS).astype(np.float64)
    hist = hist / np.maximum(hist.sum(axis=1, keepdims=True), 1.0)
    mean = ink.mean(axis=(1, 2))
    tv = (
        np.abs(np.diff(ink, axis=1)).sum(axis=(1, 2))
        + np.abs(np.diff(ink, axis=2)).sum(axis=(1, 2))
    ) / (h * w)
    c = ink - mean[:, None, None]
    var = (c**2).sum(axis=(1, 2))
    lag = (c[:, 1:, :] * c[:, :-1, :]).sum(axis=(1, 2)) + (c[:, :, 1:] * c[:, :, :-1]).sum(
        axis=(1, 2)
    )
    auto = np.where(var > 0, 0.5 * lag / np.maximum(var, 1e-12), 0.0)
    ring = np.ones((h, w), dtype=bool)
    bw = max(1, h // 8)
    ring[bw : h - bw, bw : w - bw] = False
    total = ink.sum(axis=(1, 2))
    high, slope = _spectral(ink)
    hog, glob = _orientations(ink)
    frame = pd.DataFrame(
        {
            "peak": ink.max(axis=(1, 2)),
            "ink_p50": p50,
            "ink_p90": p90,
            "lit_fraction": n_lit / (h * w),
            "mean_intensity": mean,
            "total_variation": tv,
            "roughness": tv / np.maximum(mean, 1e-6),
            "autocorr": auto,
            "highfreq": high,
            "border_mass": np.where(
                total > 0, ink[:, ring].sum(axis=1) / np.maximum(total, 1e-12), 0.0
            ),
            "spectral_slope": slope,
        }
    )
    return frame, hist, glob, hog


def battery_result(s_id: pd.DataFrame, s_ood: pd.DataFrame) -> dict:
    """FPR95 (%, ID positive) of every detector on ID scores ``s_id`` vs OOD scores ``s_ood``
    (frames of :meth:`Battery.scores`), and the best (lowest FPR95; ties by name) of each
    family and of the whole battery: ``{"fpr95", "detector", "tuning_fpr95",
    "tuning_detector", "heldout_fpr95", "heldout_detector", "per_detector"}``."""
    per = {k: fpr95(s_id[k].to_numpy(), s_ood[k].to_numpy()) for k in DETECTORS}

    def best(names):
        k = min(names, key=lambda n: (per[n], n))
        return per[k], k

    out = {"per_detector": per}
    for key, names in (("", DETECTORS), ("tuning_", TUNING), ("heldout_", HELD_OUT)):
        out[f"{key}fpr95"], out[f"{key}detector"] = best(names)
    return out
