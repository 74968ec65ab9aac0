"""Small explicit settings for the unit tests (the library has no defaults for them)."""

from __future__ import annotations

from softmax_ood.studies.ulmer.models import ModelConfig
from softmax_ood.train import TrainConfig

BLOBS = {"radius": 3.0, "std": 1.0}


def model_cfg(**over) -> ModelConfig:
    base = dict(
        hidden=(16, 16),
        dropout=0.2,
        k_samples=4,
        n_members=3,
        prior_sigma=1.0,
        rho_init=-5.0,
        kl_weight=1.0,
        control_activation="gaussian",
        mcmc=dict(step_size=1e-3, burn_in=50, thin=2, n_samples=4, batch_size=64),
    )
    return ModelConfig(**{**base, **over})


def optim(**over) -> TrainConfig:
    base = dict(epochs=30, batch_size=1024, optimizer="adam", lr=1e-2, weight_decay=0.0)
    return TrainConfig.from_dict({**base, **over})
