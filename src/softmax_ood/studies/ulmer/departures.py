"""Where the Ulmer study departs from Ulmer & Cinà 2021, as data
(:class:`~softmax_ood.analysis.departures.Departure`), and the config values that *are* the
paper's (:data:`PAPER_VALUES`, checked by ``tests/test_study_contract.py``). Claim entries ending
in ``*`` stand for every claim id they prefix. Study helpers append their own entries to
:data:`DEPARTURES`."""

from __future__ import annotations

from ...analysis.departures import Departure, of_study

__all__ = ["DEPARTURES", "PAPER_VALUES", "departures"]

#: config key (or "<file>:<key>") -> the paper's value, for values whose comment cites the paper
PAPER_VALUES: dict[str, object] = {
    "ulmer.datasets.synthetic.feature": 0,  # §3.2 / Lemma 3: one feature scaled
}

DEPARTURES: list[Departure] = [
    Departure(
        "ulmer.kinds",
        "variational posteriors (Bayes-by-backprop [4]), MCMC and ensembles [31]",
        "§3.3",
        "single network, MC dropout, Bayes-by-backprop, deep ensemble",
        "MC dropout ([12], cited in the bibliography only) is a common variational stand-in and "
        "is ours; MCMC is not run.",
        ("C-*-mc_dropout", "K-*-mc_dropout"),
        "all",
        "setting",
    ),
    Departure(
        "ulmer.model.k_samples",
        "K forward samples, K not stated",
        "§3.3",
        "100",
        "The paper gives no K; K is checked by the K-vs-2K premise rows.",
        ("K-*", "C-*"),
        "all",
        "unspecified",
    ),
    Departure(
        "ulmer.model.n_members",
        "K ensemble members, K not stated",
        "§3.3",
        "160 (scanned over 20/40/80/160 on the confirmation seeds: selection not yet kept "
        "apart, issue 25)",
        "The paper gives no K; the K-vs-2K premise rows check it.",
        ("K-*-ensemble", "C-*-ensemble"),
        "all",
        "unspecified",
    ),
    Departure(
        "ulmer.datasets.breast_cancer",
        "medical tabular data with monotonic feature-outcome relations (intensive-care "
        "records, [51]; credentialed access)",
        "§6",
        "scikit-learn's breast-cancer table (Wisconsin Diagnostic)",
        "The paper's data cannot be obtained; the report names the table as breast cancer, "
        "not as the paper's data.",
        (
            "F-breast_cancer",
            "N-breast_cancer",
            "K-breast_cancer-*",
            "C-breast_cancer-*",
            "G-breast_cancer-*",
            "S-breast_cancer-*",
        ),
        "all",
        "data",
    ),
    Departure(
        "ulmer.model",
        "network sizes and training not stated",
        "§3.3, Definitions 2-3",
        "ReLU MLP with hidden [32, 32], Adam lr 0.01, 100 epochs",
        "A full fit of a small ReLU network, as the theorem assumes; the fitted premise checks it.",
        ("F-*",),
        "all",
        "unspecified",
    ),
]


def departures(config: dict) -> list[Departure]:
    """The departures that apply to ``config``, claim ids resolved against its claims."""
    from .study import claim_specs

    return of_study(DEPARTURES, claim_specs(config), config)
