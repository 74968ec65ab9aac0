"""The Kang et al. study ("Deep Neural Networks Tend To Extrapolate Predictably", ICLR 2024,
https://arxiv.org/abs/2310.00873): reversion of OOD predictions to the optimal constant solution
(OCS), its mechanism, and risk-sensitive selective classification.

Modules (import them directly; this file imports nothing, so a script that needs one module does
not depend on the others):

* :mod:`.ocs` -- the OCS of each loss in closed form, prediction extractors, distance to the OCS
  (Sec. 3, App. B.4; Figs. 2-3).
* :mod:`.selective` -- reward-prediction, classification and oracle policies; abstain ratio and
  mean reward (Sec. 5; Figs. 5-7).
* :mod:`.features` -- the Fig. 4 mechanism analysis: per-layer feature-norm ratios, share of a
  representation in the top singular subspace of the next weight matrix, accumulated model
  constants (Sec. 4.1).
* :mod:`.figures` -- Figs. 2-7 from tidy data frames.
* :mod:`.frames` -- per-run evaluations and discriminator scores -> the long frames (the
  aggregate rule); :mod:`.tables`, :mod:`.plots` (the figures' tidy frames) and :mod:`.claims`
  read them.

Shared, paper-agnostic pieces live in the core library: the corruption generator
(:mod:`softmax_ood.corruptions`), the OOD-score discriminator (:mod:`softmax_ood.discriminator`)
and the two losses (``reward_mse``, ``gaussian_nll`` in :mod:`softmax_ood.losses`).
"""
