"""OOD scores of the shift grid's evaluation sets (Kang et al. Sec. 3.2, App. B.3).

One call scores every evaluation set of one *group* (a shift type, the clean ID split, or the far
OOD sets) with :func:`softmax_ood.discriminator.ood_score`: the featurizer (independent of every
studied model) maps the ID reference split and each set to features, and a logistic-regression
discriminator is fitted per set on balanced random splits, ``n_repeats`` times. The result does
not depend on any trained model, so the workflow fits it once per (featurizer, group).
"""

from __future__ import annotations

import zlib
from types import SimpleNamespace

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "far_floor",
    "floor_split",
    "id_reference",
    "reference_images",
    "score_group",
    "select_alpha",
    "set_score",
]

COLUMNS = [
    "featurizer",
    "eval_set",
    "shift",
    "group",
    "level",
    "is_id",
    "ood_score",
    "ood_score_std",
    "n_repeats",
    "n_fit_per_class",
    "n_heldout",
    "per_repeat",
    "floor_fpr95",
    "floor_accepted",
    "floor_n",
    "floor_detector",
    "floor_tuning_fpr95",
    "floor_tuning_detector",
    "floor_heldout_fpr95",
    "floor_heldout_detector",
    "floor_confirmation_fpr95",
]


def reference_images(x_id: np.ndarray, group: str) -> np.ndarray:
    """The ID reference of ``group``: the clean training images, for every group (rotation by 0
    degrees is the identity, :func:`~softmax_ood.corruptions.rotate`, so no group needs a
    resampled reference)."""
    return x_id


#: shift label of the rotation round-trip rows (``roundtrip@<t>``: rotate by t, then by -t)
ROUNDTRIP = "rotation_roundtrip"


def roundtrip_sets(
    x_grid: np.ndarray, index: pd.DataFrame, angles
) -> list[tuple[dict, np.ndarray]]:
    """``(row, images)`` per angle ``t``: the rotation group's level-0 images (the clean test
    split) rotated by ``t`` and back by ``-t`` (net angle 0). A rotation path that blurs would
    make these score as shifted; they are scored beside the angles (premise
    ``rotation_roundtrip``) and are not part of the models' grid."""
    from ...corruptions import rotate

    zero = index[(index["group"] == "rotation") & (index["level"] == 0)]
    if zero.empty or not angles:
        return []
    r = zero.iloc[0]
    x0 = x_grid[int(r["start"]) : int(r["stop"])]
    out = []
    for t in angles:
        x = np.asarray(rotate(rotate(x0, float(t)), -float(t)), dtype=np.float32)
        row = {
            "eval_set": f"roundtrip@{float(t):g}",
            "shift": ROUNDTRIP,
            "group": "rotation",
            "level": float(t),
            "is_id": False,
        }
        out.append((row, x))
    return out


def floor_split(n: int, fraction: float, seed: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(selection, confirmation)``: disjoint sorted index arrays of a set of ``n`` images, a
    seeded ``fraction`` selecting (one stream per set name and base ``seed``)."""
    k = int(round(float(fraction) * n))
    if not 0 < k < n:
        raise ValueError(
            f"cannot split the {n} images of {name!r} into a floor selection share of "
            f"{fraction:g} and a non-empty confirmation share"
        )
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))
    perm = rng.permutation(n)
    return np.sort(perm[:k]), np.sort(perm[k:])


def far_floor(
    battery, s_id: pd.DataFrame, name: str, x_ood: np.ndarray, *, fraction: float, seed: int
) -> dict:
    """The floor battery (:mod:`softmax_ood.analysis.battery`, fitted on the ID training images
    only) on one far OOD set against the grid's clean ID set ``s_id`` (their battery scores:
    the first ``eval_size`` test images, so the 95 % recall threshold is read on half of those).

    Both image sets are split once (:func:`floor_split`): the premise ``far_nontrivial`` reads
    the *selection* half, where the floor is the best of the whole battery (tuning and held-out
    families) -- as generous to the floor as possible; the best of each family is recorded
    apart, and the whole battery's FPR95 on the disjoint *confirmation* half is reported beside
    it. FPR95 is the share of the set the detector accepts at 95 % ID recall. The binomial test
    of the premise treats that threshold as fixed and the best detector as chosen in advance,
    though both are read on the same half: an optimistic floor, so a set is kept only if even
    the luckiest detector fails on it."""
    from ...analysis.battery import battery_result

    id_sel, id_conf = floor_split(len(s_id), fraction, seed, "id")
    o_sel, o_conf = floor_split(len(x_ood), fraction, seed, name)
    s_ood = battery.scores(x_ood)
    sel = battery_result(s_id.iloc[id_sel], s_ood.iloc[o_sel])
    conf = battery_result(s_id.iloc[id_conf], s_ood.iloc[o_conf])
    n = len(o_sel)
    return {
        "floor_fpr95": float(sel["fpr95"]) / 100.0,
        "floor_accepted": int(round(float(sel["fpr95"]) / 100.0 * n)),
        "floor_n": n,
        "floor_detector": str(sel["detector"]),
        "floor_tuning_fpr95": float(sel["tuning_fpr95"]) / 100.0,
        "floor_tuning_detector": str(sel["tuning_detector"]),
        "floor_heldout_fpr95": float(sel["heldout_fpr95"]) / 100.0,
        "floor_heldout_detector": str(sel["heldout_detector"]),
        "floor_confirmation_fpr95": float(conf["fpr95"]) / 100.0,
    }


NO_FLOOR = {
    "floor_fpr95": np.nan,
    "floor_accepted": -1,
    "floor_n": 0,
    "floor_detector": "",
    "floor_tuning_fpr95": np.nan,
    "floor_tuning_detector": "",
    "floor_heldout_fpr95": np.nan,
    "floor_heldout_detector": "",
    "floor_confirmation_fpr95": np.nan,
}


def _alpha(discriminator: dict) -> float | None:
    a = discriminator.get("alpha")
    return None if a is None else float(a)


def id_reference(x_id: np.ndarray, discriminator: dict) -> np.ndarray:
    """The discriminator's ID reference images: ``x_id``, or its fixed seeded subset of
    ``id_reference_size`` images (the same in every group and for every scored set)."""
    size = discriminator.get("id_reference_size")
    if size is not None and int(size) < len(x_id):
        x_id = x_id[np.sort(np.random.default_rng(0).permutation(len(x_id))[: int(size)])]
    return x_id


def set_score(f_id: np.ndarray, f_set: np.ndarray, discriminator: dict, name: str):
    """:func:`softmax_ood.discriminator.ood_score` of the evaluation set ``name`` (features
    ``f_set``) against the ID reference features ``f_id``, with the discriminator's settings;
    one random stream per set name, independent of the group it is computed in."""
    from ...discriminator import ood_score

    return ood_score(
        f_id,
        f_set,
        n_repeats=int(discriminator["n_repeats"]),
        seed=int(discriminator.get("seed", 0)) * 2**32 + zlib.crc32(name.encode()),
        heldout_fraction=float(discriminator.get("heldout_fraction", 0.5)),
        C=float(discriminator.get("C", 1.0)),
        alpha=_alpha(discriminator),
    )


def _floor_battery(x_id: np.ndarray, x_grid: np.ndarray, index: pd.DataFrame):
    """``(battery, scores of the clean ID test images)``: the floor battery of the far OOD
    group, fitted on the ID training images only."""
    from ...analysis.battery import Battery

    battery = Battery.fit(x_id)
    r_id = index[index["is_id"]].iloc[0]
    return battery, battery.scores(x_grid[int(r_id["start"]) : int(r_id["stop"])])


def _group_index(index: pd.DataFrame, group: str) -> pd.DataFrame:
    """The index rows of ``group``'s evaluation sets.

    :raises ValueError: ``group`` has no evaluation set.
    """
    sets = index[index["group"] == group]
    if sets.empty:
        raise ValueError(
            f"the shift grid has no evaluation set in group {group!r}; groups: "
            f"{', '.join(dict.fromkeys(index['group']))}"
        )
    return sets


def _set_floor(battery, s_id, name: str, x_set: np.ndarray, discriminator: dict) -> dict:
    """The floor columns of one set: :func:`far_floor` with the battery of the far OOD group,
    :data:`NO_FLOOR` without one (every other group)."""
    if battery is None:
        return NO_FLOOR
    return far_floor(
        battery,
        s_id,
        name,
        x_set,
        fraction=float(discriminator.get("floor_selection_fraction", 0.5)),
        seed=int(discriminator.get("seed", 0)),
    )


def score_group(
    x_id: np.ndarray,
    x_grid: np.ndarray,
    index: pd.DataFrame,
    group: str,
    *,
    featurizer: dict,
    discriminator: dict,
) -> pd.DataFrame:
    """One row per evaluation set of ``group`` (columns :data:`COLUMNS`).

    :param x_id: ID reference images ``(n, C, H, W)`` in ``[0, 1]`` (the training split).
    :param x_grid, index: the shift grid (:func:`softmax_ood.studies.kang.grid.build_grid`).
    :param featurizer: ``{"name": ..., "params": {...}}``.
    :param discriminator: ``n_repeats``, ``seed``, ``heldout_fraction``, ``C``.
    :raises ValueError: ``group`` has no evaluation set.
    """
    from ...discriminator import build_featurizer

    sets = _group_index(index, group)
    feat = build_featurizer(featurizer["name"], featurizer.get("params") or {})
    x_id = id_reference(x_id, discriminator)
    f_id = feat(reference_images(x_id, group))
    battery = s_id = None
    if group == "far_ood":
        battery, s_id = _floor_battery(x_id, x_grid, index)
    rows = []
    items = [(r._asdict(), x_grid[r.start : r.stop]) for r in sets.itertuples(index=False)]
    if group == "rotation":
        items += roundtrip_sets(x_grid, index, discriminator.get("roundtrip_angles", ()))
    for rd, x_set in items:
        r = SimpleNamespace(**rd)
        res = set_score(f_id, feat(x_set), discriminator, r.eval_set)
        floor = _set_floor(battery, s_id, r.eval_set, x_set, discriminator)
        rows.append(
            {
                **floor,
                "featurizer": featurizer["name"],
                "eval_set": r.eval_set,
                "shift": r.shift,
                "group": r.group,
                "level": float(r.level),
                "is_id": bool(r.is_id),
                "ood_score": res.mean,
                "ood_score_std": res.std,
                "n_repeats": len(res.per_repeat),
                "n_fit_per_class": res.n_fit_per_class,
                "n_heldout": res.n_heldout,
                "per_repeat": list(res.per_repeat),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def select_alpha(
    x_id: np.ndarray,
    x_val: np.ndarray,
    index_val: pd.DataFrame,
    *,
    featurizer: dict,
    discriminator: dict,
    candidates: list[float],
    n_repeats: int,
    null_tolerance: float,
    max_saturated: float,
    saturated_at: float = 0.99,
) -> tuple[float, pd.DataFrame]:
    """The discriminator's L2 strength ``alpha``, chosen on **held-out** data: the validation
    split under every shift (``x_val``/``index_val``, :func:`grid.build_grid` with
    ``split="val"``), never the test images the scores are reported on, never a model.

    Rule (regime of Kang et al.'s low-capacity discriminator): the smallest candidate (the most
    capacity) whose level-0 sets score within ``null_tolerance`` of 0.5 (ID vs ID is a null) and
    whose share of shifted levels scoring above ``saturated_at`` is at most ``max_saturated``
    (a saturated score cannot grade the levels); if none qualifies, the largest candidate.
    Returns ``(alpha, table)``, one table row per candidate.
    """
    graded = index_val[index_val["group"].isin([g for g in index_val["group"] if g != "far_ood"])]
    rows = []
    for a in sorted(float(c) for c in candidates):
        disc = {**discriminator, "alpha": a, "n_repeats": int(n_repeats), "roundtrip_angles": ()}
        parts = [
            score_group(x_id, x_val, graded, g, featurizer=featurizer, discriminator=disc)
            for g in dict.fromkeys(graded["group"])
        ]
        sc = pd.concat(parts, ignore_index=True)
        level0 = sc[sc["level"] == 0]
        shifted = sc[sc["level"] > 0]
        null = float((level0["ood_score"] - 0.5).abs().max())
        sat = float((shifted["ood_score"] > saturated_at).mean()) if len(shifted) else 0.0
        rows.append(
            {
                "alpha": a,
                "null_deviation": null,
                "saturated_share": sat,
                "mean_shifted_score": float(shifted["ood_score"].mean()),
                "eligible": null <= null_tolerance and sat <= max_saturated,
            }
        )
    table = pd.DataFrame(rows)
    ok = table[table["eligible"]]
    alpha = float(ok["alpha"].min()) if len(ok) else float(table["alpha"].max())
    table["chosen"] = table["alpha"] == alpha
    return alpha, table


def choose_alpha(data_dir, spec: dict) -> tuple[float, pd.DataFrame]:
    """``(alpha, table)`` for the study section ``spec``: the configured ``discriminator.alpha``
    if set (table empty), else :func:`select_alpha` on the validation split's shift grid."""
    from .grid import build_grid, raw_split

    disc = spec["discriminator"]
    if disc.get("alpha") is not None:
        return float(disc["alpha"]), pd.DataFrame(
            columns=["alpha", "null_deviation", "saturated_share", "mean_shifted_score"]
        )
    sel = disc.get("select")
    if not sel:
        raise ValueError(
            "kang.discriminator needs either alpha or select (how alpha is chosen on held-out data)"
        )
    x_val, _, index_val = build_grid(data_dir, spec, split="val")
    return select_alpha(
        raw_split(data_dir, f"id_{disc.get('id_split', 'train')}"),
        x_val,
        index_val,
        featurizer=spec["featurizer"],
        discriminator=disc,
        candidates=list(sel["candidates"]),
        n_repeats=int(sel.get("n_repeats", 5)),
        null_tolerance=float(sel.get("null_tolerance", 0.02)),
        max_saturated=float(sel.get("max_saturated", 0.1)),
    )
