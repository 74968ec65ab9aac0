"""The MCMC family: the SGLD chain is deterministic given its seed, its samples differ, its
posterior average classifies a separable toy set, and the mixing diagnostics measure what they
say (effective sample sizes of known chains)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from softmax_ood.studies.ulmer.data import synthetic_2d
from softmax_ood.studies.ulmer.mcmc import MCMCConfig, MCMCNet, effective_sample_size
from softmax_ood.studies.ulmer.models import train_model
from softmax_ood.studies.ulmer.scaling import limiting_vote_ess
from softmax_ood.studies.ulmer.tests.helpers import BLOBS, model_cfg, optim
from softmax_ood.train import NonFiniteLossError

CHAIN = dict(step_size=1e-3, burn_in=150, thin=3, n_samples=20, batch_size=32)
CFG = model_cfg(mcmc=CHAIN)
OPT = optim()


@pytest.fixture(scope="module")
def toy():
    return synthetic_2d(40, 3, seed=0, **BLOBS)


@pytest.fixture(scope="module")
def chain(toy):
    return train_model("mcmc", *toy, CFG, OPT, seed=4)


def _weights(model: MCMCNet) -> list[torch.Tensor]:
    return [*model.weights, *model.biases]


def test_same_seed_same_chain_other_seed_other_chain(toy, chain):
    again = train_model("mcmc", *toy, CFG, OPT, seed=4)
    other = train_model("mcmc", *toy, CFG, OPT, seed=5)
    assert all(torch.equal(a, b) for a, b in zip(_weights(chain), _weights(again), strict=True))
    assert torch.equal(chain.trace_nll, again.trace_nll)
    assert not torch.equal(chain.weights[0], other.weights[0])


def test_samples_differ_from_each_other(toy, chain):
    w = chain.weights[-1]  # (S, C, H): the logit layer of every kept sample
    assert w.shape[0] == CHAIN["n_samples"]
    assert all(not torch.equal(w[i], w[i + 1]) for i in range(w.shape[0] - 1))
    with torch.no_grad():
        p = chain.predict_probs(torch.as_tensor(toy[0][:5]))
    assert p.shape == (CHAIN["n_samples"], 5, 3)
    assert float((p - p.mean(0)).abs().amax()) > 1e-4  # the samples' predictions differ too


def test_posterior_average_classifies_a_separable_toy_set(toy, chain):
    x_test, y_test = synthetic_2d(30, 3, seed=1, **BLOBS)
    for x, y in (toy, (x_test, y_test)):
        with torch.no_grad():
            pred = chain.predict_probs(torch.as_tensor(x)).mean(0).argmax(-1).numpy()
        assert (pred == y).mean() > 0.9
    # far below the constant solution's loss log 3 on every kept sample
    assert float(chain.trace_nll.max()) < 0.5 * math.log(3)


def test_k_model_is_the_chain_stopped_after_k_samples(toy, chain):
    short = train_model("mcmc", *toy, model_cfg(mcmc={**CHAIN, "n_samples": 8}), OPT, seed=4)
    head = chain.first(8)
    assert all(torch.equal(a, b) for a, b in zip(_weights(short), _weights(head), strict=True))
    assert torch.equal(head.trace_nll, chain.trace_nll)  # the whole chain's trace is kept
    x = torch.as_tensor(toy[0][:3])
    with torch.no_grad():
        assert torch.equal(chain.sample_logits(x, 8), head.sample_logits(x))
    with pytest.raises(ValueError, match="kept 20 samples"):
        chain.sample_logits(x, 21)


def test_effective_sample_size_of_known_chains():
    rng = np.random.default_rng(0)
    n = 4000
    assert 0.8 * n < effective_sample_size(rng.normal(size=n)) < 1.25 * n
    ar = np.zeros(n)  # AR(1) with rho 0.9: ESS = n (1 - rho) / (1 + rho) = n / 19
    for t in range(1, n):
        ar[t] = 0.9 * ar[t - 1] + rng.normal()
    assert n / 19 / 1.6 < effective_sample_size(ar) < n / 19 * 1.6
    assert effective_sample_size(np.ones(50)) == 1.0  # a chain that did not move: one draw
    assert math.isnan(effective_sample_size([1.0, 2.0]))


def test_vote_ess_of_independent_and_of_sticky_votes():
    rng = np.random.default_rng(1)
    s = 400

    def lp_pair(cls: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """(S, 1, 2) log-probabilities at alpha and 2 alpha whose slope votes for ``cls``."""
        slope = torch.as_tensor(np.stack([cls == 0, cls == 1], -1), dtype=torch.float64)
        return torch.zeros(s, 1, 2, dtype=torch.float64), slope.unsqueeze(1) * 2.0

    iid = rng.integers(0, 2, s)
    assert 0.7 * s < limiting_vote_ess(*lp_pair(iid), 1.0) < 1.4 * s
    sticky = np.repeat(rng.integers(0, 2, s // 40), 40)  # runs of 40 equal votes
    assert limiting_vote_ess(*lp_pair(sticky), 1.0) < s / 10
    assert math.isnan(limiting_vote_ess(*lp_pair(np.zeros(s, dtype=int)), 1.0))


def test_a_diverging_chain_stops_with_one_sentence(toy):
    with pytest.raises(NonFiniteLossError, match="lower ulmer.model.mcmc.step_size"):
        train_model("mcmc", *toy, model_cfg(mcmc={**CHAIN, "step_size": 10.0}), OPT, seed=0)


def test_chain_settings_are_checked():
    with pytest.raises(ValueError, match="step_size"):
        MCMCConfig(step_size=0.0, burn_in=0, thin=1, n_samples=1, batch_size=1)
    with pytest.raises(ValueError, match="thin"):
        MCMCConfig(step_size=1e-3, burn_in=0, thin=0, n_samples=1, batch_size=1)
