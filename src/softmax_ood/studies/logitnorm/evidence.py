"""Evidence for the LogitNorm comparisons: seeds *and* test images.

The test images are one fixed sample (180 ID digits; 180 near-OOD, 600 per far set), shared by
every seed, so the spread over seeds alone says nothing about how a comparison would change on
other test images. Each FPR95 comparison here is therefore judged with a two-stage standard
error of the seed mean of its per-seed statistic ``d_s``:

``SE^2 = var_s(d_s) / n_seeds + var_b(mean_s d_s(b))``

the first term the training randomness (seeds, test images fixed), the second the test-set
sampling: ``B`` bootstrap resamples of the ID test images and of each OOD set's images (drawn
once, with ``bootstrap_seed``, and shared by every model and both sides of a comparison, so the
pairing is kept), with the statistic's seed mean recomputed on each. The one-sided p is that of
``t = (mean - threshold) / SE`` with ``n_seeds - 1`` degrees of freedom, and the power to detect
an effect ``delta`` the noncentral-t power at ``delta / SE``. Because the test-set term does not
shrink with more seeds, the power has a ceiling no seed count lifts; the claims table says so.

Every score per test image comes from the ``samples`` frame (float64, ranked as is; ties count
as the ROC convention of :func:`softmax_ood.metrics.ood_metrics` says): MSP, ODIN, Energy,
GradNorm and GODIN of every architecture, and the confidence after TS and correctness on the ID
images (the ECE comparison). Every comparison of the claims table that compares models (the MSP
ones, the other scores, GODIN, each architecture, the ECE after TS) is judged this way. FPR95 uses the first operating
point with TPR >= 95 % (the pipeline's convention), :func:`fpr95_first`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "Resamples",
    "TwoStage",
    "auroc_ranks",
    "fpr95_first",
    "fpr_at_tpr_closest",
    "has_scores",
    "msp_arrays",
    "split_images",
    "two_stage",
]


def fpr95_first(id_scores: np.ndarray, ood_scores: np.ndarray, tpr: float = 0.95) -> float:
    """FPR (%) at the first ROC point with TPR >= ``tpr`` (ID positive, higher = more ID):
    the threshold is the ``ceil(tpr * n_id)``-th largest ID score and every OOD score at or above
    it is accepted (equal to :func:`softmax_ood.metrics.fpr_at_tpr`, tested)."""
    s = np.sort(np.asarray(id_scores, dtype=np.float64))[::-1]
    k = max(1, math.ceil(tpr * len(s) - 1e-9))
    return 100.0 * float(np.mean(np.asarray(ood_scores, dtype=np.float64) >= s[k - 1]))


def auroc_ranks(id_scores: np.ndarray, ood_scores: np.ndarray) -> float:
    """AUROC (%) from ranks (Mann-Whitney; ties count one half, as
    :func:`softmax_ood.metrics.auroc`, tested): fast enough for every bootstrap resample."""
    from scipy.stats import rankdata

    a = np.asarray(id_scores, dtype=np.float64)
    o = np.asarray(ood_scores, dtype=np.float64)
    n1, n2 = len(a), len(o)
    r = rankdata(np.concatenate([a, o]))
    return 100.0 * float(r[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * n2)


def fpr_at_tpr_closest(id_scores, ood_scores, tpr: float = 0.95) -> float:
    """FPR (fraction; ID positive, higher = more ID) at the operating point whose TPR is
    *closest* to ``tpr``: the convention of the Outlier-Exposure / Energy / LogitNorm reference
    code (``fpr_and_fdr_at_recall``: thresholds at the distinct scores up to full recall, scanned
    from the lowest to the highest, plus a sentinel point (recall 1, FPR 0), and
    ``argmin |recall - tpr|``, the first such point on a tie). It may sit below ``tpr``; the
    pipeline's own convention is :func:`softmax_ood.metrics.fpr_at_tpr` (first point >= ``tpr``)."""
    s_id = np.asarray(id_scores, dtype=np.float64).ravel()
    s_ood = np.asarray(ood_scores, dtype=np.float64).ravel()
    if s_id.size == 0 or s_ood.size == 0 or not (0 < tpr <= 1):
        raise ValueError("fpr_at_tpr_closest needs ID and OOD scores and a TPR in (0, 1]")
    scores = np.concatenate([s_id, s_ood])
    pos = np.concatenate([np.ones(s_id.size), np.zeros(s_ood.size)])
    order = np.argsort(-scores, kind="mergesort")
    scores, pos = scores[order], pos[order]
    last = np.r_[np.flatnonzero(np.diff(scores) != 0), scores.size - 1]
    tps = np.cumsum(pos)[last]
    fps = (1 + last) - tps
    stop = int(np.searchsorted(tps, tps[-1]))
    recall = np.r_[(tps / tps[-1])[stop::-1], 1.0]
    fps = np.r_[fps[stop::-1], 0]
    cut = int(np.argmin(np.abs(recall - tpr)))
    return float(fps[cut] / s_ood.size)


def msp_arrays(
    samples: pd.DataFrame, recipe: str, arch: str, loss: str, seed: int, score: str = "msp"
) -> dict:
    """``{set: per-image score (float64)}`` of one model (``"id"``: the ID test images), in the
    order of the prepared arrays; ``score`` another kept score than MSP (e.g. ``"odin"``,
    ``"msp_ts"``)."""
    index = _model_index(samples)
    rows = index.get((recipe, arch, loss, score, int(seed)))
    if rows is None:
        raise ValueError(
            f"The samples frame has no {score} rows for {recipe}/{arch}/{loss}/seed{seed}."
        )
    sets, values = index[_COLUMNS][0][rows], index[_COLUMNS][1][rows]
    return {s: values[sets == s] for s in pd.unique(sets)}  # sets in order of first appearance


def has_scores(samples: pd.DataFrame, recipe: str, arch: str, loss: str, seeds, score: str) -> bool:
    """Whether ``samples`` holds per-image ``score`` values of every seed of the model."""
    index = _model_index(samples)
    return all((recipe, arch, loss, score, int(s)) in index for s in seeds)


#: per samples frame (by identity, while it lives): its row positions per model, score and seed.
#: The claims ask for one model's rows thousands of times; a boolean mask over the whole frame
#: each time cost most of the claims' time (arrow-backed string columns). Frames are read, never
#: changed, once loaded.
_INDEX: dict[int, tuple] = {}
_COLUMNS = ("set", "value")  # the index's entry of those columns as arrays


def _model_index(samples: pd.DataFrame) -> dict:
    """``{(recipe, arch, loss, score, seed): row positions}`` of ``samples`` (cached)."""
    import weakref

    key = id(samples)
    hit = _INDEX.get(key)
    if hit is not None and hit[0]() is samples and hit[1] == len(samples):
        return hit[2]
    cols = ["recipe", "arch", "loss", "score", "seed"]
    groups = samples.groupby(cols, sort=False).indices if len(samples) else {}
    index: dict = {(r, a, lo, sc, int(se)): pos for (r, a, lo, sc, se), pos in groups.items()}
    index[_COLUMNS] = (
        samples["set"].to_numpy(dtype=object) if len(samples) else np.array([], dtype=object),
        samples["value"].to_numpy(dtype=np.float64) if len(samples) else np.array([]),
    )
    _INDEX[key] = (weakref.ref(samples, lambda _, k=key: _INDEX.pop(k, None)), len(samples), index)
    return index


def split_images(sizes: dict, fraction: float, seed: int) -> tuple[dict, dict]:
    """``(selection, confirmation)``: per image set (``sizes``: name -> image count, ``"id"``
    the ID test images), disjoint sorted index arrays, a seeded ``fraction`` of each set's images
    selecting and the rest confirming (one independent permutation per set, sorted names).
    A choice made on the selection images (which far sets count in the headline) cannot be moved
    by the confirmation images that judge the claims."""
    if not 0.0 < float(fraction) < 1.0:
        raise ValueError(
            f"the selection fraction must lie strictly between 0 and 1, not {fraction}"
        )
    streams = np.random.SeedSequence([int(seed), 1]).spawn(len(sizes))
    sel, conf = {}, {}
    for stream, name in zip(streams, sorted(sizes), strict=True):
        n = int(sizes[name])
        k = int(round(float(fraction) * n))
        if not 0 < k < n:
            raise ValueError(
                f"cannot split the {n} images of {name!r} into a selection share of {fraction:g} "
                "and a non-empty confirmation share"
            )
        perm = np.random.default_rng(stream).permutation(n)
        sel[name], conf[name] = np.sort(perm[:k]), np.sort(perm[k:])
    return sel, conf


@dataclass(frozen=True)
class Resamples:
    """``B`` bootstrap index arrays of the ID test images and of each OOD set's images, drawn
    within a subset of each set's images (``id_base`` / ``ood_base``; ``None``: all of them)."""

    id_index: tuple[np.ndarray, ...]
    ood_index: dict
    id_base: np.ndarray | None = None
    ood_base: dict | None = None

    @classmethod
    def draw(
        cls, sizes: dict, n_id: int, n_boot: int, seed: int, subset: dict | None = None
    ) -> Resamples:
        """``sizes``: OOD set -> image count; one independent stream per set (sorted names).
        ``subset``: per set (``"id"`` the ID images) the image indices the resamples draw from
        (e.g. one side of :func:`split_images`); ``None``: every image."""
        streams = np.random.SeedSequence(seed).spawn(1 + len(sizes))

        def boot(stream, base, n):
            r = np.random.default_rng(stream)
            if base is None:
                return tuple(r.integers(0, n, n) for _ in range(n_boot))
            return tuple(base[r.integers(0, len(base), len(base))] for _ in range(n_boot))

        sub = subset or {}
        id_index = boot(streams[0], sub.get("id"), n_id)
        ood = {
            name: boot(stream, sub.get(name), sizes[name])
            for stream, name in zip(streams[1:], sorted(sizes), strict=True)
        }
        ood_base = {name: sub[name] for name in sizes if name in sub} if subset else None
        return cls(id_index, ood, sub.get("id"), ood_base)

    def __len__(self) -> int:
        return len(self.id_index)

    def id_rows(self, b: int | None):
        """The ID image indices of resample ``b`` (``None``: the subset as it is)."""
        if b is not None:
            return self.id_index[b]
        return slice(None) if self.id_base is None else self.id_base

    def ood_rows(self, name: str, b: int | None):
        """The image indices of OOD set ``name`` in resample ``b`` (``None``: the subset)."""
        if b is not None:
            return self.ood_index[name][b]
        base = (self.ood_base or {}).get(name)
        return slice(None) if base is None else base

    def pick(self, b: int | None, arrays: dict, sets: Sequence[str]) -> tuple:
        """``(id array, {set: OOD array})`` of resample ``b`` (``None``: the subset's images as
        they are)."""
        return arrays["id"][self.id_rows(b)], {s: arrays[s][self.ood_rows(s, b)] for s in sets}


@dataclass(frozen=True)
class TwoStage:
    """A per-seed statistic judged with seeds and test images (see the module docstring)."""

    mean: float
    per_seed: pd.Series
    se_seed: float
    se_images: float
    se: float
    n: int

    def p_value(self, threshold: float, direction: str) -> float:
        from scipy import stats

        if self.n < 2 or not math.isfinite(self.se):
            return math.nan
        if self.se <= 0:
            above = self.mean > threshold
            return 0.0 if (above if direction in (">", ">=") else not above) else 1.0
        t = (self.mean - threshold) / self.se
        t = t if direction in (">", ">=") else -t
        return float(stats.t.sf(t, self.n - 1))

    def power(self, delta: float, alpha: float) -> float:
        from scipy import stats

        if self.n < 2 or not math.isfinite(delta) or delta == 0 or not math.isfinite(self.se):
            return math.nan
        if self.se <= 0:
            return 1.0
        df = self.n - 1
        return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, abs(delta) / self.se))

    def describe(self, unit: str = " pp") -> str:
        seeds = ", ".join(f"{s}: {v:.2f}" for s, v in self.per_seed.items())
        return (
            f"mean {self.mean:.2f}{unit} over {self.n} seeds (per seed {seeds}); SE "
            f"{self.se:.2f} = seeds {self.se_seed:.2f} (+) test images {self.se_images:.2f}"
        )


def two_stage(
    statistic: Callable[[int, int | None], float], seeds: Sequence[int], resamples: Resamples
) -> TwoStage:
    """``statistic(seed, b)``: the per-seed value on resample ``b`` (``None``: all images)."""
    per_seed = pd.Series({int(s): float(statistic(int(s), None)) for s in seeds}, dtype=float)
    n = int(per_seed.notna().sum())
    if n == 0:
        return TwoStage(math.nan, per_seed, math.nan, math.nan, math.nan, 0)
    mean = float(per_seed.mean())
    se_seed = float(per_seed.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    boots = [
        float(np.nanmean([statistic(int(s), b) for s in seeds])) for b in range(len(resamples))
    ]
    se_images = float(np.std(boots, ddof=1)) if len(boots) > 1 else 0.0
    se = math.sqrt(se_seed**2 + se_images**2) if math.isfinite(se_seed) else math.nan
    return TwoStage(mean, per_seed, se_seed, se_images, se, n)
