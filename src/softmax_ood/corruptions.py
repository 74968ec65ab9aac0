"""Common image corruptions (Hendrycks & Dietterich 2019) at severities 1-5, and rotation.

Works on any image batch: a float array ``(N, C, H, W)`` with values in ``[0, 1]`` (a torch
tensor is accepted too and a tensor is returned). Use :func:`corrupt` (validates its arguments,
seeds a :class:`numpy.random.Generator`) or call a function of :data:`CORRUPTIONS` directly as
``fn(x, severity, rng, pixel_scale=s)``. Every corruption is vectorised over the batch except
JPEG, which goes through PIL one image at a time (as the reference code does).

Parameters
----------
The severity parameters are those of the CIFAR-10-C generator (``make_cifar_c.py`` of
https://github.com/hendrycks/robustness), i.e. published for 32x32 images; CIFAR-10-C is the
benchmark Kang et al. evaluate on. They are listed as module constants below.

Small (or large) images: every parameter that is a length **in pixels** is multiplied by
``pixel_scale = min(H, W) / reference_size`` (:func:`corrupt`'s ``reference_size``, default 32,
the CIFAR size). So a 32x32 image gets exactly the CIFAR-10-C values and an 8x8 image gets them
divided by 4, which is what the same corruption applied to a 32x32 original and then reduced 4x
(how the optdigits 8x8 bitmaps were made) would look like. Pixel lengths are: the Gaussian-blur
sigma; the defocus disk radius and its anti-alias sigma; the motion-blur radius and sigma; the
elastic transform's three lengths (which CIFAR-10-C already writes as fractions of the 32-pixel
image size). Unitless parameters -- noise scales and rates, contrast and brightness factors, JPEG
quality, the pixelate size ratio -- are used unchanged. Pass ``reference_size=min(H, W)`` to apply
the CIFAR pixel values unscaled. Consequence to know: at 8x8 with the default scaling the defocus
disk radii (0.3-1.5 px -> 0.075-0.375 px) are below one pixel, so ``defocus_blur`` is the identity
up to ~1e-10, and ``gaussian_blur`` / ``motion_blur`` are weak at low severities.

Deviations from the reference implementation (which works on uint8 PIL images)
-------------------------------------------------------------------------------
* Everything stays in floating point: no rounding to 256 grey levels between steps (JPEG
  excepted: it rounds to uint8 because the codec needs it).
* ``motion_blur``: the reference calls ImageMagick's ``MotionBlurImage`` (Wand); this is a
  re-implementation of that kernel (one-sided Gaussian line kernel of width ``2 ceil(r) + 1``,
  tap offsets ``ceil(i cos a - 0.5), ceil(i sin a - 0.5)``, edge pixels replicated), the same as in
  the ``imagecorruptions`` package. The angle is drawn per image from ``U(-45, 45)`` degrees.
* ``defocus_blur`` / ``elastic_transform``: OpenCV's ``filter2D``, ``GaussianBlur`` and
  ``warpAffine`` are re-implemented with their default border (reflect-101) and exact float
  bilinear weights (OpenCV uses 5-bit fixed-point interpolation tables).
* ``brightness`` adds to the HSV value channel as the reference does, computed without the HSV
  round trip (hue and saturation are unchanged, so each channel scales by ``V'/V``); for one
  channel this is ``min(x + c, 1)``. Any channel count works.
* ``pixelate`` applies PIL's ``BOX`` resampling coefficients as matrices (down, then up).
* ``jpeg_compression``: one channel is coded as greyscale ``L``, three as ``RGB`` (PIL's default
  4:2:0 chroma subsampling), any other count channel by channel as ``L``.

Randomness
----------
All randomness comes from the ``rng`` argument; :func:`corrupt` builds it as
``numpy.random.default_rng(seed)``. The same seed at different severities reuses the same random
draws (common random numbers), so severities differ only by their parameters.

:see Paper: Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common
    Corruptions and Perturbations", ICLR 2019, https://arxiv.org/abs/1903.12261
:see Implementation: https://github.com/hendrycks/robustness
    (``ImageNet-C/create_c/make_cifar_c.py``)
"""

from __future__ import annotations

import io
import math
import numbers
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from scipy import ndimage

from .imagebatch import as_batch, as_input_type, bilinear, to_nchw, to_nhwc

__all__ = [
    "BRIGHTNESS",
    "CONTRAST",
    "CORRUPTIONS",
    "DEFOCUS_BLUR",
    "ELASTIC_TRANSFORM",
    "GAUSSIAN_BLUR",
    "GAUSSIAN_NOISE",
    "IMPULSE_NOISE",
    "JPEG_QUALITY",
    "MOTION_BLUR",
    "PIXELATE",
    "REFERENCE_SIZE",
    "ROTATION_ANGLES",
    "SEVERITIES",
    "SHOT_NOISE",
    "SPECKLE_NOISE",
    "brightness",
    "contrast",
    "corrupt",
    "defocus_blur",
    "elastic_transform",
    "gaussian_blur",
    "gaussian_noise",
    "impulse_noise",
    "jpeg_compression",
    "motion_blur",
    "pixelate",
    "rotate",
    "shot_noise",
    "speckle_noise",
    "throughput",
]

SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)
#: Rotation angles of the rotation shift (degrees): 0-180 in 15-degree steps.
ROTATION_ANGLES: tuple[int, ...] = tuple(range(0, 181, 15))
#: Image size the pixel-length parameters are published for (CIFAR-10-C).
REFERENCE_SIZE = 32

# CIFAR-10-C parameters, index = severity - 1 (make_cifar_c.py).
GAUSSIAN_NOISE = (0.04, 0.06, 0.08, 0.09, 0.10)  #: noise std
SHOT_NOISE = (500.0, 250.0, 100.0, 75.0, 50.0)  #: Poisson photon count at intensity 1
IMPULSE_NOISE = (0.01, 0.02, 0.03, 0.05, 0.07)  #: salt-and-pepper rate
SPECKLE_NOISE = (0.06, 0.10, 0.12, 0.16, 0.20)  #: multiplicative noise std
GAUSSIAN_BLUR = (0.4, 0.6, 0.7, 0.8, 1.0)  #: sigma (px)
DEFOCUS_BLUR = ((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1.0, 0.2), (1.5, 0.1))  #: (radius, alias) px
MOTION_BLUR = ((6.0, 1.0), (6.0, 1.5), (6.0, 2.0), (8.0, 2.0), (9.0, 2.5))  #: (radius, sigma) px
CONTRAST = (0.75, 0.5, 0.4, 0.3, 0.15)  #: factor on the deviation from the per-channel mean
BRIGHTNESS = (0.05, 0.1, 0.15, 0.2, 0.3)  #: added to the HSV value
PIXELATE = (0.95, 0.9, 0.85, 0.75, 0.65)  #: size ratio of the BOX down/up-sampling
JPEG_QUALITY = (80, 65, 58, 50, 40)  #: PIL JPEG quality
#: (displacement magnitude, displacement smoothness sigma, affine jitter), fractions of the
#: image size (CIFAR-10-C writes ``IMSIZE * f`` with ``IMSIZE = 32``).
ELASTIC_TRANSFORM = (
    (0.0, 0.0, 0.08),
    (0.05, 0.2, 0.07),
    (0.08, 0.06, 0.06),
    (0.1, 0.04, 0.05),
    (0.1, 0.03, 0.03),
)

Corruption = Callable[..., np.ndarray]


# --------------------------------------------------------------------------- helpers
def _param(table, severity: int):
    return table[severity - 1]


def _clip(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0.0, 1.0, out=x)


# --------------------------------------------------------------------------- noise
def gaussian_noise(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Additive Gaussian noise, std :data:`GAUSSIAN_NOISE`; ``pixel_scale`` is unused."""
    c = _param(GAUSSIAN_NOISE, severity)
    return _clip(x + c * rng.standard_normal(x.shape))


def shot_noise(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Poisson noise ``Poisson(x c) / c`` with ``c`` from :data:`SHOT_NOISE`."""
    c = _param(SHOT_NOISE, severity)
    return _clip(rng.poisson(x * c) / c)


def impulse_noise(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Salt-and-pepper noise: each value (every channel separately, as ``skimage``'s ``s&p``) is
    replaced with probability :data:`IMPULSE_NOISE` by 0 or 1 with equal chance."""
    c = _param(IMPULSE_NOISE, severity)
    flipped = rng.random(x.shape) < c
    salted = rng.random(x.shape) < 0.5
    out = x.astype(np.float64, copy=True)
    out[flipped & salted] = 1.0
    out[flipped & ~salted] = 0.0
    return out


def speckle_noise(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Multiplicative noise ``x + x N(0, c^2)`` with ``c`` from :data:`SPECKLE_NOISE`."""
    c = _param(SPECKLE_NOISE, severity)
    return _clip(x + x * (c * rng.standard_normal(x.shape)))


# --------------------------------------------------------------------------- blur
def gaussian_blur(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Gaussian blur, sigma :data:`GAUSSIAN_BLUR` times ``pixel_scale`` (``skimage``'s defaults:
    ``mode="nearest"``, ``truncate=4``); deterministic."""
    s = _param(GAUSSIAN_BLUR, severity) * pixel_scale
    out = ndimage.gaussian_filter(
        x.astype(np.float64), sigma=(0, 0, s, s), mode="nearest", truncate=4.0
    )
    return _clip(out)


def _gaussian_taps(ksize: int, sigma: float) -> np.ndarray:
    """OpenCV's ``getGaussianKernel(ksize, sigma)`` for ``sigma > 0``."""
    t = np.arange(ksize) - (ksize - 1) / 2.0
    g = np.exp(-(t**2) / (2.0 * sigma**2))
    return g / g.sum()


def _disk(radius: float, alias_blur: float) -> np.ndarray:
    """The reference ``disk`` kernel: a normalised aliased disk smoothed by a small Gaussian."""
    if radius <= 8:
        half, ksize = 8, 3
    else:
        half, ksize = math.ceil(radius), 5
    grid = np.arange(-half, half + 1, dtype=np.float64)
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    disk = (xx**2 + yy**2 <= radius**2).astype(np.float64)
    disk /= disk.sum()
    if alias_blur > 0:
        taps = _gaussian_taps(ksize, alias_blur)
        disk = ndimage.correlate1d(disk, taps, axis=0, mode="mirror")
        disk = ndimage.correlate1d(disk, taps, axis=1, mode="mirror")
    return disk


def defocus_blur(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Defocus blur: correlation with the anti-aliased disk of :data:`DEFOCUS_BLUR` (radius and
    anti-alias sigma times ``pixel_scale``), reflect-101 border; deterministic."""
    radius, alias = _param(DEFOCUS_BLUR, severity)
    kernel = _disk(radius * pixel_scale, alias * pixel_scale)
    out = ndimage.correlate(x.astype(np.float64), kernel[None, None], mode="mirror")
    return _clip(out)


def motion_blur(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Motion blur (ImageMagick ``MotionBlurImage`` re-implemented), radius and sigma from
    :data:`MOTION_BLUR` times ``pixel_scale``, angle ``U(-45, 45)`` degrees per image."""
    radius, sigma = _param(MOTION_BLUR, severity)
    radius *= pixel_scale
    sigma *= pixel_scale
    n, _, h, w = x.shape
    width = 2 * math.ceil(radius) + 1
    taps = np.exp(-(np.arange(width, dtype=np.float64) ** 2) / (2.0 * sigma**2))
    taps /= taps.sum()
    angle = np.deg2rad(rng.uniform(-45.0, 45.0, size=n))
    i = np.arange(width)[None, :]
    off_c = np.ceil(i * np.cos(angle)[:, None] - 0.5).astype(np.int64)  # (N, width)
    off_r = np.ceil(i * np.sin(angle)[:, None] - 0.5).astype(np.int64)
    src = to_nhwc(x.astype(np.float64))
    batch = np.arange(n).reshape(n, 1, 1)
    rows = np.arange(h).reshape(1, h, 1)
    cols = np.arange(w).reshape(1, 1, w)
    out = np.zeros_like(src)
    for k in range(width):
        if taps[k] == 0.0:
            continue
        ri = np.clip(rows + off_r[:, k].reshape(n, 1, 1), 0, h - 1)
        ci = np.clip(cols + off_c[:, k].reshape(n, 1, 1), 0, w - 1)
        out += taps[k] * src[batch, ri, ci]
    return _clip(to_nchw(out))


# --------------------------------------------------------------------------- digital
def contrast(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Shrink each image's deviation from its per-channel mean by :data:`CONTRAST`."""
    c = _param(CONTRAST, severity)
    mean = x.mean(axis=(2, 3), keepdims=True)
    return _clip((x - mean) * c + mean)


def brightness(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Add :data:`BRIGHTNESS` to the HSV value ``V = max_c x_c`` (clipped to 1), keeping hue and
    saturation: every channel is scaled by ``V' / V`` (black pixels become grey ``V'``)."""
    c = _param(BRIGHTNESS, severity)
    x = x.astype(np.float64)
    v = x.max(axis=1, keepdims=True)
    v_new = np.minimum(v + c, 1.0)
    ratio = np.divide(v_new, v, out=np.zeros_like(v), where=v > 0)
    return _clip(np.where(v > 0, x * ratio, v_new))


def _pil_box_matrix(in_size: int, out_size: int) -> np.ndarray:
    """``(out_size, in_size)`` matrix of PIL's ``BOX`` resampling coefficients
    (``precompute_coeffs`` in ``Resample.c`` with the box filter ``-0.5 < t <= 0.5``)."""
    scale = in_size / out_size
    filterscale = max(scale, 1.0)
    support = 0.5 * filterscale
    m = np.zeros((out_size, in_size))
    for xx in range(out_size):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size)
        t = (np.arange(xmin, xmax) - center + 0.5) / filterscale
        weights = ((t > -0.5) & (t <= 0.5)).astype(np.float64)
        if weights.sum() > 0:
            m[xx, xmin:xmax] = weights / weights.sum()
    return m


def pixelate(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """BOX-downsample to ``int(size * c)`` (:data:`PIXELATE`, at least 1) and BOX-upsample back,
    with PIL's coefficients; deterministic."""
    c = _param(PIXELATE, severity)
    _, _, h, w = x.shape
    h2, w2 = max(int(h * c), 1), max(int(w * c), 1)
    rows = _pil_box_matrix(h2, h) @ _pil_box_matrix(h, h2)
    cols = _pil_box_matrix(w2, w) @ _pil_box_matrix(w, w2)
    return _clip(rows @ x.astype(np.float64) @ cols.T)


def _jpeg(plane: np.ndarray, quality: int) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(plane).save(buf, format="JPEG", quality=quality)
    buf.seek(0)
    with Image.open(buf) as img:
        return np.asarray(img, dtype=np.float64)


def jpeg_compression(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """JPEG at quality :data:`JPEG_QUALITY` via PIL, one image at a time (values rounded to
    uint8 for the codec); deterministic."""
    q = _param(JPEG_QUALITY, severity)
    u8 = np.round(np.clip(x, 0.0, 1.0) * 255.0).astype(np.uint8)
    out = np.empty(x.shape, dtype=np.float64)
    n, ch = x.shape[:2]
    for i in range(n):
        if ch == 3:
            out[i] = _jpeg(np.ascontiguousarray(u8[i].transpose(1, 2, 0)), q).transpose(2, 0, 1)
        else:
            for j in range(ch):
                out[i, j] = _jpeg(np.ascontiguousarray(u8[i, j]), q)
    return out / 255.0


def elastic_transform(
    x: np.ndarray, severity: int, rng: np.random.Generator, *, pixel_scale: float
) -> np.ndarray:
    """Random affine jitter of three anchor points, then a smooth random displacement field
    (:data:`ELASTIC_TRANSFORM`, fractions of ``32 * pixel_scale`` pixels), bilinear sampling.

    As the reference: the affine warp uses the reflect-101 border, the displacement field is
    ``gaussian(U(-1, 1), sigma, mode="reflect", truncate=3) * alpha`` and the second sampling
    uses the half-sample-symmetric (``reflect``) border. The anchors are
    ``center +- min(H, W) // 3`` in ``(x, y) = (column, row)`` order.
    """
    alpha_f, sigma_f, jitter_f = _param(ELASTIC_TRANSFORM, severity)
    imsize = REFERENCE_SIZE * pixel_scale
    alpha, sigma, jitter = alpha_f * imsize, sigma_f * imsize, jitter_f * imsize
    n, _, h, w = x.shape
    cx, cy = w // 2, h // 2
    s = min(h, w) // 3
    pts1 = np.array([[cx + s, cy + s], [cx + s, cy - s], [cx - s, cy - s]], dtype=np.float64)
    pts2 = pts1[None] + rng.uniform(-jitter, jitter, size=(n, 3, 2))
    # forward affine dst = A src + t from the three point pairs, then invert it for sampling
    design = np.concatenate([pts1, np.ones((3, 1))], axis=1)  # (3, 3)
    mt = np.linalg.solve(design[None], pts2)  # (N, 3, 2): [x y 1] @ mt = [x' y']
    a = np.transpose(mt[:, :2, :], (0, 2, 1))  # (N, 2, 2)
    t = mt[:, 2, :]  # (N, 2)
    a_inv = np.linalg.inv(a)
    yy, xx = np.meshgrid(
        np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij"
    )
    dst = np.stack([xx, yy], axis=-1)[None] - t[:, None, None, :]  # (N, H, W, 2)
    src_xy = np.einsum("nij,nhwj->nhwi", a_inv, dst)
    warped = bilinear(to_nhwc(x.astype(np.float64)), src_xy[..., 1], src_xy[..., 0], "mirror")
    field = rng.uniform(-1.0, 1.0, size=(2, n, h, w))
    if sigma > 0:
        field = ndimage.gaussian_filter(
            field, sigma=(0, 0, sigma, sigma), mode="reflect", truncate=3.0
        )
    dx, dy = field[0] * alpha, field[1] * alpha
    out = bilinear(warped, yy[None] + dy, xx[None] + dx, "reflect")
    return _clip(to_nchw(out))


# --------------------------------------------------------------------------- rotation
def _rotate_bilinear(x: np.ndarray, degrees: float) -> np.ndarray:
    """Counter-clockwise rotation about the image centre, bilinear, zeros outside."""
    _, _, h, w = x.shape
    theta = math.radians(degrees)
    cos, sin = math.cos(theta), math.sin(theta)
    cr, cc = (h - 1) / 2.0, (w - 1) / 2.0
    rr, cc_grid = np.meshgrid(
        np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij"
    )
    px, py = cc_grid - cc, -(rr - cr)  # display coordinates, y up
    src_x = cos * px + sin * py  # inverse rotation R(-theta)
    src_y = -sin * px + cos * py
    rows = np.broadcast_to(cr - src_y, (x.shape[0], h, w))
    cols = np.broadcast_to(cc + src_x, (x.shape[0], h, w))
    return to_nchw(bilinear(to_nhwc(x.astype(np.float64)), rows, cols, "constant"))


def _shear_rotate(x: np.ndarray, degrees: float) -> np.ndarray:
    """Counter-clockwise rotation by ``degrees`` (|degrees| <= 45) about the image centre as three
    Fourier shears (Paeth's decomposition ``Sx(a) Sy(b) Sx(a)``, ``a = -tan(t/2)``,
    ``b = sin(t)``; each shear is an exact sub-pixel shift of every row/column, a phase ramp in
    the DFT: Larkin, Oldfield & Klemm 1997; Unser, Thevenaz & Yaroslavsky 1995). The image is
    zero-padded to twice its size first, so content never wraps around, and cropped back after;
    no clipping happens in between. Each shear is unitary and ``R(-t)`` is the three inverse
    shears in reverse order, so a +t/-t round trip loses only what the crop and the final
    clip to ``[0, 1]`` remove (corners turned out of the frame, ringing overshoot), not a blur."""
    n, c, h, w = x.shape
    ph, pw = 2 * h, 2 * w
    r0, c0 = (ph - h) // 2, (pw - w) // 2
    pad = np.zeros((n, c, ph, pw), dtype=np.float64)
    pad[:, :, r0 : r0 + h, c0 : c0 + w] = x
    theta = math.radians(degrees)
    a, b = -math.tan(theta / 2.0), math.sin(theta)
    # centre of the original image in padded coordinates; display y points up (rows go down)
    rows = (r0 + (h - 1) / 2.0) - np.arange(ph, dtype=np.float64)  # y of each row
    cols = np.arange(pw, dtype=np.float64) - (c0 + (w - 1) / 2.0)  # x of each column
    fr, fc = np.fft.fftfreq(ph), np.fft.fftfreq(pw)

    def shear_x(im: np.ndarray, s: float) -> np.ndarray:  # x' = x + s*y: row at y moves by s*y
        ramp = np.exp(-2j * np.pi * fc[None, :] * (s * rows)[:, None])
        return np.fft.ifft(np.fft.fft(im, axis=3) * ramp, axis=3).real

    def shear_y(im: np.ndarray, s: float) -> np.ndarray:  # y' = y + s*x: column moves up by s*x
        ramp = np.exp(2j * np.pi * fr[:, None] * (s * cols)[None, :])
        return np.fft.ifft(np.fft.fft(im, axis=2) * ramp, axis=2).real

    out = shear_x(shear_y(shear_x(pad, a), b), a)
    return out[:, :, r0 : r0 + h, c0 : c0 + w]


def rotate(x: Any, degrees: float) -> Any:
    """Rotate every image of ``x`` ``(N, C, H, W)`` counter-clockwise by ``degrees`` about its
    centre, zeros where the source falls outside the image (the images' background is 0).

    The angle is split into a multiple of 90 degrees, done exactly (``numpy.rot90``; square
    images only for 90/270), and a remainder in ``(-45, 45]``, done by three Fourier shears
    (:func:`_shear_rotate`): band-limited (sinc) interpolation instead of a bilinear blur. So
    ``rotate(x, 0)`` is ``x`` bit for bit, multiples of 90 are exact, and a round trip
    ``rotate(rotate(x, t), -t)`` is close to ``x`` (what is lost are the corners turned out of the
    frame and the clipped ringing), which a discriminator cannot tell from the clean images the
    way it tells a bilinear round trip (Kang study, premise ``rotation_roundtrip``). The result
    is clipped to ``[0, 1]``. Returns the type of ``x`` (numpy array or torch tensor) and its
    float dtype.
    """
    arr, to_torch = as_batch(x)
    if isinstance(degrees, bool) or not isinstance(degrees, numbers.Real):
        raise ValueError(f"degrees must be a real number, got {degrees!r}")
    if not math.isfinite(float(degrees)):
        raise ValueError(f"degrees must be finite, got {degrees!r}")
    d = float(degrees) % 360.0
    quarters = int(math.floor((d + 45.0) / 90.0))  # nearest quarter turn
    rest = d - 90.0 * quarters  # in [-45, 45)
    k = quarters % 4
    if k % 2 == 1 and arr.shape[2] != arr.shape[3]:
        out = _rotate_bilinear(arr, d)  # a non-square image has no exact quarter turn
    else:
        out = np.rot90(arr, k=k, axes=(2, 3)) if k else arr
        if rest != 0.0:
            out = np.clip(_shear_rotate(out, rest), 0.0, 1.0)
        else:
            out = out.copy()
    return as_input_type(out, arr.dtype, to_torch)


# --------------------------------------------------------------------------- registry / API
CORRUPTIONS: dict[str, Corruption] = {
    "gaussian_noise": gaussian_noise,
    "shot_noise": shot_noise,
    "impulse_noise": impulse_noise,
    "speckle_noise": speckle_noise,
    "gaussian_blur": gaussian_blur,
    "defocus_blur": defocus_blur,
    "motion_blur": motion_blur,
    "contrast": contrast,
    "brightness": brightness,
    "pixelate": pixelate,
    "jpeg_compression": jpeg_compression,
    "elastic_transform": elastic_transform,
}


def _check_severity(severity: Any) -> int:
    if (
        isinstance(severity, bool)
        or not isinstance(severity, numbers.Integral)
        or not (1 <= severity <= 5)
    ):
        raise ValueError(f"severity must be an integer from 1 to 5, got {severity!r}")
    return int(severity)


def corrupt(x: Any, name: str, severity: int, seed: int, *, reference_size: int = REFERENCE_SIZE):
    """Apply corruption ``name`` at ``severity`` (1-5) to the batch ``x``, deterministically.

    :param x: float array ``(N, C, H, W)`` in ``[0, 1]`` (numpy array or torch tensor).
    :param name: a key of :data:`CORRUPTIONS`.
    :param severity: integer 1-5.
    :param seed: seed of the ``numpy.random.default_rng`` that draws all randomness.
    :param reference_size: image size the pixel-length parameters are published for; they are
        multiplied by ``min(H, W) / reference_size`` (module docstring).
    :return: corrupted images, same shape, type (numpy / torch) and float dtype as ``x``, in
        ``[0, 1]``.
    :raises ValueError: unknown name, severity outside 1-5, bad seed / reference size or images.
    """
    if name not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {name!r}; expected one of {sorted(CORRUPTIONS)}")
    severity = _check_severity(severity)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if (
        isinstance(reference_size, bool)
        or not isinstance(reference_size, numbers.Integral)
        or reference_size < 1
    ):
        raise ValueError(f"reference_size must be a positive integer, got {reference_size!r}")
    arr, to_torch = as_batch(x)
    pixel_scale = min(arr.shape[2], arr.shape[3]) / int(reference_size)
    rng = np.random.default_rng(int(seed))
    out = CORRUPTIONS[name](arr, severity, rng, pixel_scale=pixel_scale)
    return as_input_type(out, arr.dtype, to_torch)


def throughput(
    x: Any,
    names: Iterable[str] | None = None,
    *,
    severity: int = 3,
    seed: int = 0,
    repeats: int = 3,
) -> dict[str, float]:
    """Images per second of :func:`corrupt` on the batch ``x`` for each corruption in ``names``
    (all of :data:`CORRUPTIONS` by default): ``len(x) / best wall time over repeats``."""
    n = len(x)
    rates: dict[str, float] = {}
    for name in CORRUPTIONS if names is None else names:
        best = math.inf
        for _ in range(max(int(repeats), 1)):
            start = time.perf_counter()
            corrupt(x, name, severity, seed)
            best = min(best, time.perf_counter() - start)
        rates[name] = n / best
    return rates
