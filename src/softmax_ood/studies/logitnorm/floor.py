"""Which OOD sets are a test of the network: the floor battery beside CE.

For every OOD test set the floor battery (:mod:`softmax_ood.analysis.battery`: intensity,
spatial, spectral, nearest-neighbour and gradient-orientation detectors, each fitted on the ID
training images only; the floor is its best detector on the split, the whole battery, and the
best of its *tuning* and *held-out* families are reported apart) is compared with the CE
baseline's MSP FPR95 on the main architecture and headline recipe. The test images are split
once (a seeded ``selection_fraction`` of the ID test images and of each OOD set's images select,
the rest confirm; :func:`.evidence.split_images`). On the *selection* images, a far set whose floor
FPR95 is not significantly worse than CE's (a test over seeds and a bootstrap of those images,
never a point estimate) is *trivial*: reported, marked, and left out of the headline average. On
the disjoint *confirmation* images, which every verdict of the claims table reads, the premise
row "the set is not trivial" asks the same question again (:mod:`.evidence`: per seed
``floor - CE``; on each bootstrap resample the best detector is chosen again on the resampled
images, as generous to the floor as on the full set), so a headline set whose premise row does not hold is one
the floor nearly solves on fresh images. Perturbing the confirmation images' scores cannot change
which sets are kept (a test says so).

The frame's ``trivial`` column is that selection mark ("not kept"). What the report calls a set
is :func:`set_status`, defined here once: *trivial* only for a set the floor solves (its FPR95 on
the confirmation images at or below CE's MSP FPR95), *not kept* for a far set left out only
because the selection-half floor test was not significant (its p named), *kept* otherwise.

Offline, before any model is trained, :func:`battery_table` prints the battery on the selection
half of every test set of a prepared dataset::

    python -m softmax_ood.studies.logitnorm.floor data/fashion [selection_fraction] [seed]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ...analysis.battery import Battery, battery_result
from .evidence import Resamples, fpr95_first, msp_arrays, split_images, two_stage

__all__ = [
    "FLOOR_COLUMNS",
    "battery_table",
    "floor_frame",
    "image_sizes",
    "load_images",
    "resamples_for",
    "set_status",
]

FLOOR_COLUMNS = [
    "ood_set",
    "shift",
    "group",
    "floor_fpr95",
    "floor_detector",
    "tuning_fpr95",
    "tuning_detector",
    "heldout_fpr95",
    "heldout_detector",
    "ce_fpr95",
    "value",
    "se",
    "se_seed",
    "se_images",
    "n",
    "p_value",
    "holds",
    "selection_floor_fpr95",
    "selection_tuning_fpr95",
    "selection_tuning_detector",
    "selection_heldout_fpr95",
    "selection_heldout_detector",
    "selection_ce_fpr95",
    "selection_value",
    "selection_p_value",
    "trivial",
    "per_seed",
    "control_cue",
    "control_set",
    "ce_set_fpr95",
    "ce_control_fpr95",
    "ln_fpr95",
    "ln_control_fpr95",
]


def load_images(data_dir: Path | str, sets) -> dict:
    """Raw (unnormalised) images of a prepared dataset: ``train``, ``id`` (ID test) and each
    OOD test set in ``sets``, as ``(N, H, W)`` float64 (checked against ``meta.json``'s sha256)."""
    from ...provenance import path_sha256

    data_dir = Path(data_dir)
    files = json.loads((data_dir / "meta.json").read_text()).get("files", {})

    def load(name):
        path = data_dir / name
        if files.get(name) != path_sha256(path):
            raise ValueError(f"data file {path} does not match the sha256 in its meta.json")
        return np.load(path, allow_pickle=False).astype(np.float64).mean(axis=1)

    out = {"train": load("id_train_x.npy"), "id": load("id_test_x.npy")}
    out.update({s: load(f"ood_{s}_x.npy") for s in sets})
    return out


def image_sizes(samples: pd.DataFrame) -> dict:
    """Image count per set (``"id"``: the ID test images), from one model's per-image scores
    (every model scores the same images)."""
    first = samples[samples["score"] == "msp"].iloc[0]
    arrays = msp_arrays(samples, first["recipe"], first["arch"], first["loss"], first["seed"])
    return {s: len(a) for s, a in arrays.items()}


def resamples_for(samples: pd.DataFrame, spec: dict, part: str = "confirmation") -> Resamples:
    """The study's bootstrap resamples of one side of the image split (:func:`split_images`
    with ``spec['selection_fraction']`` and ``spec['bootstrap_seed']``): ``"selection"`` (which
    far sets count in the headline) or ``"confirmation"`` (every verdict), each side's resamples
    drawn within its own images with ``spec['bootstrap_seed']``."""
    if part not in ("selection", "confirmation"):
        raise ValueError(f"part must be 'selection' or 'confirmation', not {part!r}")
    sizes = image_sizes(samples)
    sel, conf = split_images(sizes, float(spec["selection_fraction"]), int(spec["bootstrap_seed"]))
    ood = {k: v for k, v in sizes.items() if k != "id"}
    return Resamples.draw(
        ood,
        sizes["id"],
        int(spec["bootstrap"]),
        int(spec["bootstrap_seed"]),
        subset=sel if part == "selection" else conf,
    )


def _floor_test(name, s_id, s_ood, scores, seeds, res: Resamples):
    """Battery and CE FPR95 on ``res``'s images and the two-stage test of ``floor - CE``
    (``s_id``/``s_ood``: the images' :meth:`Battery.scores`)."""

    def floor_on(b):
        ii, oo = res.id_rows(b), res.ood_rows(name, b)
        return battery_result(s_id.iloc[ii], s_ood.iloc[oo])

    full = floor_on(None)
    floors = {None: full["fpr95"], **{b: floor_on(b)["fpr95"] for b in range(len(res))}}

    def stat(seed, b):
        id_s, ood_s = res.pick(b, scores[seed], [name])
        return floors[b] - fpr95_first(id_s, ood_s[name])

    ts = two_stage(stat, seeds, res)

    def ce_on(seed):
        id_s, ood_s = res.pick(None, scores[seed], [name])
        return fpr95_first(id_s, ood_s[name])

    return full, ts, float(np.mean([ce_on(s) for s in seeds]))


def _group(name: str, near: set) -> str:
    from ...fashion import set_group

    return "near" if name in near else set_group(name)


def _controls(name: str, scores: dict, ln_scores: dict, seeds) -> dict:
    """The cue-removal control of set ``name`` (:data:`softmax_ood.fashion.CUE_CONTROL`): the
    cue, the variant without it and CE's and LogitNorm's MSP FPR95 (%, every image, mean over
    seeds) on the set and on the variant; empty strings and NaN where the set has none among
    the scored sets (or LogitNorm has no scores)."""
    from ...fashion import CUE_CONTROL

    cue, ctrl = CUE_CONTROL.get(name, ("", ""))
    have = bool(ctrl) and ctrl in scores[seeds[0]]

    def mean_fpr(sc, s):
        if not have or sc is None:
            return float("nan")
        return float(np.mean([fpr95_first(sc[k]["id"], sc[k][s]) for k in seeds]))

    return {
        "control_cue": cue if have else "",
        "control_set": ctrl if have else "",
        "ce_set_fpr95": mean_fpr(scores, name),
        "ce_control_fpr95": mean_fpr(scores, ctrl),
        "ln_fpr95": mean_fpr(ln_scores, name),
        "ln_control_fpr95": mean_fpr(ln_scores, ctrl),
    }


def floor_frame(
    samples: pd.DataFrame,
    images: dict,
    spec: dict,
    sets: list[str] | None = None,
) -> pd.DataFrame:
    """One row per OOD test set: on the *confirmation* images, the battery's best FPR95 (%; its
    tuning and held-out families' apart), CE's, and the two-stage test of ``floor - CE > 0``
    (``holds``: the set's premise row); on the disjoint *selection* images the same numbers and
    test (``selection_*``), which alone decide ``trivial`` (a far set where the test does not
    hold: left out of the headline). ``group``: ``near``, ``matched`` or ``cue-separable``
    (:func:`softmax_ood.fashion.set_group`). ``images`` from :func:`load_images`;
    ``samples`` the study's per-image MSP frame; ``sets``: only these (default: every OOD test set
    the samples hold)."""
    recipe, arch, ce, alpha = spec["recipe"], spec["main_arch"], spec["baseline"], spec["alpha"]
    seeds = sorted(int(s) for s in spec["seeds"])
    parts = {p: resamples_for(samples, spec, p) for p in ("selection", "confirmation")}
    scores = {s: msp_arrays(samples, recipe, arch, ce, s) for s in seeds}
    try:  # LogitNorm's scores, for the cue-removal control rows only (never the selection)
        ln_scores = {s: msp_arrays(samples, recipe, arch, spec["method"], s) for s in seeds}
    except ValueError:
        ln_scores = None
    near = set(spec.get("near_ood") or [])
    sets = sorted(set(scores[seeds[0]]) - {"id"}) if sets is None else sorted(sets)
    rows = []
    # the battery fitted once on the ID training images and every image scored once: a
    # bootstrap resample of the images is the same rows of the scores
    battery = Battery.fit(images["train"])
    s_id = battery.scores(images["id"])
    for name in sets:
        s_ood = battery.scores(images[name])
        tests = {p: _floor_test(name, s_id, s_ood, scores, seeds, res) for p, res in parts.items()}
        full, ts, ce_mean = tests["confirmation"]
        sel, sel_ts, sel_ce = tests["selection"]
        p = ts.p_value(0.0, ">")
        sel_p = sel_ts.p_value(0.0, ">")
        sel_holds = bool(sel_ts.mean > 0 and sel_p < alpha)
        group = _group(name, near)
        rows.append(
            {
                "ood_set": name,
                "shift": "near" if name in near else "far",
                "group": group,
                "floor_fpr95": float(full["fpr95"]),
                "floor_detector": full["detector"],
                "tuning_fpr95": float(full["tuning_fpr95"]),
                "tuning_detector": full["tuning_detector"],
                "heldout_fpr95": float(full["heldout_fpr95"]),
                "heldout_detector": full["heldout_detector"],
                "ce_fpr95": ce_mean,
                "value": ts.mean,
                "se": ts.se,
                "se_seed": ts.se_seed,
                "se_images": ts.se_images,
                "n": ts.n,
                "p_value": p,
                "holds": bool(ts.mean > 0 and p < alpha),
                "selection_floor_fpr95": float(sel["fpr95"]),
                "selection_tuning_fpr95": float(sel["tuning_fpr95"]),
                "selection_tuning_detector": sel["tuning_detector"],
                "selection_heldout_fpr95": float(sel["heldout_fpr95"]),
                "selection_heldout_detector": sel["heldout_detector"],
                "selection_ce_fpr95": sel_ce,
                "selection_value": sel_ts.mean,
                "selection_p_value": sel_p,
                # kept by a test on the selection images, never by a point estimate and never by
                # the confirmation images (issue 25): a far set whose floor is not significantly
                # worse than CE there is trivial
                # a cue-removal control is a sanity row, never a headline set
                "trivial": (name not in near) and (group == "control" or not sel_holds),
                "per_seed": ", ".join(f"{s}: {v:.2f}" for s, v in ts.per_seed.items()),
                **_controls(name, scores, ln_scores, seeds),
            }
        )
    out = pd.DataFrame(rows, columns=FLOOR_COLUMNS)
    out["n"] = out["n"].astype("int64")
    return out


def set_status(row) -> str:
    """What a floor row's set is called (module docstring): ``"control (...)"`` for a
    cue-removal control, ``"trivial (floor - CE ... pp on the confirmation images)"`` when the
    floor solves it, ``"not kept (selection-half floor test p =
    ...)"`` when the selection test alone left it out, ``"kept"`` otherwise."""
    if not bool(row["trivial"]):
        return "kept"
    if row.get("group") == "control":
        return "control (a cue-removal variant: never in the headline)"
    value = float(row["value"])
    if value <= 0:
        return f"trivial (floor - CE {value:.1f} pp on the confirmation images)"
    return f"not kept (selection-half floor test p = {float(row['selection_p_value']):.2g})"


def battery_table(data_dir: Path | str, *, selection_fraction: float = 0.5, seed: int = 0):
    """The floor battery (fitted on every ID training image) on the *selection* half of every
    OOD test set of a prepared dataset, computed from the images alone (no model): the split of
    :func:`.evidence.split_images` over the ID test images and every test set, with the study's
    ``selection_fraction`` and ``bootstrap_seed`` (``seed``), i.e. the images the premise reads.
    One row per set: its group and what the blank/duplicate check dropped (``meta.json``), its
    image counts, the best FPR95 (%, ID positive) of the tuning family, of the held-out family
    and of the whole battery with their detectors, and every detector's FPR95."""
    data_dir = Path(data_dir)
    meta = json.loads((data_dir / "meta.json").read_text())
    sets = list(meta["ood_test"])
    images = load_images(data_dir, sets)
    sizes = {"id": len(images["id"]), **{s: len(images[s]) for s in sets}}
    sel, _ = split_images(sizes, selection_fraction, seed)
    battery = Battery.fit(images["train"])
    s_id = battery.scores(images["id"][sel["id"]])
    rows = []
    for name in sets:
        r = battery_result(s_id, battery.scores(images[name][sel[name]]))
        src = meta.get("sources", {}).get(name, {})
        rows.append(
            {
                "set": name,
                "group": src.get("group", "near" if name == "heldout_classes" else ""),
                "images": sizes[name],
                "selection": len(sel[name]),
                "dropped": ", ".join(f"{k} {v}" for k, v in src.get("dropped", {}).items()),
                "tuning_fpr95": round(r["tuning_fpr95"], 2),
                "tuning_detector": r["tuning_detector"],
                "heldout_fpr95": round(r["heldout_fpr95"], 2),
                "heldout_detector": r["heldout_detector"],
                "battery_fpr95": round(r["fpr95"], 2),
                **{f"fpr95_{k}": round(v, 1) for k, v in r["per_detector"].items()},
            }
        )
    return pd.DataFrame(rows)


if __name__ == "__main__":  # the battery on the selection half of a prepared dataset
    import sys

    args = sys.argv[1:]
    table = battery_table(
        args[0] if args else "data/fashion",
        selection_fraction=float(args[1]) if len(args) > 1 else 0.5,
        seed=int(args[2]) if len(args) > 2 else 0,
    )
    print(table.to_string(index=False))
