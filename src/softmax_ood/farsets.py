"""The constructed 28x28 far-OOD sets of Fashion-MNIST (:data:`FASHION_OOD_SETS`).

They are built offline at 28x28 and brought into the ID format (grey levels in [0, 1] on the
1/255 grid, dark ground, the object filling the frame as Fashion items do). Each has an
independent random stream per name; the ``*_val`` sets are OOD validation sets (tuning only)
whose images are disjoint from the test sets'. :mod:`softmax_ood.fashion` writes them into the
prepared data (the near-OOD set ``heldout_classes`` is its own: held-out Fashion classes).

Two groups (issue 41, :func:`set_group`): today's sets (:data:`CUE_SEPARABLE`, names kept so
results stay comparable) are separated from Fashion-MNIST by simple image cues (peak grey level,
spatial correlation, smoothness; :mod:`softmax_ood.analysis.battery`); the *matched* sets
(:data:`MATCHED`) are built to remove those cues: each image gets a random ID training image's
exact grey levels (:func:`match_histograms`), noise has the ID mean amplitude spectrum, shuffles
move 7x7 blocks, not pixels. Every set is checked for blank and repeated images, which are left
out (:func:`drop_duplicates_and_blanks`; ``meta.json`` records how many per set).
"""

from __future__ import annotations

import zlib

import numpy as np

from .imagesources import GLYPH_CHARS, GLYPH_FONTS, PHOTOS, TEXTURES, font_dir, grey_image

__all__ = [
    "CUE_CONTROL",
    "CUE_REMOVED",
    "CUE_SEPARABLE",
    "FASHION_OOD_SETS",
    "FASHION_VAL_SETS",
    "GLYPH_VAL_CHARS",
    "MATCHED",
    "SIZE",
    "build_ood",
    "build_ood_checked",
    "drop_duplicates_and_blanks",
    "match_histograms",
    "remove_cue",
    "set_group",
]

#: the side of every image (Fashion-MNIST's)
SIZE = 28

FASHION_OOD_SETS = {
    "heldout_classes": "near OOD: the official test images of the Fashion-MNIST classes not in "
    "id_classes",
    "digits": "scikit-learn's 8x8 handwritten digits (17 grey levels) upsampled bilinearly to "
    "28x28: the size-normalised digit fills the frame as a Fashion item does (MNIST-like "
    "digits); three quarters of the 1,797 digits (seeded), the rest are digits_val",
    "glyphs": "letters and symbols rendered from the DejaVu fonts shipped with matplotlib "
    "(anti-aliased), cropped to their ink box, scaled to fill the 28x28 frame (aspect kept, "
    "the longer side 24-28 pixels), strokes thickened by a random 0-3 pixel dilation and "
    "dimmed to a random peak in [0.6, 1] (a notMNIST stand-in)",
    "glyphs_boxed": "a control for the framing trap: the glyphs' characters and fonts in "
    "MNIST's framing (the longer side 20 pixels, centred, thin strokes, full brightness), which "
    "a border-mass statistic separates from frame-filling Fashion items",
    "photos": "crops of scikit-image's public-domain/CC0 photos (astronaut, camera, coffee) "
    "inside a random smooth silhouette filling the frame, dark outside",
    "textures": "crops of scikit-image's CC0 textures (brick, grass, gravel) inside a random "
    "smooth silhouette filling the frame, dark outside",
    "noise": "pixel-wise Gaussian noise with the ID training images' per-pixel mean and "
    "standard deviation, clipped to [0, 1]",
    "shuffled": "ID training images with their pixels permuted within each concentric square "
    "ring of the frame (one permutation per image and ring): the same grey levels and radial "
    "ink profile, no object",
    "digits_val": "OOD validation: the quarter of scikit-learn's digits not in 'digits', "
    "upsampled the same way",
    "glyphs_val": "OOD validation: glyphs made as 'glyphs' from other characters (letters "
    "'glyphs' leaves out, Greek letters, symbols; GLYPH_VAL_CHARS): none shared with 'glyphs'",
    "photos_val": "OOD validation: silhouette crops of the other scikit-image photos (chelsea, "
    "rocket, hubble_deep_field): no source image shared with 'photos'",
    "noise_val": "OOD validation: an independent draw of 'noise'",
    # the cue-matched group (issue 41): every image's grey levels are exactly one random ID
    # training image's (peak, histogram, lit share; :func:`match_histograms`)
    "digits_matched": "the 'digits' digits upsampled bicubically with a random 0-2 pixel "
    "stroke dilation and a spectrally shaped texture (the ID mean amplitude spectrum, phase "
    "randomised) added, then given a random ID training image's exact grey levels",
    "glyphs_matched": "the 'glyphs' characters rendered as 'glyphs' (frame-filling, dilated) "
    "with the same texture, then given a random ID training image's exact grey levels (peak "
    "1.0, no dimming)",
    "photos_matched": "'photos' silhouette crops (astronaut, camera, coffee), given a random ID "
    "training image's exact grey levels",
    "textures_matched": "'textures' silhouette crops (brick, grass, gravel), given a random ID "
    "training image's exact grey levels",
    "noise_matched": "phase-randomised noise with the ID training images' mean amplitude "
    "spectrum (not white), pulled to the frame's centre as the silhouettes are, then given a "
    "random ID training image's exact grey levels",
    "shuffled_matched": "ID training images cut into 7x7-pixel blocks whose positions are "
    "permuted within their ring of the block grid (local correlation kept inside each block, "
    "the image's own grey levels, the outer blocks stay outer)",
    # cue-removal controls (issue 41): a cue-separable set with its strongest single cue removed,
    # a sanity row for the networks (never in a headline)
    "glyphs_peak1": "control: the 'glyphs' images with each image's grey levels stretched to "
    "peak at 1.0 (the dimming removed)",
    "photos_peak1": "control: the 'photos' images stretched to peak at 1.0",
    "textures_peak1": "control: the 'textures' images stretched to peak at 1.0",
}
#: per far set: its strongest simple cue and the set without it. The peak is declared for the
#: dimmed sets (the issue's cue, and the battery's best single statistic on them); for the sets
#: whose cue is spatial the matched construction is the variant without it (it also matches the
#: grey levels). The matched sets' remaining cue is shape (no variant removes it).
CUE_CONTROL = {
    "glyphs": ("peak grey level below 1.0", "glyphs_peak1"),
    "photos": ("peak grey level below 1.0", "photos_peak1"),
    "textures": ("peak grey level below 1.0", "textures_peak1"),
    "digits": ("smooth upsampled strokes and digit grey levels", "digits_matched"),
    "noise": ("no spatial correlation", "noise_matched"),
    "shuffled": ("no spatial correlation (pixel-level shuffle)", "shuffled_matched"),
}
#: the control sets built by removing one cue (:func:`remove_cue`): name -> (base set, cue)
CUE_REMOVED = {
    "glyphs_peak1": ("glyphs", "peak"),
    "photos_peak1": ("photos", "peak"),
    "textures_peak1": ("textures", "peak"),
}
#: today's far sets, separated by simple image cues (issue 41); names kept so results compare
CUE_SEPARABLE = ("digits", "glyphs", "photos", "textures", "noise", "shuffled", "glyphs_boxed")
#: the far sets built to match Fashion-MNIST on those cues
MATCHED = (
    "digits_matched",
    "glyphs_matched",
    "photos_matched",
    "textures_matched",
    "noise_matched",
    "shuffled_matched",
)
#: the sets that may be named in ``data.ood_val`` (tuning only); the rest are test sets
FASHION_VAL_SETS = ("digits_val", "glyphs_val", "photos_val", "noise_val")

_PHOTOS_TEST = ("astronaut", "camera", "coffee")
_PHOTOS_VAL = tuple(p for p in PHOTOS if p not in _PHOTOS_TEST)
# characters for glyphs_val: none of GLYPH_CHARS (so no image of glyphs_val is one of glyphs')
GLYPH_VAL_CHARS = (
    "BDGJLQTbgijloqsz\u0394\u0393\u039b\u03b1\u03b2\u03b3\u03bc\u03c3\u263c\u2602\u00ae\u00a9"
)


# --------------------------------------------------------------------------- builders
def _on_grid(x: np.ndarray) -> np.ndarray:
    """[0, 1] floats on the ID images' 1/255 grid (their own preprocessing: uint8 / 255)."""
    return np.round(np.clip(x, 0.0, 1.0) * 255.0) / 255.0


def _digits(which: str, seed: int) -> np.ndarray:
    from skimage.transform import resize
    from sklearn.datasets import load_digits

    x = load_digits().images / 16.0
    perm = np.random.default_rng(np.random.SeedSequence([seed, 26])).permutation(len(x))
    cut = (3 * len(x)) // 4
    idx = np.sort(perm[:cut] if which == "test" else perm[cut:])
    return np.stack([resize(im, (SIZE, SIZE), order=1, anti_aliasing=False) for im in x[idx]])


def _render_glyphs(
    n: int, rng: np.random.Generator, chars: str, *, boxed: bool = False, full_peak: bool = False
) -> np.ndarray:
    """``n`` glyphs filling the frame (longer side 24-28 pixels, anywhere in it, strokes
    thickened by a 0-3 pixel dilation, peak grey U(0.6, 1), or 1 with ``full_peak``);
    ``boxed``: MNIST's framing instead, the longer side 20 pixels centred in the frame, no
    dilation, peak 1."""
    from PIL import Image, ImageDraw, ImageFont
    from scipy.ndimage import grey_dilation
    from skimage.transform import resize

    fonts = [ImageFont.truetype(str(font_dir() / f), 96) for f in GLYPH_FONTS]
    out = np.empty((n, SIZE, SIZE))
    k = 0
    while k < n:
        ch = chars[int(rng.integers(len(chars)))]
        img = Image.new("L", (192, 192), 0)
        ImageDraw.Draw(img).text((40, 30), ch, fill=255, font=fonts[int(rng.integers(len(fonts)))])
        img = img.rotate(float(rng.uniform(-12, 12)), resample=Image.BILINEAR)
        a = np.asarray(img, dtype=np.float64) / 255.0
        rows, cols = np.nonzero(a > 0.5)
        if len(rows) < 20:
            continue
        box = a[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
        side = 20 if boxed else int(rng.integers(24, SIZE + 1))
        h, w = box.shape
        scale = side / max(h, w)
        nh, nw = max(2, round(h * scale)), max(2, round(w * scale))
        small = resize(box, (nh, nw), order=1, anti_aliasing=True)
        if boxed:
            r, c = (SIZE - nh) // 2, (SIZE - nw) // 2
        else:
            r = int(rng.integers(0, SIZE - nh + 1))
            c = int(rng.integers(0, SIZE - nw + 1))
        frame = np.zeros((SIZE, SIZE))
        frame[r : r + nh, c : c + nw] = small
        grow = 0 if boxed else int(rng.integers(0, 4))
        if grow:
            frame = grey_dilation(frame, size=(grow + 1, grow + 1))
        # full_peak draws the dimming too (and ignores it): the same stream as 'glyphs'
        peak = 1.0 if boxed else float(rng.uniform(0.6, 1.0))
        peak = 1.0 if full_peak else peak
        out[k] = frame / max(frame.max(), 1e-12) * peak
        k += 1
    return out


#: how strongly a silhouette is pulled to the frame's centre (the noise field minus this times the
#: squared normalised radius): 2.5 puts the silhouettes' median ink share on the border ring where
#: the Fashion items' is (0.15-0.16 for a 3-pixel ring); 0.8 left twice as much there
BLOB_CENTRE = 2.5


def _silhouettes(n: int, rng: np.random.Generator, ink: np.ndarray) -> np.ndarray:
    """``n`` random smooth blobs filling the frame: low-pass noise thresholded so that the
    blob covers a share of the frame drawn from the ID images' lit shares ``ink``."""
    from scipy.ndimage import gaussian_filter

    rr, cc = np.mgrid[0:SIZE, 0:SIZE] + 0.5
    out = np.empty((n, SIZE, SIZE), dtype=bool)
    for k in range(n):
        field = gaussian_filter(rng.normal(size=(SIZE, SIZE)), 4.0, mode="reflect")
        field = field / (field.std() + 1e-12)
        # a gentle bias to the centre, so the blob is one object, not scattered islands
        field -= BLOB_CENTRE * (
            ((rr - SIZE / 2) / (SIZE / 2)) ** 2 + ((cc - SIZE / 2) / (SIZE / 2)) ** 2
        )
        share = float(ink[int(rng.integers(len(ink)))])
        out[k] = field >= np.quantile(field, 1.0 - share)
    return out


def _masked_crops(
    names: tuple[str, ...], n: int, rng: np.random.Generator, ink: np.ndarray
) -> np.ndarray:
    """Random 28-112 pixel crops (resized to 28x28, flipped/rotated) of the named scikit-image
    images, shown inside a random silhouette (:func:`_silhouettes`) on a dark ground."""
    from skimage.transform import resize

    images = [grey_image(s) for s in names]
    masks = _silhouettes(n, rng, ink)
    out = np.empty((n, SIZE, SIZE))
    for k in range(n):
        img = images[k % len(images)]
        c = int(rng.integers(SIZE, min(4 * SIZE, *img.shape) + 1))
        r0 = int(rng.integers(0, img.shape[0] - c + 1))
        c0 = int(rng.integers(0, img.shape[1] - c + 1))
        patch = resize(img[r0 : r0 + c, c0 : c0 + c], (SIZE, SIZE), order=1, anti_aliasing=True)
        patch = np.rot90(patch, k=int(rng.integers(4)))
        if rng.integers(2):
            patch = patch[:, ::-1]
        out[k] = patch * masks[k]
    return out


def _id_stats(train_x: np.ndarray) -> dict:
    """What the matched sets need from the ID training images (float [0, 1], (N, 28, 28))."""
    return {
        "mean": train_x.mean(axis=0),
        "std": train_x.std(axis=0),
        "ink": (train_x > 0.05).mean(axis=(1, 2)),
    }


def set_group(name: str) -> str:
    """``"matched"`` for the cue-matched far sets (:data:`MATCHED`), ``"control"`` for the
    cue-removal controls (:data:`CUE_REMOVED`), ``"cue-separable"`` for today's
    (:data:`CUE_SEPARABLE`) and their validation sets, ``"near"`` for ``heldout_classes``."""
    if name == "heldout_classes":
        return "near"
    if name in CUE_REMOVED:
        return "control"
    return "matched" if name in MATCHED else "cue-separable"


def drop_duplicates_and_blanks(images: np.ndarray) -> tuple[np.ndarray, dict]:
    """``images`` without blank images (one grey level: nothing to see) and without repeats
    (identical on the 1/255 grid; the first kept), in order, and the counts dropped:
    ``{"blank": .., "duplicate": ..}``."""
    x = np.asarray(images)
    flat = np.round(x.reshape(len(x), -1) * 255.0).astype(np.uint8)
    blank = flat.max(axis=1) == flat.min(axis=1)
    seen, keep, dup = set(), [], 0
    for i, row in enumerate(flat):
        if blank[i]:
            continue
        key = row.tobytes()
        if key in seen:
            dup += 1
            continue
        seen.add(key)
        keep.append(i)
    return x[np.asarray(keep, dtype=int)], {"blank": int(blank.sum()), "duplicate": dup}


def remove_cue(images: np.ndarray, cue: str) -> np.ndarray:
    """``images`` with one simple cue removed: ``"peak"`` stretches each image's grey levels
    linearly so that it peaks at exactly 1.0 (the dark ground stays 0), on the 1/255 grid.

    :raises ValueError: a cue without a remover."""
    if cue != "peak":
        raise ValueError(f"no remover for the cue {cue!r}; the removable cues are ['peak']")
    x = np.asarray(images, dtype=np.float64)
    peak = x.max(axis=(1, 2), keepdims=True)
    return _on_grid(np.where(peak > 0, x / np.where(peak > 0, peak, 1.0), x))


def match_histograms(base: np.ndarray, train_x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each image of ``base`` given the exact grey levels of a randomly drawn ID training image
    (so its peak, percentiles, lit share and grey histogram are an ID image's): the pixels are
    ranked by their grey level, ties broken by the image blurred at 1.5 and 4 pixels (so extra
    lit pixels grow around the object, not as salt) and then by a random field, and the ID
    image's sorted grey levels are placed in that order."""
    from scipy.ndimage import gaussian_filter

    n = len(base)
    b = np.asarray(base, dtype=np.float64)
    src = np.sort(train_x[rng.integers(len(train_x), size=n)].reshape(n, -1), axis=1)
    key = (
        b
        + 1e-3 * gaussian_filter(b, (0, 1.5, 1.5))
        + 1e-5 * gaussian_filter(b, (0, 4.0, 4.0))
        + 1e-8 * rng.random(b.shape)
    ).reshape(n, -1)
    out = np.empty_like(src)
    np.put_along_axis(out, np.argsort(key, axis=1, kind="stable"), src, axis=1)
    return out.reshape(b.shape)


def _amplitude(train_x: np.ndarray) -> np.ndarray:
    """The ID training images' mean amplitude spectrum (2-D)."""
    return np.abs(np.fft.fft2(train_x[: min(len(train_x), 10000)])).mean(axis=0)


def _shaped_noise(n: int, rng: np.random.Generator, amplitude: np.ndarray) -> np.ndarray:
    """Phase-randomised noise: the ``amplitude`` spectrum with the phases of white noise's
    (Hermitian, so the image is real), standardised per image."""
    phase = np.angle(np.fft.fft2(rng.normal(size=(n, SIZE, SIZE))))
    f = np.real(np.fft.ifft2(amplitude[None] * np.exp(1j * phase)))
    f = f - f.mean(axis=(1, 2), keepdims=True)
    return f / (f.std(axis=(1, 2), keepdims=True) + 1e-12)


def _centred(field: np.ndarray) -> np.ndarray:
    rr, cc = np.mgrid[0:SIZE, 0:SIZE] + 0.5
    r2 = ((rr - SIZE / 2) / (SIZE / 2)) ** 2 + ((cc - SIZE / 2) / (SIZE / 2)) ** 2
    return field - BLOB_CENTRE * r2


def _block_shuffle(x: np.ndarray, rng: np.random.Generator, block: int = 7) -> np.ndarray:
    """Each image cut into ``block`` x ``block`` tiles whose positions are permuted within
    their ring of the tile grid (outer tiles among outer ones, inner among inner: the radial
    ink profile, hence the border mass, stays near the garment's), one permutation per image,
    never the identity."""
    g = SIZE // block
    n = len(x)
    tiles = (
        x.reshape(n, g, block, g, block).transpose(0, 1, 3, 2, 4).reshape(n, g * g, block, block)
    )
    r, c = np.divmod(np.arange(g * g), g)
    depth = np.minimum(np.minimum(r, g - 1 - r), np.minimum(c, g - 1 - c))
    rings = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)]
    out = tiles.copy()
    for k in range(n):
        perm = np.arange(g * g)
        while np.array_equal(perm, np.arange(g * g)):
            for ring in rings:
                perm[ring] = rng.permutation(ring)
        out[k] = tiles[k, perm]
    return out.reshape(n, g, g, block, block).transpose(0, 1, 3, 2, 4).reshape(n, SIZE, SIZE)


def _matched(name: str, n: int, seed: int, rng: np.random.Generator, train_x: np.ndarray):
    """The cue-matched set ``name`` (:data:`MATCHED`), before the grid and the dedupe."""
    from scipy.ndimage import grey_dilation
    from skimage.transform import resize

    amp = _amplitude(train_x)
    if name == "shuffled_matched":
        pick = np.sort(rng.choice(len(train_x), size=n, replace=False))
        return _block_shuffle(train_x[pick], rng)
    if name == "noise_matched":
        return match_histograms(_centred(_shaped_noise(n, rng, amp)), train_x, rng)
    if name in ("photos_matched", "textures_matched"):
        src = _PHOTOS_TEST if name == "photos_matched" else TEXTURES
        crops = _masked_crops(src, n, rng, _id_stats(train_x)["ink"])
        return match_histograms(crops, train_x, rng)
    if name == "digits_matched":
        from sklearn.datasets import load_digits

        x = load_digits().images / 16.0
        perm = np.random.default_rng(np.random.SeedSequence([seed, 26])).permutation(len(x))
        x = x[np.sort(perm[: (3 * len(x)) // 4])]
        shapes = np.stack([resize(im, (SIZE, SIZE), order=3, anti_aliasing=False) for im in x])
        for k in range(len(shapes)):
            grow = int(rng.integers(0, 3))
            if grow:
                shapes[k] = grey_dilation(shapes[k], size=(grow + 1, grow + 1))
    else:  # glyphs_matched
        shapes = _render_glyphs(n, rng, GLYPH_CHARS, full_peak=True)
    shapes = np.clip(shapes, 0.0, None)
    shapes = shapes / np.maximum(shapes.max(axis=(1, 2), keepdims=True), 1e-12)
    texture = _shaped_noise(len(shapes), rng, amp)
    return match_histograms(shapes + TEXTURE * texture * (shapes > 0.05), train_x, rng)


#: how strongly the spectrally shaped texture marks the ink of the matched digits and glyphs
#: (in units of the ink's peak): garments carry fabric texture, rendered strokes none
TEXTURE = 0.15


def build_ood(name: str, n: int, seed: int, train_x: np.ndarray) -> np.ndarray:
    """The OOD set ``name`` (not ``heldout_classes``): float64 ``(m, 28, 28)`` on the 1/255 grid
    in [0, 1], without blank or repeated images (:func:`build_ood_checked`)."""
    return build_ood_checked(name, n, seed, train_x)[0]


def build_ood_checked(name: str, n: int, seed: int, train_x: np.ndarray) -> tuple[np.ndarray, dict]:
    """The OOD set ``name`` and what the blank/duplicate check dropped from it
    (:func:`drop_duplicates_and_blanks`). ``n`` images for the matched sets (drawn with a
    margin, the first ``n`` unique non-blank ones kept) and the digit sets' fixed share of the
    1,797 digits; today's generated sets keep their images minus any dropped (so ``n`` or a
    few fewer: their kept images are unchanged, their results stay comparable).

    :param seed: the data seed; every set draws from its own stream (adding a set changes no
        other).
    :param train_x: the ID training images (float [0, 1], ``(N, 28, 28)``) the matched sets
        (noise, shuffled, silhouette shares, grey levels) take their statistics from.
    :raises ValueError: an unknown name, or a matched set that cannot fill ``n`` unique images.
    """
    if name not in FASHION_OOD_SETS or name == "heldout_classes":
        raise ValueError(
            f"unknown 28x28 OOD set {name!r}; expected one of {sorted(FASHION_OOD_SETS)}"
        )
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))
    if name in CUE_REMOVED:
        base, cue = CUE_REMOVED[name]
        return drop_duplicates_and_blanks(remove_cue(build_ood(base, n, seed, train_x), cue))
    if name in MATCHED:
        want = n if name != "digits_matched" else None
        extra = 0 if want is None else max(5, n // 20)
        raw = _matched(name, n + extra, seed, rng, train_x)
        images, dropped = drop_duplicates_and_blanks(_on_grid(raw))
        if want is not None:
            if len(images) < want:
                raise ValueError(
                    f"the OOD set {name} has only {len(images)} unique non-blank images of the "
                    f"{want} asked for (data.ood_size); lower data.ood_size"
                )
            images = images[:want]
        return images, dropped
    return drop_duplicates_and_blanks(_on_grid(_cue_set(name, n, seed, rng, train_x)))


def _cue_set(name: str, n: int, seed: int, rng: np.random.Generator, train_x: np.ndarray):
    """Today's (cue-separable) set ``name``, exactly as before issue 41, before the dedupe."""
    if name in ("digits", "digits_val"):
        return _digits("test" if name == "digits" else "val", seed)
    if name == "glyphs_boxed":
        return _render_glyphs(n, rng, GLYPH_CHARS, boxed=True)
    if name in ("glyphs", "glyphs_val"):
        return _render_glyphs(n, rng, GLYPH_CHARS if name == "glyphs" else GLYPH_VAL_CHARS)
    stats = _id_stats(train_x)
    if name in ("photos", "photos_val", "textures"):
        src = {"photos": _PHOTOS_TEST, "photos_val": _PHOTOS_VAL, "textures": TEXTURES}[name]
        return _masked_crops(src, n, rng, stats["ink"])
    if name in ("noise", "noise_val"):
        return rng.normal(stats["mean"], stats["std"], size=(n, SIZE, SIZE))
    # shuffled: pixels permuted within each concentric square ring (ring d = the pixels d steps
    # from the frame's edge), so each image keeps its grey levels and its radial ink profile
    pick = np.sort(rng.choice(len(train_x), size=n, replace=False))
    flat = train_x[pick].reshape(n, -1).copy()
    for ring in _RINGS:
        flat[:, ring] = rng.permuted(flat[:, ring], axis=1)
    return flat.reshape(n, SIZE, SIZE)


_rr, _cc = np.mgrid[0:SIZE, 0:SIZE]
_DEPTH = np.minimum(np.minimum(_rr, SIZE - 1 - _rr), np.minimum(_cc, SIZE - 1 - _cc)).ravel()
_RINGS = [np.flatnonzero(_DEPTH == d) for d in range(SIZE // 2)]
