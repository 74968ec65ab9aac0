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
        "single network, MC dropout, Bayes-by-backprop, deep ensemble, MCMC (SGLD)",
        "MC dropout ([12], cited in the bibliography only) is a common variational stand-in and "
        "is ours",
        ("*-mc_dropout", "M-*-mc_dropout-*"),  # every row of the MC dropout model
        "all",
        "setting",
    ),
    Departure(
        "ulmer.model.mcmc",
        "MCMC: 'markov-chain Monte-Carlo procedures [52, 42]' (SGLD, involutive MCMC), no "
        "sampler settings",
        "§3.3",
        "SGLD ([52]) with a constant step (Welling & Teh anneal it), no Metropolis correction, "
        "one chain per run started at the seed's initialisation, the prior N(0, "
        "model.prior_sigma^2) of Bayes-by-backprop, minibatches of 64 whose gradient noise is "
        "not corrected (it heats the chain beyond temperature 1 where per-example gradients "
        "are large, more on breast_cancer than on synthetic); step 1e-3 chosen for stability "
        "on seed 0's full-batch chains (3e-3 diverged), thinning from a pilot chain's "
        "training-loss trace on seed 100 (the far-out votes mix more slowly: premise E); the "
        "default keeps one sample every 100 steps (budget), the paper config one every "
        "relaxation time of the prior (2,000 steps)",
        "a constant-step chain keeps moving on a CPU budget (an annealed step freezes it); "
        "whether it mixed is a premise (E: effective sample size of the training-loss trace "
        "and of the far-out votes), so a chain that did not mix makes its rows 'cannot test'",
        ("*-mcmc", "M-*-mcmc-*"),  # every row of the MCMC family, its mixing premise E too
        "all",
        "setting",
    ),
    Departure(
        "ulmer.datasets.breast_cancer",
        "medical tabular data with monotonic feature-outcome relations (intensive-care "
        "records, [51]; credentialed access)",
        "§6",
        "scikit-learn's breast-cancer table (Wisconsin Diagnostic)",
        "The paper's data cannot be obtained; the report names the table as breast cancer, "
        "not as the paper's data.",
        # every row on the table (F, N, K, L, C, P, D, S, G)
        ("*-breast_cancer", "*-breast_cancer-*"),
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
    Departure(
        "claims C-*/P-* (averaged models far from the data)",
        "Theorem 1: every metric tends to perfect certainty; Fig. 1 and the Discussion: ensembles 'only partially mitigate' the problem",
        "Theorem 1, Fig. 1 caption, §6",
        "the paper's hedge is the claim: per seed, the share of directions where the averaged model stays at or below certainty exceeds the single network's (C), and the share where it is certain exceeds 0 (P); the exact limit (vote share of the samples' limiting arg-max from the logits' slopes) is a consistency row (L)",
        "the lemmas prove vanishing gradients; for an average of saturated samples that disagree the limit is the vote share, below 1, which the paper itself shows in Fig. 1",
        ("C-*", "P-*", "L-*"),
        "all",
        "setting",
    ),
    *(
        Departure(
            key,
            "K samples / members, not stated",
            "§3.3",
            "K = 100 for both, fixed in advance: a vote share's binomial standard error "
            "1/(2 sqrt(K)) <= claims.vote_se = 0.05 (n_members was 160, chosen by scanning K on "
            "the confirming seeds)",
            "a setting chosen on the seeds that confirm it is not a test; the principle fixes K "
            "before any run",
            ("K-*", "C-*", "P-*", "L-*", "D-*", "R-*", "T-*", "M-*"),
            "default",
            "setting",
        )
        for key in ("ulmer.model.k_samples", "ulmer.model.n_members")
    ),
    Departure(
        "ulmer.datasets.synthetic.feature",
        "scale one feature by alpha (which one not stated for the synthetic data)",
        "§3.2, Lemma 3",
        "x2 (was x1): x1 is parallel to the class 2/3 boundary (|cos| 0.004 with its LDA slope, below directions.degenerate_cos = 0.05); G rows along a degenerate feature read 'cannot test'",
        "along a direction parallel to a class boundary Assumption 1 (strict monotonicity) fails, so the gradient lemmas do not apply there",
        ("G-*",),
        "all",
        "setting",
    ),
    Departure(
        "ulmer.directions.degenerate_cos",
        "no notion of a degenerate direction (Assumption 1 assumed)",
        "Assumption 1",
        "0.05, fixed before any run; it labels directions: N, S, the K premise and T (Theorem 1 as stated, over Assumption 1's directions) leave the degenerate ones out, C, P, R and L count every direction (so no verdict of theirs depends on it; C's and P's details also give their statistic without them, T's with them)",
        "a cutoff that decides which cells count would be a setting the verdict hinges on (with 0.2 the old pooled ensemble row flipped); T leaves them out because the theorem assumes strict monotonicity, which fails along a class boundary",
        ("C-*", "P-*", "L-*", "S-*", "N-*", "K-*", "R-*", "T-*"),
        "all",
        "setting",
    ),
    Departure(
        "ulmer.directions.n_random",
        "one feature scaled, x = alpha x' (which one not stated for the synthetic data)",
        "§3.2, Lemma 3",
        "the held-out points scaled along every input axis and directions.n_random random unit "
        "directions (standard normal, normalised; drawn once with directions.seed); the paper's "
        "single feature gives the scaling curve and the G rows",
        "one feature is one direction: whether averaged models stay uncertain depends on the "
        "direction, so the certainty rows need many; random directions are not aligned with any "
        "feature's units",
        ("C-*", "P-*", "L-*", "K-*", "N-*", "S-*", "D-*", "R-*", "T-*"),
        "all",
        "setting",
    ),
    Departure(
        "claims B-*/R-*/T-* (certainty against in-distribution confidence)",
        "Theorem 1: 'the same network(s) will reach perfect certainty' far from the data (no "
        "bar; single networks, ensembles and posterior samples alike)",
        "Theorem 1, §1 contribution 2",
        "T tests the statement as made: per seed, the share of Assumption 1's directions along "
        "which the averaged model's limit is less certain than its own held-out data must stay "
        "below claims.effect_share (one direction in ten); R tests the hedge ('only partially') "
        "against the same reference; B shows the held-out confidence beside the fixed bar "
        "certain_max_prob and gates P, which counts cells above that bar",
        "the bar 0.99 was fixed before any run, but a model whose held-out confidence already "
        "exceeds it is 'certain' at the bar on its own data, so the bar alone cannot say whether "
        "far-out certainty is more than in-distribution confidence; the held-out confidence is "
        "the most lenient reading of 'perfect certainty' that still bears on OOD detection, and "
        "the bar is not changed",
        ("B-*", "R-*", "T-*", "P-*"),
        "all",
        "setting",
    ),
    Departure(
        "claims M-* (Theorem 1 on its four metrics)",
        "Theorem 1: max probability, class variance, predictive entropy and mutual information "
        "reach perfect certainty as alpha_d -> infinity (Lemmas 5, 7-9 prove vanishing gradients)",
        "Theorem 1, Lemmas 5, 7, 8, 9",
        "each metric of each averaged model along the paper's feature, the largest alpha (1e4) "
        "against alpha = 1 (the held-out points): the gain in certainty per seed must be > 0; "
        "power at the gain perfect certainty would give",
        "a finite alpha stands for the limit (the L rows show the max probability at 1e4 equals "
        "its limit); one feature, as the paper scales one",
        ("M-*",),
        "all",
        "setting",
    ),
    Departure(
        "claims lemma1, lemma3-* (Lemmas 1 and 3 as sanity rows)",
        "Lemma 1: p strictly monotonic => the logits f strictly monotonic; Lemma 3: the inverse "
        "softmax derivative outgrows the ReLU network's logit gradient",
        "§4, App. A.2, A.3",
        "sanity rows: Lemma 1 for logit differences (the row checks Property 1, which gives a "
        "counterexample for the logits themselves, shown in its detail); Lemma 3's network side, "
        "the largest |logit| growing at most linearly (log-log slope < 1.1)",
        "Lemma 1's proof takes the softmax as increasing in each logit alone, but the "
        "probabilities fix the logits only up to a shift; both rows are true by construction and "
        "never count as support",
        ("lemma1", "lemma3-*"),
        "all",
        "setting",
    ),
    Departure(
        "ulmer.datasize.fraction",
        "'more in-domain data ... may ... worsen OOD detection' (hedged: 'may'; no experiment)",
        "§6 Discussion",
        "the K-member ensemble on all training rows against one on a stratified quarter of them (fixed in advance: 4x the data halves the 1/sqrt(n) error); OOD detection = AUROC of the predictive entropy, held-out points vs the same points at alpha = 1e4 along every direction",
        "the paper hedges it ('may') and gives no measurement; the row tests its directional "
        "reading, so a 'does not hold' refutes that reading, not the 'may'; one ratio fixed in "
        "advance, no scan",
        ("D-*",),
        "all",
        "setting",
    ),
    Departure(
        "softmax note rows note-P1, note-P2, note-P3, note-logistic",
        "Properties 1-3 and the two-output softmax (identities with proofs)",
        "note §B.1-B.3, 'The softmax for 2 outputs'",
        "sanity rows: the identity's largest float64 error with the stable softmax on the note's vectors below 1e-12 (Property 3 with a1 = 2.5, a2 = -0.7, z' the reversed vector, c = 100)",
        "true by construction: checks of the implementation, never counted as support",
        ("note-P1", "note-P2", "note-P3", "note-logistic"),
        "all",
        "setting",
    ),
]


def departures(config: dict, specs: list) -> list[Departure]:
    """The departures that apply to ``config``, claim ids resolved against its claims
    ``specs`` (``study.claim_specs(config)``, which the study's ``departures`` hook passes)."""
    return of_study(DEPARTURES, specs, config)
