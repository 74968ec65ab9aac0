"""The softmax outputs behind the paper's Figs. 2 and 3 (Wei et al. 2022): one trained model per
loss on a seeded subset of the ID test images and of every OOD test set, with each loss's t-SNE
of those outputs.

The evaluation keeps one number per image and score (``scores.parquet``), not the softmax
vector, so this frame comes from the trained models themselves (rule ``logitnorm_softmax``); a
forward pass over a few hundred images per model. The figures (:mod:`.figures`) read only the
frame and decide which of its sets they draw; nothing here reads a result.

Frame: one row per (loss, image): ``dataset``, ``recipe``, ``arch``, ``loss``, ``seed`` (the
training seed), ``set`` (``"id"``: the ID test images; else the OOD test set), ``order`` (the
image's place in its set's seeded subset: 0 is the first drawn), ``image`` (its index in the
prepared array), ``label`` (its ID class, -1 for an OOD image), ``class_name`` (the ID class's
name, empty for OOD), ``p0`` ... ``p<k-1>`` (softmax probabilities, float64) and ``tsne_x``,
``tsne_y`` (the t-SNE of that loss's softmax vectors, every row of the loss at once).

torch and scikit-learn are imported by the functions that use them, not with the module.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ...runs import parse_run_dir
from .shared import prob_columns

__all__ = ["softmax_frame", "subset", "tsne"]


def subset(n: int, size: int, seed: int, name: str) -> np.ndarray:
    """The first ``size`` (at most ``n``) indices of a seeded permutation of ``range(n)``, in the
    order drawn. Each set has its own stream (``seed`` and the set's name), so a set's subset
    does not depend on which other sets the config lists."""
    rng = np.random.default_rng([int(seed), zlib.crc32(name.encode())])
    return rng.permutation(n)[: min(int(size), n)]


def tsne(probs: np.ndarray, *, seed: int, perplexity: float) -> np.ndarray:
    """2-D t-SNE (scikit-learn, Barnes-Hut, PCA initialisation, ``random_state=seed``) of the
    rows of ``probs``, on one thread so that the same input gives the same bytes (the
    gradient's sums are split across threads otherwise). The perplexity is capped below the
    number of points, as scikit-learn requires."""
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    n = len(probs)
    if n < 3:
        raise ValueError(f"A t-SNE needs at least 3 points; the frame has {n}.")
    with threadpool_limits(limits=1):
        emb = TSNE(
            n_components=2,
            perplexity=min(float(perplexity), (n - 1) / 3.0),
            init="pca",
            random_state=int(seed),
        ).fit_transform(np.asarray(probs, dtype=np.float64))
    return emb.astype(np.float64)


def _images(data, sets: Sequence[str], section: Mapping) -> list[tuple[str, np.ndarray, object]]:
    """``(set, indices, tensor)`` of the ID test images and each OOD test set in ``sets``."""
    seed = int(section["seed"])
    out = [("id", subset(len(data.x["test"]), section["id_images"], seed, "id"), data.x["test"])]
    for name in sets:
        if name not in data.ood:
            raise ValueError(f"The prepared data have no OOD test set {name!r}.")
        x = data.ood[name]
        out.append((name, subset(len(x), section["ood_images"], seed, name), x))
    return out


def softmax_frame(
    checkpoints: Mapping[str, str | Path],
    data_dir: str | Path,
    sets: Sequence[str],
    section: Mapping,
    *,
    batch_size: int = 256,
) -> pd.DataFrame:
    """The frame of the module docstring: for each loss of ``checkpoints`` (loss -> the
    ``model.pt`` of one training run, in the order given) the softmax outputs on the seeded
    subsets (``section``: ``seed``, ``id_images``, ``ood_images`` per OOD set, ``perplexity``)
    of the ID test images and of the OOD test sets ``sets``; every loss sees the same images.

    :raises ValueError: a set the data lack, or a checkpoint of another run than its path says.
    """
    import torch

    from ...data import load_prepared
    from ...experiment import load_checkpoint
    from ...scores import forward_batches

    data = load_prepared(data_dir)
    names = list(data.meta.get("class_names") or [])
    parts = _images(data, sets, section)
    y = data.y["test"].numpy()
    frames = []
    for loss, path in checkpoints.items():
        run = parse_run_dir(path)
        model, _ = load_checkpoint(path, expected=run._asdict())
        rows = []
        for name, idx, x in parts:
            _, logits = forward_batches(model, x[torch.as_tensor(idx)], batch_size)
            probs = torch.softmax(logits.double(), dim=1).numpy()
            label = y[idx] if name == "id" else np.full(len(idx), -1)
            rows.append(
                pd.DataFrame(
                    {
                        "dataset": run.dataset,
                        "recipe": run.recipe,
                        "arch": run.arch,
                        "loss": loss,
                        "seed": int(run.seed),
                        "set": name,
                        "order": np.arange(len(idx), dtype=np.int64),
                        "image": idx.astype(np.int64),
                        "label": label.astype(np.int64),
                        "class_name": [names[i] if 0 <= i < len(names) else "" for i in label],
                        **{f"p{c}": probs[:, c] for c in range(probs.shape[1])},
                    }
                )
            )
        one = pd.concat(rows, ignore_index=True)
        emb = tsne(
            one[prob_columns(one.columns)].to_numpy(),
            seed=int(section["seed"]),
            perplexity=float(section["perplexity"]),
        )
        frames.append(one.assign(tsne_x=emb[:, 0], tsne_y=emb[:, 1]))
    return pd.concat(frames, ignore_index=True)
