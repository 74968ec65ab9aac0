"""What Seddik's claims share: the paper, the bars fixed in advance, the wording every claim's
spec reuses, and the small frame helpers the measurements share."""

from __future__ import annotations

import math

import pandas as pd

PAPER = "Seddik et al. 2021"
#: C3-weights' bar, fixed in advance from the theory's own units: the learned weights' error
#: ``‖w − E w‖₂`` is ``√(Σ Var w)`` when the predicted mean and spread are right (ratio ≈ 1);
#: twice that is a theory whose mean or spread is off by its own fluctuation or more
WEIGHT_RATIO_BAR = 2.0
#: C3-logits' bar: half a predicted standard deviation of a test logit (mean over true classes
#: and logits); the theory exact puts the measured mean within sampling noise of the predicted
LOGIT_GAP_BAR = 0.5
#: below this C3-weights' detail says the match looks built in (r ≈ 1 when the theory is right)
BUILT_IN_RATIO = 0.1
TRIVIAL = "guessing (100/k %) and perfect (100 %)"
#: the image pair of Figs. 3-4 when the config names none (:func:`images_label`)
IMAGES = "the image pair"
#: Theorem 4.3's rate: the trained weights fluctuate around their deterministic limit with
#: observable diameter 1/√n, so their spread has slope −1/2 against n on log-log
RATE = -0.5
#: C5's bar on the slope, fixed in advance: half way to the neighbouring rates n^(−1/4) and
#: n^(−3/4), so "holds" tells 1/√n from either
RATE_BAR = 0.25
#: what every row's verdict is computed on (the specs' ``confirmation``)
CONFIRMATION = "every configured seed x test points"
#: the paper's settings each row's selection text cites
PAPER_SETTINGS = "the paper's n, p and lambda (each cited in the config)"


def _with_seed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame if "seed" in frame.columns else frame.assign(seed=0)


def _pm(mean: float, se: float) -> str:
    return f"{mean:+.2f} ± {se:.2f}" if math.isfinite(se) else f"{mean:+.2f} ± n/a"


def _exact_theory_sizes(frame: pd.DataFrame) -> dict:
    """Per network (seed): ``(n_fit, n_stats)`` — the fit part's size (``accuracy`` panel,
    practice, ``split="train"``, ``cls="all"``: ``n_points``) and the class statistics' size
    (``statistics`` panel, ``split="stats"``, ``cls="all"``: ``n_points``); only networks whose
    statistics share no point with the fit or test part (S2's input) and that record both."""
    f = _with_seed(frame)
    if "panel" not in f.columns or "n_points" not in f.columns:
        return {}
    out = {}
    for seed, g in f.groupby("seed", sort=True):
        fit = g[(g["panel"] == "accuracy") & (g["source"] == "practice")]
        fit = fit[(fit["split"] == "train") & (fit["cls"] == "all")]["n_points"].dropna()
        st = g[g["panel"] == "statistics"]
        size = st[(st["split"] == "stats") & (st["cls"] == "all")]["n_points"].dropna()
        shared = st.loc[st["split"].isin(["train", "test"]), "value"].astype(float).sum()
        if len(fit) and len(size) and float(size.iloc[0]) > 0 and shared == 0:
            out[seed] = (int(fit.iloc[0]), int(size.iloc[0]))
    return out
