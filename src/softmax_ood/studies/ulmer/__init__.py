"""Ulmer & Cinà, "Know your limits: monotonicity & softmax make neural classifiers overconfident
on OOD data": seeded 2-D and breast-cancer data (:mod:`.data`), ReLU networks with MC dropout,
Bayes-by-backprop and deep ensembles behind one ``predict_probs(x, k_samples) -> (S, N, C)``
interface (:mod:`.models`), the four uncertainty metrics of the paper's §3.3 and their input
gradients computed stably from log-probabilities (:mod:`.metrics`), the input-scaling experiment of
Theorem 1 and the Fig. 1 grids (:mod:`.scaling`), the softmax-properties note's checks
(:mod:`.softmax_note`) and the figures (:mod:`.figures`). Nothing is imported here on purpose:
import the submodule you need.
"""
