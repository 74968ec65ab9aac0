"""Where the Kang study departs from Kang et al. 2024, as data
(:class:`~softmax_ood.analysis.departures.Departure`), and the config values that *are* the
paper's (:data:`PAPER_VALUES`, checked by ``tests/test_study_contract.py``). Claim entries ending
in ``*`` stand for every claim id they prefix.

Our side of a departure is never typed: ``ours`` and ``why`` of :data:`DEPARTURES` are templates
(``str.format`` fields) that :func:`departures` fills from the config it is given
(:func:`context`), so a changed config value changes the departure's text and cannot leave it
stale. An entry whose ``setting`` names a recipe applies only to a config whose Kang section uses
that recipe; ``kang.eval_size`` only where it is set; ``kang.discriminator.n_repeats`` only where
it is not the authors' 30."""

from __future__ import annotations

from dataclasses import replace

from ...analysis.departures import Departure, of_study

__all__ = ["CIFAR10C", "DEPARTURES", "PAPER_VALUES", "context", "departures"]

_OOD = ("score_rises:*", "discriminator_graded", "discriminator_null:*")
_OCS = ("ocs_trend:*", "abstain_rises:*", "reward_beats_classification*", "accuracy_falls:*")

#: the 15 corruptions of CIFAR-10-C (Hendrycks & Dietterich 2019), the paper's Sec. 3.2 set
CIFAR10C = (
    "gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur",
    "zoom_blur", "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
    "jpeg_compression",
)  # fmt: skip

PAPER_REPEATS = 30  #: discriminator fits per set in the authors' code (App. B.3)

#: config key (or "<file>:<key>") -> the paper's value, for values whose comment cites the paper
PAPER_VALUES: dict[str, object] = {
    "losses.reward-mse": {
        "loss": "reward_mse",
        "correct_reward": 1.0,
        "wrong_reward": -4.0,
        "abstain_reward": 0.0,
    },  # Sec. 5
    "losses.gaussian-nll": {"loss": "gaussian_nll"},  # Sec. 3.2
    "kang.classifier": "ce",
    "kang.reward_model": "reward-mse",
    "kang.regressor": "gaussian-nll",
    "kang.severities": [1, 2, 3, 4, 5],  # CIFAR-10-C severities
    "kang.rotations": [15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 165, 180],  # Fig. 2
    "kang.figure_shift": "gaussian_noise",  # Fig. 5
    "architectures.resnet-20": {"family": "resnet", "depth": 20},  # App. B.2, CIFAR-10
    "paper.yaml:kang.recipe": "kang-paper-sgd",
    "paper.yaml:kang.arch": "resnet-20",
    # App. B.2, CIFAR10 row: SGD, lr 0.1, multistep at 100 and 150, weight decay 1e-4, momentum 0.9
    "recipes.kang-paper-sgd.optimizer": "sgd",
    "recipes.kang-paper-sgd.lr": 0.1,
    "recipes.kang-paper-sgd.schedule": "multistep",
    "recipes.kang-paper-sgd.milestones": [100, 150],
    "recipes.kang-paper-sgd.weight_decay": 0.0001,
    "recipes.kang-paper-sgd.momentum": 0.9,
    "recipes.kang-paper-sgd.augment": "crop_flip",
    "recipes.paper-mnist-adam.augment": "none",  # App. B.2: MNIST normalisation only
    "recipes.kang-fashion.optimizer": "adam",  # App. B.2, MNIST: Adam, lr 0.001
    # App. B.2, MNIST: StepLR gamma 0.7 per epoch (a multistep schedule at every epoch), wd 0.01
    "recipes.kang-fashion.schedule": "multistep",
    "recipes.kang-fashion.gamma": 0.7,
    "recipes.kang-fashion.weight_decay": 0.01,
    "paper_kang_mnist.yaml:kang.corruptions": [],  # MNIST: rotation only
    "paper_kang_mnist.yaml:kang.mechanism.losses": ["ce", "reward-mse"],  # Fig. 4 columns
}

DEPARTURES: list[Departure] = [
    Departure(
        "data",
        "CIFAR-10 -> CIFAR-10-C (32x32) and MNIST rotations (28x28)",
        "Sec. 3.2, App. B.1",
        "the {dataset} ID set ({image_size}x{image_size}) with CIFAR-10-C-style corruptions "
        "generated on its test split, and rotations",
        "The default runs offline; paper scale reads CIFAR-10-C (config/paper.yaml).",
        _OOD + _OCS,
        "default",
        "data",
    ),
    Departure(
        "data.dataset (kang)",
        "MNIST, trained on all ten digits; Fig. 2 averages the predictions over the test images of "
        "the digit 6 (a trained class) as rotation grows; CIFAR-10 / CIFAR-10-C (Fig. 2: the "
        "automobiles under noise)",
        "Sec. 3.2, Fig. 2, App. B.1",
        "{dataset}: the models train on the {n_id} ID classes {id_classes} only; the held-out "
        "class(es) {heldout_classes} are never trained on (every OCS is over {n_id} classes: the "
        "CE OCS loss is about ln {n_id}) and their test images are the near-OOD far set "
        "{heldout_set}; Figs. 2 and 5 average over the test images of the ID class "
        "{figure_class}",
        "A declared stand-in: MNIST is not shipped offline. Holding a class out is ours, not the "
        "paper's (it gives every study of the pipeline the same near-OOD set); the paper's Fig. 2 "
        "class is a trained one, as our figure class is.",
        ("ocs_trend:*", "abstain_rises:*", "reward_beats_classification:*", "fitted:*"),
        "default",
        "data",
    ),
    Departure(
        "kang.recipe",
        "MNIST: Adam, lr 0.001, Step schedule (gamma 0.7), weight decay 0.01; CIFAR10: SGD lr 0.1, "
        "milestones 100/150, weight decay 1e-4",
        "App. B.2",
        "recipe {recipe}: {optimizer} lr {lr:g}, {epochs} epochs, {schedule_text}, weight decay "
        "{weight_decay:g}, checkpoint {checkpoint}, on {train_size}",
        "CPU budget (epochs, images, checkpoint); the fitted premises (training loss far below "
        "the OCS's) check every model.",
        ("fitted:*",),
        "default",
        "setting",
    ),
    Departure(
        "kang.arch",
        "MNIST: 2 convolution layers followed by 2 fully connected layers, ReLU; CIFAR10: ResNet20",
        "App. B.2",
        "{arch} ({arch_desc})",
        "CPU budget (2 shared cores); the layer structure is the paper's where the family is "
        "convnet, the widths are cut; config/paper.yaml uses ResNet-20.",
        _OOD + _OCS + ("constants_mirror_ocs:*",),
        "default",
        "setting",
    ),
    Departure(
        "kang.mechanism.arch",
        "Fig. 4: the 4-layer MNIST network (2 conv + 2 FC) under rotation, ResNet-20 under noise "
        "on CIFAR-10",
        "Sec. 4.1, Fig. 4, App. C.2",
        "{mech_arch} ({mech_arch_desc}) under {mech_shift}, trained with recipe {mech_recipe}; "
        "the accumulated constants zero the input contribution of affine layer "
        "{constants_layer}",
        "Fig. 4's constants need a feed-forward chain (families mlp, cnn, convnet) to zero one "
        "layer's input contribution; a residual network is read at its classifier only "
        "(constants_layer -1), and the paper's App. C.2 layer for ResNet-20 is not reproduced.",
        ("constants_mirror_ocs:*",),
        "all",
        "setting",
    ),
    Departure(
        "architectures.mlp-4",
        "'a small 4 layer network' = 2 convolution layers followed by 2 fully connected layers",
        "Sec. 4.1, App. B.2",
        "a 4-layer MLP (hidden 512, 512, 512)",
        "The paper's 4 layers are convolutional + fully connected; the MLP is the nearest "
        "feed-forward chain the Fig. 4 code accepts.",
        (),
        "paper",
        "setting",
    ),
    Departure(
        "kang.corruptions",
        "the 15 CIFAR-10-C corruptions",
        "Sec. 3.2",
        "{n_corruptions} corruptions generated offline: {corruptions} (not among the 15: "
        "{corruptions_extra}, from CIFAR-10-C's extra set); of the 15 not run: {corruptions_out}",
        "The generator implements no weather or zoom/glass blur; levels that do not change the "
        "images are dropped by the change premise.",
        ("changes:*", "score_rises:*"),
        "default",
        "data",
    ),
    Departure(
        "kang.reference_size",
        "CIFAR-10-C severities (published for 32x32 images)",
        "Sec. 3.2, App. B.1",
        "the CIFAR-10-C parameters with pixel lengths read in pixels of a {reference_size}-pixel "
        "image and scaled by {image_size}/{reference_size} to the {image_size}x{image_size} "
        "images",
        "MNIST-C and ImageNet-C state lengths in pixels of the image they corrupt; scaling "
        "CIFAR's lengths down to 8x8 made gaussian_blur a no-op.",
        ("changes:*",),
        "default",
        "setting",
    ),
    Departure(
        "corruptions.rotate",
        "rotated MNIST (interpolation not stated)",
        "Sec. 3.2, Fig. 2",
        "exact quarter turns plus three Fourier shears (band-limited interpolation); rotation by "
        "0 is the identity",
        "A bilinear path blurs: a +t/-t round trip scored as shifted (premise rotation_roundtrip "
        "now measures that it scores as clean).",
        ("rotation_roundtrip:*", "ocs_trend:*:rotation"),
        "all",
        "setting",
    ),
    Departure(
        "kang.featurizer",
        "an ImageNet ResNet-18 featurizer for the OOD score",
        "App. B.3",
        "{featurizer} with parameters {featurizer_params}",
        "ImageNet weights are a download; config/paper.yaml uses them (sha256-checked).",
        _OOD + ("ocs_trend:*",),
        "default",
        "data",
    ),
    Departure(
        "kang.discriminator.alpha",
        "L2 strength not stated (the authors' code: SGDClassifier(alpha=10))",
        "App. B.3",
        "{alpha_text}",
        "The paper states none; alpha is never chosen on test scores (at paper scale CIFAR-10-C "
        "corrupts only the test set, so it is fixed at the authors' value there).",
        _OOD,
        "all",
        "unspecified",
    ),
    Departure(
        "kang.discriminator.n_repeats",
        "30 fits per set (the authors' code)",
        "App. B.3",
        "{n_repeats} fits per set, each on a random balanced split (held-out fraction "
        "{heldout_fraction:g} of the set scores it)",
        "Budget; the repeat-to-repeat spread is reported beside each score and "
        "enters the score_separated premise and the ocs_trend test.",
        (),
        "default",
        "setting",
    ),
    Departure(
        "kang.eval_size",
        "every test image of each evaluation set",
        "Sec. 3.2",
        "the first {eval_size} test images per evaluation set",
        "Budget: every shift level and far set is evaluated by every model.",
        (),
        "all",
        "setting",
    ),
    Departure(
        "recipes.kang-paper-sgd.epochs",
        "not stated (milestones at 100 and 150)",
        "App. B.2",
        "{paper_sgd_epochs} epochs; batch size 128 and the factor 10 at each milestone also not "
        "stated",
        "The usual CIFAR-10 length that the stated milestones imply.",
        ("fitted:*",),
        "paper",
        "unspecified",
    ),
    Departure(
        "kang.adversarial.epsilons",
        "FGSM on an MNIST CE classifier; step size not stated",
        "App. A, Fig. 8",
        "one FGSM step at eps {fgsm_epsilons} (pixel units, images in [0, 1]) on the first "
        "{eval_size} clean ID test images, per trained {classifier} model; the claims read eps "
        "{fgsm_top}; the OOD score of each FGSM set from the study's own featurizer and "
        "discriminator",
        "The paper gives no step; the largest is Goodfellow et al.'s MNIST 0.1, fixed before any "
        "run; the premise fgsm_effective checks that the step is an attack.",
        ("fgsm_*",),
        "all",
        "unspecified",
    ),
    Departure(
        "Sec. 4.2 (theory)",
        "Theorem 4.1 and Propositions 4.1-4.2 proved for gradient flow at convergence on deep "
        "homogeneous ReLU networks (no experiment)",
        "Sec. 4.2, App. D",
        "a toy (studies/kang/theory.py): d {toy_dim}, width {toy_width}, {toy_shallow}- and "
        "{toy_deep}-layer networks, {toy_steps} steps of normalised gradient descent on the "
        "exponential loss, seeds {seeds}",
        "A finite-step check of what the statements say; directional convergence is slow, so "
        "a failure of the rank-one rows may be the step budget rather than the theorem.",
        ("theory_*",),
        "all",
        "setting",
    ),
]


def _schedule(rec: dict) -> str:
    if rec["schedule"] != "multistep":
        return f"{rec['schedule']} schedule"
    steps = [int(m) for m in rec["milestones"]]
    if steps == list(range(1, int(rec["epochs"]))):
        return f"the lr times {float(rec['gamma']):g} every epoch (StepLR)"
    return f"the lr times {float(rec['gamma']):g} at epochs {', '.join(map(str, steps))}"


def _describe(entry: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in entry.items())


def context(config: dict) -> dict:
    """The config values the departures' templates read (the Kang section, its recipe and
    architectures, the data section)."""
    s, data = config["kang"], config["data"]
    rec = config["recipes"][s["recipe"]]
    m, d, f = s["mechanism"], s["discriminator"], s["featurizer"]
    ids = list(data.get("id_classes") or [])
    heldout = [n for n in data.get("ood_test", []) if n.startswith("heldout")]
    names = {"mnist": 10, "fashion": 10, "digits": 10, "cifar10": 10}
    n_all = names.get(data["dataset"])
    out_classes = [c for c in range(n_all) if c not in ids] if n_all and ids else []
    alpha = d.get("alpha")
    sel = d.get("select") or {}
    corr = list(s["corruptions"])
    paper_sgd = config["recipes"].get("kang-paper-sgd") or {}
    adv = s["adversarial"]
    from . import theory

    params = (f.get("params_by_name") or {}).get(f["name"], f.get("params") or {})
    return {
        "dataset": data["dataset"],
        "image_size": data.get("image_size", "?"),
        "n_id": len(ids) if ids else n_all,
        "id_classes": ids or "all",
        "heldout_classes": out_classes or "none",
        "heldout_set": ", ".join(heldout) or "none",
        "figure_class": s.get("figure_class"),
        "recipe": s["recipe"],
        "optimizer": rec["optimizer"],
        "lr": float(rec["lr"]),
        "epochs": rec["epochs"],
        "schedule_text": _schedule(rec),
        "weight_decay": float(rec["weight_decay"]),
        "checkpoint": rec["checkpoint"],
        "train_size": (
            f"a fixed {rec['train_size']:,}-image subset of the training split"
            if rec.get("train_size")
            else "the whole training split"
        ),
        "arch": s["arch"],
        "arch_desc": _describe(config["architectures"][s["arch"]]),
        "mech_arch": m["arch"],
        "mech_arch_desc": _describe(config["architectures"][m["arch"]]),
        "mech_shift": m["shift"],
        "mech_recipe": m.get("recipe", s["recipe"]),
        "constants_layer": m.get("constants_layer", -2),
        "n_corruptions": len(corr),
        "corruptions": ", ".join(corr) or "none",
        "corruptions_out": ", ".join(c for c in CIFAR10C if c not in corr) or "none",
        "corruptions_extra": ", ".join(c for c in corr if c not in CIFAR10C) or "none",
        "reference_size": s.get("reference_size", 32),
        "featurizer": f["name"],
        "featurizer_params": _describe(params) or "none",
        "alpha_text": (
            f"fixed in advance at {float(alpha):g} (the authors' value), not selected"
            if alpha is not None
            else "chosen from "
            + ", ".join(f"{float(c):g}" for c in sel.get("candidates", []))
            + " on the validation split under every shift"
        ),
        "n_repeats": d["n_repeats"],
        "heldout_fraction": float(d.get("heldout_fraction", 0.5)),
        "eval_size": s.get("eval_size"),
        "paper_sgd_epochs": paper_sgd.get("epochs", "?"),
        "classifier": s["classifier"],
        "fgsm_epsilons": ", ".join(f"{float(e):g}" for e in adv["epsilons"]),
        "fgsm_top": f"{max(float(e) for e in adv['epsilons']):g}",
        "toy_dim": theory.DIM,
        "toy_width": theory.WIDTH,
        "toy_shallow": theory.SHALLOW,
        "toy_deep": theory.DEEP,
        "toy_steps": theory.STEPS,
        "seeds": ", ".join(str(x) for x in (s.get("seeds") or config.get("seeds") or [])),
    }


def _applies(d: Departure, config: dict) -> bool:
    s = config["kang"]
    if d.setting.startswith("recipes.kang-"):
        name = d.setting.split(".")[1]
        return name in (s["recipe"], s["mechanism"].get("recipe", s["recipe"]))
    if d.setting == "kang.eval_size":
        return s.get("eval_size") is not None
    if d.setting == "kang.discriminator.n_repeats":
        return int(s["discriminator"]["n_repeats"]) != PAPER_REPEATS
    return True


def departures(config: dict, specs: list) -> list[Departure]:
    """The departures that apply to ``config``, their ``ours``/``why`` filled from its values and
    claim ids resolved against its claims ``specs`` (``study.claim_specs(config)``, which
    the study's ``departures`` hook passes)."""
    ctx = context(config)
    filled = [
        replace(d, ours=d.ours.format(**ctx), why=d.why.format(**ctx))
        for d in DEPARTURES
        if _applies(d, config)
    ]
    return of_study(filled, specs, config)
