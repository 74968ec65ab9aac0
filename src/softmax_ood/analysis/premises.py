"""The two premises every study needs, measured the same way everywhere.

* :func:`fitted` — **the model fitted**: its final training loss is far below the loss of its own
  optimal constant solution (OCS: the best prediction that ignores the input). A model that never
  left its constant cannot test any claim about reverting to it, nor about confidence at all.
  The premise is a **gap in the loss's own units**, ``OCS loss − final training loss``, read as
  the share of the constant solution's loss the model removed (:func:`fitted_share`): for a loss
  whose floor is 0 (cross-entropy, squared error) the gap over the OCS loss (for squared error
  that is R² = 1 − MSE/MSE_OCS); for the Gaussian NLL, which goes negative, the gap ``G`` in nats
  read as the R² of a Gaussian that much likelier than the OCS Gaussian, ``1 − exp(−2 G)``. So
  one threshold, :data:`FITTED_SHARE`, serves every loss, and a negative loss cannot pass by its
  sign. Declare ``ClaimSpec(..., kind="premise", direction=">", threshold=FITTED_SHARE)``.
* :func:`pixel_floor` — **the task is not trivial**: a detector built from pixel statistics
  alone (lit-pixel count, mean intensity, border mass, and their Mahalanobis combination), scored
  on the same ID/OOD split. An OOD comparison counts only on sets this floor does not already
  solve: :func:`trivial_sets` names the sets whose floor FPR95 is at most the studied baseline's.

The floor is deliberately generous to itself: each statistic is scored as its distance from the
ID reference median (so it needs no sign), and the best of the four detectors *on the test split*
is reported. A set the floor cannot solve even so is a genuine test of the network.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .claims import Measurement, fmt_mean_std
from .pixelfloor import PIXEL_STATISTICS, pixel_floor, pixel_statistics  # noqa: F401 (re-exported)

__all__ = [
    "FITTED_SHARE",
    "LOSS_FLOORS",
    "PIXEL_STATISTICS",
    "fitted",
    "fitted_share",
    "floor_families",
    "floor_not_solved",
    "pixel_floor",
    "pixel_statistics",
    "trivial_sets",
]

#: the share of its constant solution's loss a fitted model must have removed (per seed, tested)
FITTED_SHARE = 0.5
#: how a loss family's gap becomes a share: "zero" (floor 0: gap / OCS loss) or "gaussian_nll"
LOSS_FLOORS = {
    "ce": "zero",
    "cross_entropy": "zero",
    "logit_norm": "zero",
    "mse": "zero",
    "reward_mse": "zero",
    "gaussian_nll": "gaussian_nll",
}


def fitted_share(gap, ocs_loss, loss: str = "ce"):
    """The share of the constant solution's loss removed, from the gap ``OCS − train`` (in the
    loss's own units): ``gap / OCS`` for a loss whose floor is 0 (the OCS loss must be > 0), and
    ``1 − exp(−2 · gap)`` for the Gaussian NLL (a gap in nats; R² of a homoscedastic Gaussian)."""
    floor = LOSS_FLOORS.get(loss)
    if floor is None:
        raise ValueError(
            f"the fitted premise does not know the loss {loss!r}; known: {sorted(LOSS_FLOORS)}"
        )
    gap = np.asarray(gap, dtype=float)
    if floor == "gaussian_nll":
        return 1.0 - np.exp(-2.0 * gap)
    return gap / np.asarray(ocs_loss, dtype=float)


def fitted(
    train_loss: pd.Series,
    ocs_loss: float | pd.Series,
    *,
    loss: str = "ce",
    what: str = "model",
) -> Measurement:
    """Per seed (index: seed), the share of the optimal constant solution's loss the model
    removed (:func:`fitted_share` of the gap ``OCS loss − final training loss`` in the loss's own
    units) as a measurement whose samples the claims engine tests against the premise's
    threshold (direction ``">"``, :data:`FITTED_SHARE`). ``loss``: the loss family
    (:data:`LOSS_FLOORS`)."""
    train = pd.Series(train_loss, dtype=float).dropna()
    if train.empty:
        return Measurement(math.nan, f"{what}: no training loss recorded")
    ocs = (
        pd.Series(ocs_loss, dtype=float).reindex(train.index)
        if isinstance(ocs_loss, pd.Series)
        else pd.Series(float(ocs_loss), index=train.index)
    )
    if ocs.isna().any():
        return Measurement(math.nan, f"{what}: the constant solution's loss is missing")
    zero_floor = LOSS_FLOORS.get(loss) == "zero"
    if zero_floor and (ocs <= 0).any():
        return Measurement(math.nan, f"{what}: the constant solution's loss is not positive")
    gap = ocs - train
    share = pd.Series(fitted_share(gap.to_numpy(), ocs.to_numpy(), loss), index=train.index)
    unit = "" if zero_floor else " nats"
    how = "gap / OCS loss" if zero_floor else "1 − exp(−2 × gap), the Gaussian's R²"
    per_seed = ", ".join(f"{s}: {r:.3f}" for s, r in share.items())
    return Measurement(
        float(share.mean()),
        f"{what}: final training loss {fmt_mean_std(train)}{unit} vs its optimal constant "
        f"solution's {fmt_mean_std(ocs)}{unit}; gap {fmt_mean_std(gap)}{unit}; share of the "
        f"constant solution's loss removed ({how}) per seed {per_seed}",
        samples=tuple(share.to_numpy()),
    )


def trivial_sets(floor_fpr95: dict[str, float], baseline_fpr95: dict[str, float]) -> list[str]:
    """The OOD sets the pixel floor already solves: floor FPR95 at most the baseline's."""
    return sorted(
        s for s, f in floor_fpr95.items() if s in baseline_fpr95 and f <= baseline_fpr95[s]
    )


def floor_families(row) -> str:
    """The floor battery's families and confirmation half from one far set's row of an OOD-score
    frame (``floor_tuning_*``, ``floor_heldout_*``, ``floor_confirmation_fpr95``), as a note for
    :func:`floor_not_solved`; empty when the frame does not record them."""
    if "floor_heldout_fpr95" not in row.index or not math.isfinite(
        float(row["floor_heldout_fpr95"])
    ):
        return ""
    return (
        f"; tuning family {float(row['floor_tuning_fpr95']):.3f} "
        f"({row['floor_tuning_detector']}), held-out family "
        f"{float(row['floor_heldout_fpr95']):.3f} ({row['floor_heldout_detector']}); whole "
        f"battery on the confirmation half {float(row['floor_confirmation_fpr95']):.3f}"
    )


def floor_not_solved(
    name: str, accepted: int, n: int, detector: str, bar: float, note: str = ""
) -> Measurement:
    """Premise "the floor does not solve ``name``": the share of its ``n`` images the floor's
    best detector (``detector``, :mod:`.battery`) accepts at 95 % ID recall, tested above ``bar`` by a one-sided exact
    binomial test (``p_opposite``: below it). ``note``: more detail after the counts."""
    from scipy import stats

    accepted, n = int(accepted), int(n)
    if n <= 0:
        return Measurement(math.nan, f"{name}: no floor")
    p = float(stats.binomtest(accepted, n, bar, alternative="greater").pvalue)
    p_opp = float(stats.binomtest(accepted, n, bar, alternative="less").pvalue)
    return Measurement(
        accepted / n,
        f"{name}: the floor's best detector ({detector}) accepts {accepted} of {n} images at 95 % ID "
        f"recall{note}; one-sided binomial test",
        p,
        n=n,
        p_opposite=p_opp,
    )
