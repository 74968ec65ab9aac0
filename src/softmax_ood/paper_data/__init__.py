"""Paper-scale data: read the real downloaded formats and write the prepared layout.

The paper-scale configuration (CIFAR-10/100 as in-distribution data; SVHN, Textures (DTD),
Places365, LSUN-C, LSUN-R and iSUN as OOD test sets, as in the ODIN / Energy / LogitNorm
papers) is described by ``config/paper_sources.yaml``. This package

* loads and validates that file (:func:`load_paper_config`, :func:`load_sources`) and
  downloads the archives with checksum verification (:func:`fetch_sources`, which uses
  :func:`softmax_ood.download.download`): :mod:`softmax_ood.paper_data.sources`;
* reads the real formats into ``uint8`` arrays of shape ``(N, 32, 32, 3)``:
  :func:`read_cifar_python` (pickled batches), :func:`read_svhn_mat` (MATLAB ``.mat``),
  :func:`read_image_folder` (any tree of images, e.g. an extracted tarball):
  :mod:`softmax_ood.paper_data.readers`;
* and writes the same prepared layout as the embedded dataset (:func:`prepare_paper_data`;
  the layout is documented in :mod:`softmax_ood.data`): :mod:`softmax_ood.paper_data.prepare`.

Image preprocessing for folder datasets follows torchvision's ``Resize(32)`` +
``CenterCrop(32)`` (the transform the Energy/LogitNorm code applies to Textures and Places365):
the shorter side is scaled to 32 pixels with bilinear (antialiased) PIL resampling, then the
central 32x32 square is cut out. Images that are already 32x32 (LSUN, iSUN) are unchanged.
"""

from __future__ import annotations

from .prepare import GAUSSIAN_VAL, ID_FORMATS, prepare_paper_data
from .readers import (
    CIFAR_C_PER_SEVERITY,
    IMAGE_EXTENSIONS,
    array_sha256,
    list_images,
    load_images,
    read_cifar_c,
    read_cifar_python,
    read_image_folder,
    read_mnist_idx,
    read_svhn_mat,
)
from .sources import (
    FORMATS,
    MNIST_PARTS,
    UNTRACKED_KEYS,
    byte_cap,
    download_identity,
    fetch_sources,
    fetch_tracked_source,
    load_paper_config,
    load_sources,
    source_names,
    tracked_entry,
)

__all__ = [
    "CIFAR_C_PER_SEVERITY",
    "FORMATS",
    "GAUSSIAN_VAL",
    "ID_FORMATS",
    "IMAGE_EXTENSIONS",
    "MNIST_PARTS",
    "UNTRACKED_KEYS",
    "array_sha256",
    "byte_cap",
    "download_identity",
    "fetch_sources",
    "fetch_tracked_source",
    "list_images",
    "load_images",
    "load_paper_config",
    "load_sources",
    "prepare_paper_data",
    "read_cifar_c",
    "read_cifar_python",
    "read_image_folder",
    "read_mnist_idx",
    "read_svhn_mat",
    "source_names",
    "tracked_entry",
]
