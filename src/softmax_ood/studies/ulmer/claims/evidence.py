"""What the Ulmer claims read: the study's frames and claim settings (:class:`Evidence`, which
also caches what several claims share), the names and texts the rows use, and the per-seed
statistics the tables, the figures and the notebook read too (:func:`certainty_per_seed`,
:func:`k_stability`, :func:`held_out`, :func:`cell_shares`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from softmax_ood.analysis.claims import Measurement
from softmax_ood.analysis.measures import per_frame, rows

__all__ = [
    "DEGENERATE",
    "GAIN_TEXT",
    "LABELS",
    "LINEAR_TOL",
    "METRICS",
    "METRIC_TEXT",
    "NOTE_TOL",
    "PAPER",
    "STOCHASTIC",
    "CHAINS",
    "Evidence",
    "cell_shares",
    "certainty_per_seed",
    "held_out",
    "k_stability",
]

PAPER = "Ulmer & Cinà 2021"
#: (kind, metric) pairs that are identically zero (one sample): no gradient claim for them
DEGENERATE = {
    ("single", "class_variance"),
    ("single", "mutual_information"),
    ("control", "class_variance"),
    ("control", "mutual_information"),
}
#: kinds whose prediction averages K samples / members: their certainty is a test
STOCHASTIC = ("mc_dropout", "bbb", "ensemble", "mcmc")
#: kinds whose samples come from one Markov chain: their mixing is a premise (``E``)
CHAINS = ("mcmc",)
LABELS = {
    "single": "single network",
    "mc_dropout": "MC dropout",
    "bbb": "Bayes-by-backprop",
    "ensemble": "deep ensemble",
    "mcmc": "MCMC (SGLD)",
}
METRIC_TEXT = {
    "max_prob": "max softmax probability (Lemma 5)",
    "class_variance": "class variance (Lemma 7)",
    "predictive_entropy": "predictive entropy (Lemma 8)",
    "mutual_information": "mutual information (Lemma 9)",
}
METRICS = tuple(METRIC_TEXT)
#: what the M rows measure per metric: the gain in certainty far out (> 0: more certain)
GAIN_TEXT = {
    "max_prob": "the rise of the mean max probability",
    "class_variance": "the fall of the class variance",
    "predictive_entropy": "the fall of the predictive entropy",
    "mutual_information": "the fall of the mutual information",
}
#: Lemma 3's sanity: the logits' log-log growth slope may exceed linear (1) by this much (an
#: affine offset a moves it by about |a| / (b alpha), ~1e-3 at alpha = 1e4); fixed in advance
LINEAR_TOL = 0.1
#: largest float64 error of the softmax note's identities (a few ulps of a probability)
NOTE_TOL = 1e-12


@dataclass
class Evidence:
    """What the measurements read: the per-seed ``fit``, ``scaling`` (the alpha curve along the
    paper's feature) and ``directions`` (certainty at the largest alpha per direction, at K and
    2K) frames of every dataset, the optional §6 ``datasize`` frame and softmax-note ``checks``,
    and the claims' config ``section``. What several rows share is computed once
    (:meth:`memo`)."""

    fit: pd.DataFrame
    scaling: pd.DataFrame
    directions: pd.DataFrame
    section: dict
    datasize: pd.DataFrame | None = None
    checks: pd.DataFrame | None = None
    _memo: dict = field(default_factory=dict, repr=False)
    #: the claims whose frame is absent (:meth:`absent`), in the order they were measured
    unmeasured: list[str] = field(default_factory=list, repr=False)

    @cached_property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(self.fit["dataset"]))

    @cached_property
    def level(self) -> float:
        """The certainty bar ``certain_max_prob``."""
        return float(self.section["certain_max_prob"])

    @cached_property
    def alpha(self) -> float:
        return float(self.section["alpha"])

    def memo(self, key: tuple, compute: Callable[[], object]):
        """``compute()``, once per ``key`` on this evidence (callers must not change it)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def absent(self, cid: str) -> Measurement:
        """The claim ``cid`` has no frame to measure: noted (:meth:`check_measured` raises once
        every claim is measured, as the engine does for a claim without a measurement)."""
        self.unmeasured.append(cid)
        return Measurement(math.nan, "not measured")

    def check_measured(self) -> None:
        if self.unmeasured:
            raise ValueError(f"no measurement for claim(s) {self.unmeasured}")


def certainty_per_seed(
    directions: pd.DataFrame,
    dataset: str,
    kind: str,
    role: str = "K",
    column: str = "mean_max_prob",
) -> pd.Series:
    """Per seed: ``column`` averaged over the non-degenerate directions (each already a mean
    over the scaled points) of model ``kind`` at sample count ``role`` (``"K"`` or ``"2K"``)."""
    sel = rows(directions, dataset=dataset, kind=kind, k_role=role)
    sel = sel[~sel["degenerate"].astype(bool)]
    return sel.groupby("seed")[column].mean().astype(float).sort_index()


def k_stability(
    directions: pd.DataFrame, dataset: str, kind: str, k_margin: float
) -> tuple[pd.Series, pd.Series, pd.Series, float]:
    """``(stat(K), stat(2K), oriented change per seed, margin)`` of :func:`certainty_per_seed`:
    the change ``stat(2K) - stat(K)`` times the sign of its mean (the side the binding half of
    the equivalence test looks at) and the fixed margin ``k_margin``."""
    a = certainty_per_seed(directions, dataset, kind, "K")
    b = certainty_per_seed(directions, dataset, kind, "2K")
    seeds = sorted(set(a.index) & set(b.index))
    a, b = a.loc[seeds], b.loc[seeds]
    change = b - a
    sign = 1.0 if float(change.mean()) >= 0 else -1.0
    return a, b, sign * change, float(k_margin)


def held_out(
    scaling: pd.DataFrame, ds: str, kind: str, metric: str = "max_prob", *, far: bool = False
) -> pd.Series:
    """Per seed, ``metric`` (mean over the scaled points) of model ``kind`` on the held-out
    points themselves (the scaling curve's alpha = 1) or, with ``far``, at its largest alpha
    along the paper's feature."""

    def compute() -> pd.Series:
        sel = rows(scaling, dataset=ds, kind=kind, metric=metric)
        if sel.empty:
            return pd.Series(dtype=float)
        at = sel["alpha"].max() if far else sel["alpha"].min()
        return sel[sel["alpha"] == at].groupby("seed")["value"].mean().astype(float).sort_index()

    return per_frame(scaling, ("held_out", ds, kind, metric, far), compute).copy()


def cell_shares(
    directions: pd.DataFrame,
    ds: str,
    kind: str,
    level: float,
    column: str = "limit_max_prob",
    role: str = "K",
    degenerate: bool = True,
) -> tuple[pd.Series, pd.Series]:
    """Per seed, the share of directions (every direction, degenerate ones included; only the
    non-degenerate ones with ``degenerate=False``) whose ``column`` (default: the alpha ->
    infinity limit of the mean max probability; Theorem 1 is a statement about the limit) at
    sample count ``role`` (``"K"`` or ``"2K"``) is at most ``level`` (below certainty), and the
    share above it."""
    sel = rows(directions, dataset=ds, kind=kind, k_role=role)
    if not degenerate:
        sel = sel[~sel["degenerate"].astype(bool)]
    below = (sel[column] <= level).groupby(sel["seed"]).mean().astype(float)
    return below.sort_index(), (1.0 - below).sort_index()


def sample_premises(ds: str, kind: str) -> tuple[str, ...]:
    """The premises on an averaged model's samples that its certainty rows rest on: K large
    enough (``K``) and, for a chain (:data:`CHAINS`), the chain mixed (``E``)."""
    return (f"K-{ds}-{kind}",) + ((f"E-{ds}-{kind}",) if kind in CHAINS else ())


def k_of(directions: pd.DataFrame, ds: str, kind: str, role: str) -> int:
    """The sample count K (``role="K"``) or 2K of model ``kind`` on ``ds``."""
    sel = rows(directions, dataset=ds, kind=kind, k_role=role)
    return int(sel["k"].iloc[0]) if len(sel) else 0


def per_seed_text(series: pd.Series, digits: int = 3) -> str:
    return ", ".join(f"{s}: {v:.{digits}f}" for s, v in series.items())


def fine(values: pd.Series) -> str:
    """Mean ± sd over seeds with four significant digits (confidences near 1, metrics near 0)."""
    if not len(values):
        return "n/a"
    sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    return (
        f"{float(values.mean()):.4g} ± {sd:.2g}"
        if math.isfinite(sd)
        else f"{float(values.mean()):.4g}"
    )


def distribution(values: pd.Series) -> str:
    q = values.quantile([0.0, 0.25, 0.5, 0.75, 1.0]).to_numpy()
    return (
        f"min {q[0]:.3f}, quartiles {q[1]:.3f} / {q[2]:.3f} / {q[3]:.3f}, max {q[4]:.3f} "
        f"over {len(values)} direction x seed cells"
    )


def effect(section: dict, key: str) -> float | None:
    """The config's effect size ``claims.<key>`` (a distance from the threshold), None when
    absent (power n/a)."""
    v = section.get(key)
    return None if v is None else float(v)
