"""A hand-built small LogitNorm world: every frame the claims read, with knobs.

Defaults are a world where every premise and claim holds (CE fitted and overconfident, failing
at OOD detection with FPR95 about 50 %; LogitNorm at about 15 %; every OOD set drawn like the ID
images so the pixel floor cannot separate them). :func:`build` takes overrides of :data:`KNOBS`
to make one statement fail. Scores and images come from a fixed RNG per (model, set), so the
frames are the same on every call.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from softmax_ood.studies.logitnorm.evidence import fpr95_first
from softmax_ood.studies.logitnorm.floor import floor_frame
from softmax_ood.studies.logitnorm.frames import mark_trivial

N_ID, N_OOD = 160, 160  # each half of the selection/confirmation split: 80
KNOBS = {
    "ce_loss": 0.05,  # final training loss (constant solution: log 5 = 1.61)
    "ln_loss": 0.1,  # LogitNorm's final training loss (the same constant solution)
    "ce_temp": 1.5,
    "ce_norm_id": 12.0,
    "ce_norm_ood": 10.0,
    "ln_norm": 1.6,
    "lp_norm": 2.0,
    "acc": {"ce": 0.98, "logitnorm": 0.978},
    "acc_ln_spread": 0.0,  # extra per-seed jitter of LogitNorm's accuracy (C2's interval)
    "ece_ts": {"ce": 3.0, "logitnorm": 1.5},
    # MSP FPR95 (fraction) per loss on every OOD set, main arch; near sets may differ
    "fpr": {"ce": 0.5, "logitnorm": 0.15, "logitpenalty": 0.6},
    "fpr_near": {"ce": 0.5, "logitnorm": 0.15, "logitpenalty": 0.6},
    "score_fpr": {"ce": 0.45, "logitnorm": 0.12},  # other scores (C3)
    "godin_fpr": 0.30,
    "arch_fpr": {"ce": 0.5, "logitnorm": 0.15},
    "bad_arch": None,  # an architecture where LogitNorm is worse than CE
    "ce_norm_growth": 0.01,  # per epoch, after the fit (C8)
    "trivial_set": None,  # an OOD set whose images are all bright (the floor solves it)
}


def spec_for(base: dict, **over) -> dict:
    spec = dict(base)
    spec.update(
        seeds=[0, 1, 2, 3, 4],
        bootstrap=8,
        bootstrap_seed=0,
        recipe=base.get("recipe") or "sgd",
        dataset="digits",
    )
    spec.update(over)
    return spec


def _jitter(seed: int) -> float:
    return 0.02 * (seed - 2) / 2


def _scores(rng: np.random.Generator, fpr: float) -> tuple[np.ndarray, np.ndarray]:
    """ID and OOD MSPs with an FPR95 of about ``fpr`` (ID uniform on [0.2, 1])."""
    id_s = rng.uniform(0.2, 1.0, N_ID)
    thr = np.sort(id_s)[::-1][math.ceil(0.95 * N_ID) - 1]
    n_hi = int(round(fpr * N_OOD))
    hi = rng.uniform(thr, 1.0, n_hi)
    lo = rng.uniform(0.0, thr - 1e-6, N_OOD - n_hi)
    return id_s, np.concatenate([hi, lo])


def _images(rng: np.random.Generator, n: int, bright: bool = False) -> np.ndarray:
    x = rng.uniform(0, 1, (n, 8, 8)) * (rng.uniform(0, 1, (n, 8, 8)) < 0.5)
    x[:, :, 0] = x[:, :, -1] = 0.0
    return np.ones((n, 8, 8)) if bright else x


def images_for(spec: dict, rng: np.random.Generator | None = None) -> dict:
    """The world's raw images: ``train``, ``id`` and every OOD test set (drawn alike)."""
    rng = np.random.default_rng(7) if rng is None else rng
    images = {"train": _images(rng, 120), "id": _images(rng, N_ID)}
    for name in spec["ood_test"]:
        images[name] = _images(rng, N_OOD)
    return images


def _floor(samples: pd.DataFrame, spec: dict, trivial: str | None, cache: dict | None):
    """The floor frame; only the set made trivial is recomputed against a cached base."""
    cache = {} if cache is None else cache
    rng = np.random.default_rng(7)
    images = images_for(spec, rng)
    if "base" not in cache:
        cache["base"] = floor_frame(samples, images, spec)
    if trivial is None:
        return cache["base"]
    if trivial not in cache:
        images[trivial] = _images(rng, N_OOD, bright=True)
        cache[trivial] = floor_frame(samples, images, spec, sets=[trivial])
    base = cache["base"]
    return pd.concat([base[base["ood_set"] != trivial], cache[trivial]], ignore_index=True)


def build(spec: dict, floor_cache: dict | None = None, **over) -> dict:
    """The frames ``runs``, ``ood``, ``curves``, ``samples``, ``floor`` for ``spec``."""
    k = {**KNOBS, **over}
    seeds = [int(s) for s in spec["seeds"]]
    recipe, arch = spec["recipe"], spec["main_arch"]
    ce, ln, pen, godin = spec["baseline"], spec["method"], spec["penalty"], spec["godin"]
    sets, near = list(spec["ood_test"]), set(spec.get("near_ood") or [])
    key = {"dataset": "digits", "recipe": recipe}
    samples, ood, runs, curves = [], [], [], []
    if k["bad_arch"] == arch:
        raise ValueError("bad_arch must not be the main architecture")

    def model(a, loss, score, seed, fprs, key_id):
        """Per-image scores of one model (every set against the same ID images) and its rows."""
        id_ref = None
        for si, name in enumerate(sets):
            rng = np.random.default_rng([*key_id, seed, si])
            id_s, ood_s = _scores(rng, fprs[name] + _jitter(seed))
            if id_ref is None:
                id_ref = id_s
                samples.append((a, loss, seed, score, "id", id_ref))
            thr = np.sort(id_ref)[::-1][math.ceil(0.95 * N_ID) - 1]
            ood_s = ood_s + (thr - np.sort(id_s)[::-1][math.ceil(0.95 * N_ID) - 1])
            samples.append((a, loss, seed, score, name, ood_s))
            ood.append(
                {
                    **key,
                    "arch": a,
                    "loss": loss,
                    "seed": seed,
                    "score": score,
                    "ood_set": name,
                    "split": "test",
                    "fpr95": fpr95_first(id_ref, ood_s) / 100,
                    "logit_norm_ood": k["ce_norm_ood"] if loss == ce else 1.0,
                }
            )

    others = [a for a in spec["arch_table"] if a != arch]
    for seed in seeds:
        for li, loss in enumerate((ce, ln, pen)):
            fprs = {n: (k["fpr_near"] if n in near else k["fpr"])[loss] for n in sets}
            model(arch, loss, "msp", seed, fprs, [li])
        for si, score in enumerate(spec["scores"]):
            if score != "msp":
                for li, loss in enumerate((ce, ln)):
                    model(
                        arch,
                        loss,
                        score,
                        seed,
                        dict.fromkeys(sets, k["score_fpr"][loss]),
                        [10 + si, li],
                    )
        model(arch, godin, "godin", seed, dict.fromkeys(sets, k["godin_fpr"]), [20])
        for ai, a in enumerate(others):
            for li, loss in enumerate((ce, ln)):
                f = k["arch_fpr"][loss]
                if a == k["bad_arch"] and loss == ln:
                    f = k["arch_fpr"][ce] + 0.1
                model(a, loss, "msp", seed, dict.fromkeys(sets, f), [30 + ai, li])
        # confidence after TS and correctness on the ID images: every prediction right, the
        # confidence 1 - ECE (+-20 %, the same images for both models), so the ECE is the knob
        u = np.random.default_rng([40, seed]).uniform(-1.0, 1.0, N_ID)
        for loss in (ce, ln):
            e = (k["ece_ts"].get(loss, 2.0) + 10 * _jitter(seed)) / 100
            samples.append((arch, loss, seed, "msp_ts", "id", 1.0 - e * (1 + 0.2 * u)))
            samples.append((arch, loss, seed, "correct", "id", np.ones(N_ID)))
    # one frame built from column arrays (one small frame per model and set cost most of a
    # control's time: 36,000 frame constructions)
    lens = [len(v) for *_, v in samples]

    def column(i, dtype=object):
        return np.repeat(np.array([row[i] for row in samples], dtype=dtype), lens)

    sample_frame = pd.DataFrame(
        {
            "recipe": np.repeat(np.array([recipe], dtype=object), sum(lens)),
            "arch": column(0),
            "loss": column(1),
            "seed": column(2, np.int64),
            "set": column(4),
            "image": np.concatenate([np.arange(n) for n in lens]),
            "score": column(3),
            "value": np.concatenate([np.asarray(v, dtype=np.float64) for *_, v in samples]),
        }
    )
    for seed in seeds:
        j = _jitter(seed)
        norms = {ce: k["ce_norm_id"], ln: k["ln_norm"], pen: k["lp_norm"], godin: 5.0}
        for loss in (ce, ln, pen, godin):
            runs.append(
                {
                    **key,
                    "arch": arch,
                    "loss": loss,
                    "seed": seed,
                    "accuracy": k["acc"].get(loss, 0.97)
                    + j / 10
                    + (k["acc_ln_spread"] * j if loss == ln else 0.0),
                    "temperature": k["ce_temp"] + j if loss == ce else 0.9,
                    "logit_norm_id": norms[loss] * (1 + j),
                    "ece": 5.0 / 100,
                    "ece_ts": (k["ece_ts"].get(loss, 2.0) + 10 * j) / 100,
                }
            )
        for e in range(1, 21):
            fit = e >= 5
            norm = 10.0 * math.exp(k["ce_norm_growth"] * (e - 5)) if fit else 2.0 * e
            # CE's curve (its norm grows after the fit, C8) and LogitNorm's (a flat norm)
            for loss, final, n_id in ((ce, k["ce_loss"], norm), (ln, k["ln_loss"], 1.5)):
                curves.append(
                    {
                        **key,
                        "arch": arch,
                        "loss": loss,
                        "seed": seed,
                        "epoch": e,
                        "train_loss": final * (1 + j) if e == 20 else 1.0,
                        "train_acc": 0.995 if fit else 0.5 + 0.08 * e,
                        "logit_norm_id": n_id * (1 + 0.001 * seed * (-1) ** e),
                        "logit_norm_ood": 0.8 * n_id,  # Fig. 1's OOD curve (printed by C8)
                    }
                )
    frames = {
        "runs": pd.DataFrame(runs),
        "ood": pd.DataFrame(ood),
        "curves": pd.DataFrame(curves),
        "samples": sample_frame,
    }
    frames["floor"] = _floor(sample_frame, spec, k["trivial_set"], floor_cache)
    frames["ood"] = mark_trivial(frames["ood"], frames["floor"])
    return frames
