"""The Ulmer sanity rows (true by construction, never counted as support), each one claim
whole (its declaration beside its measurement): the single network is certain far out (``S``),
the metrics' input gradients vanish (``G``), Lemma 3's linear logit growth (``lemma3``), the
softmax note's identities (``note-*``) and Lemma 1's counterexample (``lemma1``)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd

from softmax_ood.analysis.claims import Claim, ClaimSpec, Measurement, fmt_mean_std
from softmax_ood.analysis.measures import rows

from .evidence import (
    DEGENERATE,
    LABELS,
    LINEAR_TOL,
    METRIC_TEXT,
    NOTE_TOL,
    Evidence,
    certainty_per_seed,
    fine,
    held_out,
    per_seed_text,
)
from .premises import directions_note

__all__ = ["gradient_claim", "lemma1_claim", "lemma3_claim", "note_claims", "single_claim"]


def single_claim(ds: str, section: dict) -> Claim:
    return Claim(
        ClaimSpec(
            f"S-{ds}-single",
            f"A single ReLU network is certain far from the {ds} data (by construction: "
            "its logits grow linearly along a ray)",
            "mean over seeds of the mean max probability at the largest alpha (points x "
            "non-degenerate directions)",
            float(section["certain_max_prob"]),
            ">",
            kind="sanity",
            requires=(f"F-{ds}",),
        ),
        partial(single_certain, ds=ds),
    )


def single_certain(ev: Evidence, ds: str) -> Measurement:
    level = ev.level
    stat = certainty_per_seed(ev.directions, ds, "single")
    below = int((stat <= level).sum())
    held = held_out(ev.scaling, ds, "single")
    return Measurement(
        float(stat.mean()) if len(stat) else math.nan,
        f"single network: mean max probability {fmt_mean_std(stat)} (per seed "
        f"{per_seed_text(stat)}; {below} seed(s) at or below {level:g}); on the held-out "
        f"data (alpha = 1) already {fine(held)} ({int((held > level).sum())} "
        f"of {len(held)} seeds above the bar {level:g}); {directions_note(ev.directions, ds)}",
        samples=tuple(stat.to_numpy()),
    )


def gradient_claim(ds: str, metric: str, section: dict) -> Claim:
    return Claim(
        ClaimSpec(
            f"G-{ds}-{metric}",
            f"The input-gradient norm of the {METRIC_TEXT[metric]} falls towards zero "
            f"as a feature of the {ds} data is scaled (by construction once every sample "
            "saturates)",
            "largest ratio over the ReLU models of the mean gradient norm at the largest "
            "alpha to that at alpha = 1",
            float(section["grad_ratio"]),
            "<",
            kind="sanity",
            requires=(f"F-{ds}",),
        ),
        partial(gradient_vanishes, ds=ds, metric=metric),
    )


def far_out(ev: Evidence, ds: str) -> dict:
    """The scaling curve of ``ds`` (an error when it has none), its ends and its ReLU kinds."""

    def compute() -> dict:
        sc = rows(ev.scaling, dataset=ds)
        if sc.empty:
            raise ValueError(f"The scaling frame has no rows for dataset {ds!r}.")
        a_min, a_max = float(sc["alpha"].min()), float(sc["alpha"].max())
        return {
            "sc": sc,
            "a_min": a_min,
            "a_max": a_max,
            "start": sc[sc["alpha"] == a_min],
            "end": sc[sc["alpha"] == a_max],
            "relu_kinds": [k for k in dict.fromkeys(sc["kind"]) if k != "control"],
        }

    return ev.memo(("far_out", ds), compute)


def gradient_vanishes(ev: Evidence, ds: str, metric: str) -> Measurement:
    f = far_out(ev, ds)
    sc, start, end = f["sc"], f["start"], f["end"]
    ratios, parts = [], []
    for kind in [*f["relu_kinds"], "control"]:
        if (kind, metric) in DEGENERATE or kind not in set(sc["kind"]):
            continue
        e = end[(end["kind"] == kind) & (end["metric"] == metric)]["grad_norm"]
        s = start[(start["kind"] == kind) & (start["metric"] == metric)]["grad_norm"]
        if e.empty or s.empty:
            continue
        r = _ratio(float(e.mean()), float(s.mean()))
        zeros = int((e == 0).sum())
        label = LABELS.get(kind, "control (not counted)")
        parts.append(
            f"{label}: {float(s.mean()):.3g} -> {float(e.mean()):.3g} (ratio {r:.3g}; "
            f"{zeros} of {e.size} seeds exactly 0)"
        )
        if kind != "control":
            ratios.append(r)
    value = math.nan if not ratios or any(math.isnan(r) for r in ratios) else float(np.max(ratios))
    where = f"alpha {f['a_min']:g} -> {f['a_max']:g} along the paper's feature"
    paper = _paper_direction(ev.directions, ds)
    if paper is not None and paper[1]:
        # Assumption 1 fails along a direction parallel to a class boundary
        value = math.nan
        where += f" {paper[0]!r}, which is degenerate (|cos| {paper[2]:.3f}): not counted"
    return Measurement(value, f"{where}, mean over points and seeds: " + "; ".join(parts))


def _ratio(end: float, start: float) -> float:
    return end / start if start > 0 else math.nan


def _paper_direction(directions: pd.DataFrame, ds: str) -> tuple[str, bool, float] | None:
    """``(name, degenerate, min |cos|)`` of the direction the scaling frame scales along."""
    if "paper_direction" not in directions:
        return None
    d = directions[(directions["dataset"] == ds) & directions["paper_direction"].astype(bool)]
    if d.empty:
        return None
    r = d.iloc[0]
    return str(r["direction"]), bool(r["degenerate"]), float(r["min_cos"])


def lemma3_claim(ds: str) -> Claim:
    return Claim(
        ClaimSpec(
            f"lemma3-{ds}",
            "Lemma 3's network side: a ReLU network's logits grow at most linearly along the "
            f"scaled feature of the {ds} data (bounded logit gradient), so the inverse "
            "softmax derivative, exponential in the logits, outgrows it (by construction: "
            "piecewise linear)",
            "largest over the ReLU models and seeds of the log-log slope of the largest "
            "|logit| between the two largest alphas (1: linear growth)",
            1.0 + LINEAR_TOL,
            "<",
            kind="sanity",
            requires=(f"F-{ds}",),
        ),
        partial(linear_logits, ds=ds),
    )


def linear_logits(ev: Evidence, ds: str) -> Measurement:
    """Lemma 3's network side: the log-log slope of the largest |logit| between the two
    largest alphas, per ReLU model and seed (the control's in the detail)."""
    f = far_out(ev, ds)
    sc = f["sc"]
    if "max_abs_logit" not in sc:
        return Measurement(math.nan, "the scaling frame has no max_abs_logit column")
    alphas = sorted(set(sc["alpha"]))
    if len(alphas) < 2:
        return Measurement(math.nan, "fewer than two alphas")
    a1, a2 = alphas[-2], alphas[-1]
    per = sc[sc["alpha"].isin([a1, a2])].groupby(["kind", "seed", "alpha"])["max_abs_logit"].max()
    slopes, parts = [], []
    for kind in [*f["relu_kinds"], "control"]:
        if kind not in per.index.get_level_values(0):
            continue
        k = per.loc[kind].unstack("alpha")
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.log(k[a2] / k[a1]) / math.log(a2 / a1)
        label = LABELS.get(kind, "control (not counted)")
        parts.append(
            f"{label}: {float(slope.mean()):.4f} (largest |logit| {float(k[a2].mean()):.3g} at "
            f"alpha {a2:g})"
        )
        if kind != "control":
            slopes.extend(slope.to_numpy(dtype=float).tolist())
    value = float(np.max(slopes)) if slopes and all(math.isfinite(x) for x in slopes) else math.nan
    return Measurement(
        value,
        f"log-log slope of the largest |logit| from alpha {a1:.4g} to {a2:.4g}, mean over seeds: "
        + "; ".join(parts)
        + "; the inverse softmax derivative 1 / (p (1 - p)) grows like exp of the logit gap "
        "(softmax note, Property 5), faster than any linear growth",
    )


#: the softmax note's identities checked by the ``note-*`` rows (the note's PROPERTIES)
_NOTE = (
    ("note-P1", "Property 1, shift invariance: S(z + c1) = S(z)"),
    ("note-P2", "Property 2, the inverse: z = log S(z) + c1"),
    (
        "note-P3",
        "Property 3, superposition and scaling: S(a1 z + a2 z' + c1) ∝ S(z)^a1 ⊙ S(z')^a2",
    ),
    (
        "note-logistic",
        "two outputs: the softmax's first output is the logistic 1 / (1 + exp(z2 - z1))",
    ),
)


def note_claims() -> list[Claim]:
    return [
        Claim(
            ClaimSpec(
                cid,
                f"Softmax note, {what} (an identity: true by construction)",
                "largest entry-wise error in float64 with the stable softmax over the note's "
                "vectors",
                NOTE_TOL,
                "<",
                kind="sanity",
            ),
            partial(note_identity, cid=cid),
        )
        for cid, what in _NOTE
    ]


def note_identity(ev: Evidence, cid: str) -> Measurement:
    """The largest error of the note's check the row ``cid`` names (its ``PROPERTIES`` prefix),
    every vector's in the detail."""
    from ..softmax_note import PROPERTIES

    prefix = {c: p for p, c in PROPERTIES.items()}.get(cid)
    if ev.checks is None or prefix is None:
        return ev.absent(cid)
    note = ev.checks
    sel = note[note["check"].astype(str).str.startswith(prefix)]
    value = float(sel["abs_error"].max()) if len(sel) else math.nan
    return Measurement(
        value,
        "; ".join(f"{r['vector']}: {r['abs_error']:.2g}" for _, r in sel.iterrows())
        + (f" ({sel['check'].iloc[0]})" if len(sel) else ""),
    )


def lemma1_claim() -> Claim:
    return Claim(
        ClaimSpec(
            "lemma1",
            "Lemma 1 (p strictly monotonic => the logits f too) holds for logit differences, not "
            "for the logits: the probabilities fix the logits only up to a shift g(x)1 "
            "(Property 1), so f = (|x|, |x| - x) has p_1 = sigmoid(x) strictly increasing while "
            "f_1 = |x| is not monotonic; the row checks the identity the counterexample rests on",
            "largest entry-wise error of Property 1 (shift invariance) in float64 over the note's "
            "vectors; the counterexample's probabilities and logit slopes in the detail",
            NOTE_TOL,
            "<",
            kind="sanity",
        ),
        lemma1_counterexample,
    )


def lemma1_counterexample(ev: Evidence) -> Measurement:
    """Lemma 1: the error of Property 1 (the identity the counterexample rests on), and the
    counterexample itself in the detail."""
    from softmax_ood.softmax import softmax

    if ev.checks is None:
        return ev.absent("lemma1")
    note = ev.checks
    sel = note[note["check"].astype(str).str.startswith("Property 1")]
    value = float(sel["abs_error"].max()) if len(sel) else math.nan
    x = np.linspace(-3.0, 3.0, 13)
    f = np.stack([np.abs(x), np.abs(x) - x], axis=1)
    p1 = np.asarray(softmax(f))[:, 0]
    sigmoid = 1.0 / (1.0 + np.exp(-x))
    slope = np.diff(f[:, 0])
    return Measurement(
        value,
        f"Property 1's largest error {value:.2g}; the counterexample f = (|x|, |x| - x) on "
        f"x in [-3, 3]: p_1 rises at every step ({int((np.diff(p1) > 0).sum())} of "
        f"{len(x) - 1}), equal to sigmoid(x) within {float(np.abs(p1 - sigmoid).max()):.2g}; "
        f"f_1 falls on {int((slope < 0).sum())} steps and rises on {int((slope > 0).sum())}: "
        "not monotonic, so Lemma 1 as stated does not follow (its proof takes the softmax as "
        "increasing in each logit alone); f_1 - f_2 = x is monotonic",
    )
