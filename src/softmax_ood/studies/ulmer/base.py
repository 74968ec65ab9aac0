"""What every model family of the Ulmer study shares, in one module that the families
(:mod:`.models`, :mod:`.mcmc`) import and that imports none of them: the prediction interface
(:class:`UncertaintyModel`), one batched forward pass of stacked ReLU networks
(:func:`stacked_logits`) and the one-thread context (:func:`single_thread`)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from softmax_ood.softmax import log_softmax

__all__ = ["UncertaintyModel", "single_thread", "stacked_logits"]


@contextmanager
def single_thread() -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)`` and restore the previous count after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def stacked_logits(weights: Sequence[Tensor], biases: Sequence[Tensor], x: Tensor) -> Tensor:
    """Logits ``(M, B, C)`` of ``M`` ReLU MLPs of one shape, given as stacked weights
    ``(M, out, in)`` and biases ``(M, out)`` per layer, on inputs ``x`` of shape ``(M, B, D)``:
    ``Linear -> ReLU`` per hidden layer, then the linear logit layer, in one batched pass."""
    last = len(weights) - 1
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        if i < last:
            x = F.relu(x)
    return x


class UncertaintyModel(nn.Module):
    """Common prediction interface; subclasses implement :meth:`sample_logits`.

    Attributes: ``kind`` (one of :data:`softmax_ood.studies.ulmer.models.KINDS`), ``k_samples``
    (default ``K``).
    """

    kind: str = ""
    k_samples: int = 1

    def sample_logits(
        self, x: Tensor, k_samples: int | None = None, generator: torch.Generator | None = None
    ) -> Tensor:
        """Per-sample logits ``(S, N, C)``."""
        raise NotImplementedError

    def training_logits(self, x: Tensor) -> Tensor:
        """One stochastic forward pass ``(N, C)`` used by
        :func:`softmax_ood.studies.ulmer.models.train_model`."""
        raise NotImplementedError

    def effective_samples(self) -> float:
        """The effective sample size of the samples when they come from a Markov chain
        (:class:`softmax_ood.studies.ulmer.mcmc.MCMCNet`); NaN for the other families, whose
        samples are independent draws (masks, weight samples, members) or a single network."""
        return math.nan

    def predict_log_probs(
        self, x: Tensor, k_samples: int | None = None, generator: torch.Generator | None = None
    ) -> Tensor:
        """Per-sample log-probabilities ``(S, N, C)``: the project's stable
        :func:`softmax_ood.softmax.log_softmax` of the logits (finite for logits of any size)."""
        return log_softmax(self.sample_logits(x, k_samples, generator), dim=-1)

    def predict_probs(
        self, x: Tensor, k_samples: int | None = None, generator: torch.Generator | None = None
    ) -> Tensor:
        """Per-sample softmax probabilities ``(S, N, C)`` (``exp`` of the log-probabilities)."""
        return self.predict_log_probs(x, k_samples, generator).exp()
