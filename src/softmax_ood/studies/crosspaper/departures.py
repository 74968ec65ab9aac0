"""Where the cross-paper study departs from the papers it joins, as data
(:class:`~softmax_ood.analysis.departures.Departure`), and the config values that *are* a
paper's (:data:`PAPER_VALUES`). Claim entries with ``*`` stand for every claim id they match."""

from __future__ import annotations

from ...analysis.departures import Departure, for_config, of_study

__all__ = ["DEPARTURES", "PAPER_VALUES", "departures", "departures_of_section"]

#: config key -> the paper's value, for values whose comment cites a paper
PAPER_VALUES: dict[str, object] = {
    "crosspaper.grid.severities": [1, 2, 3, 4, 5],  # Kang Sec. 3.2: CIFAR-10-C severities 1-5
    "crosspaper.discriminator.alpha": 10.0,  # Kang App. B.3 code: SGDClassifier(alpha=10)
}

DEPARTURES: list[Departure] = [
    Departure(
        "crosspaper.baseline / crosspaper.method",
        "Kang: a CE classifier, reward and Gaussian models of its own (2 conv + 2 FC); Ulmer: "
        "ReLU networks on tabular data",
        "Kang Sec. 3.2; Ulmer §3",
        "the LogitNorm study's WRN-10-1 CE and LogitNorm networks (sgd-fashion, 5 seeds)",
        "the question is whether another paper's models behave as each paper says; nothing is "
        "trained for this study",
        ("ocs_trend:*", "same_rate:*", "rays_certain:*", "normalised_uncertain:*"),
        "all",
        "setting",
    ),
    Departure(
        "the LogitNorm paper's regime",
        "a CE network that is overconfident and a LogitNorm network whose raw logit norm is "
        "near 1.48 (CIFAR-10, 200 epochs)",
        "Wei et al. Fig. 1, Table 5",
        "the LogitNorm study's networks as trained on this config; whether they are in that "
        "regime is that study's premises P1 and P-ln-norm (its claims table), not re-tested here",
        "(a) and (b) ask of these networks what each paper says of any classifier; their "
        "verdicts are about the networks as trained, inside or outside LogitNorm's regime",
        ("ocs_trend:*", "same_rate:*", "normalised_uncertain:*"),
        "all",
        "setting",
    ),
    Departure(
        "crosspaper.grid",
        "12 corruptions x 5 severities and 12 rotations on every test image",
        "Kang Sec. 3.2, Fig. 2",
        "4 corruptions (two noises, contrast, blur) x 5 severities and rotations 15-90 degrees "
        "on the first 300 test images; far sets on their first 300 images",
        "budget: a small share of the default's time; four families of different kinds "
        "(additive, impulse, global, smoothing) and the rotation Kang's MNIST figure uses",
        ("ocs_trend:*", "same_rate:*", "score_rises:*", "changes:*"),
        "default",
        "setting",
    ),
    Departure(
        "distance to the OCS of the LogitNorm network",
        "KL(P_theta(y|x) || P_OCS) for the cross-entropy classifier",
        "Kang Sec. 3.2",
        "KL of the softmax of the raw logits (what the network predicts at test time) to the "
        "training label marginal, for both losses; the normalised logits' KL is in the frame",
        "the LogitNorm loss's best constant is the same marginal (a constant unit-norm logit "
        "vector over tau reaches it), so both losses share the OCS",
        ("ocs_trend:*", "same_rate:*"),
        "all",
        "setting",
    ),
    Departure(
        "crosspaper.rays",
        "x = alpha x' with one feature (or the input) scaled, alpha -> infinity, on tabular data",
        "Ulmer §3.2, Theorem 1",
        "the whole normalised image scaled, alpha = 1 ... 1e4 (9 log-spaced), first 100 test images",
        "an image network's input space: the ray from the ID mean image through a test image",
        ("rays_certain:*", "normalised_uncertain:*", "rays_linear:*"),
        "all",
        "setting",
    ),
    Departure(
        "crosspaper.seddik",
        "ResNet-18 features of BigGAN images (three classes, p = 512, n = 3,000)",
        "Seddik Sec. 5, Fig. 5",
        "the LogitNorm study's WRN-10-1 CE and LogitNorm networks' penultimate features (p = 64) "
        "of the 9,000 ID test images, k = 9, cut per class into three thirds (fit n = 3,000, "
        "class statistics, test), as the Seddik study's Fig. 5 (n/p ~ 47 against the paper's ~ 6)",
        "the question is whether the theory predicts a classifier on another paper's learned "
        "features; the settings, bars and measurements are the Seddik study's, so CE's rows "
        "repeat its C3 rows on the same networks",
        ("seddik_weights:*", "seddik_logits:*", "seddik_accuracy:*", "seddik_same_*"),
        "all",
        "setting",
    ),
    Departure(
        "crosspaper.discriminator.featurizer",
        "an ImageNet ResNet-18",
        "Kang App. B.3",
        "random_conv (a fixed random two-layer ReLU conv net), as the Kang study's default",
        "offline stand-in (the Kang study's README and departures explain it)",
        ("score_rises:*", "discriminator_null", "ocs_trend:*"),
        "all",
        "setting",
    ),
]


def departures_of_section(section: dict) -> list[Departure]:
    """The departures for a study section (``study.spec``): claim ids resolved against it."""
    from .claims import claim_specs

    return for_config(
        DEPARTURES, [s.id for s in claim_specs(section)], section.get("scale", "default")
    )


def departures(config: dict, specs: list) -> list[Departure]:
    """The departures that apply to ``config``, claim ids resolved against its claims
    ``specs`` (``study.claim_specs(config)``, which the study's ``departures`` hook passes)."""
    return of_study(DEPARTURES, specs, config)
