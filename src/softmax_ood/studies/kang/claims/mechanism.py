"""Fig. 4's mechanism: the accumulated constants (the network's output with the input
contribution of layer ``mechanism.constants_layer`` zeroed) closely mirror the OCS. Per
mechanism loss: ``constants_vs_init`` (the control: training moved them toward the OCS),
``constants_reachable`` (premise, losses other than CE: the Adam budget could move them there)
and ``constants_mirror_ocs`` (the mirror itself). For CE both rows are **sanity** rows: with
balanced classes its OCS is the about uniform class marginal, which any network with small
logits (the untrained one too) outputs. The per-seed ratios are computed once per loss on the
evidence (:attr:`.evidence.Evidence.constants`)."""

from __future__ import annotations

import math
from functools import partial

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired
from ....analysis.measures import per_seed
from .common import ADAM_STEP_BOUND, notes, powered
from .evidence import Evidence

RATIO = "||constants - OCS|| / mean over clean images of ||prediction - OCS||"


def constants_to_ocs(ev: Evidence, *, loss: str) -> Measurement:
    """Per seed ``||c - OCS|| / scale`` of the trained constants (``constants_mirror_ocs``)."""
    c = ev.constants[loss]
    if c is None:
        return Measurement(math.nan, f"{loss}: no mechanism rows")
    u = c.untrained
    return per_seed(
        c.trained,
        f"{loss}, ||constants - OCS|| / mean over "
        f"clean images of ||prediction - OCS|| (untrained network: mean "
        f"{u.mean() if len(u) else math.nan:.3f})",
    )


def constants_move(ev: Evidence, *, loss: str) -> Measurement:
    """The trained ratio minus the untrained network's, paired over seeds; the detail gives the
    move as a share of the untrained distance and the trained ratio the mirror tests."""
    c = ev.constants[loss]
    if c is None:
        return Measurement(math.nan, f"{loss}: no mechanism rows")
    t, u = c.trained, c.untrained
    if not len(u):
        return Measurement(math.nan, f"{loss}: no untrained-network constants recorded")
    pm = paired(t, u, names=("trained", "untrained (same architecture and seed)"))
    move = (u.mean() - t.mean()) / u.mean() if u.mean() > 0 else math.nan
    mirror = (
        f"; the move is {move:.1%} of the untrained distance, and the trained ratio "
        f"{t.mean():.3f} is what constants_mirror_ocs:{loss} tests against its bar "
        f"{float(ev.section['mirror_bar']):g} (a move toward the OCS is not a mirror of it)"
    )
    return Measurement(pm.value, f"{loss}: " + pm.detail + mirror, samples=pm.samples)


def constants_reach(ev: Evidence, *, loss: str) -> Measurement:
    """Per seed, Adam's farthest travel (``ADAM_STEP_BOUND`` x the summed learning rate) over
    the largest component of ``|OCS - untrained constants|``."""
    c = ev.constants[loss]
    if c is None:
        return Measurement(math.nan, f"{loss}: no mechanism rows")
    how = "; ".join(sorted(c.how))
    if not len(c.reach):
        return Measurement(math.nan, f"{loss}: no Adam step budget ({how or 'not recorded'})")
    return per_seed(
        c.reach,
        f"{loss}: the farthest a bias can travel under Adam ({ADAM_STEP_BOUND:.3g} x the "
        "sum of lr over the steps to the kept checkpoint) vs the largest |OCS - untrained "
        f"constants| component ({how}); below 1 the output bias "
        "cannot reach the OCS within the recipe's steps",
    )


def mechanism_claims(section: dict) -> list[Claim]:
    """Per mechanism loss: ``constants_vs_init``, (not CE) ``constants_reachable``,
    ``constants_mirror_ocs``."""
    out = []
    for loss in section["mechanism"]["losses"]:
        ce = section["loss_entries"][loss]["loss"] == "ce"
        out.append(_vs_init(section, loss, ce))
        if not ce:
            out.append(_reachable(section, loss))
        out.append(_mirror(section, loss, ce))
    return out


def _vs_init(section: dict, loss: str, ce: bool) -> Claim:
    stat = f"{RATIO}: trained - untrained, per seed"
    return Claim(
        ClaimSpec(
            f"constants_vs_init:{loss}",
            (
                f"Sanity ({loss}, balanced classes: the OCS is the about uniform label "
                "marginal, which the untrained network's small logits already output, so "
                "the trained constants cannot move much nearer): training leaves the "
                "accumulated constants no farther from the OCS than at initialisation"
            )
            if ce
            else f"{loss}: training moves the accumulated constants toward the OCS (control: "
            "the same architecture at its initialisation, same seed, never trained); a part "
            f"of Fig. 4's mirror, not the mirror itself: read it with "
            f"constants_mirror_ocs:{loss}, whose ratio the detail gives",
            threshold=0.0,
            direction="<" if not ce else "<=",
            kind="sanity" if ce else "claim",
            requires=(f"fitted:{loss}",),
            **({"statistic": stat} if ce else powered("constants_vs_init", stat)),
            **notes(section),
        ),
        partial(constants_move, loss=loss),
    )


def _reachable(section: dict, loss: str) -> Claim:
    return Claim(
        ClaimSpec(
            f"constants_reachable:{loss}",
            f"Premise: the training budget could move the {loss} constants to the OCS "
            "(the farthest a bias can travel under Adam, its largest step "
            f"{ADAM_STEP_BOUND:.3g} lr summed over the steps, covers the largest "
            "|OCS - untrained constants| component)",
            f"{ADAM_STEP_BOUND:.3g} x sum of lr over the steps / max component "
            "|OCS - untrained constants|, per seed",
            1.0,
            ">",
            kind="premise",
            requires=(f"fitted:{loss}",),
            **notes(section),
        ),
        partial(constants_reach, loss=loss),
    )


def _mirror(section: dict, loss: str, ce: bool) -> Claim:
    stat = f"{RATIO}, per seed"
    return Claim(
        ClaimSpec(
            f"constants_mirror_ocs:{loss}",
            (
                f"Sanity ({loss}, by construction on balanced classes: its OCS is the class "
                "marginal, about uniform, which any network with small logits outputs, the "
                "untrained one too): the accumulated constants lie near the OCS"
            )
            if ce
            else f"{loss}: the accumulated model constants closely mirror the OCS (Fig. 4)",
            threshold=float(section["mirror_bar"]),
            direction="<",
            kind="sanity" if ce else "claim",
            requires=(f"fitted:{loss}",) + (() if ce else (f"constants_reachable:{loss}",)),
            all_of=() if ce else (f"constants_vs_init:{loss}",),
            **({"statistic": stat} if ce else powered("constants_mirror_ocs", stat)),
            **notes(section),
        ),
        partial(constants_to_ocs, loss=loss),
    )
