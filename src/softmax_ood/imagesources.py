"""The offline image sources the constructed OOD sets draw from (the digits' in
:mod:`softmax_ood.data`, Fashion-MNIST's in :mod:`softmax_ood.farsets`): scikit-image's sample
images, each with its licence, and the DejaVu fonts matplotlib ships, with the glyph characters.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "CHARACTERS",
    "GLYPH_CHARS",
    "GLYPH_FONTS",
    "LICENCES",
    "PHOTOS",
    "TEXTURES",
    "font_dir",
    "grey_image",
]

#: scikit-image sample images by kind (names of :mod:`skimage.data`)
TEXTURES = ("brick", "grass", "gravel")
PHOTOS = ("astronaut", "camera", "coffee", "chelsea", "rocket", "hubble_deep_field")
CHARACTERS = ("text", "page")
#: each sample image's licence note, as ``meta.json`` records it
LICENCES = {
    "brick": "CC0 (CC0Textures Bricks25, via scikit-image)",
    "grass": "CC0 (DeviantArt linolafett Grass-01, via scikit-image)",
    "gravel": "CC0 (CC0Textures Gravel04, via scikit-image)",
    "astronaut": "public domain (NASA Great Images, via scikit-image)",
    "camera": "CC0 (photographer Lav Varshney, via scikit-image)",
    "coffee": "CC0 (photographer Rachel Michetti, via scikit-image)",
    "chelsea": "CC0 (photographer Stefan van der Walt, via scikit-image)",
    "rocket": "public domain (SpaceX photos, via scikit-image)",
    "hubble_deep_field": "public domain (NASA/HubbleSite, via scikit-image)",
    "text": "public domain (Wikipedia File:Corner.png, via scikit-image)",
    "page": "no licence stated in its docstring; distributed with scikit-image (BSD-3-Clause)",
}

# Glyphs: letters that do not resemble a digit (no O/o/Q/D, I/l/i/j, Z/z, S/s, G, B/b, g/q, T)
# and symbols, in the DejaVu faces matplotlib ships (Bitstream Vera licence, see meta.json).
GLYPH_CHARS = (
    "ACEFHKMNPRUVWXYacdefhkmnprtuvwxy"
    "#%&@+?!$*=<>{}~\u00a7\u00b6\u00a3\u00a5\u20ac\u03a9\u03a3\u03a6\u03a8"
    "\u03bb\u03c0\u03b4\u221e\u2660\u2663\u2665\u2666\u2605\u263a\u00d7\u00f7"
)
GLYPH_FONTS = (
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSans-BoldOblique.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSansMono-Bold.ttf",
)


def grey_image(name: str) -> np.ndarray:
    """A scikit-image sample image as float64 grey levels in [0, 1]."""
    import skimage.data
    from skimage.color import rgb2gray

    img = getattr(skimage.data, name)()
    img = np.asarray(img)
    if img.ndim == 3:
        img = rgb2gray(img[..., :3])
    elif img.dtype == np.uint8:
        img = img / 255.0
    return np.asarray(img, dtype=np.float64)


def font_dir() -> Path:
    """The folder of matplotlib's TrueType fonts (the DejaVu faces of :data:`GLYPH_FONTS`)."""
    import matplotlib

    return Path(matplotlib.get_data_path()) / "fonts" / "ttf"
