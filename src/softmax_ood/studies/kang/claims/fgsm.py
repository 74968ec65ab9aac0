"""Fig. 8 (App. A): FGSM, where the paper says reversion does not hold. Two premises (the step
is an attack; the attacked set is more OOD) and two claims of the classifier (its predictions
lie farther from the OCS there; its representations grow at every layer), each paired over
seeds between the largest ``adversarial.epsilons`` and the clean images (eps 0)."""

from __future__ import annotations

import math
from functools import partial

import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired
from ....analysis.measures import per_seed
from .common import discriminator_ids, notes, powered
from .evidence import Evidence

#: the paired FGSM rows: the frame's ``kind`` and its words
WHAT = {"accuracy": "accuracy", "ood_score": "OOD score", "distance": "distance to the OCS"}


def _eps(section: dict) -> float:
    return max(float(e) for e in section["adversarial"]["epsilons"])


def _at(adv: pd.DataFrame, kind: str, e: float) -> pd.Series:
    f = adv[(adv["kind"] == kind) & (adv["eps"] == e)]
    return f.set_index("seed")["value"].astype(float)


def _curve(adv: pd.DataFrame) -> str:
    """Every eps's seed means of the distance, accuracy and OOD score."""
    curve = "; ".join(
        f"eps {e:g}: distance {_at(adv, 'distance', e).mean():.3f}, accuracy "
        f"{_at(adv, 'accuracy', e).mean():.3f}, OOD score {_at(adv, 'ood_score', e).mean():.3f}"
        for e in sorted(adv["eps"].unique())
    )
    return f" (seed means: {curve})"


def fgsm_vs_clean(ev: Evidence, *, kind: str) -> Measurement:
    """``kind`` at the largest eps minus on the clean images, paired over seeds."""
    adv = ev.fgsm
    if adv is None:
        return Measurement(math.nan, "no FGSM sets evaluated")
    eps, what = _eps(ev.section), WHAT[kind]
    top, clean = _at(adv, kind, eps), _at(adv, kind, 0.0)
    if top.empty or clean.empty:
        return Measurement(math.nan, f"no {what} at eps {eps:g} and 0")
    d = paired(top, clean, names=(f"{what} at eps {eps:g}", "clean"))
    ce = ev.section["roles"]["classifier"]
    return Measurement(d.value, f"{ce}: " + d.detail + _curve(adv), samples=d.samples)


def fgsm_norm_ratio(ev: Evidence) -> Measurement:
    """Per seed, the smallest per-layer ratio of representation norms (FGSM over clean)."""
    adv = ev.fgsm
    if adv is None:
        return Measurement(math.nan, "no FGSM sets evaluated")
    eps, ce = _eps(ev.section), ev.section["roles"]["classifier"]
    norms = adv[(adv["kind"] == "norm_ratio") & (adv["eps"] == eps)]
    if norms.empty:
        return Measurement(math.nan, "no representation norms recorded")
    per_layer = norms.groupby("name", sort=False)["value"].mean()
    layers = ", ".join(f"{n}: {v:.3f}" for n, v in per_layer.items())
    return per_seed(
        norms.groupby("seed")["value"].min().astype(float),
        f"{ce}: smallest per-layer norm ratio at eps {eps:g} (seed means per layer: {layers})",
    )


def fgsm_premises(section: dict) -> list[Claim]:
    """The FGSM step is an attack, and the attacked set is more OOD than the clean one."""
    ce, eps = section["roles"]["classifier"], _eps(section)
    drop, separation = float(section["accuracy_drop"]), float(section["score_separation"])
    return [
        Claim(
            ClaimSpec(
                "fgsm_effective",
                f"Premise (Fig. 8): the FGSM step at eps {eps:g} is an attack: the classifier's "
                f"accuracy on the attacked clean test images falls by more than {drop:g}",
                f"accuracy(FGSM eps {eps:g}) - accuracy(clean), per seed",
                -drop,
                "<",
                kind="premise",
                requires=(f"fitted:{ce}",),
                **notes(section),
            ),
            partial(fgsm_vs_clean, kind="accuracy"),
        ),
        Claim(
            ClaimSpec(
                "fgsm_more_ood",
                f"Premise (Fig. 8: 'even though the adversarial dataset is more OOD'): the FGSM "
                f"set at eps {eps:g} scores above the clean set by more than {separation:g} on "
                "the OOD score",
                f"OOD score(FGSM eps {eps:g}) - OOD score(clean), per seed (each seed attacks "
                "its own classifier)",
                separation,
                ">",
                kind="premise",
                requires=discriminator_ids(section),
                **notes(section),
            ),
            partial(fgsm_vs_clean, kind="ood_score"),
        ),
    ]


def fgsm_claims(section: dict) -> list[Claim]:
    """The premises, then no reversion on the FGSM set and growing representation norms."""
    ce, eps = section["roles"]["classifier"], _eps(section)
    attack = (f"fitted:{ce}", "fgsm_effective")
    return fgsm_premises(section) + [
        Claim(
            ClaimSpec(
                f"fgsm_no_reversion:{ce}",
                f"{ce} (App. A, Fig. 8, left; a predicted failure of reversion): on the FGSM set "
                "the predictions lie farther from the OCS than on the clean images, although "
                "the set is more OOD (holds = the paper's exception holds here: no reversion)",
                threshold=0.0,
                direction=">",
                requires=attack + ("fgsm_more_ood",),
                **powered(
                    "fgsm_no_reversion",
                    f"distance to the OCS (mean KL): FGSM eps {eps:g} - clean, per seed",
                ),
                **notes(section),
            ),
            partial(fgsm_vs_clean, kind="distance"),
        ),
        Claim(
            ClaimSpec(
                f"fgsm_norms_grow:{ce}",
                f"{ce} (App. A, Fig. 8, right): the adversarial inputs' representations have a "
                "greater magnitude than the clean inputs' at every layer",
                threshold=1.0,
                direction=">",
                requires=attack,
                **powered(
                    "fgsm_norms_grow",
                    f"min over affine layers of E||W phi||^2 (FGSM eps {eps:g}) / E||W phi||^2 "
                    "(clean), per seed",
                ),
                **notes(section),
            ),
            fgsm_norm_ratio,
        ),
    ]
