"""Control frames of the Ulmer & Cinà claims (the study contract, ``tests/test_study_contract.py``):
for every claim id one hand-built set of per-seed frames where it must hold and one where it
must not, judged by the study's real :func:`~softmax_ood.studies.ulmer.claims.evaluate_ulmer_claims`.

The frames are tiny and explicit: per dataset two directions (a degenerate axis, where the averaged
models' votes split far out, and one random direction, the paper's feature), every model kind
and the control, the configured seeds with a small per-seed jitter (so the t-tests see a spread);
the §6 data-size frame and the softmax note's table.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from softmax_ood.studies.ulmer import study
from softmax_ood.studies.ulmer.claims import CHAINS, STOCHASTIC, evaluate_ulmer_claims

_METRICS = ("max_prob", "class_variance", "predictive_entropy", "mutual_information")
_KIND_K = {"mc_dropout": 100, "bbb": 100, "ensemble": 10, "mcmc": 100}


def _jitter(seed_index: int, scale: float) -> float:
    return (seed_index - 2) * scale


def build_frames(
    config: dict,
    *,
    loss_ratio: float = 0.1,
    control: float = 0.6,
    stat: float = 0.9995,
    shift_2k: float = 0.0,
    single: float = 0.9999,
    grad_end: float = 1e-6,
    far_low: float = 0.3,
    limit_gap: float = 0.0,
    held_conf: float = 0.9,
    far_uncertain: bool = False,
    logit_slope: float = 1.0,
    chain_ess: float = 300.0,
    only: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(fit, scaling, directions)`` frames for every dataset of the study where every premise,
    claim and sanity row holds by default; a keyword moves one statistic (for the row ``only``
    names, e.g. ``"C-synthetic-bbb"``, or for every row of its kind when ``only`` is None)."""
    seeds = study.seeds(config)
    kinds = list(study.spec(config)["kinds"])

    def applies(cid: str) -> bool:
        return only is None or only == cid

    fit, scaling, directions = [], [], []
    for ds in study.DATASETS:
        for i, seed in enumerate(seeds):
            for kind in [*kinds, "control"]:
                ratio = loss_ratio if applies(f"F-{ds}") else 0.1
                ess = chain_ess if applies(f"E-{ds}-{kind}") else 300.0
                fit.append(
                    {
                        "dataset": ds,
                        "model": kind,
                        "kind": kind,
                        "seed": seed,
                        "accuracy": 0.9,
                        "chance": 0.4,
                        "train_loss": ratio + _jitter(i, 0.001),
                        "ocs_loss": 1.0,
                        # a chain's effective sample size (K = 100 samples in these frames)
                        "chain_ess": ess + _jitter(i, 1.0) if kind in CHAINS else float("nan"),
                        "feature": "x1",
                        "monotonicity": 0.5,
                    }
                )
                held = (
                    held_conf if any(applies(f"{p}-{ds}-{kind}") for p in ("B", "T", "R")) else 0.9
                )
                slope = logit_slope if applies(f"lemma3-{ds}") else 1.0
                for alpha in (1.0, 1e4):
                    for metric in _METRICS:
                        end = grad_end if applies(f"G-{ds}-{metric}") else 1e-6
                        flip = far_uncertain and applies(f"M-{ds}-{kind}-{metric}")
                        value = _metric_value(kind, metric, alpha == 1.0, held, flip)
                        scaling.append(
                            {
                                "dataset": ds,
                                "model": kind,
                                "kind": kind,
                                "seed": seed,
                                "alpha": alpha,
                                "metric": metric,
                                # a small per-seed spread of the held-out values (t-tests)
                                "value": value + (_jitter(i, 1e-6) if alpha == 1.0 else 0.0),
                                "grad_norm": 1.0 if alpha == 1.0 else end,
                                "max_abs_logit": 5.0 if kind == "control" else 10.0 * alpha**slope,
                            }
                        )
                if kind == "control":
                    value = control if applies(f"N-{ds}") else 0.6
                elif kind == "single":
                    value = single if applies(f"S-{ds}-single") else 0.9999
                else:
                    value = stat if applies(f"P-{ds}-{kind}") else 0.9995
                value += _jitter(i, 0.0001)
                # the degenerate axis: split votes far out (below certainty) for averaged models
                low = far_low if applies(f"C-{ds}-{kind}") else 0.3
                gap = limit_gap if applies(f"L-{ds}-{kind}") else 0.0
                # far along the degenerate axis: split votes (averaged), saturated (single)
                axis = low if kind in STOCHASTIC else 0.9999 if kind == "single" else 0.3
                roles = [("K", 0.0)]
                if kind in STOCHASTIC:
                    roles.append(("2K", shift_2k if applies(f"K-{ds}-{kind}") else 0.0))
                for direction, degenerate in (("x1", True), ("r0", False)):
                    for role, shift in roles:
                        k = _KIND_K.get(kind, 1) * (2 if role == "2K" else 1)
                        directions.append(
                            {
                                "dataset": ds,
                                "model": kind,
                                "kind": kind,
                                "seed": seed,
                                "direction": direction,
                                "direction_type": "axis" if degenerate else "random",
                                "degenerate": degenerate,
                                "min_cos": 0.0 if degenerate else 0.5,
                                "k_role": role,
                                "k": k,
                                "alpha": 1e4,
                                # the degenerate axis would sink every certainty row if counted
                                "mean_max_prob": axis if degenerate else value + shift,
                                "vote_share": 0.5 if degenerate else 1.0,
                                "share_certain": 0.0 if degenerate else 1.0,
                                "limit_max_prob": (axis if degenerate else value + shift) - gap,
                                "max_prob_gap": gap,
                                "vote_ess": 300.0 if kind in STOCHASTIC else float("nan"),
                                "paper_direction": not degenerate,
                                "n_points": 10,
                            }
                        )
    return pd.DataFrame(fit), pd.DataFrame(scaling), pd.DataFrame(directions)


#: per metric, (held-out, far) values of an averaged model that is certain far out (the
#: held-out max probability is ``held_conf``)
_AVERAGED = {
    "class_variance": (0.02, 0.0001),
    "predictive_entropy": (0.3, 0.001),
    "mutual_information": (0.05, 0.0001),
}


def _metric_value(kind: str, metric: str, at_start: bool, held: float, flip: bool) -> float:
    """The scaling curve's mean metric value of ``kind`` on the held-out points (``at_start``)
    or at the largest alpha: averaged models and the single network more certain far out
    (``flip``: less certain far out), the control less certain."""
    if metric == "max_prob":
        if kind == "control":
            return 0.9 if at_start else 0.6
        if kind == "single":
            return 0.95 if at_start else 0.9999
        return held if at_start else (0.5 if flip else 0.9995)
    if kind == "single":
        return 0.0 if metric != "predictive_entropy" else (0.2 if at_start else 0.0005)
    start, far = _AVERAGED[metric]
    if kind == "control":
        return start if at_start else 3 * start
    return start if at_start else (3 * start + 0.1 if flip else far)


def datasize_frame(
    config: dict, *, more_data: float = -0.1, only: str | None = None
) -> pd.DataFrame:
    """§6's frame: per dataset and seed the ensemble's AUROC with a quarter of the training rows
    (0.3) and with all of them (0.3 + ``more_data`` for the row ``only`` names)."""
    rows = []
    for ds in study.DATASETS:
        change = more_data if only in (None, f"D-{ds}") else -0.1
        for i, seed in enumerate(study.seeds(config)):
            for fraction, auroc in ((0.25, 0.3), (1.0, 0.3 + change + _jitter(i, 0.01))):
                rows.append(
                    {
                        "dataset": ds,
                        "seed": seed,
                        "fraction": fraction,
                        "n_train": int(400 * fraction),
                        "k": 10,
                        "auroc": auroc,
                        "far_entropy": 0.1,
                        "far_mutual_information": 0.05 if fraction == 1.0 else 0.1,
                        "id_entropy": 0.3,
                    }
                )
    return pd.DataFrame(rows)


def note_frame(error: float = 0.0, only: str | None = None) -> pd.DataFrame:
    """The softmax note's table: each property's error (``error`` for the row ``only`` names)."""
    from softmax_ood.studies.ulmer.softmax_note import PROPERTIES

    return pd.DataFrame(
        [
            {
                "vector": "z",
                "check": f"{prefix}: identity",
                "alpha": float("nan"),
                "measured": error if _note_applies(only, cid) else 0.0,
                "expected": 0.0,
                "abs_error": error if _note_applies(only, cid) else 0.0,
            }
            for prefix, cid in PROPERTIES.items()
        ]
    )


def _note_applies(only: str | None, cid: str) -> bool:
    """Lemma 1's row reads Property 1's checks (the identity its counterexample rests on)."""
    return only in (None, cid) or (only == "lemma1" and cid == "note-P1")


def table(config: dict, *, more_data: float = -0.1, note_error: float = 0.0, **kw) -> pd.DataFrame:
    """The claims table of :func:`build_frames` (and the data-size and note frames) under the
    config's claim settings."""
    fit, scaling, directions = build_frames(config, **kw)
    only = kw.get("only")
    return evaluate_ulmer_claims(
        fit,
        scaling,
        directions,
        study.claims_spec(config),
        datasize=datasize_frame(config, more_data=more_data, only=only),
        checks=note_frame(note_error, only),
    )


#: per claim prefix: the keyword that breaks it and its breaking value
_BREAK = {
    "F": ("loss_ratio", 0.9),  # the worst model is near its constant solution
    "N": ("control", 0.9999),  # the control is certain too: the test could not fail
    "K": ("shift_2k", -0.05),  # the statistic drops by 0.05 when K doubles
    "E": ("chain_ess", 20.0),  # the chain's 2K samples worth 20 draws, a fifth of K
    "L": ("limit_gap", 0.05),  # far out 0.05 above its limit: certain, the limit is not
    "C": ("far_low", 0.9995),  # the averaged model is certain along every direction too
    "P": ("stat", 0.95),  # the averaged model is certain along no direction
    "D": ("more_data", 0.1),  # more data improves the detection
    "note": ("note_error", 1e-3),  # an identity off by 1e-3
    "S": ("single", 0.9),  # a single network not saturated
    "G": ("grad_end", 0.5),  # the gradient halves only
    # the held-out confidence above the bar (B) and above every far-out limit (T, R)
    "B": ("held_conf", 0.99999),
    "T": ("held_conf", 0.99999),
    "R": ("held_conf", 0.99999),
    "M": ("far_uncertain", True),  # far out less certain than on the held-out data
    "lemma3": ("logit_slope", 2.0),  # logits growing quadratically: an unbounded gradient
    "lemma1": ("note_error", 1e-3),  # shift invariance off by 1e-3
}


def cases(config: dict) -> Iterator[tuple[str, bool, pd.DataFrame]]:
    """``(claim_id, expected_holds, claims_table)`` for every claim id: all rows hold on the
    default frames; each id's statistic moved past its threshold makes it fail."""
    holding = table(config)
    for spec in study.claim_specs(config):
        yield spec.id, True, holding
        key, value = _BREAK[spec.id.split("-")[0]]
        yield spec.id, False, table(config, only=spec.id, **{key: value})
    # issue 25's kind (4th element: how the verdict must begin): doubling K moves the statistic
    # (premise K fails) and the averaged models are certain along every direction while the
    # single network is not (the opposite of the hedge, significantly): the gate stays, and the
    # opposite result is shown
    gated = table(config, shift_2k=-0.05, single=0.9, far_low=0.9995, stat=0.9995)
    ds = study.DATASETS[0]
    for spec in study.claim_specs(config):
        if spec.id.startswith(f"C-{ds}-"):
            yield (
                spec.id,
                False,
                gated,
                f"cannot test as the paper's claim (premise {spec.requires[1]} does not hold) — here the "
                "opposite is significant",
            )
    # with the config's effect sizes (claims.effect_share, effect_auroc) a claim that is not
    # significant and had the power to see that effect reads "does not hold", not "too few seeds"
    if study.spec(config)["claims"].get("effect_auroc") is not None:
        yield f"D-{ds}", False, table(config, only=f"D-{ds}", more_data=0.0), "does not hold"
    if study.spec(config)["claims"].get("effect_share") is not None:
        cid = next(s.id for s in study.claim_specs(config) if s.id.startswith(f"C-{ds}-"))
        yield cid, False, table(config, only=cid, far_low=0.9995), "does not hold"
